// Package oauthtest is test support for logins: an authorization server
// that approves every login at once and redirects, a protected MCP server
// in front of it (go-sdk's auth.RequireBearerToken), both on 127.0.0.1 in
// the test process, and a stand-in browser (the test binary re-executed).
package oauthtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// EnvBrowser makes the test binary a browser (see [MaybeBrowse]): "follow"
// opens the URL and follows the redirects to the callback; "close" does
// nothing, as a user who closes the window.
const EnvBrowser = "OAUTHTEST_BROWSER"

// MaybeBrowse, called first in TestMain, acts as the browser when the test
// binary was started as $BROWSER, and exits.
func MaybeBrowse() {
	mode := os.Getenv(EnvBrowser)
	if mode == "" {
		return
	}
	if mode == "follow" && len(os.Args) > 1 {
		c := &http.Client{Timeout: 30 * time.Second}
		resp, err := c.Get(os.Args[len(os.Args)-1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "test browser:", err)
			os.Exit(1)
		}
		resp.Body.Close()
	}
	os.Exit(0)
}

// Options shape the servers' behaviour.
type Options struct {
	// ClientID, if set, is a client registered beforehand (with Secret);
	// dynamic registration is then not offered.
	ClientID, Secret string
	// TokenTTL is the access tokens' lifetime (expires_in, whole
	// seconds); default an hour. Refresh tokens always rotate: each works
	// once, a spent one is refused with invalid_grant (and counted in
	// Reuses).
	TokenTTL time.Duration
	// SSE serves the MCP server over the SSE transport.
	SSE bool
	// BadMetadata makes the authorization server's metadata unusable.
	BadMetadata bool
	// MistypedMetadata gives the authorization server's metadata an issuer
	// that is a number.
	MistypedMetadata bool
	// MistypedRegistration answers a registration with a client secret and
	// an issue time that is not a number: an answer the client cannot read,
	// which holds a secret.
	MistypedRegistration bool
	// WrongState redirects with a state other than the one asked for.
	WrongState bool
	// RejectTokens makes the MCP server refuse every token with a 401.
	RejectTokens bool
	// NoDiscovery hides the authorization server from discovery: the MCP
	// server publishes no protected resource metadata and its 401 names
	// none, and the authorization server's metadata is only at
	// Server.MetadataURL, not at a well-known address.
	NoDiscovery bool
	// StepUpScope, if set, is a scope the MCP server needs beyond those it
	// advertises: a token without it gets 403 insufficient_scope naming it.
	StepUpScope string
	// ScopeNeverEnough makes the StepUpScope server refuse every token
	// with 403 insufficient_scope, whatever it was granted.
	ScopeNeverEnough bool
	// LateAuth, if set, is the one MCP method ("tools/list" or
	// "tools/call") that needs a token: everything else, initialize
	// included, is served without one. Its 401 names the scope "tools".
	LateAuth string
}

// RegistrationSecret is the client secret of a MistypedRegistration: it
// must appear in no error.
const RegistrationSecret = "s3cr3t (dcr) never shown"

// Server is a protected MCP server and its authorization server.
type Server struct {
	URL         string // the MCP endpoint
	Issuer      string // the authorization server
	MetadataURL string // where the authorization server's metadata is
	o           Options

	mu      sync.Mutex
	clients map[string][]string // client id → redirect URIs
	codes   map[string]grant
	access  map[string]time.Time // access token → expiry
	scopes  map[string]string    // access or refresh token → the scopes granted
	refresh map[string]string    // refresh token → client id
	spent   map[string]bool      // refresh tokens already spent

	Logins, Refreshes, Registrations, Calls atomic.Int32
	// Reuses counts refresh requests with a refresh token that was already
	// spent: a client that keeps rotated tokens never makes one.
	Reuses       atomic.Int32
	tokenFailure atomic.Int32
	as           *http.Server
	asLn         net.Listener
}

type grant struct {
	client, redirect, challenge, scope string
}

