package downstream

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// runnerConfig is a fake server started through a fake package runner: the
// test binary under the name npx, which "installs" until the file gate
// exists (no child meanwhile), then runs the server as its child.
func (h *harness) runnerConfig(name, gate string, extra ...string) *config.Server {
	h.t.Helper()
	cfg := h.config(name, append([]string{fakeserver.EnvInstallGate, gate}, extra...)...)
	npx := filepath.Join(h.t.TempDir(), "npx")
	if runtime.GOOS == "windows" {
		npx += ".exe"
	}
	if runtime.GOOS == "windows" {
		// A copy: a link would be the running test binary's own file,
		// which Windows does not let t.TempDir's clean-up delete.
		data, err := os.ReadFile(cfg.Command)
		if err == nil {
			err = os.WriteFile(npx, data, 0o700)
		}
		if err != nil {
			h.t.Fatal(err)
		}
	} else if err := os.Symlink(cfg.Command, npx); err != nil {
		if err := os.Link(cfg.Command, npx); err != nil {
			h.t.Fatal(err)
		}
	}
	cfg.Command = npx
	cfg.Args = []string{"-y", "some-mcp-server"}
	return cfg
}

// waitState waits (bounded) until the server's state satisfies ok.
func waitState(t *testing.T, s *Server, what string, ok func(State) bool) State {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := s.State()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for the server to be %s; it is %s (%v)", what, st.Status, st.Err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A package runner's install does not count against connectionTimeoutMs:
// the start is "installing" until the runner starts its child, and a
// connectionTimeoutMs far shorter than the install does not stop it.
func TestPackageRunnerInstallIsNotCountedAsStartup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Log("no /proc: the whole start has the install allowance here")
	}
	h := newHarness(t)
	gate := filepath.Join(t.TempDir(), "installed")
	cfg := h.runnerConfig("runner", gate)
	// Long enough for the server to answer once started (a busy machine
	// starts the race-built test binary slowly), far shorter than the
	// install below.
	cfg.ConnectionTimeout = 8 * time.Second
	s := h.server(cfg)
	if got := s.PackageRunner(); got != "npx" {
		t.Fatalf("PackageRunner = %q, want npx", got)
	}
	s.StartInBackground()
	st := waitState(t, s, "installing", func(st State) bool { return st.Status == StatusInstalling })
	if st.Since.IsZero() {
		t.Error("an installing server's state has no Since")
	}
	// Let the install outlast connectionTimeoutMs.
	time.Sleep(cfg.ConnectionTimeout + time.Second)
	if st := s.State(); st.Status != StatusInstalling {
		t.Fatalf("after connectionTimeoutMs of install the server is %s (%v), want still installing", st.Status, st.Err)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Connect(ctxT(t)); err != nil {
		t.Fatalf("the start was stopped: %v", err)
	}
	if n := len(h.lines(fakeserver.StartsFile)); n != 1 {
		t.Errorf("the server started %d times, want 1", n)
	}
}

// The install has its own bound: a runner that never gets to start the
// server is stopped after the install allowance, and the error says so.
func TestPackageRunnerInstallAllowanceEnds(t *testing.T) {
	h := newHarness(t)
	h.opts.InstallTimeout = 300 * time.Millisecond
	cfg := h.runnerConfig("runner", filepath.Join(t.TempDir(), "never"))
	s := h.server(cfg)
	_, err := s.Connect(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "npx was still installing the server's package after 300ms") {
		t.Fatalf("err = %v, want the install allowance named", err)
	}
	if left := fakeserver.WaitUntagged(h.tag, 20*time.Second); len(left) > 0 {
		t.Errorf("the runner was not stopped: %v", left)
	}
}

