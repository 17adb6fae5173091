package httpauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/httpauth/issuertest"
)

// protected is a resource server on 127.0.0.1: the authenticator's
// middleware, then the limiter's, then a handler that answers with the
// request's user. Every log line and every body it produced is kept, to
// look for tokens in.
type protected struct {
	srv    *httptest.Server
	auth   *Authenticator
	logs   *fakeserver.Buffer
	bodies []string
	mu     sync.Mutex
}

type whoAmI struct {
	User User `json:"user"`
}

func newProtected(t *testing.T, o Options, lim *Limiter, hold <-chan struct{}, entered chan<- struct{}) *protected {
	t.Helper()
	p := &protected{logs: &fakeserver.Buffer{}}
	o.Logger = slog.New(slog.NewTextHandler(p.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	p.auth = a
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := UserOf(r.Context())
		if !ok {
			http.Error(w, "no user in the context", http.StatusInternalServerError)
			return
		}
		if hold != nil && r.Method == http.MethodPost {
			entered <- struct{}{}
			<-hold
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(whoAmI{User: u})
	})
	if lim != nil {
		h = lim.Middleware(h)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", a.Middleware(h))
	for _, path := range a.MetadataPaths() {
		mux.Handle(path, a.MetadataHandler())
	}
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// do sends a request to /mcp with the bearer token (none if "").
func (p *protected) do(t *testing.T, method, token string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, p.srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	p.mu.Lock()
	p.bodies = append(p.bodies, string(body)+"\n"+headerText(resp.Header))
	p.mu.Unlock()
	return resp, string(body)
}

func headerText(h http.Header) string {
	var b strings.Builder
	h.Write(&b)
	return b.String()
}

// noSecretsLeft fails if any part of a token that is secret appears in the
// logs or in any response (bodies and headers): the whole token, a JWT's
// payload and signature, a static token's random part (or its first
// eight characters).
func (p *protected) noSecretsLeft(t *testing.T, tokens ...string) {
	t.Helper()
	p.mu.Lock()
	seen := p.logs.String() + strings.Join(p.bodies, "\n")
	p.mu.Unlock()
	for _, tok := range tokens {
		parts := []string{tok}
		if secret, ok := strings.CutPrefix(tok, TokenPrefix); ok {
			parts = append(parts, secret, secret[:8])
		} else if seg := strings.Split(tok, "."); len(seg) == 3 {
			parts = append(parts, seg[1], seg[2])
		}
		for _, part := range parts {
			if part != "" && strings.Contains(seen, part) {
				t.Errorf("part of a token (%d characters) appears in the logs or a response", len(part))
			}
		}
	}
}

// OAuth resource-server mode against a real authorization server: the
// one right token passes with its subject and groups; every wrong one is
// refused with 401 and a WWW-Authenticate naming the metadata; no token
// at all is 401 with the metadata too, and the metadata is served where
// it points.
func TestOAuthTokens(t *testing.T) {
	is := issuertest.New(t, "/.well-known/oauth-authorization-server")
	resource := "http://127.0.0.1:1/mcp"
	p := newProtected(t, Options{OAuth: &OAuth{Issuer: is.URL}, ResourceURL: resource}, nil, nil, nil)
	good := issuertest.Claims{Issuer: is.URL, Audience: []string{resource}, Subject: "alice", Groups: []string{"eng", "ops"}, Exp: time.Hour}

	resp, body := p.do(t, http.MethodPost, "")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d %s, want 401", resp.StatusCode, body)
	}
	wantMeta := "http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp"
	if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer resource_metadata="`+wantMeta+`"` {
		t.Errorf("no token: WWW-Authenticate %q, want the resource metadata %s", got, wantMeta)
	}

	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	wrongAud, expired, wrongIss, noExp := good, good, good, good
	wrongAud.Audience = []string{"http://127.0.0.1:1/other"}
	expired.Exp = -time.Minute
	wrongIss.Issuer = "http://127.0.0.1:2"
	noExp.NoExp = true
	bad := []struct {
		name, token, why string
	}{
		{"wrong audience", is.Token(t, wrongAud, nil), "another audience"},
		{"expired", is.Token(t, expired, nil), "expired"},
		{"no expiry", is.Token(t, noExp, nil), "expired"},
		{"wrong issuer", is.Token(t, wrongIss, nil), "another issuer"},
		{"bad signature", is.Token(t, good, other), "signature"},
		{"unsigned", issuertest.Unsigned(t, good), "accepted algorithm"},
		{"HMAC-signed", issuertest.HMACSigned(t, good, is.PublicKeyBytes()), "accepted algorithm"},
		{"not a JWT", "abc.def", "accepted algorithm"},
		{"unknown static token", TokenPrefix + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "not a token of this server"},
	}
	var all []string
	for _, c := range bad {
		all = append(all, c.token)
		resp, body := p.do(t, http.MethodPost, c.token)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d %q, want 401", c.name, resp.StatusCode, body)
			continue
		}
		if !strings.Contains(body, c.why) {
			t.Errorf("%s: body %q, want it to say %q", c.name, body, c.why)
		}
		if got := resp.Header.Get("WWW-Authenticate"); !strings.Contains(got, `error="invalid_token"`) || !strings.Contains(got, wantMeta) {
			t.Errorf("%s: WWW-Authenticate %q, want invalid_token and the metadata", c.name, got)
		}
	}

	tok := is.Token(t, good, nil)
	all = append(all, tok)
	resp, body = p.do(t, http.MethodPost, tok)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("right token: %d %s", resp.StatusCode, body)
	}
	var who whoAmI
	if err := json.Unmarshal([]byte(body), &who); err != nil {
		t.Fatal(err)
	}
	if who.User.Subject != "alice" || strings.Join(who.User.Groups, ",") != "eng,ops" || who.User.Credential != "sub:alice" {
		t.Errorf("the user: %+v, want alice of eng and ops", who.User)
	}

	// The metadata, where the 401 points.
	mresp, err := http.Get(p.srv.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer mresp.Body.Close()
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := json.NewDecoder(mresp.Body).Decode(&meta); err != nil || meta.Resource != resource || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != is.URL {
		t.Errorf("metadata: %+v, %v; want resource %s, authorization server %s", meta, err, resource, is.URL)
	}
	p.noSecretsLeft(t, all...)
}

// Required scopes: a token without them is 403 with insufficient_scope;
// with them (the "scope" string of RFC 9068) it passes; a static token is
// granted them.
func TestScopes(t *testing.T) {
	is := issuertest.New(t, "/.well-known/openid-configuration") // OpenID discovery, as a fallback
	resource := "http://127.0.0.1:1/mcp"
	store := filepath.Join(t.TempDir(), "tokens.json")
	p := newProtected(t, Options{TokensPath: store, OAuth: &OAuth{Issuer: is.URL, Scopes: []string{"mcp"}}, ResourceURL: resource}, nil, nil, nil)
	c := issuertest.Claims{Issuer: is.URL, Audience: []string{resource}, Subject: "bob", Exp: time.Hour, Scope: "openid profile"}
	noScope := is.Token(t, c, nil)
	resp, body := p.do(t, http.MethodPost, noScope)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("without the scope: %d %s, want 403", resp.StatusCode, body)
	}
	if got := resp.Header.Get("WWW-Authenticate"); !strings.Contains(got, `error="insufficient_scope"`) || !strings.Contains(got, `scope="mcp"`) {
		t.Errorf("without the scope: WWW-Authenticate %q", got)
	}
	c.Scope = "openid mcp"
	withScope := is.Token(t, c, nil)
	if resp, body := p.do(t, http.MethodPost, withScope); resp.StatusCode != http.StatusOK {
		t.Errorf("with the scope: %d %s", resp.StatusCode, body)
	}
	s, err := OpenTokens(store)
	if err != nil {
		t.Fatal(err)
	}
	static, err := s.Add(context.Background(), "ci")
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := p.do(t, http.MethodPost, static); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"Credential":"token:ci"`) {
		t.Errorf("a static token: %d %s", resp.StatusCode, body)
	}
	p.noSecretsLeft(t, noScope, withScope, static)
}

// A static token works from the request after its Add, and a revocation
// by another store on the same file (another process, another replica) is
// refused from the next request on.
func TestStaticTokenRevokedElsewhere(t *testing.T) {
	path := filepath.Join(t.TempDir(), "http", "tokens.json")
	p := newProtected(t, Options{TokensPath: path}, nil, nil, nil)
	other, err := OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := other.Add(context.Background(), "laptop")
	if err != nil {
		t.Fatal(err)
	}
	keep, err := other.Add(context.Background(), "ci-2")
	if err != nil {
		t.Fatal(err)
	}
	resp, body := p.do(t, http.MethodPost, tok)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"Subject":"laptop"`) {
		t.Fatalf("a fresh token: %d %s", resp.StatusCode, body)
	}
	if err := other.Revoke(context.Background(), "laptop"); err != nil {
		t.Fatal(err)
	}
	resp, body = p.do(t, http.MethodPost, tok)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "revoked") {
		t.Errorf("after the revocation: %d %s, want 401", resp.StatusCode, body)
	}
	// Static tokens only: no metadata, but still a challenge.
	if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
		t.Errorf("WWW-Authenticate %q", got)
	}
	if resp, body := p.do(t, http.MethodPost, keep); resp.StatusCode != http.StatusOK {
		t.Errorf("the token not revoked: %d %s", resp.StatusCode, body)
	}
	// A JWT-looking token without OAuth configured.
	if resp, _ := p.do(t, http.MethodPost, "a.b.c"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a JWT without OAuth: %d", resp.StatusCode)
	}
	p.noSecretsLeft(t, tok, keep)
}

// A store that turns bad while serving refuses every static token (500,
// the server's trouble) and says why in the log, naming the file; once
// the file is good again, tokens pass again.
func TestStoreCorruptedWhileServing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	p := newProtected(t, Options{TokensPath: path}, nil, nil, nil)
	s, err := OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.Add(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"version":1,"tokens":[{"name":"a","sha256":"zz"`), 0o600); err != nil {
		t.Fatal(err)
	}
	resp, body := p.do(t, http.MethodPost, tok)
	if resp.StatusCode != http.StatusInternalServerError || strings.Contains(body, path) {
		t.Errorf("a corrupt store: %d %q, want 500 without the file's path", resp.StatusCode, body)
	}
	if !strings.Contains(p.logs.String(), path) {
		t.Errorf("the log does not name the store: %s", p.logs.String())
	}
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if resp, body := p.do(t, http.MethodPost, tok); resp.StatusCode != http.StatusOK {
		t.Errorf("the store repaired: %d %s", resp.StatusCode, body)
	}
	p.noSecretsLeft(t, tok)
}