// Start starts both servers on 127.0.0.1 and stops them when the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if o.TokenTTL == 0 {
		o.TokenTTL = time.Hour
	}
	s := &Server{o: o, clients: map[string][]string{}, codes: map[string]grant{}, access: map[string]time.Time{}, scopes: map[string]string{}, refresh: map[string]string{}, spent: map[string]bool{}}
	if o.ClientID != "" {
		s.clients[o.ClientID] = nil // any loopback redirect
	}
	asLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.asLn = asLn
	s.Issuer = "http://" + asLn.Addr().String()
	asMux := http.NewServeMux()
	s.MetadataURL = s.Issuer + "/.well-known/oauth-authorization-server"
	if o.NoDiscovery {
		s.MetadataURL = s.Issuer + "/config/oauth-metadata.json"
	}
	asMux.HandleFunc(strings.TrimPrefix(s.MetadataURL, s.Issuer), s.metadata)
	asMux.Handle("/moved", http.RedirectHandler(s.MetadataURL, http.StatusFound))
	asMux.HandleFunc("/register", s.register)
	asMux.HandleFunc("/authorize", s.authorize)
	asMux.HandleFunc("/token", s.token)
	s.as = &http.Server{Handler: asMux}
	go s.as.Serve(asLn)

	rsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + rsLn.Addr().String()
	s.URL = base + "/mcp"
	mcpServer := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcpServer.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.Calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you are logged in"}}}, nil
		})
	var h http.Handler
	if o.SSE {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return mcpServer }, nil)
	} else {
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpServer }, nil)
	}
	rsMux := http.NewServeMux()
	if !o.NoDiscovery {
		rsMux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: s.URL, AuthorizationServers: []string{s.Issuer}, ScopesSupported: []string{"tools"},
		}))
	}
	rs := &http.Server{Handler: routeMCP(rsMux, h, s)}
	go rs.Serve(rsLn)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = rs.Shutdown(ctx)
		rs.Close()
		s.as.Close()
	})
	return s
}

