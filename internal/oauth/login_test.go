package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth/oauthtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// home points every per-user folder at a fresh temporary one and makes
// $BROWSER this test binary, acting as a browser in mode.
func home(t *testing.T, mode string) *oauth.Store {
	t.Helper()
	dir := t.TempDir()
	for _, v := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "AppData", "LocalAppData"} {
		t.Setenv(v, dir)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", exe)
	t.Setenv(oauthtest.EnvBrowser, mode)
	store, err := oauth.DefaultStore()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(store.Dir, dir) {
		t.Fatalf("the token store %s is outside the test's home %s", store.Dir, dir)
	}
	return store
}

func remote(url string, transport config.Transport) *config.Server {
	return &config.Server{Name: "linear", Transport: transport, URL: url,
		ConnectionTimeout: 10 * time.Second, RequestTimeout: 10 * time.Second}
}

func login(t *testing.T, s *config.Server, timeout time.Duration) (*oauth.LoginResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return oauth.Login(ctx, oauth.LoginOptions{
		Toolbox: "dev", Server: s, Timeout: timeout,
		Show: func(_ context.Context, u string) error { return oauth.OpenBrowser(u) },
	})
}

// call connects to s through the SDK's transport with c as its OAuth
// handler and calls whoami.
func call(t *testing.T, s *config.Server, c *oauth.Client) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: s.URL, OAuthHandler: c}
	if s.Transport == config.SSE {
		tr = &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: c.HTTPClient(nil)}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return "", err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

func TestLoginThenCall(t *testing.T) {
	for _, tr := range []config.Transport{config.HTTP, config.SSE} {
		t.Run(string(tr), func(t *testing.T) {
			store := home(t, "follow")
			srv := oauthtest.Start(t, oauthtest.Options{SSE: tr == config.SSE})
			s := remote(srv.URL, tr)

			if _, err := call(t, s, oauth.NewClient("", "dev", s)); !isNeedsLogin(err) {
				t.Fatalf("before login: err = %v, want a needs-login error", err)
			} else if !strings.Contains(err.Error(), "run `mcp-workbench login dev linear`") {
				t.Errorf("the error does not give the command: %v", err)
			}

			res, err := login(t, s, 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if res.Issuer != srv.Issuer || !res.Registered || !res.Refresh || res.Expiry.IsZero() || !strings.HasPrefix(res.ClientID, "dyn-") {
				t.Errorf("login result = %+v", res)
			}
			if srv.Registrations.Load() != 1 || srv.Logins.Load() != 1 {
				t.Errorf("registrations %d, logins %d; want 1 and 1", srv.Registrations.Load(), srv.Logins.Load())
			}
			checkMode(t, store.Dir, 0o700)
			checkMode(t, res.TokenFile, 0o600)

			got, err := call(t, s, oauth.NewClient("", "dev", s))
			if err != nil || got != "you are logged in" {
				t.Fatalf("call after login = %q, %v", got, err)
			}
		})
	}
}

func isNeedsLogin(err error) bool {
	var oe *oauth.Error
	return errors.As(err, &oe) && oe.NeedsLogin()
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s: mode %04o, want %04o", filepath.Base(path), got, want)
	}
}

