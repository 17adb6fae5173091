package proctree

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"time"
)

// Group is a started command together with every process it starts: a
// process group on unix, a Job Object on Windows. Stopping the group stops
// an npx, uvx or sh -c wrapper's children too.
type Group struct {
	cmd *exec.Cmd
	sys groupSys // the platform's handle on the group
	tag string   // its treeVar value (unix)
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

// Wait waits for the leader to exit, as cmd.Wait does; call it instead.
func (g *Group) Wait() error { return g.wait() }

// ID identifies the group to the watchdog: the process group id on unix.
func (g *Group) ID() int { return g.cmd.Process.Pid }

// Stop asks every process of the group to end, waits up to grace, then
// kills whatever is left and waits up to grace again. It returns as soon
// as the group is gone.
func (g *Group) Stop(grace time.Duration) { g.stop(grace) }

// Kill ends every process of the group at once, without waiting.
func (g *Group) Kill() { g.kill() }

// treeVar tags the environment of every process a [Group] starts with the
// group's own value, "TOKEN.N": TOKEN is this workbench's, N the group's.
// Descendants inherit it, so a stop finds a descendant that left the
// process group, even one whose parent has exited (Linux, macOS).
const treeVar = "MCP_WORKBENCH_TREE"

// Untagged returns env without the tag of a server's tree: for a process
// that must outlive the server that starts it (the shared workbench, which
// a stop of the server that started it must not reach).
func Untagged(env []string) []string { return withoutEnv(env, treeVar) }

// token tells this workbench's trees from those of any other.
var token = func() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}()

var tagSeq atomic.Int64

func nextTag() string { return token + "." + strconv.FormatInt(tagSeq.Add(1), 10) }

// HasChild reports whether the group's leader has a child process alive,
// and whether that can be told here at all (Linux and macOS, through their
// process lists). A package runner (npx, uvx) starts the server as its
// child once it has installed the package: until then, the start is an
// install.
func (g *Group) HasChild() (has, known bool) { return hasChild(g.ID()) }
