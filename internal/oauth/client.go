// Package oauth logs the workbench in to remote MCP servers that ask for
// OAuth, as MCP's authorization spec describes: go-sdk's
// [auth.AuthorizationCodeHandler] runs discovery, registration, PKCE and the
// code exchange; this package adds what a command-line program around it
// needs — the loopback redirect receiver, the browser, the token store
// shared by every workbench process, refresh without the user, and errors
// that say which command to run.
//
// While serving, a [Client] is the [auth.OAuthHandler] of a streamable HTTP
// server (and the bearer of an SSE server's requests): it sends the stored
// token, refreshes it, and answers a 401 it cannot fix with an [*Error]
// that asks for `mcp-workbench login`. It never opens a browser itself.
package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Applies reports whether a server may be logged in to: a remote server
// that sends no Authorization header of its own.
func Applies(s *config.Server) bool {
	return (s.Transport == config.HTTP || s.Transport == config.SSE) && !s.AuthorizationHeader()
}

// loginCommand is the command that logs in to server of toolbox, with
// --config when the configuration is not the one found by default.
func loginCommand(configPath, toolbox, server string) string {
	cmd := "mcp-workbench login"
	if configPath != "" && configPath != config.DefaultPath {
		if abs, err := filepath.Abs(configPath); err == nil {
			configPath = abs
		}
		cmd += " --config " + config.ShellQuote(configPath)
	}
	return cmd + " " + config.ShellQuote(toolbox) + " " + config.ShellQuote(server)
}

// Error is a login problem of one server: it names the toolbox and server,
// says why, and, when a login would fix it, the command to run. Its text
// never holds a token or a client secret.
type Error struct {
	Toolbox, Server string
	// Command is the login command when a login would help, else "".
	Command string
	Reason  string
	Err     error
	// Transient is set when trying again later may work (an authorization
	// server that did not answer a refresh).
	Transient bool
}

func (e *Error) Error() string {
	switch {
	case e.Command != "":
		return fmt.Sprintf("login needed for server '%s' (toolbox '%s'): %s; run `%s`", e.Server, e.Toolbox, e.Reason, e.Command)
	case e.Transient:
		return fmt.Sprintf("server '%s' (toolbox '%s'): %s", e.Server, e.Toolbox, e.Reason)
	}
	return fmt.Sprintf("login to server '%s' (toolbox '%s') failed: %s", e.Server, e.Toolbox, e.Reason)
}

func (e *Error) Unwrap() error { return e.Err }

// NeedsLogin reports whether a login would fix e.
func (e *Error) NeedsLogin() bool { return e.Command != "" }

// Client is the OAuth side of one remote server of one toolbox while the
// workbench serves. It is safe for concurrent use.
type Client struct {
	Toolbox, Server string
	cfg             *config.Server
	command         string
	store           *Store
	storeErr        error
	http            func() *http.Client // discovery and token requests

	mu      sync.Mutex
	loaded  bool
	rec     *Record
	loadErr error     // why the stored record was refused
	fresh   time.Time // when this process last got a token from the authorization server
	// spent are the refresh tokens this client sent to the token
	// endpoint: with rotation each works once, so none is sent again.
	spent map[string]bool
}

// NewClient returns the Client of server s of toolbox, with tokens from the
// user's store. configPath goes into the login command of its errors.
func NewClient(configPath, toolbox string, s *config.Server) *Client {
	store, err := DefaultStore()
	return &Client{
		Toolbox: toolbox, Server: s.Name, cfg: s,
		command: loginCommand(configPath, toolbox, s.Name),
		store:   store, storeErr: err,
		http: sync.OnceValue(func() *http.Client { return httpClientFor(s) }),
	}
}

// Store is where c keeps its login: nil when the default store could not
// be found.
func (c *Client) Store() *Store { return c.store }

// WithStore makes c use store (a user's own, serving over HTTP; tests).
func (c *Client) WithStore(store *Store) *Client {
	c.store, c.storeErr = store, nil
	return c
}

var _ auth.OAuthHandler = (*Client)(nil)

// Reload forgets what was read from the store, so that the next request
// sees a login made since by another process. Connect attempts call it.
func (c *Client) Reload() {
	c.mu.Lock()
	c.loaded, c.rec, c.loadErr = false, nil, nil
	c.mu.Unlock()
}

