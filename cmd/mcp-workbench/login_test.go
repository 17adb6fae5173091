package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/oauth/oauthtest"
)

// TestLoginCheckCallLogout is the user's path: validate and check say a
// login is needed and how; login goes through the browser; check and call
// work; logout removes the tokens. No token is ever printed.
func TestLoginCheckCallLogout(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "AppData", "LocalAppData"} {
		t.Setenv(v, dir)
	}
	exe, _ := os.Executable()
	t.Setenv("BROWSER", exe)
	t.Setenv(oauthtest.EnvBrowser, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{})
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "Remote tools", "mcpServers": map[string]any{
			"linear": map[string]any{"type": "http", "url": srv.URL, "oauth": map[string]any{"scopes": "tools"}},
		}},
	}})
	cmd := "mcp-workbench login --config " + cfg + " dev linear"

	code, out, _ := runCmd(t, "", "validate", "--config", cfg)
	if code != 0 || !strings.Contains(out, "login needed: run `"+cmd+"`") {
		t.Errorf("validate (%d):\n%s", code, out)
	}
	code, out, _ = runCmd(t, "", "check", "--config", cfg)
	if code != 1 || !strings.Contains(out, "login needed for server 'linear' (toolbox 'dev')") || !strings.Contains(out, cmd) ||
		strings.Contains(out, "not logged in") {
		t.Errorf("check before login (%d):\n%s", code, out)
	}

	code, out, errOut := runCmd(t, "", "login", "--config", cfg, "dev", "linear")
	if code != 0 {
		t.Fatalf("login (%d):\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"Logged in to dev/linear.", "issuer   " + srv.Issuer, "scopes   offline_access tools", "registered for this login", "refreshed automatically"} {
		if !strings.Contains(out, want) {
			t.Errorf("login's report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "http://127.0.0.1") || !strings.Contains(errOut, "/authorize?") {
		t.Errorf("login did not print the URL on stderr:\n%s", errOut)
	}

	code, out, _ = runCmd(t, "", "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "login: logged in ("+srv.Issuer+", expires ") {
		t.Errorf("check after login (%d):\n%s", code, out)
	}
	code, out, _ = runCmd(t, "", "call", "--config", cfg, "dev", "linear", "whoami")
	if code != 0 || strings.TrimSpace(out) != "you are logged in" {
		t.Errorf("call (%d): %s", code, out)
	}
	data, _ := os.ReadFile(firstTokenFile(t, dir))
	for _, s := range []string{"at-", "rt-"} {
		i := strings.Index(string(data), s)
		if i < 0 {
			t.Fatalf("no %s token stored", s)
		}
		tok := string(data[i : i+20])
		for _, o := range []string{out, errOut} {
			if strings.Contains(o, tok) {
				t.Errorf("a token was printed")
			}
		}
	}

	code, out, _ = runCmd(t, "", "logout", "--config", cfg, "dev", "linear")
	if code != 0 || !strings.Contains(out, "Logged out of linear") {
		t.Errorf("logout (%d): %s", code, out)
	}
	code, out, _ = runCmd(t, "", "logout", "--config", cfg, "dev", "linear")
	if code != 0 || !strings.Contains(out, "No login was stored") {
		t.Errorf("second logout (%d): %s", code, out)
	}
}

func TestLoginUsageErrors(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "d", "mcpServers": map[string]any{
			"local": fakeServerEntry("local"),
			"keyed": map[string]any{"url": "http://127.0.0.1:1/mcp", "headers": map[string]any{"Authorization": "Bearer x"}},
		}},
	}})
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"login", "--config", cfg}, 2, "login needs TOOLBOX SERVER"},
		{[]string{"login", "--config", cfg, "nope", "x"}, 2, `no toolbox "nope"`},
		{[]string{"login", "--config", cfg, "dev", "x"}, 2, `toolbox "dev" has no server "x" (servers: keyed, local)`},
		{[]string{"login", "--config", cfg, "dev", "local"}, 1, "it is a stdio server"},
		{[]string{"login", "--config", cfg, "dev", "keyed"}, 1, "it sends its own Authorization header"},
		{[]string{"logout", "--config", cfg, "dev"}, 2, "logout needs TOOLBOX SERVER"},
	} {
		code, _, errOut := runCmd(t, "", tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and %q", tt.args, code, errOut, tt.code, tt.want)
		}
	}
}