// A failed start puts the server on a schedule that State shows and the
// log says: the next try after RetryAfter(failures in a row).
func TestFailedStartsAreScheduled(t *testing.T) {
	h := newHarness(t)
	var wait atomic.Int64
	wait.Store(int64(time.Hour))
	h.opts.RetryAfter = func(n int) time.Duration { return time.Duration(n) * time.Duration(wait.Load()) }
	s := h.server(h.config("failing", fakeserver.EnvExitAtStart, "3"))
	for n := 1; n <= 2; n++ {
		if _, err := s.Connect(ctxT(t)); err == nil {
			t.Fatal("the start succeeded")
		}
		st := s.State()
		if st.Status != StatusError || st.Failures != n || st.FailedAt.IsZero() || st.NextTry.Sub(st.FailedAt) != time.Duration(n)*time.Hour {
			t.Fatalf("after failure %d: %+v, want error, %d failures, next try %d h after", n, st, n, n)
		}
		if !strings.Contains(st.Err.Error(), "exiting at start as asked") {
			t.Errorf("the error does not say why: %v", st.Err)
		}
	}
	if !strings.Contains(h.logs.String(), "next_try_in=2h0m0s") {
		t.Errorf("the log does not give the next try:\n%s", h.logs)
	}
	if n := len(h.lines(fakeserver.StartsFile)); n != 2 {
		t.Errorf("the server started %d times, want 2 (Connect tries whatever the schedule)", n)
	}
}

// A success ends the schedule.
func TestSuccessClearsTheSchedule(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("flaky", fakeserver.EnvFailFirst, "1"))
	if _, err := s.Connect(ctxT(t)); err == nil {
		t.Fatal("the first start succeeded")
	}
	if st := s.State(); st.Failures != 1 {
		t.Fatalf("failures = %d, want 1", st.Failures)
	}
	if _, err := s.Connect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if st := s.State(); st.Status != StatusConnected || st.Failures != 0 || !st.NextTry.IsZero() {
		t.Fatalf("after a success: %+v", st)
	}
}

// A server starting in the background says since when.
func TestStartingStateSaysSince(t *testing.T) {
	h := newHarness(t)
	gate := filepath.Join(t.TempDir(), "gate")
	s := h.server(h.config("slow", fakeserver.EnvStartGate, gate))
	s.StartInBackground()
	st := waitState(t, s, "starting", func(st State) bool { return st.Status == StatusStarting })
	if st.Since.IsZero() {
		t.Error("Since is not set")
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Connect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// A start that dies of a module missing from its npx cache entry removes
// that entry, and only it, and starts once more, which installs afresh.
func TestBrokenNPXEntryIsRemovedAndTheStartTriedAgain(t *testing.T) {
	h := newHarness(t)
	gate := filepath.Join(t.TempDir(), "installed")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	npxDir := filepath.Join(t.TempDir(), "_npx")
	entry := filepath.Join(npxDir, "0123456789abcdef")
	other := filepath.Join(npxDir, "fedcba9876543210")
	for _, d := range []string{filepath.Join(entry, "node_modules", "other"), filepath.Join(other, "node_modules")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s := h.server(h.runnerConfig("runner", gate, fakeserver.EnvNPXEntry, entry))
	if _, err := s.Connect(ctxT(t)); err != nil {
		t.Fatalf("the start after the repair failed: %v", err)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, "npx's cache entry of the server was broken") || !strings.Contains(logs, "entry="+entry) {
		t.Errorf("the repair is not logged:\n%s", logs)
	}
	if _, err := os.Stat(filepath.Join(entry, "node_modules", "dep")); err != nil {
		t.Errorf("the entry was not installed again: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another entry was removed: %v", err)
	}
	if n := len(h.lines(fakeserver.StartsFile)); n != 1 {
		t.Errorf("%d server starts, want 1 (the broken one died before the server)", n)
	}
}

// The repair is tried once per start: a package that lacks its own
// module fails again after it, and the start fails with the server's
// error.
func TestNPXRepairIsTriedOnce(t *testing.T) {
	h := newHarness(t)
	gate := filepath.Join(t.TempDir(), "installed")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(t.TempDir(), "_npx", "0123456789abcdef")
	cfg := h.runnerConfig("runner", gate, fakeserver.EnvNPXEntry, entry, fakeserver.EnvNPXBroken, "1")
	cfg.MaxRetries = 2
	s := h.server(cfg)
	_, err := s.Connect(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "could not start (3 attempts)") || !strings.Contains(err.Error(), "Node.js v22.0.0") {
		t.Fatalf("err = %v, want the server's own error after 3 attempts", err)
	}
	if n := strings.Count(h.logs.String(), "npx's cache entry of the server was broken"); n != 1 {
		t.Errorf("the repair was made %d times, want once:\n%s", n, h.logs)
	}
}
