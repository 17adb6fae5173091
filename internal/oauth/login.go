package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// DefaultLoginTimeout bounds the wait for the browser's redirect.
const DefaultLoginTimeout = 5 * time.Minute

// LoginOptions say which server to log in to and how to reach the user.
type LoginOptions struct {
	ConfigPath string
	Toolbox    string
	Server     *config.Server
	// Store defaults to [DefaultStore].
	Store *Store
	// Show gives the authorization URL to the user: the browser for the
	// login command, a URL elicitation for a host. Its error ends the login.
	Show func(ctx context.Context, authURL string) error
	// Timeout bounds the wait for the redirect; default DefaultLoginTimeout.
	Timeout time.Duration
}

// LoginResult is what a login got.
type LoginResult struct {
	// NotNeeded is set when the server answered without asking for a login.
	NotNeeded bool
	Issuer    string
	ClientID  string
	// Registered is set when the client was registered for this login
	// (dynamic client registration).
	Registered bool
	Scopes     []string
	Expiry     time.Time // zero: the token does not say
	Refresh    bool      // a refresh token was issued
	TokenFile  string
}

// Login runs the authorization code flow for one server: it asks the
// server, which answers 401 with where its authorization server is; the
// SDK's handler discovers it, registers a client if needed, builds the
// authorization URL with PKCE; the user opens it (o.Show) and the
// authorization server redirects to a receiver on 127.0.0.1, which checks
// the state; the code is exchanged, and the tokens stored.
func Login(ctx context.Context, o LoginOptions) (*LoginResult, error) {
	s := o.Server
	fail := func(reason string, err error) error {
		return &Error{Toolbox: o.Toolbox, Server: s.Name, Reason: reason, Err: err}
	}
	if !Applies(s) {
		if s.AuthorizationHeader() {
			return nil, fail("it sends its own Authorization header (headers.Authorization); remove it to log in with OAuth", nil)
		}
		return nil, fail("it is a stdio server: only http and sse servers log in", nil)
	}
	store := o.Store
	if store == nil {
		var err error
		if store, err = DefaultStore(); err != nil {
			return nil, fail("no place for tokens: "+err.Error(), err)
		}
	}
	// A folder that cannot take the tokens fails now, not after the browser.
	if err := store.mkdir(); err != nil {
		return nil, fail("no place for tokens: "+err.Error(), err)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultLoginTimeout
	}
	hc := httpClientFor(s)

	probeCtx, cancelProbe := context.WithTimeout(ctx, s.ConnectionTimeout+time.Second)
	defer cancelProbe()
	probeReq, probeResp, err := probe(probeCtx, hc, s)
	if err != nil {
		return nil, fail("the server did not answer: "+describe(err), redactURLError(err))
	}
	if probeResp.StatusCode != http.StatusUnauthorized && !needsAuth(probeResp) {
		probeResp.Body.Close()
		if probeResp.StatusCode >= 300 {
			return nil, fail(fmt.Sprintf("the server answered HTTP %d instead of asking for a login (401)", probeResp.StatusCode), nil)
		}
		// The server asks for a login only for some requests (a tool's
		// call): the challenge the workbench was given then starts it.
		challenge, err := store.loadChallenge(s.URL)
		if err != nil || challenge == nil {
			return &LoginResult{NotNeeded: true}, nil
		}
		probeResp = challenge.response(probeReq)
	}

	var issuer, metadataURL string
	if oc := s.OAuth; oc != nil && oc.AuthServerMetadataURL != "" {
		metadataURL = oc.AuthServerMetadataURL
		hc, issuer, err = pinDiscovery(ctx, hc, s.URL, metadataURL)
		if err != nil {
			probeResp.Body.Close()
			return nil, fail("the authorization server metadata at oauth.authServerMetadataUrl: "+describe(err), err)
		}
	} else if issuer, err = discoverIssuer(ctx, hc, s.URL, probeResp); err != nil {
		probeResp.Body.Close()
		return nil, fail("authorization server discovery failed: "+describe(err), err)
	}

	rcv, err := listen(s)
	if err != nil {
		probeResp.Body.Close()
		return nil, fail(err.Error(), err)
	}
	defer rcv.close()

	var got struct {
		cfg *oauth2.Config
		tok *oauth2.Token
	}
	hcfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: rcv.redirectURL,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return rcv.fetch(ctx, args.URL, timeout, o.Show)
		},
		RequestRefreshToken:   true,
		AcceptUnadvertisedIss: true,
		Client:                hc,
		// The exchanged tokens, as they are: the SDK reads its token once
		// more (for the scopes granted), and a refreshing source would
		// spend a rotating refresh token there, on a token that lives less
		// than oauth2's margin, leaving the login with a spent one. The
		// login refreshes nothing; a Client does, storing what it gets.
		NewTokenSource: func(_ context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			got.cfg, got.tok = cfg, tok
			return oauth2.StaticTokenSource(tok), nil
		},
	}
	if oc := s.OAuth; oc != nil && oc.ClientID != "" {
		creds := &oauthex.ClientCredentials{ClientID: oc.ClientID}
		if oc.ClientSecret != "" {
			creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: oc.ClientSecret}
		}
		hcfg.PreregisteredClient = creds
	} else {
		hcfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName:              "MCP Workbench",
				RedirectURIs:            []string{rcv.redirectURL},
				GrantTypes:              []string{"authorization_code", "refresh_token"},
				ResponseTypes:           []string{"code"},
				TokenEndpointAuthMethod: "none",
			},
		}
	}
	// The scopes: the entry's oauth.scopes, else those the server offers;
	// and those it asked for beyond the last login's (step-up).
	var stepUp []string
	if old, err := store.Load(s.URL); err == nil && old != nil && len(old.StepUp) > 0 && mismatch(old, s) == "" {
		stepUp = unionScopes(old.Scopes, old.StepUp)
	}
	hcfg.ScopeFilter = func(offered []string) []string {
		if oc := s.OAuth; oc != nil && oc.Scopes != "" {
			offered = strings.Fields(oc.Scopes)
		}
		if len(stepUp) == 0 {
			return offered
		}
		return unionScopes(offered, stepUp)
	}
	h, err := auth.NewAuthorizationCodeHandler(hcfg)
	if err != nil {
		probeResp.Body.Close()
		return nil, fail("bad OAuth settings: "+describe(err), err)
	}
	if err := h.Authorize(ctx, probeReq, probeResp); err != nil {
		var le *Error
		if errors.As(err, &le) {
			return nil, le
		}
		return nil, fail(explainAuthorizeError(err), redactURLError(err))
	}
	if got.tok == nil || got.tok.AccessToken == "" {
		return nil, fail("the authorization server issued no access token", nil)
	}
	noteLifetime(got.tok)

	rec := &Record{
		ServerURL: s.URL, Issuer: issuer, MetadataURL: metadataURL,
		ClientID: got.cfg.ClientID, TokenURL: got.cfg.Endpoint.TokenURL, AuthStyle: got.cfg.Endpoint.AuthStyle,
		Scopes: got.cfg.Scopes, Token: got.tok, LoggedInAt: time.Now(),
	}
	if granted, ok := got.tok.Extra("scope").(string); ok && granted != "" {
		rec.Scopes = strings.Fields(granted)
	}
	rec.Scopes = slices.Clone(rec.Scopes)
	slices.Sort(rec.Scopes) // the order scopes were asked in is not always the same
	registered := hcfg.PreregisteredClient == nil
	if registered {
		rec.ClientSecret = got.cfg.ClientSecret // issued by the registration
	}
	release, err := store.Lock(ctx, s.URL)
	if err != nil {
		return nil, fail("storing the tokens: "+err.Error(), err)
	}
	err = store.Save(rec)
	if err == nil {
		store.deleteChallenge(s.URL) // answered
	}
	release()
	if err != nil {
		return nil, fail("storing the tokens: "+err.Error(), err)
	}
	return &LoginResult{
		Issuer: issuer, ClientID: rec.ClientID, Registered: registered, Scopes: rec.Scopes,
		Expiry: got.tok.Expiry, Refresh: got.tok.RefreshToken != "", TokenFile: store.Path(s.URL),
	}, nil
}

