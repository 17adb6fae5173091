package downstream

import (
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/serverproc"
)

// A package runner (npx, uvx, …) installs the server's package before it
// starts it, on a first run for as long as the network and the machine
// take; stopping it half-way can break the runner's cache (see the npx
// repair in dialWithRetries). So connectionTimeoutMs does not count the
// install: a package runner's start is "installing" until the runner
// starts a child (the server, npx's "sh -c <bin>"), and connectionTimeoutMs
// counts from there; the install itself is bounded by the install
// allowance (Options.InstallTimeout). The child is seen through the
// process list (/proc on Linux, sysctl on macOS). Where it cannot be
// (Windows) and for docker and podman, whose pulls happen in their
// daemon, the whole start is given the allowance.

// installPoll is how often an installing start looks for the runner's child.
const installPoll = 100 * time.Millisecond

// PackageRunner names the server's package runner (npx, uvx, …), or
// returns "" for a server that is not started by one.
func (s *Server) PackageRunner() string {
	if s.cfg.Transport != config.Stdio {
		return ""
	}
	return serverproc.PackageRunner(s.cfg.Command, s.cfg.Args)
}

// installClock holds a start's connect timer while the runner installs.
type installClock struct {
	runner string
	mu     sync.Mutex
	done   bool // the start ended, or the install did
	stopCh chan struct{}
}

// startInstallClock makes timer (connectionTimeoutMs, running) wait for
// the install: it is set to the install allowance, and set back to
// connectionTimeoutMs when the runner's child appears.
func (s *Server) startInstallClock(c *conn, runner string, timer *time.Timer) *installClock {
	ic := &installClock{runner: runner, stopCh: make(chan struct{})}
	if !timer.Stop() {
		return nil // it fired already
	}
	timer.Reset(s.o.installTimeout())
	s.installing.Store(true)
	s.changed()
	if runner == "docker run" || runner == "podman run" {
		return ic // the pull is the daemon's: the allowance holds throughout
	}
	go func() {
		tick := time.NewTicker(installPoll)
		defer tick.Stop()
		for {
			has, known := c.proc.HasChild()
			if !known {
				return
			}
			if has {
				ic.mu.Lock()
				if !ic.done && timer.Stop() {
					ic.done = true
					timer.Reset(s.cfg.ConnectionTimeout)
					s.installing.Store(false)
					s.changed()
					s.log.Debug("installed; connectionTimeoutMs counts from now", "runner", runner)
				}
				ic.mu.Unlock()
				return
			}
			select {
			case <-tick.C:
			case <-ic.stopCh:
				return
			}
		}
	}()
	return ic
}

// stop ends the clock when the start has ended, and returns the runner's
// name if its install had not ended by then.
func (ic *installClock) stop() string {
	if ic == nil {
		return ""
	}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	close(ic.stopCh)
	if ic.done {
		return ""
	}
	ic.done = true
	return ic.runner
}