func (c *Client) needsLogin(reason string, err error) *Error {
	return &Error{Toolbox: c.Toolbox, Server: c.Server, Command: c.command, Reason: reason, Err: err}
}

func (c *Client) failed(reason string, err error) *Error {
	return &Error{Toolbox: c.Toolbox, Server: c.Server, Reason: reason, Err: err}
}

// loadLocked reads the stored record once per connection while it is
// usable, and again at each use while there is none (a login made since
// counts). A record for another client or authorization server than the
// configuration names is not used.
func (c *Client) loadLocked() {
	if c.loaded && c.rec != nil && c.loadErr == nil {
		return
	}
	c.loaded = true
	if c.storeErr != nil {
		c.loadErr = c.storeErr
		return
	}
	rec, err := c.store.Load(c.cfg.URL)
	if err != nil {
		c.loadErr = err
		return
	}
	if rec != nil {
		if reason := mismatch(rec, c.cfg); reason != "" {
			c.loadErr = errors.New(reason)
			return
		}
	}
	c.rec = rec
}

// mismatch says why a stored record does not fit the configuration, or "".
func mismatch(rec *Record, s *config.Server) string {
	o := s.OAuth
	switch {
	case o == nil:
	case o.ClientID != "" && o.ClientID != rec.ClientID:
		return "the stored login is for another client than oauth.clientId"
	case o.AuthServerMetadataURL != "" && o.AuthServerMetadataURL != rec.MetadataURL:
		return "the stored login is from another authorization server than oauth.authServerMetadataUrl names"
	}
	return ""
}

// TokenSource is the stored token, refreshed when it expires; nil when
// there is no usable login (the server's 401 then leads to Authorize).
func (c *Client) TokenSource(context.Context) (oauth2.TokenSource, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loadLocked()
	if c.rec == nil {
		return nil, nil
	}
	return (*tokenSource)(c), nil
}

type tokenSource Client

// Token returns the access token, refreshing it first if it expired.
func (ts *tokenSource) Token() (*oauth2.Token, error) {
	c := (*Client)(ts)
	c.mu.Lock()
	defer c.mu.Unlock()
	// The record may be gone since TokenSource: a Reload, or a refresh
	// that found the login removed or refused.
	c.loadLocked()
	switch {
	case c.loadErr != nil:
		return nil, c.needsLogin(c.loadErr.Error(), c.loadErr)
	case c.rec == nil:
		return nil, c.needsLogin("the stored login was removed (logout?)", nil)
	case c.rec.usable():
		return c.rec.Token, nil
	}
	if err := c.refreshLocked(c.rec.Token.AccessToken); err != nil {
		return nil, err
	}
	return c.rec.Token, nil
}

// refreshTimeout bounds a refresh: one round trip to the token endpoint.
var refreshTimeout = 30 * time.Second

