package httpauth

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Add shows the token once and keeps only its hash, in a private file in
// a private folder; List names tokens without secrets; Revoke of an
// unknown name says so; names outside the charset are refused.
func TestTokenStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a", "http")
	path := filepath.Join(dir, "tokens.json")
	s, err := OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if l, err := s.List(); err != nil || len(l) != 0 {
		t.Fatalf("a new store lists %v, %v", l, err)
	}
	tok, err := s.Add(ctx, "alice.laptop")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, TokenPrefix) || len(tok) != len(TokenPrefix)+43 {
		t.Errorf("token of %d characters, want %s and 43 more", len(tok), TokenPrefix)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), tok) || strings.Contains(string(data), tok[len(TokenPrefix):len(TokenPrefix)+8]) {
		t.Error("the file holds the token, not only its hash")
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("file mode %v, %v; want 0600", fi.Mode(), err)
		}
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("folder mode %v, %v; want 0700", fi.Mode(), err)
		}
	}
	if name, ok := s.Lookup(tok); !ok || name != "alice.laptop" {
		t.Errorf("Lookup = %q, %v", name, ok)
	}
	if _, ok := s.Lookup(tok + "x"); ok {
		t.Error("a longer token was accepted")
	}
	if _, ok := s.Lookup(""); ok {
		t.Error("an empty token was accepted")
	}
	if _, err := s.Add(ctx, "alice.laptop"); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("a second token of one name: %v", err)
	}
	for _, bad := range []string{"", "-x", "a b", "a/b", "é", strings.Repeat("a", 65)} {
		if _, err := s.Add(ctx, bad); err == nil || !strings.Contains(err.Error(), "letters, digits") {
			t.Errorf("Add(%q): %v", bad, err)
		}
	}
	l, err := s.List()
	if err != nil || len(l) != 1 || l[0].Name != "alice.laptop" || l[0].Created.IsZero() {
		t.Errorf("List = %+v, %v", l, err)
	}
	if err := s.Revoke(ctx, "bob"); err == nil || !strings.Contains(err.Error(), `no token named "bob"`) || !strings.Contains(err.Error(), path) {
		t.Errorf("revoking an unknown name: %v", err)
	}
	if err := s.Revoke(ctx, "alice.laptop"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Lookup(tok); ok {
		t.Error("a revoked token was accepted")
	}
}

// A file that is not a token store is refused with its name and what is
// wrong, never its content, and never trusted in part.
func TestTokenStoreCorrupt(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	cases := map[string]string{
		"not JSON":       `{"version":1,"tokens":[`,
		"wrong type":     `{"version":1,"tokens":{"a":1}}`,
		"version":        `{"version":2,"tokens":[]}`,
		"bad name":       `{"version":1,"tokens":[{"name":"a b","sha256":"` + hash + `"}]}`,
		"name twice":     `{"version":1,"tokens":[{"name":"a","sha256":"` + hash + `"},{"name":"a","sha256":"` + hash + `"}]}`,
		"short hash":     `{"version":1,"tokens":[{"name":"a","sha256":"abcd"}]}`,
		"secret-looking": `{"version":1,"tokens":[{"name":"a","sha256":"mwb_SECRETSECRET"}]}`,
	}
	for what, content := range cases {
		path := filepath.Join(t.TempDir(), "tokens.json")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenTokens(path)
		if err == nil {
			t.Errorf("%s: opened", what)
			continue
		}
		if !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: %v; want the file named, its content not quoted", what, err)
		}
		s := &TokenStore{path: path}
		if _, err := s.Add(context.Background(), "b"); err == nil {
			t.Errorf("%s: Add over a corrupt file succeeded", what)
		}
	}
	path := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(path, []byte(strings.Repeat(" ", maxTokenFile+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenTokens(path); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("a huge file: %v", err)
	}
}

// The path: a flag first, then $MCP_WORKBENCH_TOKENS, then the user's
// configuration folder.
func TestTokensPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if p, _ := TokensPath("/x/t.json", getenv); p != "/x/t.json" {
		t.Errorf("flag: %s", p)
	}
	if p, _ := TokensPath("", getenv); runtime.GOOS == "linux" && p != filepath.Join(home, "cfg", "mcp-workbench", "http", "tokens.json") {
		t.Errorf("default: %s", p)
	}
	env[EnvTokens] = "/y/t.json"
	if p, _ := TokensPath("", getenv); p != "/y/t.json" {
		t.Errorf("env: %s", p)
	}
}

// TestRevocationChecksShareOneLook: the front checks every session's token
// each second or so (StillValid); the checks of one round, a thousand
// sessions' here, look at the token file once between them, and a token
// revoked elsewhere is refused by the next round's checks. A request's own
// lookup looks at the file every time.
func TestRevocationChecksShareOneLook(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tokens.json")
	s, err := OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.Add(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now().Add(time.Hour)
	s.now = func() time.Time { return clock }
	a := &Authenticator{tokens: s}
	sum := sha256.Sum256([]byte(tok))
	u := User{Subject: "alice", Credential: "token:alice", tokenHash: sum[:]}
	looks := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.stats
	}
	before := looks()
	for i := range 1000 {
		if !a.StillValid(u) {
			t.Fatalf("check %d: the token is refused", i)
		}
	}
	if n := looks() - before; n != 1 {
		t.Errorf("a round of 1000 sessions' checks looked at the token file %d times; want 1", n)
	}
	other, err := OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Revoke(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(recheckShared)
	if a.StillValid(u) {
		t.Error("the next round's check accepts a token revoked elsewhere")
	}
	before = looks()
	for range 3 {
		if _, ok := s.Lookup(tok); ok {
			t.Error("a request's lookup accepts the revoked token")
		}
	}
	if n := looks() - before; n != 3 {
		t.Errorf("3 requests' lookups looked at the file %d times; want 3", n)
	}
}
