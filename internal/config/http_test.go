package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const httpToolboxes = `"toolboxes": {"dev": {"description": "Development tools", "mcpServers": {"a": {"command": "a"}}},
	"ops": {"description": "Operations", "access": {"subjects": ["alice"], "groups": ["sre"]}, "mcpServers": {"a": {"command": "a"}}}}`

// TestHTTPBlock: the "http" block is read with its defaults filled in,
// relative files taken from the configuration's folder, and a toolbox's
// "access" decides who sees it.
func TestHTTPBlock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "workbench.json")
	// An absolute path as the system writes one (a drive letter on Windows).
	absKey, err := filepath.Abs(filepath.FromSlash("/abs/key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	keyJSON, _ := json.Marshal(absKey)
	doc := `{"http": {"listen": "0.0.0.0:9000", "publicUrl": "https://wb.example.com/mcp",
		"tls": {"certFile": "cert.pem", "keyFile": ` + string(keyJSON) + `},
		"auth": {"tokens": "tokens.json", "oauth": {"issuer": "https://idp.example.com", "scopes": ["mcp"]}},
		"stateKey": "${STATE_KEY}", "limits": {"maxSessions": 5, "sessionIdleMs": 60000, "callsPerSecond": 2.5, "maxConnections": 64, "readTimeoutMs": 500}, "logFormat": "json"},
		` + httpToolboxes + `}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	key := strings.Repeat("k", 40)
	cfg, err := LoadWith(path, func(name string) (string, bool) { return key, name == "STATE_KEY" })
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.HTTP
	if h.Listen != "0.0.0.0:9000" || h.PublicURL != "https://wb.example.com/mcp" || !h.JSONLogs || h.StateKey != key {
		t.Errorf("http: %+v", h)
	}
	if h.CertFile != filepath.Join(dir, "cert.pem") || h.KeyFile != absKey || h.Tokens != filepath.Join(dir, "tokens.json") {
		t.Errorf("files: cert %q key %q tokens %q; want relative ones in the configuration's folder", h.CertFile, h.KeyFile, h.Tokens)
	}
	if h.OAuth == nil || h.OAuth.Issuer != "https://idp.example.com" || !slices.Equal(h.OAuth.Scopes, []string{"mcp"}) || !h.HasAuth() {
		t.Errorf("oauth: %+v", h.OAuth)
	}
	l := h.Limits
	if l.MaxSessions != 5 || l.SessionIdle != time.Minute || l.CallsPerSecond != 2.5 || l.MaxBodyBytes != DefaultMaxBodyBytes || l.Burst != DefaultBurst || l.Shutdown != DefaultShutdown {
		t.Errorf("limits: %+v; want the given ones and the defaults", l)
	}
	if l.MaxConnections != 64 || l.ReadTimeout != 500*time.Millisecond || l.WriteTimeout != DefaultWriteTimeout || l.IdleConnection != DefaultIdleConnection {
		t.Errorf("connection limits: %+v; want the given ones and the defaults", l)
	}
	names := func(c *Config) (out []string) {
		for _, tb := range c.Toolboxes {
			out = append(out, tb.Name)
		}
		return out
	}
	for _, c := range []struct {
		subject string
		groups  []string
		want    []string
	}{
		{"alice", nil, []string{"dev", "ops"}},
		{"bob", []string{"sre"}, []string{"dev", "ops"}},
		{"carol", []string{"eng"}, []string{"dev"}},
		{"", nil, []string{"dev"}},
	} {
		if got := names(cfg.ForUser(c.subject, c.groups)); !slices.Equal(got, c.want) {
			t.Errorf("%s %v sees %v; want %v", c.subject, c.groups, got, c.want)
		}
	}
	if len(cfg.Toolboxes) != 2 {
		t.Errorf("ForUser changed the configuration it was called on")
	}

	// Without the block: loopback, every default, no auth.
	plain := mustParse(t, `{`+httpToolboxes+`}`)
	if plain.HTTP.Listen != DefaultHTTPListen || plain.HTTP.HasAuth() || plain.HTTP.Limits != (HTTPLimits{}).OrDefaults() {
		t.Errorf("no http block: %+v", plain.HTTP)
	}
}

// TestHTTPBlockProblems: each bad value is named by its path.
func TestHTTPBlockProblems(t *testing.T) {
	_, err := Parse([]byte(`{"http": {"listen": "8080", "publicUrl": "ftp://x", "stateKey": "short",
		"allowedOrigins": ["https://ok.example.com", "https://x.example.com/path"],
		"auth": {"oauth": {"issuer": "idp.example.com"}, "tokenz": true},
		"limits": {"maxSessions": 0, "burst": "many", "maxConnections": 0, "idleConnectionMs": 5, "writeTimeoutMs": "long"}, "logFormat": "xml"},
		"toolboxes": {"dev": {"description": "d", "access": {"groups": "eng"}, "mcpServers": {"a": {"command": "a"}}}}}`), env(nil))
	wantProblems(t, err, map[string]string{
		"http.listen":                  "host:port",
		"http.publicUrl":               "not an http(s) URL",
		"http.stateKey":                "at least 32",
		"http.allowedOrigins.1":        "not an origin",
		"http.auth.tokenz":             `did you mean "tokens"`,
		"http.auth.oauth":              "audience",
		"http.auth.oauth.issuer":       "not an http(s) URL",
		"http.limits.maxSessions":      "at least 1",
		"http.limits.burst":            "number",
		"http.limits.maxConnections":   "at least 1",
		"http.limits.idleConnectionMs": "at least 100",
		"http.limits.writeTimeoutMs":   "number",
		"http.logFormat":               "json",
		"toolboxes.dev.access.groups":  "array",
	})
}
