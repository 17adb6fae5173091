package oauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth/oauthtest"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// newWorkbench serves a toolbox "dev" of the protected server s and a
// local stdio server, as a host would see them.
func newWorkbench(t *testing.T, s *config.Server) *workbench.Workbench {
	t.Helper()
	cfg := &config.Config{Path: "workbench-config.json", Toolboxes: []*config.Toolbox{{
		Name: "dev", Description: "d", Servers: []*config.Server{s, fakeserver.Config("local", fakeserver.Env())},
	}}}
	wb := workbench.New(cfg, workbench.Options{Version: "test", Logger: slog.New(slog.NewTextHandler(tWriter{t}, nil))})
	t.Cleanup(wb.Close)
	return wb
}

type openResult struct {
	Servers []struct{ Name, Status, Error string } `json:"servers"`
}

func open(t *testing.T, ctx context.Context, wb *workbench.Workbench) map[string]string {
	t.Helper()
	res := wb.Open(ctx, "dev", false)
	var out openResult
	text := res.Content[0].(*mcp.TextContent).Text
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("open_toolbox result is not JSON: %s", text)
	}
	got := map[string]string{}
	for _, s := range out.Servers {
		got[s.Name] = s.Status + " " + s.Error
	}
	return got
}

func use(t *testing.T, wb *workbench.Workbench) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return string(wb.Use(ctx, "dev", "linear", "whoami", json.RawMessage(`{}`), nil))
}

