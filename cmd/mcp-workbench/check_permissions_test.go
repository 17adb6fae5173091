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
