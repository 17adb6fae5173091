package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/hostconfig"
)

// TestInstallGeminiHook: install gemini-cli writes the workbench's entry
// and its BeforeTool hook into Gemini CLI's settings.json in one write,
// after the user's own hooks, every other line kept; a second run changes
// nothing; hooks.BeforeTool that is not an array is refused, the file left
// as it was.
func TestInstallGeminiHook(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	cfg := filepath.Join(home, "wb config.json")
	if err := os.WriteFile(cfg, []byte(`{"toolboxes": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(home, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	original := "{\n  // mine\n  \"hooks\": {\n    \"BeforeTool\": [\n      {\"matcher\": \"run_shell_command\", \"hooks\": [{\"type\": \"command\", \"command\": \"audit.sh\"}]}\n    ]\n  }\n}\n"
	if err := os.WriteFile(file, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "", "install", "gemini-cli", "--config", cfg)
	if code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, stdout, stderr)
	}
	got, _ := os.ReadFile(file)
	exe, _ := os.Executable()
	hook, err := hostconfig.GeminiHook(exe, cfg, "workbench")
	if err != nil {
		t.Fatal(err)
	}
	matcher, command := hook.Matcher, hook.Command
	if !strings.Contains(command, "'"+cfg+"'") {
		t.Errorf("the hook's command does not quote the configuration's path for the shell: %s", command)
	}
	mine := strings.Index(string(got), `"command": "audit.sh"`)
	ours := strings.Index(string(got), `"matcher": "`+matcher+`"`)
	if mine < 0 || ours < mine || !strings.Contains(string(got), "// mine") || !strings.Contains(string(got), command) {
		t.Errorf("the file is not the user's hook, then the workbench's:\n%s", got)
	}
	if line, ok := keptInOrder([]byte(original), got); !ok {
		t.Errorf("line %q of the file is lost or moved:\n%s", line, got)
	}
	if !strings.Contains(stdout, "Gemini CLI blocks a use_tool call that the workbench's rules deny") {
		t.Errorf("install did not say it added the hook:\n%s", stdout)
	}
	if _, err := os.Stat(file + ".bak.2"); err == nil {
		t.Error("install backed the file up twice")
	}
	code, stdout, _ = runCmd(t, "", "install", "gemini-cli", "--config", cfg)
	if again, _ := os.ReadFile(file); code != 0 || string(again) != string(got) || !strings.Contains(stdout, "already runs the workbench's hook") {
		t.Errorf("a second install: exit %d, changed %v\n%s", code, string(again) != string(got), stdout)
	}

	bad := `{"hooks": {"BeforeTool": {"matcher": "x"}}}`
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd(t, "", "install", "gemini-cli", "--config", cfg)
	if after, _ := os.ReadFile(file); code == 0 || string(after) != bad || !strings.Contains(stderr, "hooks.BeforeTool is a JSON object, not an array") {
		t.Errorf("hooks.BeforeTool as an object: exit %d, file changed %v, stderr %s", code, string(after) != bad, stderr)
	}
}

// TestInstallGeminiHookName: Gemini CLI names a server's tool
// mcp_SERVER_TOOL (no second mcp_ when SERVER starts with it), every
// character but ASCII letters, digits, _, -, . and : made _: the hook
// install writes matches that name, and the hook then blocks the denied
// call. A name Gemini CLI would cut is refused.
func TestInstallGeminiHookName(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wb.json")
	if err := os.WriteFile(cfg, []byte(`{"permissions": {"tools": {"github/delete_*": "deny"}}, "toolboxes": {"code": {"description": "d", "mcpServers": {"github": {"command": "gh"}}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	deny, err := os.ReadFile(filepath.Join("testdata", "hook", "gemini-cli", "deny-by-rule.input.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, geminiName := range map[string]string{"wb-ops": "mcp_wb-ops_use_tool", "my.bench": "mcp_my.bench_use_tool", "wb ops": "mcp_wb_ops_use_tool", "mcp_bench": "mcp_bench_use_tool"} {
		file := filepath.Join(dir, "settings.json")
		os.Remove(file)
		if code, stdout, stderr := runCmd(t, "", "install", "gemini-cli", "--file", file, "--config", cfg, "--name", name); code != 0 {
			t.Fatalf("--name %q: exit %d\n%s%s", name, code, stdout, stderr)
		}
		var doc struct {
			Hooks struct {
				BeforeTool []struct{ Matcher string }
			}
		}
		got, _ := os.ReadFile(file)
		if err := json.Unmarshal(got, &doc); err != nil || len(doc.Hooks.BeforeTool) != 1 {
			t.Fatalf("--name %q: %v\n%s", name, err, got)
		}
		m := doc.Hooks.BeforeTool[0].Matcher
		if re, err := regexp.Compile(m); err != nil || !re.MatchString(geminiName) || re.MatchString("mcp_workbench_use_tool") {
			t.Errorf("--name %q: the matcher %q does not match Gemini CLI's tool name %s alone (%v)", name, m, geminiName, err)
		}
		in := strings.Replace(string(deny), `"mcp_workbench_use_tool"`, `"`+geminiName+`"`, 1)
		if code, stdout, _ := runCmd(t, in, "hook", "gemini-cli", "--config", cfg); code != 0 || !strings.Contains(stdout, `"deny"`) {
			t.Errorf("--name %q: the hook for %s: exit %d, %s; want deny", name, geminiName, code, stdout)
		}
	}
	file := filepath.Join(dir, "long.json")
	code, _, stderr := runCmd(t, "", "install", "gemini-cli", "--file", file, "--config", cfg, "--name", strings.Repeat("w", 51))
	if _, err := os.Stat(file); code != 1 || err == nil || !strings.Contains(stderr, "too long for Gemini CLI") {
		t.Errorf("a --name Gemini CLI cuts: exit %d, file made: %v, stderr %q", code, err == nil, stderr)
	}
	if code, _, stderr := runCmd(t, "", "install", "gemini-cli", "--file", file, "--config", cfg, "--name", strings.Repeat("w", 50)); code != 0 {
		t.Errorf("--name of 50 characters: exit %d, %s", code, stderr)
	}
}
