//go:build unix

package proctree

import (
	"errors"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// supported says the watchdog is needed and works here: nothing stops a
// process group when its creator dies.
const supported = true

// groupSys needs nothing on unix: the group id is the leader's pid.
//
//lint:ignore U1000 used by the Group field of this type on Windows, where it holds the Job Object
type groupSys struct{}

func (g *Group) start() error {
	setGroup(g.cmd)
	return g.cmd.Start()
}

func (g *Group) stop(grace time.Duration) { stopGroup(g.ID(), grace) }

func (g *Group) kill() { killGroup(g.ID()) }

// setGroup makes cmd start in a new process group whose id is its pid, so
// that [stopGroup] reaches every process it starts.
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// groupAlive reports whether any process of the group pgid is still
// running. Zombies do not count: where nothing reaps orphans (some container
// inits), they would otherwise keep a dead group "alive" forever.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return hasLiveMember(pgid)
}

// stopGroup sends SIGTERM to every process of the group pgid, waits up to
// grace for them to exit, then sends SIGKILL to whatever is left. It returns
// once the group is gone or, after SIGKILL, once grace has passed again.
func stopGroup(pgid int, grace time.Duration) {
	if pgid <= 1 || !groupAlive(pgid) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	if waitGone(pgid, grace) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	waitGone(pgid, grace)
}

// killGroup sends SIGKILL to every process of the group pgid at once.
func killGroup(pgid int) {
	if pgid > 1 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

func waitGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		if !groupAlive(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(delay)
	}
}

// ignoreSignals keeps the watchdog alive through a terminal's Ctrl-C or
// hang-up: its job is to outlive the workbench long enough to clean up.
func ignoreSignals() {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
}
