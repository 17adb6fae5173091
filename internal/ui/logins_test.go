package ui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth/oauthtest"
)

// TestLoginsSignInAndOut: against the local OAuth test servers, Sign in
// gives the authorization page's address; the browser opens it, the
// authorization server approves and redirects to the login's receiver on
// 127.0.0.1, and the page shows the server signed in, by itself; Sign out
// removes the tokens. No token reaches the page.
func TestLoginsSignInAndOut(t *testing.T) {
	srv := oauthtest.Start(t, oauthtest.Options{})
	u := newUITest(t, func(string) string {
		b, _ := json.Marshal(map[string]any{"toolboxes": map[string]any{"dev": map[string]any{"description": "Remote tools",
			"mcpServers": map[string]any{"linear": map[string]any{"type": "http", "url": srv.URL, "oauth": map[string]any{"scopes": "tools"}}}}}})
		return string(b)
	})
	ctx := browser(t)
	u.open(ctx, "logins")
	row := `tr[data-login-row="dev/linear"]`
	u.run(ctx,
		chromedp.WaitVisible(chromedp.CSS(row+`[data-logged-in="no"]`)),
		chromedp.Click(chromedp.CSS(`[data-login="dev/linear"]`)),
		chromedp.WaitVisible(chromedp.CSS("#login-link")),
	)
	u.shot(ctx, "logins")
	u.run(ctx,
		chromedp.Click(chromedp.CSS("#login-link")),
		chromedp.WaitVisible(chromedp.CSS(row+`[data-logged-in="yes"]`)),
	)
	signedIn := u.text(ctx, row)
	if !strings.Contains(signedIn, "signed in") || !strings.Contains(signedIn, "logged in") {
		t.Errorf("the signed-in row: %q", signedIn)
	}
	store, err := oauth.DefaultStore()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := store.Load(srv.URL)
	if err != nil || rec == nil || rec.Token.AccessToken == "" {
		t.Fatalf("no token stored: %v", err)
	}
	_, page := u.request("GET", "/api/logins", "", u.authed())
	_, now := u.request("GET", "/api/now", "", u.authed())
	for _, tok := range []string{rec.Token.AccessToken, rec.Token.RefreshToken} {
		if tok != "" && (strings.Contains(page, tok) || strings.Contains(now, tok)) {
			t.Errorf("an answer shows a token: %s\n%s", page, now)
		}
	}
	u.run(ctx,
		chromedp.Click(chromedp.CSS(`[data-logout="dev/linear"]`)),
		chromedp.WaitVisible(chromedp.CSS(row+`[data-logged-in="no"]`)),
	)
}