func ctx30(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A toolbox with a server that needs a login opens with its other servers,
// naming the command; after the login the same toolbox has every server.
func TestServeNeedsLoginThenWorks(t *testing.T) {
	store := home(t, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{})
	s := remote(srv.URL, config.HTTP)

	got := open(t, ctx30(t), newWorkbench(t, s))
	if !strings.HasPrefix(got["local"], "connected") {
		t.Errorf("local = %q, want connected while linear needs a login", got["local"])
	}
	if !strings.Contains(got["linear"], "login needed for server 'linear' (toolbox 'dev')") || !strings.Contains(got["linear"], "run `mcp-workbench login dev linear`") {
		t.Errorf("linear = %q, want the login command", got["linear"])
	}
	if srv.Logins.Load() != 0 {
		t.Errorf("serving started a login")
	}

	res, err := login(t, s, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wb := newWorkbench(t, s)
	if got := open(t, ctx30(t), wb); !strings.HasPrefix(got["linear"], "connected") {
		t.Fatalf("after login linear = %q", got["linear"])
	}
	if out := use(t, wb); !strings.Contains(out, "you are logged in") {
		t.Fatalf("use_tool = %s", out)
	}
	data, _ := os.ReadFile(res.TokenFile)
	var rec oauth.Record
	_ = json.Unmarshal(data, &rec)

	// Expiry: the access token dies; a new workbench refreshes it once,
	// keeps the rotated refresh token, and the call works.
	srv.ExpireAccess()
	rec.Token.Expiry = time.Now().Add(-time.Minute)
	if err := store.Save(&rec); err != nil {
		t.Fatal(err)
	}
	wb = newWorkbench(t, s)
	if out := use(t, wb); !strings.Contains(out, "you are logged in") {
		t.Fatalf("use_tool after expiry = %s", out)
	}
	if n := srv.Refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
	after, err := store.Load(s.URL)
	if err != nil || after.Token.RefreshToken == rec.Token.RefreshToken || !srv.Holds(after.Token.RefreshToken) {
		t.Errorf("the rotated refresh token was not kept (err %v)", err)
	}
	for _, secret := range []string{after.Token.AccessToken, after.Token.RefreshToken} {
		if strings.Contains(use(t, wb), secret) {
			t.Errorf("a token appears in a tool result")
		}
	}

	// Revoked: the refresh is refused, and the server needs a login again,
	// at once rather than after retries.
	srv.Revoke()
	after.Token.Expiry = time.Now().Add(-time.Minute)
	if err := store.Save(after); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got = open(t, ctx30(t), newWorkbench(t, s))
	if !strings.Contains(got["linear"], "refused to refresh the login (invalid_grant") || !strings.Contains(got["linear"], "mcp-workbench login dev linear") {
		t.Errorf("after revocation linear = %q", got["linear"])
	}
	if strings.Contains(got["linear"], after.Token.RefreshToken) {
		t.Errorf("the refresh token appears in the error")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the open took %v", d)
	}

	// Logout removes the tokens.
	if had, err := oauth.Logout(context.Background(), store, s.URL); err != nil || !had {
		t.Fatalf("logout = %v, %v", had, err)
	}
	if _, err := os.Stat(res.TokenFile); !os.IsNotExist(err) {
		t.Errorf("token file still there after logout: %v", err)
	}
	if got := open(t, ctx30(t), newWorkbench(t, s)); !strings.Contains(got["linear"], "none is stored") {
		t.Errorf("after logout linear = %q", got["linear"])
	}
}

// A server that refuses the token its authorization server just issued
// fails once, clearly, with no new login and no loop.
func TestFreshTokenRefused(t *testing.T) {
	home(t, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{RejectTokens: true})
	s := remote(srv.URL, config.HTTP)
	s.MaxRetries = 2
	if _, err := login(t, s, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	got := open(t, ctx30(t), newWorkbench(t, s))
	if !strings.Contains(got["linear"], "refused a token its authorization server issued moments ago") || !strings.Contains(got["linear"], "(1 attempt)") {
		t.Errorf("linear = %q", got["linear"])
	}
	if srv.Logins.Load() != 1 || srv.Refreshes.Load() != 0 {
		t.Errorf("logins %d, refreshes %d: want 1 and 0", srv.Logins.Load(), srv.Refreshes.Load())
	}
}

// Two processes whose token expired refresh at once: one spends the
// refresh token, the other takes its result; neither is refused.
func TestConcurrentRefresh(t *testing.T) {
	store := home(t, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{})
	s := remote(srv.URL, config.HTTP)
	loginExpired(t, store, s, nil)
	var wg sync.WaitGroup
	tokens := make([]string, 4)
	errs := make([]error, 4)
	for i := range tokens {
		wg.Go(func() {
			c := oauth.NewClient("", "dev", s) // each its own process, as far as the store knows
			ts, err := c.TokenSource(context.Background())
			if err != nil || ts == nil {
				errs[i] = err
				return
			}
			tok, err := ts.Token()
			if err == nil {
				tokens[i] = tok.AccessToken
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil || tokens[i] != tokens[0] {
			t.Errorf("client %d: %v (token same as the first: %v)", i, err, tokens[i] == tokens[0])
		}
	}
	if n := srv.Refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
}

// A host that declared URL-mode elicitation is shown the login page; the
// open completes once the redirect arrives.
func TestLoginThroughHostElicitation(t *testing.T) {
	// 2026-07-28 hosts get the login page as an input request of
	// open_toolbox's result and call it again; for older ones the SDK
	// asks the host and calls the handler again.
	// A user who declines gets the open with the server needing a login,
	// and the login is given up.
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, action := range []string{"accept", "decline"} {
			t.Run(version+"/"+action, func(t *testing.T) { loginThroughHost(t, version, action) })
		}
	}
}

func loginThroughHost(t *testing.T, version, action string) {
	home(t, "close") // the workbench must not open a browser itself
	srv := oauthtest.Start(t, oauthtest.Options{})
	s := remote(srv.URL, config.HTTP)
	wb := newWorkbench(t, s)

	var shown []string
	host := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			shown = append(shown, req.Params.Message)
			if action == "accept" {
				go func() { // the user's browser
					if resp, err := http.Get(req.Params.URL); err == nil {
						resp.Body.Close()
					}
				}()
			}
			return &mcp.ElicitResult{Action: action}, nil
		},
	})
	hostR, wbW := io.Pipe()
	wbR, hostW := io.Pipe()
	ss, err := wb.Connect(ctx30(t), wbR, wbW)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ss.Close()
		wbR.Close()
		wbW.Close()
	}()
	ct := &mcp.IOTransport{Reader: hostR, Writer: hostW}
	cs, err := host.Connect(ctx30(t), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx30(t), &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox_name": "dev"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if action == "accept" {
		if !strings.Contains(text, `"servers_connected":2`) || !strings.Contains(text, `"whoami"`) {
			t.Errorf("open_toolbox = %s", text)
		}
	} else {
		if !strings.Contains(text, `"servers_connected":1`) || !strings.Contains(text, "run `mcp-workbench login dev linear`") {
			t.Errorf("open_toolbox after a declined login = %s", text)
		}
		if n := srv.Logins.Load(); n != 0 {
			t.Errorf("%d logins after the user declined", n)
		}
	}
	if len(shown) != 1 || !strings.Contains(shown[0], "'linear' (toolbox 'dev')") {
		t.Errorf("elicitations = %q", shown)
	}
}

// Each fault of a login ends it with an error that names toolbox and
// server and says what happened.
func TestLoginFaults(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port

	tests := []struct {
		name    string
		opts    oauthtest.Options
		browser string
		setup   func(*oauthtest.Server, *config.Server)
		want    string
	}{
		{name: "authorization server unreachable", browser: "follow",
			setup: func(srv *oauthtest.Server, _ *config.Server) { srv.StopAuthServer() },
			want:  "authorization server discovery failed: authorization server http://127.0.0.1"},
		{name: "bad metadata", browser: "follow", opts: oauthtest.Options{BadMetadata: true},
			want: "does not match issuer URL"},
		{name: "metadata of the wrong types", browser: "follow", opts: oauthtest.Options{MistypedMetadata: true},
			want: `expected a string at "issuer", got a number`},
		{name: "registration answer that cannot be read", browser: "follow", opts: oauthtest.Options{MistypedRegistration: true},
			want: `dynamic client registration failed (set oauth.clientId to a client registered beforehand): failed to register client: failed to decode successful registration response: expected a number at "client_id_issued_at", got a string`},
		{name: "state mismatch", browser: "follow", opts: oauthtest.Options{WrongState: true},
			want: "state mismatch"},
		{name: "browser closed", browser: "close",
			want: "no redirect from the browser within 1s (was the window closed?)"},
		{name: "callback port in use", browser: "follow",
			setup: func(_ *oauthtest.Server, s *config.Server) {
				s.OAuth = &config.OAuth{CallbackPort: busyPort}
			},
			want: "cannot receive the redirect on callback port " + strconv.Itoa(busyPort) + " (oauth.callbackPort)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := home(t, tt.browser)
			srv := oauthtest.Start(t, tt.opts)
			s := remote(srv.URL, config.HTTP)
			if tt.setup != nil {
				tt.setup(srv, s)
			}
			// Only the closed browser must meet the login's timeout; the
			// other faults get a generous one, which a busy machine's slow
			// round trips must not reach before the fault shows.
			timeout := 20 * time.Second
			if tt.browser == "close" {
				timeout = time.Second
			}
			start := time.Now()
			_, err := login(t, s, timeout)
			if err == nil {
				t.Fatal("login succeeded")
			}
			if !strings.Contains(err.Error(), "server 'linear' (toolbox 'dev')") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to name the server and contain %q", err, tt.want)
			}
			for _, never := range []string{oauthtest.RegistrationSecret, "s3cr3t", "Go struct", "Go value", "oauthex."} {
				if strings.Contains(err.Error(), never) {
					t.Errorf("error %q shows %q", err, never)
				}
			}
			if d := time.Since(start); d > 19*time.Second { // under the timeout: the fault ended the login, not the wait
				t.Errorf("the login took %v", d)
			}
			if rec, _ := store.Load(s.URL); rec != nil {
				t.Errorf("a failed login stored tokens")
			}
		})
	}
}