// Logout removes the stored login of a server; it reports whether there
// was one.
func Logout(ctx context.Context, store *Store, serverURL string) (bool, error) {
	release, err := store.Lock(ctx, serverURL)
	if err != nil {
		return false, err
	}
	defer release()
	store.deleteChallenge(serverURL)
	return store.Delete(serverURL)
}

// explainAuthorizeError turns the SDK's errors into the user's terms.
func explainAuthorizeError(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "state mismatch"):
		return "the redirect's state does not match the login this command started (state mismatch)"
	case strings.Contains(msg, "token exchange failed"):
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return "the authorization server refused the code (" + describeRetrieveError(re) + ")"
		}
		return "exchanging the code for a token failed: " + describe(err)
	case strings.Contains(msg, "failed to register client"):
		return "dynamic client registration failed (set oauth.clientId to a client registered beforehand): " + describe(err)
	case strings.Contains(msg, "no configured client registration methods"):
		return "the authorization server offers no dynamic client registration: set oauth.clientId (and oauth.callbackPort) to a client registered with it"
	}
	return describe(err)
}

// probeVersion is the protocol version the login's probe speaks.
const probeVersion = "2025-11-25"

// probe asks the server, without a token, for what a client would: for
// http an initialize POST and, if that is served, the initialized
// notification and a tools/list, for sse the event stream. The answer is
// the 401 whose WWW-Authenticate header starts discovery, or the last
// answer when none asks for a login. It never calls a tool.
func probe(ctx context.Context, hc *http.Client, s *config.Server) (*http.Request, *http.Response, error) {
	var session string
	send := func(method, body string) (*http.Request, *http.Response, error) {
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, s.URL, r)
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", probeVersion)
		}
		for k, v := range s.Headers {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		return req, resp, err
	}
	if s.Transport == config.SSE {
		return send(http.MethodGet, "")
	}
	req, resp, err := send(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+probeVersion+`","capabilities":{},"clientInfo":{"name":"mcp-workbench","version":"login"}}}`)
	if err == nil && s.TransportInferred && resp.StatusCode != http.StatusUnauthorized && resp.StatusCode >= 400 {
		resp.Body.Close()
		return send(http.MethodGet, "") // an SSE server at a url alone
	}
	if err != nil || resp.StatusCode >= 300 || needsAuth(resp) {
		return req, resp, err
	}
	// Served without a token: some servers ask for one only after
	// initialize. Its answer is not needed (an event stream may stay open).
	session = resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	first := resp
	if _, r, err := send(http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err == nil {
		r.Body.Close()
	}
	listReq, list, err := send(http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if session != "" {
		defer func() { // end the session the probe opened, as a client would
			if _, r, err := send(http.MethodDelete, ""); err == nil {
				r.Body.Close()
			}
		}()
	}
	if err == nil && (list.StatusCode == http.StatusUnauthorized || needsAuth(list)) {
		return listReq, list, nil
	}
	if err == nil {
		list.Body.Close()
	}
	first.Body = http.NoBody
	return req, first, nil
}

// discoverIssuer finds the authorization server the way the SDK's handler
// will, with the SDK's own functions, to name it in the record and report,
// and to fail early and clearly when it cannot be reached.
func discoverIssuer(ctx context.Context, hc *http.Client, serverURL string, resp *http.Response) (string, error) {
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return "", fmt.Errorf("the server's WWW-Authenticate header: %v", err)
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", err
	}
	root := *u
	root.Path, root.RawQuery = "", ""
	type candidate struct{ metadata, resource string }
	var candidates []candidate
	for _, ch := range challenges {
		if m := ch.Params["resource_metadata"]; m != "" {
			candidates = append(candidates, candidate{m, serverURL})
		}
	}
	pathURL := root
	pathURL.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/")
	rootURL := root
	rootURL.Path = "/.well-known/oauth-protected-resource"
	candidates = append(candidates, candidate{pathURL.String(), serverURL}, candidate{rootURL.String(), root.String()})
	as := root.String() // the 2025-03-26 fallback: the server's origin
	var prmErr error
	for _, c := range candidates {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.metadata, c.resource, hc)
		if err != nil {
			if prmErr == nil && !strings.Contains(err.Error(), "bad status 404") {
				prmErr = err
			}
			continue
		}
		if prm != nil && len(prm.AuthorizationServers) > 0 {
			as = prm.AuthorizationServers[0]
			prmErr = nil
			break
		}
	}
	asm, err := auth.GetAuthServerMetadata(ctx, as, hc)
	if err != nil {
		return "", fmt.Errorf("authorization server %s: %v", as, err)
	}
	if asm == nil {
		if prmErr != nil {
			return "", fmt.Errorf("protected resource metadata: %v", prmErr)
		}
		return as, nil // the SDK falls back to /authorize, /token, /register there
	}
	return asm.Issuer, nil
}

