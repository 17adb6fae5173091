package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/hostconfig"
)

// TestInstallCodexHook: install codex writes the workbench's entry and its
// PreToolUse hook into Codex's config.toml, leaving every other line (and
// comment) as it was, in one write (one backup); a second run changes
// nothing; hooks that a table cannot be appended to are refused with a
// clear error, the file left as it was.
func TestInstallCodexHook(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	codexHome := filepath.Join(home, "codex")
	t.Setenv("CODEX_HOME", codexHome)
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, "wb config.json")
	if err := os.WriteFile(cfg, []byte(`{"toolboxes": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(codexHome, "config.toml")
	original := "# my Codex\nmodel = \"o3\" # the one I pay for\n\n[[hooks.PreToolUse]]\nmatcher = \"^Bash$\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"audit.sh\"\n"
	if err := os.WriteFile(file, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runCmd(t, "", "install", "codex", "--config", cfg)
	if code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, stdout, stderr)
	}
	got, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(got), original) {
		t.Errorf("the file's own lines changed:\n%s", got)
	}
	exe, _ := os.Executable()
	hook, err := hostconfig.CodexHook(exe, cfg, "workbench")
	if err != nil {
		t.Fatal(err)
	}
	matcher, command := hook.Matcher, hook.Command
	if !strings.Contains(command, "'"+cfg+"'") {
		t.Errorf("the hook's command does not quote the configuration's path for the shell: %s", command)
	}
	hooks, err := hostconfig.CodexHooks(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 2 || hooks[0] != (hostconfig.CodexHookEntry{Matcher: "^Bash$", Command: "audit.sh"}) || hooks[1] != (hostconfig.CodexHookEntry{Matcher: matcher, Command: command}) {
		t.Errorf("the file's hooks: %q", hooks)
	}
	if _, err := os.Stat(file + ".bak.2"); err == nil {
		t.Error("install backed the file up twice")
	}
	if backup, _ := os.ReadFile(file + ".bak"); string(backup) != original {
		t.Errorf("the backup is not the file as it was:\n%s", backup)
	}
	if !strings.Contains(stdout, "open /hooks and trust it") {
		t.Errorf("install did not say that Codex asks to trust the hook:\n%s", stdout)
	}

	code, stdout, _ = runCmd(t, "", "install", "codex", "--config", cfg)
	again, _ := os.ReadFile(file)
	if code != 0 || string(again) != string(got) || !strings.Contains(stdout, "already runs the workbench's hook") {
		t.Errorf("a second install: exit %d, changed %v:\n%s", code, string(again) != string(got), stdout)
	}

	inline := "[hooks]\nPreToolUse = [{ matcher = \"^Bash$\", hooks = [{ type = \"command\", command = \"audit.sh\" }] }]\n"
	if err := os.WriteFile(file, []byte(inline), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd(t, "", "install", "codex", "--config", cfg)
	after, _ := os.ReadFile(file)
	if code != 1 || !strings.Contains(stderr, "add the hook by hand") || !strings.Contains(stderr, file) || string(after) != inline {
		t.Errorf("inline hooks: exit %d, stderr %q, file:\n%s", code, stderr, after)
	}
}

// TestInstallCodexHookName: Codex names a server's tool
// mcp__SERVER__TOOL with every character but ASCII letters, digits and _
// made _, so the hook install writes for --name wb-ops or my.bench
// matches mcp__wb_ops__use_tool (the name Codex's hook input carries),
// and the hook then blocks the denied call. A name too long for Codex's
// 64 characters is refused, the file left as it was.
func TestInstallCodexHookName(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wb.json")
	if err := os.WriteFile(cfg, []byte(`{"permissions": {"tools": {"github/delete_*": "deny"}}, "toolboxes": {"code": {"description": "d", "mcpServers": {"github": {"command": "gh"}}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	deny, err := os.ReadFile(filepath.Join("testdata", "hook", "codex", "deny-by-rule.input.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, codexName := range map[string]string{"wb-ops": "mcp__wb_ops__use_tool", "my.bench": "mcp__my_bench__use_tool", "wb ops·2": "mcp__wb_ops_2__use_tool"} {
		file := filepath.Join(dir, "config.toml")
		os.Remove(file)
		if code, stdout, stderr := runCmd(t, "", "install", "codex", "--file", file, "--config", cfg, "--name", name); code != 0 {
			t.Fatalf("--name %q: exit %d\n%s%s", name, code, stdout, stderr)
		}
		got, _ := os.ReadFile(file)
		hooks, err := hostconfig.CodexHooks(got)
		if err != nil || len(hooks) != 1 {
			t.Fatalf("--name %q: hooks %q, %v", name, hooks, err)
		}
		re, err := regexp.Compile(hooks[0].Matcher)
		if err != nil || !re.MatchString(codexName) || re.MatchString("mcp__workbench__use_tool") {
			t.Errorf("--name %q: the matcher %q does not match Codex's tool name %s alone (%v)", name, hooks[0].Matcher, codexName, err)
		}
		in := strings.Replace(string(deny), `"mcp__workbench__use_tool"`, `"`+codexName+`"`, 1)
		if code, stdout, _ := runCmd(t, in, "hook", "codex", "--config", cfg); code != 0 || !strings.Contains(stdout, `"deny"`) {
			t.Errorf("--name %q: the hook for %s: exit %d, %s; want deny", name, codexName, code, stdout)
		}
	}
	file := filepath.Join(dir, "long.toml")
	long := strings.Repeat("w", 50)
	code, _, stderr := runCmd(t, "", "install", "codex", "--file", file, "--config", cfg, "--name", long)
	if _, err := os.Stat(file); code != 1 || err == nil || !strings.Contains(stderr, "too long for Codex") {
		t.Errorf("--name of 50 characters: exit %d, file made: %v, stderr %q", code, err == nil, stderr)
	}
	if code, _, stderr := runCmd(t, "", "install", "codex", "--file", file, "--config", cfg, "--name", long[:49]); code != 0 {
		t.Errorf("--name of 49 characters: exit %d, %s", code, stderr)
	}
}
