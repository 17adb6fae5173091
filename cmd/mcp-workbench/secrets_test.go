package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// plantSecrets sets the variables that the configurations below take their
// values from, and returns the values, none of which any output may show.
func plantSecrets(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	for _, v := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "AppData", "LocalAppData"} {
		t.Setenv(v, dir)
	}
	vars := map[string]string{
		"WB_S_QUERY":    "querysecret101",
		"WB_S_PASS":     "passsecret202",
		"WB_S_RETRIES":  "3030303030",
		"WB_S_TIMEOUT":  "4040404040",
		"WB_S_TYPE":     "typesecret505",
		"WB_S_BADGLOB":  "globsecret606[",
		"WB_S_GLOB":     "globsecret707*",
		"WB_S_META":     "http://metasecret808.invalid/x",
		"WB_S_METAPATH": "metapathsecret818",
		"WB_S_HEADER":   "headersecret909",
		"WB_S_ENV":      "envsecret111",
		"WB_S_ARG":      "argsecret121",
	}
	var values []string
	for k, v := range vars {
		t.Setenv(k, v)
		values = append(values, strings.TrimRight(v, "[*"))
	}
	return values
}

// noSecret fails the test if out shows any of the planted values.
func noSecret(t *testing.T, what, out string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("%s shows the secret %q:\n%s", what, s, out)
		}
	}
}

// invalidSecretsConfig holds a mistake in every field that takes a value
// from a variable, each value a planted secret.
func invalidSecretsConfig() map[string]any {
	return map[string]any{"toolboxes": map[string]any{"dev": map[string]any{
		"description": "Secrets",
		"mcpServers": map[string]any{
			"query":   map[string]any{"url": "ftp://example.invalid/mcp?key=${WB_S_QUERY}"},
			"user":    map[string]any{"url": "ftp://user:${WB_S_PASS}@example.invalid/mcp"},
			"badurl":  map[string]any{"url": "http://user:${WB_S_PASS}@exa mple.invalid:${WB_S_QUERY}/mcp"},
			"numbers": map[string]any{"command": "x", "maxRetries": "${WB_S_RETRIES}", "connectionTimeoutMs": "${WB_S_TIMEOUT}"},
			"typed":   map[string]any{"command": "x", "type": "${WB_S_TYPE}"},
			"both":    map[string]any{"command": "x", "transport": "stdio", "type": "${WB_S_TYPE}"},
			"filters": map[string]any{"command": "x", "toolFilters": []string{"${WB_S_BADGLOB}"}},
			"meta": map[string]any{"url": "https://example.invalid/mcp", "headers": map[string]any{"X-Key": "${WB_S_HEADER}"},
				"oauth": map[string]any{"authServerMetadataUrl": "${WB_S_META}"}},
			"meta2": map[string]any{"url": "https://example.invalid/mcp",
				"oauth": map[string]any{"authServerMetadataUrl": "https://exa mple.invalid/${WB_S_METAPATH}"}},
			"env": map[string]any{"command": "x", "env": map[string]any{"K": "${WB_S_ENV}"}, "args": []any{"${WB_S_ARG}"}, "cwd": 5},
		},
	}}}
}

