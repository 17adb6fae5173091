//go:build unix

package downstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// TestTimedOutStartGetsSIGTERM: a server that misses connectionTimeoutMs
// while it ignores its stdin (as npx does while it installs) is asked to
// stop with SIGTERM, not killed at once: SIGKILL would leave npm's cache
// half-written. The fake server writes a file when SIGTERM reaches it.
func TestTimedOutStartGetsSIGTERM(t *testing.T) {
	h := newHarness(t)
	termFile := filepath.Join(t.TempDir(), "term")
	cfg := h.config("installing", fakeserver.EnvHangInit, "1", fakeserver.EnvTermFile, termFile)
	cfg.ConnectionTimeout = 300 * time.Millisecond // it never answers: the timeout is certain, whatever the machine's speed
	_, err := h.server(cfg).Connect(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "no answer within 300ms (connectionTimeoutMs)") {
		t.Errorf("err = %v, want the start timeout", err)
	}
	// Connect returns once the process tree is gone.
	if b, err := os.ReadFile(termFile); err != nil || strings.TrimSpace(string(b)) != "sigterm" {
		t.Errorf("the timed-out server never got SIGTERM (%v): it was killed outright", err)
	}
}