// refreshLocked gets a new access token for the one the caller saw
// refused or expired. Under the store's lock it reads the record again: if
// another process refreshed meanwhile, its token is taken as is; otherwise
// the newest refresh token is spent and the result written back before the
// lock is released, so a rotated refresh token is never lost.
func (c *Client) refreshLocked(seen string) error {
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	release, err := c.store.Lock(ctx, c.cfg.URL)
	if err != nil {
		e := c.failed("cannot refresh the login: "+err.Error(), err)
		var fe *fileError
		e.Transient = !errors.As(err, &fe) // a folder open to others stays so
		return e
	}
	defer release()
	rec, err := c.store.Load(c.cfg.URL)
	if err == nil && rec != nil {
		if reason := mismatch(rec, c.cfg); reason != "" {
			err = errors.New(reason) // a login another configuration made
		}
	}
	switch {
	case err != nil:
		c.rec, c.loadErr = nil, err
		return c.needsLogin(err.Error(), err)
	case rec == nil:
		c.rec = nil
		return c.needsLogin("the stored login was removed (logout?)", nil)
	case rec.Token.AccessToken != seen && rec.usable():
		c.rec = rec // another process refreshed it
		return nil
	case rec.Token.RefreshToken == "":
		c.rec = rec
		return c.needsLogin("the access token expired and the authorization server gave no refresh token", nil)
	case c.spent[rec.Token.RefreshToken]:
		// The store still holds a refresh token this client spent: its
		// write of the next one failed. The record in memory has that one.
		if c.rec == nil || c.rec.Token == nil || c.rec.Token.RefreshToken == "" || c.spent[c.rec.Token.RefreshToken] {
			return c.needsLogin("the stored refresh token was used already and the one that replaced it was not kept", nil)
		}
		if c.rec.usable() && c.rec.Token.AccessToken != seen {
			return nil
		}
		rec = c.rec
	}
	cfg := &oauth2.Config{
		ClientID:     rec.ClientID,
		ClientSecret: rec.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: rec.TokenURL, AuthStyle: rec.AuthStyle},
		Scopes:       rec.Scopes,
	}
	if o := c.cfg.OAuth; o != nil && o.ClientSecret != "" && o.ClientID == rec.ClientID {
		cfg.ClientSecret = o.ClientSecret
	}
	spending := rec.Token.RefreshToken
	tok, err := cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, c.http()), &oauth2.Token{RefreshToken: spending}).Token()
	var re *oauth2.RetrieveError
	if err == nil || (errors.As(err, &re) && !unavailable(re)) {
		// The authorization server took the refresh token (and refused it
		// or rotated it): it is gone. An outage's answer leaves it.
		if c.spent == nil {
			c.spent = map[string]bool{}
		}
		c.spent[spending] = true
	}
	if err != nil {
		var e *Error
		switch {
		case errors.As(err, &re) && !unavailable(re):
			// Revoked, expired or unknown refresh token: only a login helps.
			return c.needsLogin("the authorization server refused to refresh the login ("+describeRetrieveError(re)+")", errNoDetail)
		case re != nil:
			e = c.failed("the authorization server could not refresh the login just now ("+describeRetrieveError(re)+")", errNoDetail)
		default:
			e = c.failed("the authorization server did not answer a refresh of the login: "+describe(err), redactURLError(err))
		}
		e.Transient = true // it may be back a moment later
		return e
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = spending // not rotated: it stays valid
		delete(c.spent, spending)
	}
	noteLifetime(tok)
	next := *rec
	next.Token = tok
	// The new tokens are used from now on, stored or not: the refresh
	// token they replace is spent.
	c.rec, c.fresh = &next, time.Now()
	if err := c.store.Save(&next); err != nil {
		e := c.failed("saving the refreshed login: "+err.Error(), err)
		e.Transient = true
		return e
	}
	return nil
}

// unavailable reports whether a token endpoint's refusal is an outage or a
// rate limit (HTTP 5xx or 429 without an OAuth error code), which passes,
// rather than a refusal of the refresh token, which a login mends.
func unavailable(re *oauth2.RetrieveError) bool {
	if re.ErrorCode != "" || re.Response == nil {
		return false
	}
	return re.Response.StatusCode >= 500 || re.Response.StatusCode == http.StatusTooManyRequests
}

// errNoDetail stands for an error whose text may quote a server's answer.
var errNoDetail = errors.New("details withheld")

// describeRetrieveError says what a token endpoint refused, from the
// standard fields only: its body may echo what was sent.
func describeRetrieveError(re *oauth2.RetrieveError) string {
	s := re.ErrorCode
	if s == "" && re.Response != nil {
		s = fmt.Sprintf("HTTP %d", re.Response.StatusCode)
	}
	if re.ErrorDescription != "" {
		s += ": " + re.ErrorDescription
	}
	return s
}

// redactURLError keeps a network error's cause without the URL's query.
func redactURLError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && strings.Contains(err.Error(), "?") {
		return ue.Unwrap()
	}
	return err
}

// freshWindow is how long after getting a token a 401 for it means the
// server does not accept what its authorization server issues, rather than
// a token that was revoked.
var freshWindow = time.Minute