// TestConfigSecretsNeverShown plants secret values through ${VAR} in every
// field that takes one and looks for them in everything the workbench
// prints: validate's errors, warnings and summary; the log line of an
// invalid edit while serving; check, call, import, login and logout.
func TestConfigSecretsNeverShown(t *testing.T) {
	secrets := plantSecrets(t)
	bad := writeConfig(t, invalidSecretsConfig())

	code, out, errOut := runCmd(t, "", "validate", "--config", bad)
	if code != 1 {
		t.Fatalf("validate of the invalid file (%d):\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		`toolboxes.dev.mcpServers.query.url: must be an http:// or https:// URL, got "ftp://example.invalid/mcp?key=${WB_S_QUERY}"`,
		`toolboxes.dev.mcpServers.user.url: must be an http:// or https:// URL, got "ftp://user:***@example.invalid/mcp"`,
		`toolboxes.dev.mcpServers.badurl.url: not a valid URL once its variables are expanded: "http://user:***@exa mple.invalid:${WB_S_QUERY}/mcp"`,
		`maxRetries: must be a number, not the string "${WB_S_RETRIES}"`,
		`connectionTimeoutMs: must be a number, not the string "${WB_S_TIMEOUT}"`,
		`toolboxes.dev.mcpServers.typed.type: unknown transport "${WB_S_TYPE}"`,
		`toolboxes.dev.mcpServers.filters.toolFilters[0]: bad glob pattern "${WB_S_BADGLOB}"`,
		`toolboxes.dev.mcpServers.meta.oauth.authServerMetadataUrl: must be an https:// URL, got "${WB_S_META}"`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("validate's errors lack %q:\n%s", want, errOut)
		}
	}
	noSecret(t, "validate of an invalid file", out+errOut, secrets)
	for _, args := range [][]string{
		{"check", "--config", bad},
		{"call", "--config", bad, "dev", "env", "tool"},
		{"login", "--config", bad, "dev", "meta"},
		{"logout", "--config", bad, "dev", "meta"},
		{"serve", "--config", bad},
	} {
		code, out, errOut := runCmd(t, "", args...)
		if code != 1 {
			t.Errorf("%s of the invalid file (%d):\n%s\n%s", args[0], code, out, errOut)
		}
		noSecret(t, args[0]+" of an invalid file", out+errOut, secrets)
	}

	// A valid file: its summary, and the errors of servers that cannot
	// start, show neither.
	exe, _ := os.Executable()
	good := writeConfig(t, map[string]any{"toolboxes": map[string]any{"dev": map[string]any{
		"description": "Secrets",
		"mcpServers": map[string]any{
			"remote": map[string]any{"url": "http://user:${WB_S_PASS}@127.0.0.1:1/mcp?key=${WB_S_QUERY}", "maxRetries": 0,
				"headers": map[string]any{"X-Key": "${WB_S_HEADER}"},
				"oauth":   map[string]any{"authServerMetadataUrl": "https://auth.invalid/${WB_S_METAPATH}"}},
			"local": map[string]any{"command": exe, "args": []any{"--token", "${WB_S_ARG}"}, "maxRetries": 0,
				"env":         map[string]any{fakeserver.EnvServer: "1", fakeserver.EnvName: "local", "K": "${WB_S_ENV}"},
				"toolFilters": []string{"echo", "${WB_S_GLOB}"}},
			"unset": map[string]any{"command": "x", "env": map[string]any{"K": "${WB_TEST_UNSET_VARIABLE}"}, "disabled": true},
		},
	}}})
	code, out, errOut = runCmd(t, "", "validate", "--config", good)
	if code != 0 || !strings.Contains(out, "http://user:***@127.0.0.1:1/mcp?…") || !strings.Contains(out, "--token ${WB_S_ARG}") ||
		!strings.Contains(out, "tools: echo, ${WB_S_GLOB}") {
		t.Errorf("validate of the valid file (%d):\n%s\n%s", code, out, errOut)
	}
	noSecret(t, "validate of a valid file", out+errOut, secrets)
	for _, args := range [][]string{
		{"check", "--config", good},
		{"call", "--config", good, "dev", "remote", "tool"},
		{"call", "--config", good, "dev", "local", "echo", `{"text": "hi"}`},
		{"login", "--config", good, "--timeout", "20s", "dev", "remote"},
		{"logout", "--config", good, "dev", "remote"},
	} {
		_, out, errOut := runCmd(t, "", args...)
		noSecret(t, strings.Join(args[:1], " ")+" of a valid file", out+errOut, secrets)
	}

	// import: the host's entries are written unchanged, and nothing it
	// prints shows a value.
	host := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	hostServers, _ := json.Marshal(map[string]any{"mcpServers": invalidSecretsConfig()["toolboxes"].(map[string]any)["dev"].(map[string]any)["mcpServers"]})
	if err := os.WriteFile(host, hostServers, 0o600); err != nil {
		t.Fatal(err)
	}
	_, out, errOut = runCmd(t, "", "import", host, "--out", filepath.Join(t.TempDir(), "wb.json"))
	noSecret(t, "import", out+errOut, secrets)
	if !strings.Contains(errOut, "${WB_S_TYPE}") {
		t.Errorf("import's errors do not quote the values as written:\n%s", errOut)
	}

	// serve: an edit that breaks the file is logged, problem by problem.
	path := filepath.Join(t.TempDir(), "workbench-config.json")
	if err := os.WriteFile(path, []byte(`{"toolboxes": {"one": {"description": "d", "mcpServers": {"a": {"command": "x", "disabled": true}}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr := runInProcess(t, "--config", path)
	b, _ := json.Marshal(invalidSecretsConfig())
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	fakeserver.Eventually(t, "the invalid edit to be logged", func() bool {
		return strings.Contains(stderr.String(), "still serving the previous one") && strings.Contains(stderr.String(), "user.url")
	})
	if !strings.Contains(stderr.String(), "${WB_S_TYPE}") {
		t.Errorf("the log of the invalid edit does not quote the values as written:\n%s", stderr)
	}
	noSecret(t, "the log of an invalid edit", stderr.String(), secrets)
}
