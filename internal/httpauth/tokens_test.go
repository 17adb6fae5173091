package httpauth

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
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