// Discovery: an explicit jwksUrl needs no metadata; an issuer without
// metadata and no jwksUrl is a start-up error naming the issuer; so is
// metadata that names another issuer.
func TestDiscovery(t *testing.T) {
	resource := "http://127.0.0.1:1/mcp"
	bare := issuertest.New(t, "")
	if _, err := New(context.Background(), Options{OAuth: &OAuth{Issuer: bare.URL}, ResourceURL: resource}); err == nil || !strings.Contains(err.Error(), bare.URL) || !strings.Contains(err.Error(), "jwksUrl") {
		t.Errorf("an issuer without metadata: %v", err)
	}
	p := newProtected(t, Options{OAuth: &OAuth{Issuer: bare.URL, JWKSURL: bare.URL + "/jwks"}, ResourceURL: resource}, nil, nil, nil)
	tok := bare.Token(t, issuertest.Claims{Issuer: bare.URL, Audience: []string{resource}, Subject: "carol", Exp: time.Hour}, nil)
	if resp, body := p.do(t, http.MethodPost, tok); resp.StatusCode != http.StatusOK {
		t.Errorf("with jwksUrl: %d %s", resp.StatusCode, body)
	}
	is := issuertest.New(t, "/.well-known/oauth-authorization-server")
	if _, err := New(context.Background(), Options{OAuth: &OAuth{Issuer: is.URL + "/"}, ResourceURL: resource}); err == nil || !strings.Contains(err.Error(), "names issuer") {
		t.Errorf("metadata of another issuer: %v", err)
	}
	if _, err := New(context.Background(), Options{OAuth: &OAuth{Issuer: is.URL}}); err == nil || !strings.Contains(err.Error(), "publicUrl") {
		t.Errorf("oauth without a public URL: %v", err)
	}
	if _, err := New(context.Background(), Options{}); err == nil {
		t.Error("no authentication at all was accepted")
	}
}

