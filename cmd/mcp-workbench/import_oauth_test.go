package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
)

// A Claude Code entry's oauth object comes over unchanged, and the result
// loads with it, without warnings about it.
func TestImportCarriesOAuth(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, ".claude.json")
	if err := os.WriteFile(src, []byte(`{"mcpServers": {"linear": {"type": "http", "url": "https://mcp.linear.app/mcp",
		"oauth": {"clientId": "abc", "callbackPort": 8080, "scopes": "read write", "clientSecret": "${LINEAR_SECRET}"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "workbench-config.json")
	code, _, errOut := runImportCmd(t, src, "--out", out)
	if code != 0 {
		t.Fatalf("import (%d): %s", code, errOut)
	}
	t.Setenv("LINEAR_SECRET", "s")
	cfg, err := config.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Toolboxes[0].Server("linear")
	if s == nil || s.OAuth == nil || s.OAuth.ClientID != "abc" || s.OAuth.CallbackPort != 8080 || s.OAuth.Scopes != "read write" || s.OAuth.ClientSecret != "s" {
		t.Fatalf("imported server = %+v", s)
	}
	if w := strings.Join(cfg.Warnings, "\n"); strings.Contains(w, "oauth") {
		t.Errorf("warnings about oauth: %s", w)
	}
}