// A token file that is corrupt or readable by others is refused with the
// reason, and the server needs a login.
func TestBadTokenFiles(t *testing.T) {
	for _, tt := range []struct {
		name  string
		spoil func(path string)
		want  string
	}{
		{"corrupt", func(p string) { os.WriteFile(p, []byte(`{"token": {"access_token": "x"`), 0o600) }, "corrupt token file"},
		{"loose permissions", func(p string) { os.Chmod(p, 0o644) }, "refusing a token file that other users can read (mode 0644"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := home(t, "follow")
			srv := oauthtest.Start(t, oauthtest.Options{})
			s := remote(srv.URL, config.HTTP)
			if _, err := login(t, s, 20*time.Second); err != nil {
				t.Fatal(err)
			}
			tt.spoil(store.Path(s.URL))
			got := open(t, ctx30(t), newWorkbench(t, s))
			if !strings.Contains(got["linear"], tt.want) || !strings.Contains(got["linear"], "mcp-workbench login dev linear") {
				t.Errorf("linear = %q, want %q and the login command", got["linear"], tt.want)
			}
		})
	}
}

// tWriter sends the workbench's log to the test's log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// A login removed or refused while a client holds its token source (a
// logout, another process finding the file corrupt, a reconnect's Reload)
// makes the next token a needs-login error, never a crash.
func TestTokenAfterTheLoginIsGone(t *testing.T) {
	store := home(t, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{})
	s := remote(srv.URL, config.HTTP)
	loginExpired(t, store, s, nil) // the next token needs a refresh
	c := oauth.NewClient("", "dev", s)
	ts, err := c.TokenSource(context.Background())
	if err != nil || ts == nil {
		t.Fatalf("token source: %v, %v", ts, err)
	}
	if _, err := store.Delete(s.URL); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the refresh finds no login; then there is none
		if _, err := ts.Token(); !isNeedsLogin(err) || !strings.Contains(err.Error(), "the stored login was removed") {
			t.Errorf("token %d after logout: %v", i+1, err)
		}
	}
	c.Reload()
	if _, err := ts.Token(); !isNeedsLogin(err) {
		t.Errorf("token after a reload with no login stored: %v", err)
	}
}

