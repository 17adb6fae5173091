package ui

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

const secret = "sekrit-4f1c9e-value"

func secretConfig(t *testing.T) func(tag string) string {
	return func(tag string) string {
		return `{"toolboxes": {"dev": {"description": "d", "mcpServers": {
			"fake": ` + fake(t, tag, "fake", "API_KEY", secret) + `,
			"remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ` + secret + `"}}}}}}`
	}
}

// TestRefusesWithoutTokenForeignOriginOrHost: every request needs the
// token (header, cookie, or once in the address), a Host that names the
// page's own loopback address (DNS rebinding), and no Origin but its own;
// a change needs POST with the page's Origin.
func TestRefusesWithoutTokenForeignOriginOrHost(t *testing.T) {
	u := newUITest(t, secretConfig(t))
	tok := u.s.Token()
	port := u.base[strings.LastIndexByte(u.base, ':')+1:]
	cases := []struct {
		name         string
		method, path string
		headers      map[string]string
		body         string
		want         int
	}{
		{"no token", "GET", "/api/now", nil, "", http.StatusUnauthorized},
		{"no token, page", "GET", "/", nil, "", http.StatusUnauthorized},
		{"no token, script", "GET", "/app.js", nil, "", http.StatusUnauthorized},
		{"wrong token header", "GET", "/api/now", map[string]string{HeaderName: tok[:len(tok)-1] + "x"}, "", http.StatusUnauthorized},
		{"wrong token cookie", "GET", "/api/now", map[string]string{"Cookie": CookieName + "=nope"}, "", http.StatusUnauthorized},
		{"wrong token in the address", "GET", "/?token=nope", nil, "", http.StatusUnauthorized},
		{"foreign origin", "GET", "/api/now", map[string]string{HeaderName: tok, "Origin": "http://evil.example"}, "", http.StatusForbidden},
		{"foreign origin, post", "POST", "/api/search", map[string]string{HeaderName: tok, "Origin": "http://evil.example"}, `{"query":"x"}`, http.StatusForbidden},
		{"rebinding host", "GET", "/api/now", map[string]string{HeaderName: tok, "Host": "evil.example:" + port}, "", http.StatusMisdirectedRequest},
		{"rebinding host, token in the address", "GET", "/?token=" + tok, map[string]string{"Host": "evil.example:" + port}, "", http.StatusMisdirectedRequest},
		{"other port", "GET", "/api/now", map[string]string{HeaderName: tok, "Host": "127.0.0.1:1"}, "", http.StatusMisdirectedRequest},
		{"post without origin", "POST", "/api/search", map[string]string{HeaderName: tok}, `{"query":"x"}`, http.StatusForbidden},
		{"change by GET", "GET", "/api/approve", map[string]string{HeaderName: tok}, "", http.StatusMethodNotAllowed},
		{"other method", "PUT", "/api/search", u.authed(), `{}`, http.StatusMethodNotAllowed},
		{"body too large", "POST", "/api/call", u.authed(), `{"toolbox":"` + strings.Repeat("x", maxBody) + `"}`, http.StatusBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := u.request(c.method, c.path, c.body, c.headers)
			if code != c.want {
				t.Fatalf("status %d, want %d; body %q", code, c.want, body)
			}
			if strings.Contains(body, tok) {
				t.Fatalf("the refusal shows the token: %q", body)
			}
		})
	}
	// And what works: the token in the address becomes a cookie.
	code, _ := u.request("GET", "/?token="+tok, "", nil)
	if code != http.StatusSeeOther {
		t.Fatalf("the address with the token: status %d, want 303", code)
	}
	if code, body := u.request("GET", "/api/now", "", map[string]string{"Cookie": CookieName + "=" + tok}); code != http.StatusOK {
		t.Fatalf("with the cookie: status %d: %s", code, body)
	}
	if code, body := u.request("GET", "/api/now", "", map[string]string{HeaderName: tok, "Host": "localhost:" + port}); code != http.StatusOK {
		t.Fatalf("Host localhost: status %d: %s", code, body)
	}
}

// TestNothingSecretInThePage: no env or header value of the
// configuration, and not the token, in the page, its script, the Now data
// (also its stream) or a search, while a workbench runs the server.
func TestNothingSecretInThePage(t *testing.T) {
	u := newUITest(t, secretConfig(t))
	wb := u.hostWorkbench()
	wb.Open(t.Context(), "dev", false)
	h := u.authed()
	// The state file is written a moment after the change (debounced).
	fakeserver.Eventually(t, "the Now data shows the running server", func() bool {
		_, body := u.request("GET", "/api/now", "", h)
		return strings.Contains(body, `"connected"`)
	})
	var seen []string
	for _, p := range []string{"/", "/app.js", "/app.css", "/api/now"} {
		code, body := u.request("GET", p, "", h)
		if code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", p, code, body)
		}
		seen = append(seen, body)
	}
	code, body := u.request("POST", "/api/search", `{"query":"echo the arguments"}`, h)
	if code != http.StatusOK {
		t.Fatalf("search: status %d: %s", code, body)
	}
	seen = append(seen, body)
	req, _ := http.NewRequest("GET", u.base+"/api/events", nil)
	req.Header.Set(HeaderName, u.s.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			seen = append(seen, line)
			break
		}
	}
	resp.Body.Close()
	for i, s := range seen {
		if strings.Contains(s, secret) || strings.Contains(s, u.s.Token()) {
			t.Errorf("answer %d shows a secret: %s", i, s)
		}
	}
	if strings.Contains(u.logs.String(), u.s.Token()) {
		t.Errorf("the log shows the token")
	}
}