// TestLoginWithPreregisteredClient logs in with the oauth object's clientId
// and clientSecret, where the authorization server offers no dynamic
// registration, on the redirect port the client was registered with; the
// secret is sent to the token endpoint and written nowhere.
func TestLoginWithPreregisteredClient(t *testing.T) {
	store := home(t, "follow")
	const secret = "s3cret-client-value-7f1c"
	srv := oauthtest.Start(t, oauthtest.Options{ClientID: "wb-registered", Secret: secret})
	s := remote(srv.URL, config.HTTP)
	port := fakeserver.FreePort(t)
	s.OAuth = &config.OAuth{ClientID: "wb-registered", ClientSecret: secret, CallbackPort: port, Scopes: "tools offline_access"}

	res, err := login(t, s, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.ClientID != "wb-registered" || res.Registered || srv.Registrations.Load() != 0 {
		t.Errorf("login result = %+v, registrations %d; want the pre-registered client, no registration", res, srv.Registrations.Load())
	}
	got, err := call(t, s, oauth.NewClient("", "dev", s))
	if err != nil || got != "you are logged in" {
		t.Fatalf("call after login = %q, %v", got, err)
	}
	err = filepath.WalkDir(store.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(data), secret) {
			t.Errorf("%s holds the client secret", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// A wrong secret is refused by the authorization server, and the error
	// does not repeat it.
	home(t, "follow") // no token stored: a login must happen
	s.OAuth.ClientSecret = "wrong-secret-value-93ab"
	if _, err := login(t, s, 20*time.Second); err == nil {
		t.Error("a login with a wrong client secret succeeded")
	} else if strings.Contains(err.Error(), "wrong-secret-value-93ab") {
		t.Errorf("the error repeats the secret: %v", err)
	}
}

// TestLoginWithConfiguredMetadata logs in to a server whose authorization
// server no discovery finds, through the entry's oauth.authServerMetadataUrl.
func TestLoginWithConfiguredMetadata(t *testing.T) {
	home(t, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{NoDiscovery: true})
	s := remote(srv.URL, config.HTTP)

	if _, err := login(t, s, 20*time.Second); err == nil {
		t.Fatal("a login without the metadata's address succeeded where nothing can be discovered")
	}
	if srv.Logins.Load() != 0 {
		t.Fatalf("logins = %d before the metadata's address was configured", srv.Logins.Load())
	}

	s.OAuth = &config.OAuth{AuthServerMetadataURL: srv.Issuer + "/nowhere.json"}
	if _, err := login(t, s, 20*time.Second); err == nil || !strings.Contains(err.Error(), "oauth.authServerMetadataUrl: HTTP 404") {
		t.Errorf("login with a metadata address that answers 404: err = %v", err)
	}

	// Where the configured address sends the workbench is not trusted.
	s.OAuth.AuthServerMetadataURL = srv.Issuer + "/moved"
	if _, err := login(t, s, 20*time.Second); err == nil || !strings.Contains(err.Error(), "oauth.authServerMetadataUrl: it redirects to "+srv.MetadataURL) {
		t.Errorf("login with a metadata address that redirects: err = %v", err)
	}

	s.OAuth.AuthServerMetadataURL = srv.MetadataURL
	res, err := login(t, s, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Issuer != srv.Issuer || !res.Registered || srv.Logins.Load() != 1 {
		t.Errorf("login result = %+v, logins %d", res, srv.Logins.Load())
	}
	got, err := call(t, s, oauth.NewClient("", "dev", s))
	if err != nil || got != "you are logged in" {
		t.Fatalf("call after login = %q, %v", got, err)
	}
}

// TestStepUpScopes: a server that asks for a scope its login did not get
// (403 insufficient_scope) is reported as needing a login; the next login
// asks for that scope besides the ones it had, with nothing to configure.
func TestStepUpScopes(t *testing.T) {
	store := home(t, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{StepUpScope: "admin"})
	s := remote(srv.URL, config.HTTP)
	if _, err := login(t, s, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	_, err := call(t, s, oauth.NewClient("", "dev", s))
	if !isNeedsLogin(err) || !strings.Contains(err.Error(), `scopes the login was not granted ("tools admin"), which the next login asks for`) ||
		!strings.Contains(err.Error(), "run `mcp-workbench login dev linear`") {
		t.Fatalf("call with too few scopes: err = %v", err)
	}
	if rec, err := store.Load(s.URL); err != nil || !slices.Contains(rec.StepUp, "admin") {
		t.Fatalf("the stored login does not remember the scope asked for: %+v, %v", rec, err)
	}

	res, err := login(t, s, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Scopes, "admin") || !slices.Contains(res.Scopes, "tools") {
		t.Errorf("the login after the server asked for admin granted %v", res.Scopes)
	}
	if got, err := call(t, s, oauth.NewClient("", "dev", s)); err != nil || got != "you are logged in" {
		t.Fatalf("call after the login with the scope = %q, %v", got, err)
	}
}

// TestLoginToAServerThatIsNotThere says why the server did not answer.
func TestLoginToAServerThatIsNotThere(t *testing.T) {
	home(t, "follow")
	s := remote(fmt.Sprintf("http://127.0.0.1:%d/mcp?key=s3cret-in-query", fakeserver.FreePort(t)), config.HTTP)
	_, err := login(t, s, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "the server did not answer: dial tcp") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("login to a closed port: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "s3cret-in-query") {
		t.Errorf("the error shows the URL's query: %v", err)
	}
}