// Two requests sent with the same token both get a 401: the first one's
// refresh serves the second, which is sent again with the new token rather
// than taken for a server that refuses fresh tokens.
func TestStale401AfterARefresh(t *testing.T) {
	store := home(t, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{})
	s := remote(srv.URL, config.HTTP)
	var old string
	loginExpired(t, store, s, func(rec *oauth.Record) {
		old = rec.Token.AccessToken
		rec.LoggedInAt = time.Now().Add(-time.Hour) // not a fresh token
	})
	c := oauth.NewClient("", "dev", s)
	unauthorized := func() (*http.Request, *http.Response) {
		req, _ := http.NewRequest(http.MethodPost, s.URL, nil)
		req.Header.Set("Authorization", "Bearer "+old)
		return req, &http.Response{StatusCode: http.StatusUnauthorized, Status: "401 Unauthorized",
			Header: http.Header{"Www-Authenticate": {`Bearer error="invalid_token"`}}, Body: http.NoBody}
	}
	for i := range 2 {
		req, resp := unauthorized()
		if err := c.Authorize(context.Background(), req, resp); err != nil {
			t.Errorf("401 %d of a request sent with the old token: %v", i+1, err)
		}
	}
	if n := srv.Refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
}

// An authorization server that does not answer a refresh makes the
// server's start fail with the reason, and the start is retried: the
// authorization server may be back a moment later.
func TestRefreshWhileTheAuthorizationServerIsDown(t *testing.T) {
	store := home(t, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{})
	s := remote(srv.URL, config.HTTP)
	s.MaxRetries = 1
	loginExpired(t, store, s, nil)
	srv.StopAuthServer()
	got := open(t, ctx30(t), newWorkbench(t, s))
	want := "server 'linear' (toolbox 'dev'): the authorization server did not answer a refresh of the login: dial tcp"
	if !strings.Contains(got["linear"], want) || !strings.Contains(got["linear"], "(2 attempts)") {
		t.Errorf("linear = %q\nwant %q after 2 attempts", got["linear"], want)
	}
	if !strings.HasPrefix(got["local"], "connected") {
		t.Errorf("local = %q", got["local"])
	}
}

// A token endpoint that is down (503) or limiting (429) is an outage, not
// a refused login: the start is retried, and nobody is sent to log in.
func TestRefreshDuringAnOutage(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			store := home(t, "follow")
			srv := oauthtest.Start(t, oauthtest.Options{})
			s := remote(srv.URL, config.HTTP)
			s.MaxRetries = 1
			loginExpired(t, store, s, nil)
			srv.FailTokens(status)
			got := open(t, ctx30(t), newWorkbench(t, s))
			want := fmt.Sprintf("server 'linear' (toolbox 'dev'): the authorization server could not refresh the login just now (HTTP %d)", status)
			if !strings.Contains(got["linear"], want) || !strings.Contains(got["linear"], "(2 attempts)") || strings.Contains(got["linear"], "mcp-workbench login") {
				t.Errorf("linear = %q\nwant %q after 2 attempts, and no login asked for", got["linear"], want)
			}
			srv.FailTokens(0)
			if out := use(t, newWorkbench(t, s)); !strings.Contains(out, "you are logged in") {
				t.Errorf("use_tool once the authorization server is back: %s", out)
			}
		})
	}
}