// Authorize handles a 401 (or a 403 asking for more scope) from the server.
// While serving it never runs a login: a stored refresh token is spent if
// the refused token was not just issued; otherwise the answer is an
// [*Error] that asks for `mcp-workbench login`, and the transport does not
// try again (no loop).
func (c *Client) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden {
		if bearerParam(challenges, "error") != "insufficient_scope" {
			return nil // not an authorization matter: the transport reports it as it is
		}
		// Step-up: the next login asks for these scopes besides its own.
		scopes := bearerParam(challenges, "scope")
		if scopes == "" {
			return c.needsLogin("the server asks for scopes the login was not granted, without naming them; list them in the entry's oauth.scopes, then log in again", nil)
		}
		switch c.rememberStepUp(strings.Fields(scopes)) {
		case stepUpGranted:
			// A login asks for no more than it was granted: no loop of logins.
			return c.failed(fmt.Sprintf("the server refuses the token for lack of scopes (%q) that its login was granted; logging in again would not help: the server's authorization does not accept what its authorization server grants", scopes), nil)
		case stepUpNoted:
			return c.needsLogin(fmt.Sprintf("the server asks for scopes the login was not granted (%q), which the next login asks for", scopes), nil)
		}
		return c.needsLogin(fmt.Sprintf("the server asks for scopes the login was not granted (%q); list them in the entry's oauth.scopes, then log in again", scopes), nil)
	}
	sent := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
	if sent == "" && !hasBearer(challenges) {
		// Not an OAuth server: it wants some other credential (a header).
		// Not an *Error, so that the connect is retried as any refusal.
		return fmt.Errorf("HTTP %s without asking for an OAuth login (no WWW-Authenticate: Bearer); does the server need a header such as Authorization?", resp.Status)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loadLocked()
	switch {
	case c.loadErr != nil:
		return c.needsLogin(c.loadErr.Error(), c.loadErr)
	case c.rec == nil:
		// The next login starts from this challenge if the server
		// answers its probe without one (it asks only for some requests).
		if c.store != nil {
			_ = c.store.saveChallenge(c.cfg.URL, resp.Header.Values("WWW-Authenticate"))
		}
		return c.needsLogin("the server asks for an OAuth login and none is stored", nil)
	case sent == "" && c.rec.usable():
		return nil // a login since this request was sent: send it again with it
	case sent == "":
		return c.needsLogin("the stored login could not be used", nil)
	case sent != c.rec.Token.AccessToken && c.rec.usable():
		return nil // refreshed since this request was sent: send it again
	case !c.rec.usable():
		// It expired on its way (a token that lives seconds): refresh.
	case time.Since(c.fresh) < freshWindow || time.Since(c.rec.LoggedInAt) < freshWindow:
		return c.failed("the server refused a token its authorization server issued moments ago (HTTP 401); check the server's resource URL and scopes", nil)
	}
	return c.refreshLocked(sent)
}

// What rememberStepUp did with the scopes a server asked for.
type stepUp int

const (
	stepUpNotNoted stepUp = iota // no usable stored login to note them in
	stepUpNoted                  // the next login asks for them
	stepUpGranted                // the stored login was granted them all already
)

// rememberStepUp adds scopes to the stored login's step-up scopes, under
// the store's lock, and says whether they are noted there, or were granted
// to the login already (another login would not help). Without a usable
// stored login there is nothing to add to.
func (c *Client) rememberStepUp(scopes []string) stepUp {
	if c.store == nil {
		return stepUpNotNoted
	}
	ctx, cancel := context.WithTimeout(context.Background(), lockWait)
	defer cancel()
	release, err := c.store.Lock(ctx, c.cfg.URL)
	if err != nil {
		return stepUpNotNoted
	}
	defer release()
	rec, err := c.store.Load(c.cfg.URL)
	if err != nil || rec == nil || mismatch(rec, c.cfg) != "" {
		return stepUpNotNoted
	}
	if len(unionScopes(rec.Scopes, scopes)) == len(unionScopes(rec.Scopes, nil)) {
		return stepUpGranted
	}
	union := unionScopes(rec.StepUp, scopes)
	if len(union) == len(rec.StepUp) {
		return stepUpNoted
	}
	rec.StepUp = union
	if c.store.Save(rec) != nil {
		return stepUpNotNoted
	}
	return stepUpNoted
}

// unionScopes is a and b without repeats, sorted.
func unionScopes(a, b []string) []string {
	u := slices.Concat(a, b)
	slices.Sort(u)
	return slices.Compact(u)
}

func hasBearer(cs []oauthex.Challenge) bool {
	for _, ch := range cs {
		if ch.Scheme == "bearer" {
			return true
		}
	}
	return false
}

func bearerParam(cs []oauthex.Challenge, name string) string {
	for _, ch := range cs {
		if ch.Scheme == "bearer" && ch.Params[name] != "" {
			return ch.Params[name]
		}
	}
	return ""
}

