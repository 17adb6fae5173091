//go:build unix

package downstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShortPATHSaysWhereFound: a host with a short PATH (started from the
// desktop) has a server whose command only ~/.local/bin holds: it starts,
// and the log says at info where the command was found.
func TestShortPATHSaysWhereFound(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("SHELL", "")
	t.Setenv("PATH", "/usr/bin:/bin")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(home, ".local", "bin")
	if err := os.MkdirAll(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "fake-mcp-server"), []byte("#!/bin/sh\nexec '"+exe+"' \"$@\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	cfg := h.config("f1")
	cfg.Command = "fake-mcp-server"
	s := h.server(cfg)
	if _, err := s.Connect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	logs := h.logs.String()
	for line := range strings.Lines(logs) {
		if strings.Contains(line, "level=INFO") && strings.Contains(line, "found it in the usual folders") && strings.Contains(line, "folder="+bin) {
			return
		}
	}
	t.Errorf("no info line saying where the command was found:\n%s", logs)
}
