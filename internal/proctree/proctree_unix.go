//go:build unix

package proctree

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strings"
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
	g.tag = nextTag()
	if g.cmd.Env == nil {
		g.cmd.Env = os.Environ()
	}
	g.cmd.Env = append(withoutEnv(g.cmd.Env, treeVar), treeVar+"="+g.tag)
	return startOwn(g.cmd.Start, func() int { return g.cmd.Process.Pid })
}

func (g *Group) wait() error {
	err := g.cmd.Wait()
	forgetOwn(g.cmd.Process.Pid)
	return err
}

func (g *Group) stop(grace time.Duration) { stopTree(g.tree(), grace) }

func (g *Group) kill() {
	t := g.tree()
	t.refresh()
	t.signal(syscall.SIGKILL)
}

// tree is the group and every process that carries its tag.
func (g *Group) tree() *tree {
	tag := g.tag
	return &tree{pgids: map[int]bool{g.ID(): true}, match: func(v string) bool { return v == tag }}
}

// setGroup makes cmd start in a new process group whose id is its pid, so
// that a stop reaches every process it starts.
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// tree is what a stop reaches: the process groups pgids, the processes
// whose treeVar value match accepts (nil: none), and, on Linux and macOS,
// every process below any of them, whatever its group or session.
type tree struct {
	pgids map[int]bool
	match func(string) bool
	read  bool        // the environments have been read (once)
	pids  map[int]int // live processes outside pgids → their group
}

// groupsAlive reports whether kill(2) finds a process in any of the
// groups. Zombies count here; on Linux and macOS refresh tells them apart.
func (t *tree) groupsAlive() bool {
	for pgid := range t.pgids {
		if err := syscall.Kill(-pgid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			return true
		}
	}
	return false
}

// signal sends sig to every group of the tree and to every process of it
// outside those groups.
func (t *tree) signal(sig syscall.Signal) {
	for pgid := range t.pgids {
		if pgid > 1 {
			_ = syscall.Kill(-pgid, sig)
		}
	}
	for pid := range t.pids {
		if pid > 1 {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// stopTree sends SIGTERM to every process of the tree, waits up to grace
// for them to exit, then sends SIGKILL to whatever is left (and whatever
// they started meanwhile). It returns once the tree is gone or, after
// SIGKILL, once grace has passed again.
func stopTree(t *tree, grace time.Duration) int {
	if !t.refresh() {
		return 0
	}
	n := len(t.pgids) + len(t.pids)
	t.signal(syscall.SIGTERM)
	if t.waitGone(grace) {
		return n
	}
	t.signal(syscall.SIGKILL)
	t.waitGone(grace)
	return n
}

// stopGroups stops the groups pgids and every process tagged with this
// workbench's token: what the watchdog does when the workbench is gone.
func stopGroups(pgids []int, tokenOf string, grace time.Duration) int {
	t := &tree{pgids: map[int]bool{}}
	for _, pgid := range pgids {
		if pgid > 1 {
			t.pgids[pgid] = true
		}
	}
	if tokenOf != "" {
		prefix := tokenOf + "."
		t.match = func(v string) bool { return strings.HasPrefix(v, prefix) }
	}
	return stopTree(t, grace)
}

func (t *tree) waitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		if !t.refresh() {
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