// An issuer whose keys cannot be fetched is the server's trouble: 500,
// logged, not a 401 that would send the client for a new token.
func TestKeysUnavailable(t *testing.T) {
	is := issuertest.New(t, "")
	resource := "http://127.0.0.1:1/mcp"
	p := newProtected(t, Options{OAuth: &OAuth{Issuer: is.URL, JWKSURL: is.URL + "/no-keys-here"}, ResourceURL: resource}, nil, nil, nil)
	tok := is.Token(t, issuertest.Claims{Issuer: is.URL, Audience: []string{resource}, Subject: "dan", Exp: time.Hour}, nil)
	resp, body := p.do(t, http.MethodPost, tok)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "signing keys") {
		t.Errorf("keys unavailable: %d %q, want 500", resp.StatusCode, body)
	}
	if !strings.Contains(p.logs.String(), "cannot check access tokens") {
		t.Errorf("not logged: %s", p.logs.String())
	}
	p.noSecretsLeft(t, tok)
}

func TestUserOfWithoutAuth(t *testing.T) {
	if _, ok := UserOf(context.Background()); ok {
		t.Error("a user without authentication")
	}
	if !errors.Is(refused("x"), errInvalidToken) {
		t.Error("a refusal is not auth.ErrInvalidToken")
	}
}