func firstTokenFile(t *testing.T, home string) string {
	t.Helper()
	var found string
	_ = walk(home, func(p string) {
		if strings.HasSuffix(p, ".json") && strings.Contains(p, "oauth") {
			found = p
		}
	})
	if found == "" {
		t.Fatal("no token file under the test's home")
	}
	return found
}

func walk(root string, f func(string)) error {
	entries, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := root + string(os.PathSeparator) + e.Name()
		if e.IsDir() {
			_ = walk(p, f)
		} else {
			f(p)
		}
	}
	return nil
}

// TestLoginThenServeWithRotatingShortLivedTokens: an authorization server
// that rotates refresh tokens (a spent one is refused with invalid_grant)
// and issues access tokens living 2 s, less than any fixed refresh margin.
// login stores tokens nothing spent; serve, check and call each refresh as
// they need and store every refresh token they get before it is used
// again: no spent refresh token is ever sent, and the store ends with a
// live one.
func TestLoginThenServeWithRotatingShortLivedTokens(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "AppData", "LocalAppData"} {
		t.Setenv(v, dir)
	}
	exe, _ := os.Executable()
	t.Setenv("BROWSER", exe)
	t.Setenv(oauthtest.EnvBrowser, "follow")
	srv := oauthtest.Start(t, oauthtest.Options{TokenTTL: 2 * time.Second})
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "Remote tools", "mcpServers": map[string]any{
			"linear": map[string]any{"type": "http", "url": srv.URL},
		}},
	}})
	code, out, errOut := runCmd(t, "", "login", "--config", cfg, "dev", "linear")
	if code != 0 || !strings.Contains(out, "refreshed automatically") {
		t.Fatalf("login (%d):\n%s\n%s", code, out, errOut)
	}
	stored := func(when string) {
		t.Helper()
		data, err := os.ReadFile(firstTokenFile(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Token struct {
				RefreshToken string `json:"refresh_token"`
			} `json:"token"`
		}
		if err := json.Unmarshal(data, &rec); err != nil || !srv.Holds(rec.Token.RefreshToken) {
			t.Fatalf("%s: the stored refresh token is not one the authorization server holds (spent or unknown; %v)", when, err)
		}
	}
	stored("after login")

	cs, _ := runInProcess(t, "--config", cfg)
	for i := range 3 {
		if text, isErr := callTool(t, cs, "use_tool", use("dev", "linear", "whoami", map[string]any{})); isErr || text != "you are logged in" {
			t.Fatalf("serve, call %d: %q (error %v)", i+1, text, isErr)
		}
	}
	stored("after serve")
	if code, out, errOut = runCmd(t, "", "check", "--config", cfg); code != 0 {
		t.Fatalf("check (%d):\n%s\n%s", code, out, errOut)
	}
	stored("after check")
	for i := range 2 {
		code, out, errOut = runCmd(t, "", "call", "--config", cfg, "dev", "linear", "whoami")
		if code != 0 || strings.TrimSpace(out) != "you are logged in" {
			t.Fatalf("call %d (%d): %s\n%s", i+1, code, out, errOut)
		}
	}
	stored("after call")
	if n := srv.Reuses.Load(); n != 0 {
		t.Errorf("a spent refresh token was sent again (%d times)", n)
	}
	if n := srv.Logins.Load(); n != 1 {
		t.Errorf("%d logins, want 1", n)
	}
}
