package oauth_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth/oauthtest"
)

// envRefresher makes the re-executed test binary a workbench process that
// gets a token for the server at its URL, refreshing it if it expired, and
// prints it.
const envRefresher = "OAUTH_TEST_REFRESHER"

// maybeRefresh is the refresher process (see envRefresher).
func maybeRefresh() {
	url := os.Getenv(envRefresher)
	if url == "" {
		return
	}
	s := remote(url, config.HTTP)
	ts, err := oauth.NewClient("", "dev", s).TokenSource(context.Background())
	if err != nil || ts == nil {
		fmt.Fprintln(os.Stderr, "refresher: no token source:", err)
		os.Exit(1)
	}
	tok, err := ts.Token()
	if err != nil {
		fmt.Fprintln(os.Stderr, "refresher:", err)
		os.Exit(1)
	}
	fmt.Print(tok.AccessToken)
	os.Exit(0)
}

// Rotating refresh tokens: the access token expires again and again; each
// refresh spends the newest refresh token, once, whether the refreshers
// are calls of one client, clients of one process, or processes sharing
// the token store.
func TestRotatingRefreshTokensAreSpentOnce(t *testing.T) {
	store := home(t, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{})
	s := remote(srv.URL, config.HTTP)
	loginExpired(t, store, s, nil)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	shared := oauth.NewClient("", "dev", s) // one server's client, as serve has
	for round := 1; round <= 3; round++ {
		before, err := store.Load(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var failures []string
		fail := func(format string, args ...any) {
			mu.Lock()
			failures = append(failures, fmt.Sprintf(format, args...))
			mu.Unlock()
		}
		token := func(c *oauth.Client, who string) {
			ts, err := c.TokenSource(context.Background())
			if err != nil || ts == nil {
				fail("%s: token source %v, %v", who, ts, err)
				return
			}
			if tok, err := ts.Token(); err != nil || !srv.Holds(tok.AccessToken) {
				fail("%s: %v (live token: %v)", who, err, err == nil && srv.Holds(tok.AccessToken))
			}
		}
		for i := range 3 {
			wg.Go(func() { token(shared, fmt.Sprintf("call %d of one client", i)) })
			wg.Go(func() { token(oauth.NewClient("", "dev", s), fmt.Sprintf("client %d", i)) })
		}
		for i := range 2 {
			wg.Go(func() {
				cmd := exec.Command(exe)
				cmd.Env = append(os.Environ(), envRefresher+"="+s.URL, oauthtest.EnvBrowser+"=")
				out, err := cmd.Output()
				if err != nil {
					var stderr string
					if ee, ok := err.(*exec.ExitError); ok {
						stderr = string(ee.Stderr)
					}
					fail("process %d: %v: %s", i, err, stderr)
				} else if !srv.Holds(string(out)) {
					fail("process %d: got a token the server does not hold", i)
				}
			})
		}
		wg.Wait()
		for _, f := range failures {
			t.Errorf("round %d: %s", round, f)
		}
		if n := srv.Refreshes.Load(); n != int32(round) {
			t.Errorf("round %d: %d refreshes in all, want %d (one a round)", round, n, round)
		}
		if n := srv.Reuses.Load(); n != 0 {
			t.Fatalf("round %d: a spent refresh token was sent again (%d times)", round, n)
		}
		after, err := store.Load(s.URL)
		if err != nil || after.Token.RefreshToken == before.Token.RefreshToken || !srv.Holds(after.Token.RefreshToken) {
			t.Fatalf("round %d: the rotated refresh token was not stored (err %v)", round, err)
		}
		// Time passes: the access token expires, for the server and the store.
		srv.ExpireAccess()
		after.Token.Expiry = time.Now().Add(-time.Minute)
		if err := store.Save(after); err != nil {
			t.Fatal(err)
		}
	}
}

// A server that serves initialize without a token and asks for one only
// on tools/list or tools/call can be logged in to: login finds the 401 of
// a tools/list itself, and a tools/call's 401 that a call was given.
func TestLoginAfterALate401(t *testing.T) {
	for _, method := range []string{"tools/list", "tools/call"} {
		t.Run(strings.ReplaceAll(method, "/", "-"), func(t *testing.T) {
			home(t, "follow")
			srv := oauthtest.Start(t, oauthtest.Options{LateAuth: method})
			s := remote(srv.URL, config.HTTP)
			if method == "tools/call" {
				// Nothing before the call asks for a login: login has no
				// challenge to start from yet, and says so.
				if res, err := login(t, s, 20*time.Second); err != nil || !res.NotNeeded {
					t.Fatalf("login before any call: %+v, %v; want nothing to do", res, err)
				}
				_, err := call(t, s, oauth.NewClient("", "dev", s))
				if !isNeedsLogin(err) || !strings.Contains(err.Error(), "run `mcp-workbench login dev linear`") {
					t.Fatalf("call before login: err = %v, want a needs-login error with the command", err)
				}
			}
			res, err := login(t, s, 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if res.NotNeeded || srv.Logins.Load() != 1 {
				t.Fatalf("login = %+v, logins %d: want a login", res, srv.Logins.Load())
			}
			if got, err := call(t, s, oauth.NewClient("", "dev", s)); err != nil || got != "you are logged in" {
				t.Fatalf("call after login = %q, %v", got, err)
			}
		})
	}
}

// A 403 insufficient_scope leads to a login for the wider scope once; a
// server that still refuses the scopes the login was granted is not sent
// to another login (no loop), and says why.
func TestStepUpIsBounded(t *testing.T) {
	home(t, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{StepUpScope: "admin", ScopeNeverEnough: true})
	s := remote(srv.URL, config.HTTP)
	if _, err := login(t, s, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	_, err := call(t, s, oauth.NewClient("", "dev", s))
	if !isNeedsLogin(err) || !strings.Contains(err.Error(), "which the next login asks for") {
		t.Fatalf("first 403: err = %v, want a login for the wider scope", err)
	}
	res, err := login(t, s, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Scopes, " "), "admin") {
		t.Fatalf("the step-up login was granted %v", res.Scopes)
	}
	_, err = call(t, s, oauth.NewClient("", "dev", s))
	if err == nil || isNeedsLogin(err) || !strings.Contains(err.Error(), "logging in again would not help") {
		t.Fatalf("403 for scopes the login was granted: err = %v, want no login asked for", err)
	}
	if n := srv.Logins.Load(); n != 2 {
		t.Errorf("%d logins, want 2", n)
	}
}

// A token that lives less than the 30 s refresh margin is used for most of
// its life, not refreshed at every request: the margin is a quarter of the
// lifetime the authorization server gave (expires_in, kept in the store).
// The test needs only that 21 s do not pass between the login and the use.
func TestShortLivedTokenIsNotRefreshedAtEachUse(t *testing.T) {
	store := home(t, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{TokenTTL: 29 * time.Second})
	s := remote(srv.URL, config.HTTP)
	if _, err := login(t, s, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	rec, err := store.Load(s.URL)
	if err != nil || rec.Token.ExpiresIn != 29 {
		t.Fatalf("the stored token's lifetime: %+v, %v; want expires_in 29", rec, err)
	}
	c := oauth.NewClient("", "dev", s)
	for i := range 3 {
		ts, err := c.TokenSource(context.Background())
		if err != nil || ts == nil {
			t.Fatalf("use %d: token source %v, %v", i+1, ts, err)
		}
		if tok, err := ts.Token(); err != nil || tok.AccessToken != rec.Token.AccessToken {
			t.Fatalf("use %d: %v (the login's token: %v)", i+1, err, err == nil && tok.AccessToken == rec.Token.AccessToken)
		}
	}
	if n := srv.Refreshes.Load(); n != 0 {
		t.Errorf("%d refreshes of a token with most of its life ahead", n)
	}
}