// Forged tokens do not make the workbench fetch the issuer's keys again
// and again (go-oidc fetches whenever no key it holds verifies a token):
// within keysEvery the last answer stands. A rotation is picked up once
// that time has passed.
func TestKeyFetchesBounded(t *testing.T) {
	is := issuertest.New(t, "/.well-known/oauth-authorization-server")
	resource := "http://127.0.0.1:1/mcp"
	p := newProtected(t, Options{OAuth: &OAuth{Issuer: is.URL}, ResourceURL: resource}, nil, nil, nil)
	clock := &fixedClock{t: time.Unix(1_000_000, 0)}
	p.auth.jwt.keys.mu.Lock()
	p.auth.jwt.keys.now = clock.now
	p.auth.jwt.keys.mu.Unlock()
	c := issuertest.Claims{Issuer: is.URL, Audience: []string{resource}, Subject: "erin", Exp: time.Hour}
	if resp, body := p.do(t, http.MethodPost, is.Token(t, c, nil)); resp.StatusCode != http.StatusOK {
		t.Fatalf("a good token: %d %s", resp.StatusCode, body)
	}
	before := is.Fetches()
	forger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if resp, body := p.do(t, http.MethodPost, is.Token(t, c, forger)); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("forged token %d: %d %s", i, resp.StatusCode, body)
		}
	}
	if got := is.Fetches(); got > before+1 {
		t.Errorf("5 forged tokens made %d fetches of the keys, want at most 1", got-before)
	}
	is.Rotate(t, "k2")
	clock.t = clock.t.Add(keysEvery)
	if resp, body := p.do(t, http.MethodPost, is.Token(t, c, nil)); resp.StatusCode != http.StatusOK {
		t.Errorf("a token of the rotated key: %d %s", resp.StatusCode, body)
	}
}

// The subject and groups issuertest.Claims are configurable; a token without the
// subject claim, or whose groups claim is not a list of strings, is
// refused; "scp" as a list grants scopes as "scope" does.
func TestClaimsConfigured(t *testing.T) {
	is := issuertest.New(t, "/.well-known/oauth-authorization-server")
	resource := "http://127.0.0.1:1/mcp"
	p := newProtected(t, Options{OAuth: &OAuth{Issuer: is.URL, SubjectClaim: "email", GroupsClaim: "roles", Scopes: []string{"mcp"}}, ResourceURL: resource}, nil, nil, nil)
	c := issuertest.Claims{Issuer: is.URL, Audience: []string{resource}, Subject: "id-1", Exp: time.Hour,
		Extra: map[string]any{"email": "fay@example.com", "roles": []string{"admin"}, "scp": []string{"mcp"}}}
	resp, body := p.do(t, http.MethodPost, is.Token(t, c, nil))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"Subject":"fay@example.com","Groups":["admin"],"Credential":"sub:fay@example.com"`) {
		t.Errorf("custom claims: %d %s", resp.StatusCode, body)
	}
	noEmail := c
	noEmail.Extra = map[string]any{"roles": []string{"admin"}, "scp": []string{"mcp"}}
	if resp, body := p.do(t, http.MethodPost, is.Token(t, noEmail, nil)); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `no "email" claim`) {
		t.Errorf("without the subject claim: %d %s", resp.StatusCode, body)
	}
	badRoles := c
	badRoles.Extra = map[string]any{"email": "fay@example.com", "roles": map[string]any{"a": 1}, "scp": []string{"mcp"}}
	if resp, body := p.do(t, http.MethodPost, is.Token(t, badRoles, nil)); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `"roles" claim is not a list`) {
		t.Errorf("groups not a list: %d %s", resp.StatusCode, body)
	}
}
