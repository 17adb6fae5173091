package downstream

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// A package runner that has installed (it runs its child, the server) and
// whose server then hangs gets connectionTimeoutMs, not the install
// allowance: the runner's child is seen through the process list (/proc on
// Linux, sysctl on macOS), so the start counts as started.
func TestInstalledRunnerThatHangsGetsConnectionTimeout(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows: a runner's child is not looked for (the Job Object holds the tree, with no parent links read), so the whole start has the install allowance")
	}
	h := newHarness(t)
	h.opts.InstallTimeout = 30 * time.Second
	gate := filepath.Join(t.TempDir(), "installed")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := h.runnerConfig("runner", gate, fakeserver.EnvHangInit, "1")
	cfg.ConnectionTimeout = 2 * time.Second
	s := h.server(cfg)
	_, err := s.Connect(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "(connectionTimeoutMs)") || strings.Contains(err.Error(), "installing") {
		t.Fatalf("err = %v, want connectionTimeoutMs's, not the install allowance's", err)
	}
}