// receiver takes the authorization server's redirect on 127.0.0.1.
type receiver struct {
	ln          net.Listener
	srv         *http.Server
	redirectURL string
	serverName  string

	mu      sync.Mutex
	state   string // the state the authorization URL carries
	results chan callback
}

type callback struct {
	res *auth.AuthorizationResult
	err error
}

// listen opens the receiver: on the configured callbackPort, with the
// redirect http://localhost:PORT/callback that Claude Code registers, else
// on a free port with http://127.0.0.1:PORT/callback (RFC 8252 §7.3).
// Either way it listens on 127.0.0.1 only.
func listen(s *config.Server) (*receiver, error) {
	port, host := 0, "127.0.0.1"
	if s.OAuth != nil && s.OAuth.CallbackPort != 0 {
		port, host = s.OAuth.CallbackPort, "localhost"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		if port != 0 {
			return nil, fmt.Errorf("cannot receive the redirect on callback port %d (oauth.callbackPort): %v; stop what uses it or choose another port registered with the client", port, err)
		}
		return nil, fmt.Errorf("cannot listen for the redirect on 127.0.0.1: %v", err)
	}
	port = ln.Addr().(*net.TCPAddr).Port
	r := &receiver{
		ln:          ln,
		redirectURL: fmt.Sprintf("http://%s:%d/callback", host, port),
		serverName:  s.Name,
		results:     make(chan callback, 1),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", r.handle)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	r.mu.Lock()
	want := r.state
	r.mu.Unlock()
	var cb callback
	switch {
	case q.Get("error") != "":
		reason := q.Get("error")
		if d := q.Get("error_description"); d != "" {
			reason += ": " + d
		}
		cb.err = fmt.Errorf("the authorization server refused the login (%s)", reason)
	case want == "" || q.Get("state") != want:
		cb.err = errors.New("the redirect's state does not match the login this command started (state mismatch); start the login again")
	case q.Get("code") == "":
		cb.err = errors.New("the redirect carries no authorization code")
	default:
		cb.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	}
	select {
	case r.results <- cb:
	default: // a second redirect: the first one decides
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if cb.err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "<!doctype html><title>Login failed</title><p>MCP Workbench: the login to %s failed: %s</p>", html.EscapeString(r.serverName), html.EscapeString(cb.err.Error()))
		return
	}
	fmt.Fprintf(w, "<!doctype html><title>Logged in</title><p>MCP Workbench is logged in to %s. You can close this window.</p>", html.EscapeString(r.serverName))
}

