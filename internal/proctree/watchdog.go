// Package proctree starts downstream servers as whole process trees and
// makes sure none of them outlives the workbench, even when the workbench is
// killed with SIGKILL and none of its own clean-up runs.
//
// Every stdio server runs in a process group of its own, so stopping it
// stops an npx, uvx or sh -c wrapper's children too. A small watchdog, the
// same binary re-executed, is told about each group over a pipe. When the
// pipe reaches end of file — because the workbench closed it, or because the
// workbench died and the kernel closed it — the watchdog stops every group
// still listed and exits. A process group alone is not enough: nothing
// signals it when its creator dies.
package proctree

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// envVar marks a process started as the watchdog. [MaybeRun] looks for it.
const envVar = "MCP_WORKBENCH_REAPER"

// tokenVar gives the watchdog the workbench's token (see treeVar).
const tokenVar = "MCP_WORKBENCH_REAPER_TOKEN"

// MaybeRun runs the watchdog and exits if this process was started as one.
// Call it first thing in main, and in TestMain of tests whose code starts
// downstream servers (the test binary is then the re-executed program).
func MaybeRun() {
	if os.Getenv(envVar) != "1" {
		return
	}
	run(os.Stdin, os.Stderr)
	os.Exit(0)
}

// run reads "+PGID" and "-PGID" lines until end of input, then stops every
// group still listed and every process tagged with the workbench's token.
func run(in io.Reader, errOut io.Writer) {
	ignoreSignals()
	groups := map[int]bool{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 {
			continue
		}
		pgid, err := strconv.Atoi(line[1:])
		if err != nil || pgid <= 1 {
			continue
		}
		switch line[0] {
		case '+':
			groups[pgid] = true
		case '-':
			delete(groups, pgid)
		}
	}
	pgids := make([]int, 0, len(groups))
	for pgid := range groups {
		pgids = append(pgids, pgid)
	}
	// The groups still listed, and whatever carries the workbench's
	// token: a server's descendant that left its group, or whose parent
	// (stopped with its group) left it to init.
	if n := stopGroups(pgids, os.Getenv(tokenVar), time.Second); n > 0 {
		fmt.Fprintf(errOut, "mcp-workbench watchdog: stopped %d downstream process group(s) and process(es) left by the workbench\n", n)
	}
}

// Watchdog is the workbench's handle on the watchdog process. It starts the
// process on first use, so a workbench that never starts a server never
// starts a watchdog either. The zero value is not usable; use [NewWatchdog].
// A nil *Watchdog does nothing.
type Watchdog struct {
	log *slog.Logger

	mu      sync.Mutex
	started bool
	cmd     *exec.Cmd
	pipe    io.WriteCloser
}

// NewWatchdog returns a Watchdog that logs to log.
func NewWatchdog(log *slog.Logger) *Watchdog {
	return &Watchdog{log: log}
}

// Watch asks the watchdog to stop the group pgid if the workbench dies.
func (wd *Watchdog) Watch(pgid int) { wd.send('+', pgid) }

// Forget tells the watchdog that the group pgid is gone.
func (wd *Watchdog) Forget(pgid int) { wd.send('-', pgid) }

func (wd *Watchdog) send(op byte, pgid int) {
	if wd == nil || !supported {
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if !wd.started && op == '+' {
		wd.start()
	}
	if wd.pipe == nil {
		return
	}
	if _, err := fmt.Fprintf(wd.pipe, "%c%d\n", op, pgid); err != nil {
		wd.log.Warn("process watchdog is gone; downstream processes may outlive a killed workbench", "error", err)
		wd.pipe.Close()
		wd.pipe = nil
	}
}

// start launches the watchdog process; wd.mu is held.
func (wd *Watchdog) start() {
	wd.started = true
	fail := func(err error) {
		wd.log.Warn("cannot start the process watchdog; downstream processes may outlive a killed workbench", "error", err)
	}
	exe, err := os.Executable()
	if err != nil {
		fail(err)
		return
	}
	cmd := exec.Command(exe)
	cmd.Env = append(withoutEnv(withoutEnv(os.Environ(), envVar), tokenVar), envVar+"=1", tokenVar+"="+token)
	cmd.Stderr = os.Stderr
	setGroup(cmd) // terminal signals meant for the workbench must not reach it
	pipe, err := cmd.StdinPipe()
	if err != nil {
		fail(err)
		return
	}
	if err := startOwn(cmd.Start, func() int { return cmd.Process.Pid }); err != nil {
		fail(err)
		return
	}
	wd.cmd, wd.pipe = cmd, pipe
}

// Close ends the watchdog: it stops any group still listed, then exits.
// Close waits for it, so that when Close returns no listed process is left.
func (wd *Watchdog) Close() {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	pipe, cmd := wd.pipe, wd.cmd
	wd.pipe, wd.cmd = nil, nil
	wd.started = true // never start again
	wd.mu.Unlock()
	if pipe != nil {
		pipe.Close()
	}
	if cmd != nil {
		_ = cmd.Wait()
		forgetOwn(cmd.Process.Pid)
	}
}

func withoutEnv(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
