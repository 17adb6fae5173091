package proctree

import (
	"os/exec"
	"time"
)

// Group is a started command together with every process it starts: a
// process group on unix, a Job Object on Windows. Stopping the group stops
// an npx, uvx or sh -c wrapper's children too.
type Group struct {
	cmd *exec.Cmd
	sys groupSys // the platform's handle on the group
}

// Start starts cmd as the leader of a new group. The caller waits for cmd
// as usual (cmd.Wait); the group outlives the leader until stopped.
func Start(cmd *exec.Cmd) (*Group, error) {
	g := &Group{cmd: cmd}
	if err := g.start(); err != nil {
		return nil, err
	}
	return g, nil
}

// ID identifies the group to the watchdog: the process group id on unix.
func (g *Group) ID() int { return g.cmd.Process.Pid }

// Stop asks every process of the group to end, waits up to grace, then
// kills whatever is left and waits up to grace again. It returns as soon
// as the group is gone.
func (g *Group) Stop(grace time.Duration) { g.stop(grace) }

// Kill ends every process of the group at once, without waiting.
func (g *Group) Kill() { g.kill() }
