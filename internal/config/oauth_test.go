package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestOAuthObject(t *testing.T) {
	doc := `{"toolboxes": {"dev": {"description": "d", "mcpServers": {
		"linear": {"type": "http", "url": "https://mcp.linear.app/mcp", "oauth": {
			"clientId": "abc", "clientSecret": "${SECRET}", "callbackPort": 8080,
			"authServerMetadataUrl": "https://auth.example.com/.well-known/oauth-authorization-server",
			"scopes": " read  write ", "extra": 1}},
		"auto": {"url": "https://example.com/mcp"}}}}}`
	cfg, err := Parse([]byte(doc), env(map[string]string{"SECRET": "s3cr3t"}))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Toolbox("dev").Server("linear").OAuth
	want := &OAuth{ClientID: "abc", ClientSecret: "s3cr3t", CallbackPort: 8080,
		AuthServerMetadataURL: "https://auth.example.com/.well-known/oauth-authorization-server", Scopes: "read write"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("oauth = %+v, want %+v", got, want)
	}
	if o := cfg.Toolbox("dev").Server("auto").OAuth; o != nil {
		t.Errorf("a server without oauth has %+v", o)
	}
	if w := strings.Join(cfg.Warnings, "\n"); !strings.Contains(w, "toolboxes.dev.mcpServers.linear.oauth.extra: unknown oauth key") {
		t.Errorf("warnings do not name the unknown oauth key:\n%s", w)
	} else if strings.Contains(w, "authServerMetadataUrl") {
		t.Errorf("a usable authServerMetadataUrl is warned about:\n%s", w)
	}
}

func TestOAuthProblems(t *testing.T) {
	doc := `{"toolboxes": {"dev": {"description": "d", "mcpServers": {
		"a": {"url": "https://a.example/mcp", "oauth": {"clientSecret": "hunter2-secret"}},
		"b": {"url": "https://b.example/mcp", "oauth": {"authServerMetadataUrl": "http://auth.example/x", "callbackPort": 70000}},
		"c": {"url": "https://c.example/mcp", "oauth": {"scopes": "  ", "clientId": 7}},
		"d": {"url": "https://d.example/mcp", "oauth": "yes"}}}}}`
	_, err := Parse([]byte(doc), env(nil))
	wantProblems(t, err, map[string]string{
		"toolboxes.dev.mcpServers.a.oauth.clientSecret":          `needs "clientId"`,
		"toolboxes.dev.mcpServers.b.oauth.authServerMetadataUrl": `must be an https:// URL, got "http://auth.example/x"`,
		"toolboxes.dev.mcpServers.b.oauth.callbackPort":          "65535",
		"toolboxes.dev.mcpServers.c.oauth.scopes":                "must not be blank",
		"toolboxes.dev.mcpServers.c.oauth.clientId":              "must be a string",
		"toolboxes.dev.mcpServers.d.oauth":                       "must be an object",
	})
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the client secret appears in the error:\n%v", err)
	}
}

func TestOAuthIgnoredWarnings(t *testing.T) {
	doc := `{"toolboxes": {"dev": {"description": "d", "mcpServers": {
		"local": {"command": "x", "oauth": {}},
		"keyed": {"url": "https://k.example/mcp", "headers": {"authorization": "Bearer x"}, "oauth": {"clientId": "c"}}}}}}`
	cfg, err := Parse([]byte(doc), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(cfg.Warnings, "\n")
	for _, frag := range []string{"local.oauth: ignored: this is a stdio server", "keyed.oauth: ignored: the server's Authorization header"} {
		if !strings.Contains(w, frag) {
			t.Errorf("warnings lack %q:\n%s", frag, w)
		}
	}
}