// fetch shows the authorization URL and waits, bounded, for the redirect.
func (r *receiver) fetch(ctx context.Context, authURL string, timeout time.Duration, show func(context.Context, string) error) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.state = u.Query().Get("state")
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if show != nil {
		if err := show(ctx, authURL); err != nil {
			return nil, err
		}
	}
	select {
	case cb := <-r.results:
		return cb.res, cb.err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("no redirect from the browser within %v (was the window closed?); start the login again", timeout)
		}
		return nil, ctx.Err()
	}
}

func (r *receiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

// OpenBrowser opens url in the user's browser: $BROWSER when set (a
// command; %s in it stands for the URL, else the URL is its last
// argument), else the platform's opener. It does not wait for the browser.
func OpenBrowser(url string) error {
	var name string
	var args []string
	if b := strings.TrimSpace(os.Getenv("BROWSER")); b != "" {
		fields := strings.Fields(b)
		name, args = fields[0], fields[1:]
		replaced := false
		for i, a := range args {
			if strings.Contains(a, "%s") {
				args[i], replaced = strings.ReplaceAll(a, "%s", url), true
			}
		}
		if !replaced {
			args = append(args, url)
		}
	} else {
		switch runtime.GOOS {
		case "darwin":
			name, args = "open", []string{url}
		case "windows":
			name, args = "rundll32", []string{"url.dll,FileProtocolHandler", url}
		default:
			name, args = "xdg-open", []string{url}
		}
	}
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reap it; a browser may live on
	return nil
}
