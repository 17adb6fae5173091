package main

import (
	"strings"
	"testing"
)

// TestCheckPrintsPermissions: check prints each server's decision for
// each of its tools, and warns of a rule that matches no tool.
func TestCheckPrintsPermissions(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", home+"/cache")
	t.Setenv("XDG_CONFIG_HOME", home+"/config")
	a := fakeServerEntry("a")
	a["permissions"] = map[string]any{"tools": map[string]any{"crash*": "deny", "nomatch_*": "deny"}}
	cfg := writeConfig(t, map[string]any{
		"permissions": map[string]any{"annotations": map[string]any{"destructiveHint": "ask", "readOnlyHint": "allow"}},
		"toolboxes":   map[string]any{"dev": map[string]any{"description": "Dev", "mcpServers": map[string]any{"a": a}}},
	})
	code, out, errOut := runCmd(t, "", "check", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		`deny  crash, crash_once (the rule "crash*" at toolboxes.dev.mcpServers.a.permissions.tools.crash*)`,
		`allow echo, `,
		`(the tool's readOnlyHint, given "allow" at permissions.annotations.readOnlyHint)`,
		`ask   add, `,
		`(the tool's destructiveHint, given "ask" at permissions.annotations.destructiveHint)`,
		`warning: permissions: the rule "nomatch_*" at toolboxes.dev.mcpServers.a.permissions.tools.nomatch_* matches no tool`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"crash*" at toolboxes.dev.mcpServers.a.permissions.tools.crash* matches no tool`) {
		t.Error("a rule that matches is reported as matching nothing")
	}
}

// TestCheckPrintsAskInPage: check says which asked tools are asked in the
// web UI's page, and by which "askIn"; a server whose toolbox says
// "host" is asked as before.
func TestCheckPrintsAskInPage(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", home+"/cache")
	t.Setenv("XDG_CONFIG_HOME", home+"/config")
	cfg := writeConfig(t, map[string]any{
		"permissions": map[string]any{"askIn": "page", "annotations": map[string]any{"destructiveHint": "ask", "readOnlyHint": "allow"}},
		"toolboxes": map[string]any{
			"dev": map[string]any{"description": "Dev", "mcpServers": map[string]any{"a": fakeServerEntry("a")}},
			"ops": map[string]any{"description": "Ops", "permissions": map[string]any{"askIn": "host"}, "mcpServers": map[string]any{"b": fakeServerEntry("b")}},
		},
	})
	code, out, errOut := runCmd(t, "", "check", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	page := `(the tool's destructiveHint, given "ask" at permissions.annotations.destructiveHint; asked in the web UI's page, by "askIn": "page" at permissions.askIn)`
	if n := strings.Count(out, page); n != 1 {
		t.Errorf("check's output has %q %d times, want once (server a):\n%s", page, n, out)
	}
	if strings.Count(out, `(the tool's destructiveHint, given "ask" at permissions.annotations.destructiveHint)`) != 1 {
		t.Errorf("check's output lacks server b's asked tools, asked through the host:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "asked in the web UI's page") && !strings.HasPrefix(strings.TrimSpace(line), "ask ") {
			t.Errorf("a tool that is not asked is said to be asked in the page: %q", line)
		}
	}
}
