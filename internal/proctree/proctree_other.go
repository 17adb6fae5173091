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
