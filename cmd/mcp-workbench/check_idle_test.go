package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// TestCheckReportsStartsNotLiveState: a server whose idleTimeoutMs stops it
// before the slowest server of its toolbox has started is reported as it
// started (connected, with its tools), not as it is when every start has
// ended. The slow server's start is held until the quick one's process is
// gone, so the order is certain whatever the machine's speed.
func TestCheckReportsStartsNotLiveState(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("watches processes through /proc")
	}
	state, dir := t.TempDir(), t.TempDir()
	gate := filepath.Join(dir, "gate")
	tag := fmt.Sprintf("quick-%d", time.Now().UnixNano())
	quick := fakeServerEntry("quick", fakeserver.EnvStateDir, state, fakeserver.TagVar, tag)
	quick["idleTimeoutMs"] = 1
	slow := fakeServerEntry("slow", fakeserver.EnvStartGate, gate)
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "d", "mcpServers": map[string]any{"quick": quick, "slow": slow}},
	}})
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if len(fakeserver.ReadLines(state, fakeserver.StartsFile)) > 0 {
				if pids, _ := fakeserver.Tagged(tag); len(pids) == 0 {
					break // started, then stopped for idleness
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		_ = os.WriteFile(gate, []byte("go"), 0o644)
	}()
	code, out, errOut := runCmd(t, "", "check", "--config", cfg)
	<-opened
	if code != 0 || !strings.Contains(out, "All 2 server(s) started.") {
		t.Errorf("check: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "  quick                connected   15 tools") {
		t.Errorf("the quick server is not reported as it started:\n%s", out)
	}
}
