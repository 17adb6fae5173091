//go:build unix

package serverproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

func alive(pidFile string) bool {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}

// TestProcessLinesStderrAndStop: stdout yields only JSON-RPC lines (a
// banner is noted on stderr), stderr lines reach the log with the prefix
// and are kept as last words, and Stop ends the whole group, a background
// child included, even though the server ignores the end of its stdin.
func TestProcessLinesStderrAndStop(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("reads /proc")
	}
	pidFile := filepath.Join(t.TempDir(), "child")
	script := `sleep 600 & echo $! > "$0"
echo banner
echo '{"jsonrpc":"2.0","id":1,"result":{}}'
echo 'something went wrong' >&2
trap '' TERM
while :; do sleep 0.05; done`
	cfg := &config.Server{Name: "s", Transport: config.Stdio, Command: "sh", Args: []string{"-c", script, pidFile}}
	var stderr fakeserver.Buffer
	p, err := Start(cfg, "[tb/s]", &stderr, nil)
	if err != nil {
		t.Fatal(err)
	}
	line, err := p.ReadLine()
	if err != nil || string(line) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("ReadLine = %q, %v", line, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !alive(pidFile) || !strings.Contains(stderr.String(), "something went wrong") {
		if time.Now().After(deadline) {
			t.Fatalf("the server's child or its stderr line never came:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Stop(200 * time.Millisecond) // SIGTERM is ignored: SIGKILL follows
	if !p.HasExited() || p.ExitedCleanly() {
		t.Errorf("after Stop: exited %v, cleanly %v", p.HasExited(), p.ExitedCleanly())
	}
	// SIGKILL reached the child; a busy machine may take longer than
	// Stop's 200ms wait to end it, and nothing else would (it sleeps for
	// minutes), so a bounded wait still proves the stop.
	for deadline := time.Now().Add(20 * time.Second); alive(pidFile); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Error("the server's background child outlived Stop")
			break
		}
	}
	out := stderr.String()
	for _, want := range []string{"[tb/s] something went wrong", "[tb/s] (workbench) stdout line is not JSON-RPC, ignored: banner"} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
	if w := p.LastWords(); !strings.Contains(w, "something went wrong") {
		t.Errorf("LastWords = %q", w)
	}
	if d := p.ExitDescription(); !strings.Contains(d, "killed") {
		t.Errorf("ExitDescription = %q, want the kill", d)
	}
	p.Stop(time.Second) // twice is fine
}

// TestStartErrors: a missing command and a cwd that is not a folder are
// StartErrors, named.
func TestStartErrors(t *testing.T) {
	shortPathHome(t, "") // no login shell of the runner's, no folders of its home
	var stderr fakeserver.Buffer
	_, err := Start(&config.Server{Name: "s", Command: "mcp-workbench-no-such-command"}, "[s]", &stderr, nil)
	if se, ok := err.(*StartError); !ok || !strings.Contains(se.Error(), `command "mcp-workbench-no-such-command" not found in PATH`) {
		t.Errorf("missing command: %v", err)
	}
	_, err = Start(&config.Server{Name: "s", Command: "sh", Cwd: filepath.Join(t.TempDir(), "nope")}, "[s]", &stderr, nil)
	if se, ok := err.(*StartError); !ok || !strings.Contains(se.Error(), "is not a directory") {
		t.Errorf("bad cwd: %v", err)
	}
}
