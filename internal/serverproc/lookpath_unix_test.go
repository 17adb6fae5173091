//go:build unix

package serverproc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
)

// shortPathHome gives the test a GUI host's short PATH, a home of its own
// (HOME, XDG_*) and SHELL set to shell (may be ""), and forgets the login
// shell's PATH read by an earlier test.
func shortPathHome(t *testing.T, shell string) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv("NVM_DIR", "")
	t.Setenv("SHELL", shell)
	loginShellPath = sync.OnceValue(readLoginShellPath)
	t.Cleanup(func() { loginShellPath = sync.OnceValue(readLoginShellPath) })
	return home
}

// writeScript writes an executable script.
func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
}

// installFakeCmd puts fakecmd into dir as npm installs a Node program: a
// script whose "#!/usr/bin/env fakenode" line needs its interpreter,
// fakenode, which is in the same folder, to be in PATH. fakenode runs the
// test binary, which prints its environment (envChild).
func installFakeCmd(t *testing.T, dir string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	writeScript(t, filepath.Join(dir, "fakenode"), "#!/bin/sh\nexec '"+exe+"' \"$@\"\n")
	writeScript(t, filepath.Join(dir, "fakecmd"), "#!/usr/bin/env fakenode\n")
}

// startFakeCmd starts fakecmd by name, with extra (name, value) pairs in
// its "env", and returns the process and the environment its server saw.
func startFakeCmd(t *testing.T, extra ...string) (*Process, []string) {
	t.Helper()
	env := map[string]string{envChild: "1"}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return startChild(t, &config.Server{Name: "s", Transport: config.Stdio, Command: "fakecmd", Env: env})
}

func pathOf(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return ""
}

// TestShortPATHUsualFolder: with a GUI host's short PATH and no login
// shell, a command in ~/.local/bin is found there, said so, and runs with
// that folder first in its PATH, so its "#!/usr/bin/env" line finds its
// interpreter.
func TestShortPATHUsualFolder(t *testing.T) {
	home := shortPathHome(t, "")
	bin := filepath.Join(home, ".local", "bin")
	installFakeCmd(t, bin)
	p, env := startFakeCmd(t)
	if f := p.FoundElsewhere(); f.Dir != bin || f.From != "the usual folders" {
		t.Errorf("FoundElsewhere = %+v, want %s in the usual folders", f, bin)
	}
	if got, want := pathOf(env), bin+":/usr/bin:/bin"; got != want {
		t.Errorf("the server's PATH = %q, want %q", got, want)
	}
}

// TestShortPATHLoginShell: a command in a folder that only the user's
// login shell's profile puts in PATH is found through $SHELL -l -c, whose
// profile's chatter on stdout is ignored.
func TestShortPATHLoginShell(t *testing.T) {
	tmp := t.TempDir()
	tools := filepath.Join(tmp, "my tools", "bin")
	installFakeCmd(t, tools)
	shell := filepath.Join(tmp, "loginsh")
	// Called as: loginsh -l -c 'printf …'. The profile talks first.
	writeScript(t, shell, `#!/bin/sh
[ "$1" = -l ] && [ "$2" = -c ] || exit 2
echo "Welcome back: 3 updates"
PATH='`+tools+`:/usr/local/sbin':$PATH
export PATH
/bin/sh -c "$3"
echo "bye"
`)
	shortPathHome(t, shell)
	p, env := startFakeCmd(t)
	if f := p.FoundElsewhere(); f.Dir != tools || f.From != "the login shell's PATH" {
		t.Errorf("FoundElsewhere = %+v, want %s from the login shell", f, tools)
	}
	if got := pathOf(env); !strings.HasPrefix(got, tools+":") {
		t.Errorf("the server's PATH = %q, want %s first", got, tools)
	}
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		return i > 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return syscall.Kill(pid, 0) == nil
}

// TestShortPATHHangingLoginShell: a login shell whose profile never ends
// is killed at the bound, with what it started, and the usual folders are
// looked in all the same.
func TestShortPATHHangingLoginShell(t *testing.T) {
	tmp := t.TempDir()
	pids := filepath.Join(tmp, "pids")
	shell := filepath.Join(tmp, "hangsh")
	writeScript(t, shell, `#!/bin/sh
sleep 600 &
echo $$ $! > '`+pids+`'
wait
`)
	home := shortPathHome(t, shell)
	loginShellBound = 300 * time.Millisecond
	t.Cleanup(func() { loginShellBound = 5 * time.Second })
	installFakeCmd(t, filepath.Join(home, ".local", "bin"))
	p, _ := startFakeCmd(t)
	if f := p.FoundElsewhere(); f.From != "the usual folders" {
		t.Errorf("FoundElsewhere = %+v, want the usual folders", f)
	}
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatalf("the login shell never ran: %v", err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		for deadline := time.Now().Add(20 * time.Second); running(pid); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("process %d of the hanging login shell outlived the bound", pid)
				break
			}
		}
	}
}

// TestRightPATHUnchanged: a command PATH has is started as before: no
// login shell run, no folder added to its PATH.
func TestRightPATHUnchanged(t *testing.T) {
	tmp := t.TempDir()
	ran := filepath.Join(tmp, "ran")
	shell := filepath.Join(tmp, "loginsh")
	writeScript(t, shell, "#!/bin/sh\ntouch '"+ran+"'\n")
	shortPathHome(t, shell)
	bin := filepath.Join(tmp, "bin")
	installFakeCmd(t, bin)
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	p, env := startFakeCmd(t)
	if f := p.FoundElsewhere(); f != (Found{}) {
		t.Errorf("FoundElsewhere = %+v for a command in PATH", f)
	}
	if got, want := pathOf(env), bin+":/usr/bin:/bin"; got != want {
		t.Errorf("the server's PATH = %q, want %q", got, want)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the login shell ran for a command in PATH")
	}
}

// TestShortPATHServerEnvPath: a PATH in the server's "env" is where its
// command is looked for first (the server runs with that PATH, the command
// was looked up before it): the login shell is not run for it.
func TestShortPATHServerEnvPath(t *testing.T) {
	tmp := t.TempDir()
	ran := filepath.Join(tmp, "ran")
	shell := filepath.Join(tmp, "loginsh")
	writeScript(t, shell, "#!/bin/sh\ntouch '"+ran+"'\n")
	shortPathHome(t, shell)
	tools := filepath.Join(tmp, "tools")
	installFakeCmd(t, tools)
	p, env := startFakeCmd(t, "PATH", tools+":/usr/bin:/bin")
	if f := p.FoundElsewhere(); f.Dir != tools || f.From != `the PATH of the server's "env"` {
		t.Errorf("FoundElsewhere = %+v, want %s from the server's env", f, tools)
	}
	if got := pathOf(env); !strings.HasPrefix(got, tools+":") {
		t.Errorf("the server's PATH = %q, want %s first", got, tools)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the login shell ran for a command the server's PATH has")
	}
}
