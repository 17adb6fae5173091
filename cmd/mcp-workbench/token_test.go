package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/httpauth"
)

// tokenHome is privateHome without a token store named by the
// environment.
func tokenHome(t *testing.T) string {
	t.Helper()
	t.Setenv(httpauth.EnvTokens, "")
	return privateHome(t)
}

var tokenRE = regexp.MustCompile(httpauth.TokenPrefix + `[A-Za-z0-9_-]{43}`)

// token add prints the token once, and a store opened as serving opens
// it accepts it; list shows names, never secrets; revoke says what it did
// and the token is refused after.
func TestTokenCommand(t *testing.T) {
	home := tokenHome(t)
	code, out, errOut := runCmd(t, "", "token", "add", "alice")
	if code != 0 {
		t.Fatalf("add (%d): %s %s", code, out, errOut)
	}
	tok := strings.TrimSuffix(out, "\n")
	if !tokenRE.MatchString(tok) || len(tok) != len(httpauth.TokenPrefix)+43 || !strings.Contains(errOut, "not shown again") {
		t.Fatalf("add printed no token alone on stdout, or no warning on stderr:\n%s\n%s", out, errOut)
	}
	path := filepath.Join(home, "mcp-workbench", "http", "tokens.json")
	if !strings.Contains(errOut, path) {
		t.Errorf("add does not name the store %s:\n%s", path, errOut)
	}
	store, err := httpauth.OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if name, ok := store.Lookup(tok); !ok || name != "alice" {
		t.Errorf("the store does not accept the printed token: %q %v", name, ok)
	}
	if code, _, errOut := runCmd(t, "", "token", "add", "alice"); code != 1 || !strings.Contains(errOut, "exists already") {
		t.Errorf("add of a name in use (%d): %s", code, errOut)
	}
	runCmd(t, "", "token", "add", "ci-bot")

	code, out, _ = runCmd(t, "", "token", "list")
	if code != 0 || !strings.Contains(out, "alice") || !strings.Contains(out, "ci-bot") || !regexp.MustCompile(`\d{4}-\d\d-\d\dT`).MatchString(out) {
		t.Errorf("list (%d):\n%s", code, out)
	}
	if strings.Contains(out, httpauth.TokenPrefix) || strings.Contains(out, tok[len(httpauth.TokenPrefix):][:8]) {
		t.Errorf("list shows a secret:\n%s", out)
	}

	code, out, _ = runCmd(t, "", "token", "revoke", "alice")
	if code != 0 || !strings.Contains(out, `Revoked token "alice"`) {
		t.Errorf("revoke (%d): %s", code, out)
	}
	if _, ok := store.Lookup(tok); ok {
		t.Error("the revoked token is still accepted")
	}
	if code, _, errOut := runCmd(t, "", "token", "revoke", "alice"); code != 1 || !strings.Contains(errOut, `no token named "alice"`) {
		t.Errorf("revoke again (%d): %s", code, errOut)
	}
	if _, out, _ := runCmd(t, "", "token", "list"); strings.Contains(out, "alice") {
		t.Errorf("list after revoke:\n%s", out)
	}
}

// --store wins over $MCP_WORKBENCH_TOKENS, which wins over the default;
// a corrupt store is an error naming it (exit 1); usage errors exit 2.
func TestTokenCommandStoreAndErrors(t *testing.T) {
	home := tokenHome(t)
	envStore := filepath.Join(home, "env", "tokens.json")
	flagStore := filepath.Join(home, "flag", "tokens.json")
	t.Setenv(httpauth.EnvTokens, envStore)
	if code, _, errOut := runCmd(t, "", "token", "add", "a"); code != 0 || !strings.Contains(errOut, envStore) {
		t.Errorf("with the variable (%d): %s", code, errOut)
	}
	if code, _, errOut := runCmd(t, "", "token", "--store", flagStore, "add", "b"); code != 0 || !strings.Contains(errOut, flagStore) {
		t.Errorf("with --store (%d): %s", code, errOut)
	}
	if _, out, _ := runCmd(t, "", "token", "list", "--store", flagStore); !strings.Contains(out, "b") || strings.Contains(out, "  a ") {
		t.Errorf("list --store:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, "mcp-workbench", "http", "tokens.json")); err == nil {
		t.Error("the default store was written")
	}
	if code, out, _ := runCmd(t, "", "token", "list", "--store", filepath.Join(home, "none.json")); code != 0 || !strings.Contains(out, "No tokens") {
		t.Errorf("list of a missing store (%d): %s", code, out)
	}

	bad := filepath.Join(home, "bad.json")
	os.WriteFile(bad, []byte("{nope"), 0o600)
	if code, _, errOut := runCmd(t, "", "token", "list", "--store", bad); code != 1 || !strings.Contains(errOut, bad) || !strings.Contains(errOut, "not valid JSON") {
		t.Errorf("a corrupt store (%d): %s", code, errOut)
	}

	for _, args := range [][]string{
		{"token"},
		{"token", "add"},
		{"token", "add", "a", "b"},
		{"token", "add", "a b"},
		{"token", "list", "x"},
		{"token", "rotate", "a"},
		{"token", "--store"},
	} {
		code, out, errOut := runCmd(t, "", args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "mcp-workbench: token: ") || !strings.Contains(errOut, tokenUsage) {
			t.Errorf("%v: exit %d, stdout %q, stderr\n%s", args, code, out, errOut)
		}
	}
}

// TestTokenCommandReadsTheConfiguration: with --config, token uses the
// store the configuration's "http.auth.tokens" names, as serve --http does.
func TestTokenCommandReadsTheConfiguration(t *testing.T) {
	tokenHome(t)
	cfg := writeConfig(t, map[string]any{
		"http":      map[string]any{"auth": map[string]any{"tokens": "team-tokens.json"}},
		"toolboxes": map[string]any{"dev": map[string]any{"description": "Development tools", "mcpServers": map[string]any{"a": map[string]any{"command": "a"}}}},
	})
	code, out, errOut := runCmd(t, "", "token", "add", "bob", "--config", cfg)
	if code != 0 {
		t.Fatalf("add (%d): %s", code, errOut)
	}
	store, err := httpauth.OpenTokens(filepath.Join(filepath.Dir(cfg), "team-tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	if name, ok := store.Lookup(strings.TrimSpace(out)); !ok || name != "bob" {
		t.Errorf("the configuration's store does not hold the new token (%q %v); add said: %s", name, ok, errOut)
	}
}
