package serverproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
)

// TestShortPATHAppDataNpm: a host started from the Start menu without
// npm's folder in its Path still starts a program npm installed in
// %APPDATA%\npm, with that folder first in the server's Path.
func TestShortPATHAppDataNpm(t *testing.T) {
	tmp := t.TempDir()
	roaming := filepath.Join(tmp, "AppData", "Roaming")
	t.Setenv("APPDATA", roaming)
	t.Setenv("LOCALAPPDATA", filepath.Join(tmp, "AppData", "Local"))
	t.Setenv("USERPROFILE", tmp)
	t.Setenv("PATH", filepath.Join(os.Getenv("SystemRoot"), "System32"))
	npm := filepath.Join(roaming, "npm")
	if err := os.MkdirAll(npm, 0o700); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(npm, "fakecmd.exe"), b, 0o700); err != nil {
		t.Fatal(err)
	}
	p, env := startChild(t, &config.Server{Name: "s", Transport: config.Stdio, Command: "fakecmd", Env: map[string]string{envChild: "1"}})
	if f := p.FoundElsewhere(); !strings.EqualFold(f.Dir, npm) || f.From != "the usual folders" {
		t.Errorf("FoundElsewhere = %+v, want %s in the usual folders", f, npm)
	}
	for _, kv := range env {
		if name, val, _ := strings.Cut(kv, "="); strings.EqualFold(name, "PATH") {
			if !strings.HasPrefix(strings.ToLower(val), strings.ToLower(npm)+";") {
				t.Errorf("the server's %s = %q, want %s first", name, val, npm)
			}
			return
		}
	}
	t.Errorf("the server has no Path: %q", env)
}
