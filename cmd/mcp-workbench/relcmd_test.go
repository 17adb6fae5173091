package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// TestRelativeCommandIsTakenFromCwd: a relative command path of a server
// with "cwd" is started from that folder (exec.Cmd evaluates it there), and
// one that does not exist is reported at the path looked for there, not
// in the workbench's working directory.
func TestRelativeCommandIsTakenFromCwd(t *testing.T) {
	exe, _ := os.Executable()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(dir, "bin", "server")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	entry := func(command string) map[string]any {
		return map[string]any{"command": command, "cwd": dir, "maxRetries": 0,
			"env": map[string]string{fakeserver.EnvServer: "1", fakeserver.EnvName: "rel"}}
	}
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{"dev": map[string]any{
		"description": "Relative commands",
		"mcpServers":  map[string]any{"found": entry("./bin/server"), "missing": entry("./bin/missing")},
	}}})
	code, out, errOut := runCmd(t, "", "check", "--config", cfg)
	want := "looked for " + filepath.Join(dir, "bin", "missing") + `: a relative command is taken from the server's "cwd"`
	if code != 1 || !strings.Contains(out, "found                connected") || !strings.Contains(out, want) {
		t.Errorf("check (%d) lacks %q:\n%s\n%s", code, want, out, errOut)
	}
}
