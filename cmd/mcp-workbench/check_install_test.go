package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// installConfig is a configuration whose one server, dev/pkg, is started
// by a package runner named npx (the test binary as a fake runner) that
// installs until the file gate exists.
func installConfig(t *testing.T, gate string) string {
	t.Helper()
	dir := t.TempDir()
	exe, _ := os.Executable()
	npx := filepath.Join(dir, "npx")
	if runtime.GOOS == "windows" {
		npx += ".exe"
	}
	if err := os.Symlink(exe, npx); err != nil {
		if err := os.Link(exe, npx); err != nil {
			t.Fatal(err)
		}
	}
	entry := fakeServerEntry("pkg", fakeserver.EnvInstallGate, gate)
	entry["command"], entry["args"] = npx, []string{"-y", "some-mcp-server"}
	return writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "d", "mcpServers": map[string]any{"pkg": entry}},
	}})
}

// A package that is installed already (the runner finds it in a moment)
// is no install to speak of: check says nothing of installing, and never
// "installing … for 0s".
func TestCheckSaysNothingOfAShortInstall(t *testing.T) {
	old := installNoteAfter
	installNoteAfter = time.Hour // any install of this test is a short one
	defer func() { installNoteAfter = old }()
	gate := filepath.Join(t.TempDir(), "installed")
	cfg := installConfig(t, gate)
	// The runner "installs" for a second, several of check's looks at it.
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		time.Sleep(time.Second)
		_ = os.WriteFile(gate, nil, 0o600)
	}()
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"check", "--config", cfg}, strings.NewReader(""), &out, &errOut)
	<-opened
	if err != nil || !strings.Contains(out.String(), "All 1 server(s) started.") {
		t.Fatalf("check: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	if strings.Contains(errOut.String(), "installing its package") || strings.Contains(errOut.String(), "install ended") {
		t.Errorf("check spoke of a short install:\n%s", errOut.String())
	}
}

// A long install is said, with how long it has taken: never less than
// installNoteAfter.
func TestCheckSaysHowLongAnInstallTook(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "installed")
	cfg := installConfig(t, gate)
	errOut := &gateOnText{want: "dev/pkg installing its package (npx) for ", gate: gate}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"check", "--config", cfg}, strings.NewReader(""), &out, errOut); err != nil {
		t.Fatalf("check: %v\n%s\n%s", err, out.String(), errOut.b.String())
	}
	log := errOut.b.String()
	m := regexp.MustCompile(`installing its package \(npx\) for (\S+);`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("check did not say the install:\n%s", log)
	}
	if d, err := time.ParseDuration(m[1]); err != nil || d < installNoteAfter {
		t.Errorf("check said the install took %s, under the %s before it speaks:\n%s", m[1], installNoteAfter, log)
	}
	if !strings.Contains(log, "dev/pkg: the install ended after ") {
		t.Errorf("check did not say the install ended:\n%s", log)
	}
}