// routeMCP puts the MCP handler behind the bearer check.
func routeMCP(mux *http.ServeMux, mcpHandler http.Handler, s *Server) http.Handler {
	opts := &auth.RequireBearerTokenOptions{ResourceMetadataURL: strings.TrimSuffix(s.URL, "/mcp") + "/.well-known/oauth-protected-resource/mcp"}
	if s.o.LateAuth != "" {
		opts.Scopes = []string{"tools"} // named in the 401's challenge
	}
	if s.o.NoDiscovery {
		opts.ResourceMetadataURL = ""
	}
	protected := auth.RequireBearerToken(s.verify, opts)(mcpHandler)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" && s.o.StepUpScope != "" {
			tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			s.mu.Lock()
			scope, live := s.scopes[tok]
			s.mu.Unlock()
			if live && (s.o.ScopeNeverEnough || !slices.Contains(strings.Fields(scope), s.o.StepUpScope)) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="tools %s"`, s.o.StepUpScope))
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		if r.URL.Path == "/mcp" && s.o.LateAuth != "" && !s.needsToken(r) {
			mcpHandler.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/mcp" {
			protected.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// needsToken reports whether a LateAuth server asks r for a token: a POST
// of its LateAuth method. It reads the body and puts it back.
func (s *Server) needsToken(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return true
	}
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &msg) != nil || msg.Method == s.o.LateAuth
}

func (s *Server) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	exp, ok := s.access[token]
	s.mu.Unlock()
	if !ok || s.o.RejectTokens || time.Now().After(exp) {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: []string{"tools"}, Expiration: exp}, nil
}

// FailTokens makes the token endpoint answer every request with status
// and no OAuth error (an outage, a rate limit); 0 ends that.
func (s *Server) FailTokens(status int) { s.tokenFailure.Store(int32(status)) }

// StopAuthServer makes the authorization server unreachable.
func (s *Server) StopAuthServer() { s.as.Close() }

// Revoke forgets every token: access tokens stop working, refresh tokens
// are refused with invalid_grant.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
	clear(s.refresh)
}

// ExpireAccess makes every access token expired, as time would.
func (s *Server) ExpireAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.access {
		s.access[k] = time.Now().Add(-time.Second)
	}
}

// Holds reports whether tok is a live access or refresh token.
func (s *Server) Holds(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, a := s.access[tok]
	_, r := s.refresh[tok]
	return a || r
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	if s.o.BadMetadata {
		writeJSON(w, 200, map[string]any{"issuer": "https://someone-else.example", "authorization_endpoint": "javascript:alert(1)"})
		return
	}
	if s.o.MistypedMetadata {
		writeJSON(w, 200, map[string]any{"issuer": 42, "authorization_endpoint": s.Issuer + "/authorize"})
		return
	}
	m := map[string]any{
		"issuer":                                s.Issuer,
		"authorization_endpoint":                s.Issuer + "/authorize",
		"token_endpoint":                        s.Issuer + "/token",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"scopes_supported":                      []string{"tools", "offline_access"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_post"},
	}
	if s.o.ClientID == "" {
		m["registration_endpoint"] = s.Issuer + "/register"
	}
	writeJSON(w, 200, m)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var meta oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		writeJSON(w, 400, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id := "dyn-" + rand.Text()[:8]
	s.mu.Lock()
	s.clients[id] = meta.RedirectURIs
	s.mu.Unlock()
	s.Registrations.Add(1)
	if s.o.MistypedRegistration {
		writeJSON(w, 201, map[string]any{"client_id": id, "client_secret": RegistrationSecret, "client_id_issued_at": "yesterday"})
		return
	}
	writeJSON(w, 201, map[string]any{"client_id": id, "redirect_uris": meta.RedirectURIs, "token_endpoint_auth_method": "none"})
}

// authorize approves at once and redirects with a code, as a user who
// clicks "allow" would.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	client, redirect := q.Get("client_id"), q.Get("redirect_uri")
	s.mu.Lock()
	uris, known := s.clients[client]
	s.mu.Unlock()
	ru, err := url.Parse(redirect)
	switch {
	case !known:
		http.Error(w, "unknown client", 400)
		return
	case err != nil || (uris != nil && !slices.Contains(uris, redirect)) || (ru.Hostname() != "127.0.0.1" && ru.Hostname() != "localhost"):
		http.Error(w, "redirect_uri not registered", 400)
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("response_type") != "code":
		http.Error(w, "PKCE S256 required", 400)
		return
	}
	code := rand.Text()
	s.mu.Lock()
	s.codes[code] = grant{client: client, redirect: redirect, challenge: q.Get("code_challenge"), scope: q.Get("scope")}
	s.mu.Unlock()
	state := q.Get("state")
	if s.o.WrongState {
		state = "forged-" + state
	}
	v := url.Values{"code": {code}, "state": {state}}
	http.Redirect(w, r, redirect+"?"+v.Encode(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if status := s.tokenFailure.Load(); status != 0 {
		http.Error(w, "try again later", int(status))
		return
	}
	if err := r.ParseForm(); err != nil {
		writeJSON(w, 400, map[string]string{"error": "invalid_request"})
		return
	}
	client := r.PostForm.Get("client_id")
	if u, p, ok := r.BasicAuth(); ok {
		client = u
		if s.o.Secret != "" && p != s.o.Secret {
			writeJSON(w, 401, map[string]string{"error": "invalid_client"})
			return
		}
	} else if s.o.Secret != "" && r.PostForm.Get("client_secret") != s.o.Secret {
		writeJSON(w, 401, map[string]string{"error": "invalid_client"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var scope string
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g.client != client || g.redirect != r.PostForm.Get("redirect_uri") || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "bad code, verifier or redirect"})
			return
		}
		s.Logins.Add(1)
		scope = g.scope
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		if s.spent[rt] {
			s.Reuses.Add(1)
		}
		if s.refresh[rt] != client {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "refresh token revoked"})
			return
		}
		delete(s.refresh, rt) // rotation: a refresh token works once
		s.spent[rt] = true
		scope = s.scopes[rt]
		s.Refreshes.Add(1)
	default:
		writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	access, refresh := "at-"+rand.Text(), "rt-"+rand.Text()
	if scope == "" {
		scope = "tools offline_access"
	}
	s.access[access] = time.Now().Add(s.o.TokenTTL)
	s.refresh[refresh] = client
	s.scopes[access], s.scopes[refresh] = scope, scope
	writeJSON(w, 200, map[string]any{
		"access_token": access, "token_type": "Bearer", "refresh_token": refresh,
		"expires_in": int(s.o.TokenTTL / time.Second), "scope": scope,
	})
}