// A login made while a client has none stored (after a logout, say) is
// taken at the next request, without a new connection.
func TestLoginAfterLogoutWithoutReconnecting(t *testing.T) {
	home(t, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{})
	s := remote(srv.URL, config.HTTP)
	c := oauth.NewClient("", "dev", s)
	if ts, err := c.TokenSource(context.Background()); ts != nil || err != nil {
		t.Fatalf("token source before any login: %v, %v", ts, err)
	}
	if _, err := login(t, s, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	ts, err := c.TokenSource(context.Background())
	if err != nil || ts == nil {
		t.Fatalf("token source after the login: %v, %v", ts, err)
	}
	if tok, err := ts.Token(); err != nil || !srv.Holds(tok.AccessToken) {
		t.Errorf("token after the login: %v", err)
	}
}

// A token folder that other users can read is refused before the browser
// opens, not after the user has logged in.
func TestLoginRefusesAnOpenTokenFolder(t *testing.T) {
	store := home(t, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{})
	s := remote(srv.URL, config.HTTP)
	if err := os.MkdirAll(store.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(store.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := login(t, s, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "no place for tokens: "+store.Dir+": refusing a token folder that other users can read (mode 0755, want 0700): chmod 700 ") {
		t.Errorf("login into an open token folder: %v", err)
	}
	if n := srv.Registrations.Load() + srv.Logins.Load(); n != 0 {
		t.Errorf("the login went on to the authorization server (%d requests)", n)
	}
}

// The SDK's discovery protections stay on for a public server: its
// metadata cannot send the workbench to a private or a loopback address.
// A server on a loopback address may have its authorization server there
// too.
func TestDiscoveryOfAPublicServerStaysPublic(t *testing.T) {
	var asked atomic.Int32
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"resource": %q, "authorization_servers": ["https://as.example"]}`, "http://"+r.Host+"/mcp")
	}))
	defer local.Close()
	ctx := ctx30(t)

	// 203.0.113.0/24 is for documentation: public as far as the workbench
	// can tell; nothing is dialled there, and nothing at 10.1.2.3 either.
	public := oauth.HTTPClientFor("https://203.0.113.7/mcp", "")
	for metadata, want := range map[string]string{
		local.URL + "/.well-known/oauth-protected-resource/mcp": "a public server's authorization may not lead to a private or loopback address",
		"https://10.1.2.3/.well-known/oauth-protected-resource": "refers to a non-public address", // the SDK's own check
	} {
		_, err := oauthex.GetProtectedResourceMetadata(ctx, metadata, local.URL+"/mcp", public)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a public server's discovery of %s: err = %v, want %q", metadata, err, want)
		}
	}
	if asked.Load() != 0 {
		t.Errorf("a public server's discovery reached the loopback server")
	}
	metadata := local.URL + "/.well-known/oauth-protected-resource/mcp"
	if _, err := oauthex.GetProtectedResourceMetadata(ctx, metadata, local.URL+"/mcp", oauth.HTTPClientFor(local.URL+"/mcp", "")); err != nil || asked.Load() != 1 {
		t.Errorf("a loopback server's own discovery: err = %v, requests %d", err, asked.Load())
	}
	// A public server whose entry names an authorization server on a
	// private address: the user's own configuration says so.
	if _, err := oauthex.GetProtectedResourceMetadata(ctx, metadata, local.URL+"/mcp", oauth.HTTPClientFor("https://203.0.113.7/mcp", local.URL+"/as.json")); err != nil || asked.Load() != 2 {
		t.Errorf("a public server with a configured private authorization server: err = %v, requests %d", err, asked.Load())
	}
}

// loginExpired logs in to s and makes the stored access token expired, as
// time would, after edit (if any) has changed the record further.
func loginExpired(t *testing.T, store *oauth.Store, s *config.Server, edit func(*oauth.Record)) {
	t.Helper()
	if _, err := login(t, s, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	rec, err := store.Load(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	rec.Token.Expiry = time.Now().Add(-time.Minute)
	if edit != nil {
		edit(rec)
	}
	if err := store.Save(rec); err != nil {
		t.Fatal(err)
	}
}
