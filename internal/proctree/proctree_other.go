//go:build !unix && !windows

package proctree

import (
	"os/exec"
	"time"
)

// Process groups and the watchdog are unix-only for now.
const supported = false

type groupSys struct{}

func (g *Group) start() error { return g.cmd.Start() }

func (g *Group) stop(grace time.Duration) {
	if g.cmd.Process != nil {
		_ = g.cmd.Process.Kill()
	}
}

func (g *Group) kill() {
	if g.cmd.Process != nil {
		_ = g.cmd.Process.Kill()
	}
}

// setGroup does nothing on this platform.
func setGroup(cmd *exec.Cmd) {}

// stopGroups does nothing on this platform.
func stopGroups(pgids []int, token string, grace time.Duration) int { return 0 }

func startOwn(start func() error, pid func() int) error { return start() }

func forgetOwn(pid int) {}

// BecomeSubreaper does nothing on this platform.
func BecomeSubreaper() error { return nil }

func ignoreSignals() {}

func (g *Group) wait() error { return g.cmd.Wait() }

// hasChild cannot tell here: a package runner's install is not told from its server.
func hasChild(int) (has, known bool) { return false, false }
