package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/permissions"
)

var approvalToken = regexp.MustCompile(`wbh1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/hook")

// TestHookClaudeCode feeds the hook Claude Code's documented PreToolUse
// input for use_tool (testdata/hook/*.input.json) and compares its exit
// status, stdout and stderr with the golden files beside them. The
// github server's tools are in the catalog (one destructive, one
// read-only); the wiki server's are not.
func TestHookClaudeCode(t *testing.T) {
	testHookGoldens(t, "claude-code", filepath.Join("testdata", "hook"))
}

// TestHookCodex is TestHookClaudeCode for Codex: the same calls in the
// input Codex 0.171.0 gives a PreToolUse hook (testdata/hook/codex), whose
// answers are deny or nothing (Codex takes no allow without a changed
// input, and no ask).
func TestHookCodex(t *testing.T) {
	testHookGoldens(t, "codex", filepath.Join("testdata", "hook", "codex"))
}

// TestHookGeminiCLI: Gemini CLI's BeforeTool hook, with its input (the
// MCP tool named mcp_<server>_<tool>, and mcp_context) and its answer
// ({"decision": "deny", "reason"}), deny only.
func TestHookGeminiCLI(t *testing.T) {
	testHookGoldens(t, "gemini-cli", filepath.Join("testdata", "hook", "gemini-cli"))
}

// hookHome points HOME and XDG_* at a temporary folder, and returns it.
func hookHome(t *testing.T) string {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	return home
}

// githubToolsListed puts tools in the catalog as the code toolbox's github
// server listed them, where the hook looks for their annotations.
func githubToolsListed(t *testing.T, cfg *config.Config, tools ...string) {
	t.Helper()
	catDir, err := catalog.DefaultDir()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(catDir)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]json.RawMessage, len(tools))
	for i, tool := range tools {
		raw[i] = json.RawMessage(tool)
	}
	if err := cat.Put(catalog.Key(cfg.Toolbox("code").Server("github"), downstream.ProtocolVersion), raw, nil); err != nil {
		t.Fatal(err)
	}
}

// testHookGoldens runs the hook for host on each input in dir against
// testdata/hook/config.json and compares what it answers with the golden
// file beside the input.
func testHookGoldens(t *testing.T, host, dir string) {
	hookHome(t)
	cfgPath, err := filepath.Abs(filepath.Join("testdata", "hook", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	githubToolsListed(t, cfg, `{"name":"merge_pull_request","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`,
		`{"name":"list_issues","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)

	inputs, _ := filepath.Glob(filepath.Join(dir, "*.input.json"))
	if len(inputs) < 10 {
		t.Fatalf("only %d inputs", len(inputs))
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".input.json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCmd(t, string(data), "hook", host, "--config", cfgPath)
			// An asked call's approval is signed anew each time; it must
			// check out for this call, once.
			if token := approvalToken.FindString(stdout); token != "" {
				var in struct {
					ToolInput struct {
						Tool      struct{ Toolbox, Server, Tool string }
						Arguments json.RawMessage
					} `json:"tool_input"`
				}
				_ = json.Unmarshal(data, &in)
				keyPath, _ := permissions.KeyPath()
				a := permissions.NewApprovals(keyPath)
				ti := in.ToolInput
				if ok, why := a.Take(token, ti.Tool.Toolbox, ti.Tool.Server, ti.Tool.Tool, ti.Arguments, time.Now()); !ok {
					t.Errorf("the approval does not check out: %s", why)
				}
				if ok, _ := a.Take(token, ti.Tool.Toolbox, ti.Tool.Server, ti.Tool.Tool, ti.Arguments, time.Now()); ok {
					t.Error("the approval checks out twice")
				}
				if ok, _ := permissions.NewApprovals(keyPath).Take(token, ti.Tool.Toolbox, ti.Tool.Server, ti.Tool.Tool, json.RawMessage(`{"repo":"other"}`), time.Now()); ok {
					t.Error("the approval checks out for other arguments")
				}
				if info, err := os.Stat(keyPath); err != nil || info.Mode().Perm() != 0o600 {
					t.Errorf("the approval key: %v, %v; want a 0600 file", info, err)
				}
				stdout = strings.ReplaceAll(stdout, token, "APPROVAL")
			}
			got := fmt.Sprintf("exit status %d\n--- stdout\n%s--- stderr\n%s", code, strings.ReplaceAll(stdout, cfgPath, "CONFIG"), strings.ReplaceAll(stderr, cfgPath, "CONFIG"))
			file := filepath.Join(dir, name+".golden")
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
			if stdout != "" && !json.Valid([]byte(stdout)) {
				t.Errorf("stdout is not JSON: %s", stdout)
			}
		})
	}
}

// TestHookBadConfig: a configuration that does not load blocks the call.
func TestHookBadConfig(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"toolboxes": {}, "permissions": {"tools": {"x/y": "perhaps"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	in, _ := os.ReadFile(filepath.Join("testdata", "hook", "deny-by-rule.input.json"))
	code, stdout, stderr := runCmd(t, string(in), "hook", "claude-code", "--config", bad)
	if code != 2 || stdout != "" || !strings.Contains(stderr, "permissions.tools.x/y") || !strings.Contains(stderr, "blocked") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and the configuration's problem", code, stdout, stderr)
	}
}

// TestHookLogLevel: a bad --log-level is a usage error once the host is
// named.
func TestHookLogLevel(t *testing.T) {
	code, stdout, stderr := runCmd(t, "", "hook", "claude-code", "--log-level", "loud")
	if code != 2 || stdout != "" || !strings.Contains(stderr, `unknown log level "loud"`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestHookUnsetVariables: the hook runs in the host's environment, where
// a server's ${VAR} (its token, set in the workbench's entry env) is not
// set. All three hooks still decide by the rules: an allowed call passes,
// a denied one is blocked. A ${VAR} the rules read (in a rule, in a
// toolbox's or server's name) still blocks every call until it is set.
func TestHookUnsetVariables(t *testing.T) {
	home := hookHome(t)
	os.Unsetenv("WB_HOOK_TEST_UNSET")
	write := func(name, text string) string {
		p := filepath.Join(home, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	servers := `"github": {"command": "github-mcp-server", "args": ["--token=${WB_HOOK_TEST_UNSET}"], "env": {"GITHUB_TOKEN": "${WB_HOOK_TEST_UNSET}"}},
	  "remote": {"url": "https://example.com/${WB_HOOK_TEST_UNSET}/mcp", "headers": {"Authorization": "Bearer ${WB_HOOK_TEST_UNSET}"}}`
	good := write("good.json", `{"permissions": {"tools": {"github/delete_*": "deny", "*/get_*": "allow"}},
	  "toolboxes": {"code": {"description": "GitHub", "mcpServers": {`+servers+`}}}}`)
	inputs := map[string]string{"claude-code": "", "codex": "codex", "gemini-cli": "gemini-cli"}
	for host, dir := range inputs {
		read := func(name string) string {
			b, err := os.ReadFile(filepath.Join("testdata", "hook", dir, name+".input.json"))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		deny, allow := read("deny-by-rule"), strings.Replace(read("deny-by-rule"), `"delete_repo"`, `"get_repo"`, 1)
		if code, _, stderr := runCmd(t, allow, "hook", host, "--config", good); code != 0 {
			t.Errorf("%s: an allowed call with a server's ${VAR} unset: exit %d, %s", host, code, stderr)
		}
		code, stdout, stderr := runCmd(t, deny, "hook", host, "--config", good)
		if code != 0 || !strings.Contains(stdout, "deny") || !strings.Contains(stdout, "github/delete_*") {
			t.Errorf("%s: a denied call with a server's ${VAR} unset: exit %d, stdout %q, stderr %q; want it denied by the rule", host, code, stdout, stderr)
		}
		for what, cfg := range map[string]string{
			"permissions.tools.${WB_HOOK_TEST_UNSET}/*":            `{"permissions": {"tools": {"${WB_HOOK_TEST_UNSET}/*": "deny"}}, "toolboxes": {"code": {"description": "GitHub", "mcpServers": {` + servers + `}}}}`,
			"toolboxes.code.mcpServers.github.permissions.default": `{"toolboxes": {"code": {"description": "GitHub", "mcpServers": {"github": {"command": "x", "permissions": {"default": "${WB_HOOK_TEST_UNSET}"}}}}}}`,
			"toolboxes.${WB_HOOK_TEST_UNSET}:":                     `{"permissions": {"default": "allow"}, "toolboxes": {"${WB_HOOK_TEST_UNSET}": {"description": "GitHub", "mcpServers": {"github": {"command": "x", "permissions": {"default": "deny"}}}}}}`,
		} {
			p := write(host+"-strict.json", cfg)
			code, stdout, stderr := runCmd(t, allow, "hook", host, "--config", p)
			if code != 2 || stdout != "" || !strings.Contains(stderr, "WB_HOOK_TEST_UNSET") || !strings.Contains(stderr, what) || !strings.Contains(stderr, "blocked") {
				t.Errorf("%s: a ${VAR} the rules read, unset: exit %d, stdout %q, stderr %q; want 2 naming %s", host, code, stdout, stderr, what)
			}
		}
	}
}

// TestHookUnsetVariableAnnotations: the catalog knows a server by its
// values, its env too, so the hook, without the token the workbench's
// entry sets, cannot find the tool's annotations. For Codex and Gemini
// CLI (deny only) it then says nothing, and the workbench, which has the
// token, decides by the annotations: a read-only tool is not denied by
// the strictest guess a destructive one would get.
func TestHookUnsetVariableAnnotations(t *testing.T) {
	home := hookHome(t)
	cfgPath := filepath.Join(home, "wb.json")
	if err := os.WriteFile(cfgPath, []byte(`{"permissions": {"annotations": {"destructiveHint": "deny", "readOnlyHint": "allow"}},
	  "toolboxes": {"code": {"description": "GitHub", "mcpServers": {"github": {"command": "github-mcp-server", "env": {"GITHUB_TOKEN": "${WB_HOOK_TEST_TOKEN}"}}}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// The workbench, with the token, listed the server's tools.
	cfg, err := config.LoadWith(cfgPath, func(k string) (string, bool) {
		if k == "WB_HOOK_TEST_TOKEN" {
			return "tok", true
		}
		return os.LookupEnv(k)
	})
	if err != nil {
		t.Fatal(err)
	}
	githubToolsListed(t, cfg, `{"name":"delete_repo","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`,
		`{"name":"list_issues","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)
	os.Unsetenv("WB_HOOK_TEST_TOKEN")
	for _, host := range []string{"codex", "gemini-cli"} {
		in, err := os.ReadFile(filepath.Join("testdata", "hook", host, "deny-by-rule.input.json"))
		if err != nil {
			t.Fatal(err)
		}
		read := strings.Replace(string(in), `"delete_repo"`, `"list_issues"`, 1)
		if code, stdout, stderr := runCmd(t, read, "hook", host, "--config", cfgPath); code != 0 || stdout != "" {
			t.Errorf("%s: a read-only tool of a server whose token is unset here: exit %d, stdout %q, stderr %q; want no decision", host, code, stdout, stderr)
		}
	}
}