// HTTPClient returns a client for the SSE transport: base's requests
// (http.DefaultTransport if nil) with c's bearer token; see RoundTripper.
func (c *Client) HTTPClient(base http.RoundTripper) *http.Client {
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: c.RoundTripper(base)}
}

// RoundTripper returns base with c's bearer token on every request and a
// 401 handled as [Client.Authorize] does, retrying the request once after a
// refresh: what the SDK's streamable transport does with an OAuthHandler,
// for the SSE transport, which has no such hook.
func (c *Client) RoundTripper(base http.RoundTripper) http.RoundTripper {
	return &bearerTransport{c: c, base: base}
}

type bearerTransport struct {
	c    *Client
	base http.RoundTripper
}

func (t *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	send := func() (*http.Request, *http.Response, error) {
		r := req.Clone(req.Context())
		if req.Body != nil && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, nil, err
			}
			r.Body = body
		}
		ts, _ := t.c.TokenSource(req.Context())
		if ts != nil {
			tok, err := ts.Token()
			if err != nil {
				return nil, nil, err
			}
			r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
		resp, err := t.base.RoundTrip(r)
		return r, resp, err
	}
	r, resp, err := send()
	if err != nil || !needsAuth(resp) {
		return resp, err
	}
	if err := t.c.Authorize(req.Context(), r, resp); err != nil {
		return nil, err
	}
	if req.Body != nil && req.GetBody == nil {
		return nil, t.c.failed("the request cannot be sent again after a refresh", nil)
	}
	_, resp, err = send()
	return resp, err
}

func needsAuth(resp *http.Response) bool {
	if resp.StatusCode == http.StatusUnauthorized {
		return true
	}
	if resp.StatusCode != http.StatusForbidden {
		return false
	}
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	return bearerParam(cs, "error") == "insufficient_scope"
}

// httpClientFor is the client for discovery and token requests of server
// s. The SDK's discovery protections stay on (no redirects into private or
// loopback addresses, no dials into private ones), and a public server's
// requests do not dial loopback addresses either, which the SDK leaves open
// for local development. A server whose own address is private or
// loopback may have its authorization server there too, and so may one
// whose entry names its authorization server's metadata on such an
// address (oauth.authServerMetadataUrl): the configuration is the user's.
func httpClientFor(s *config.Server) *http.Client {
	base, _ := http.DefaultTransport.(*http.Transport)
	if base == nil {
		return http.DefaultClient
	}
	t := base.Clone()
	// A transport without a dialer of its own gets the SDK's checks.
	t.DialContext = nil
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	switch {
	case isPrivateHost(s.URL) || (s.OAuth != nil && s.OAuth.AuthServerMetadataURL != "" && isPrivateHost(s.OAuth.AuthServerMetadataURL)):
		// The SDK leaves the dialing of a transport with its own dialer alone.
		t.DialContext = dialer.DialContext
	case !proxied(t):
		// Through a proxy every dial is to the proxy: the SDK checks none.
		dialer.Control = refuseNonPublic
		t.DialContext = dialer.DialContext
	}
	return &http.Client{Transport: t, Timeout: 60 * time.Second}
}

// proxied reports whether t sends requests through a proxy.
func proxied(t *http.Transport) bool {
	if t.Proxy == nil {
		return false
	}
	u, err := t.Proxy(&http.Request{URL: &url.URL{Scheme: "https", Host: "authorization.example"}})
	return err == nil && u != nil
}

var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT

// refuseNonPublic is the dial check of a public server's requests: the
// addresses the SDK's discovery refuses, and loopback.
func refuseNonPublic(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("refusing to dial %q: not an IP address", host)
	}
	ip = ip.Unmap()
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() || sharedAddressSpace.Contains(ip) {
		return fmt.Errorf("refusing to dial %s: a public server's authorization may not lead to a private or loopback address", ip)
	}
	return nil
}

func isPrivateHost(serverURL string) bool {
	u, err := url.Parse(serverURL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ips := []netip.Addr{}
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = append(ips, ip)
	} else if addrs, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host); err == nil {
		ips = addrs
	}
	for _, ip := range ips {
		ip = ip.Unmap()
		if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() {
			return true
		}
	}
	return false
}
