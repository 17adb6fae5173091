package proctree

import (
	"bytes"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Linux's process list is /proc (see tree_procs.go for what a stop does
// with it). The workbench is a child subreaper there ([BecomeSubreaper]):
// orphans of its trees are re-parented to it, not to init, and it reaps
// them once they end.

// readProcs reads every process's parent, group and state, and, when
// match is set, the ids of those whose treeVar value it accepts.
func readProcs(match func(string) bool) (map[int]procInfo, []int) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil
	}
	procs := make(map[int]procInfo, len(entries))
	var tagged []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		info, ok := parseProcStat(stat)
		if !ok {
			continue
		}
		procs[pid] = info
		if match == nil || info.zombie {
			continue
		}
		if v, has, err := tagOf(pid); err == nil && has && match(v) {
			tagged = append(tagged, pid)
		}
	}
	return procs, tagged
}

// tagOf returns the treeVar value in pid's environment and whether it has
// one; an error if the environment cannot be read (another user's
// process, or gone).
func tagOf(pid int) (string, bool, error) {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false, err
	}
	want := []byte(treeVar + "=")
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, want); ok {
			return string(v), true, nil
		}
	}
	return "", false, nil
}

// parseProcStat reads "PID (COMM) STATE PPID PGRP ...", where COMM may
// hold spaces and parentheses.
func parseProcStat(stat []byte) (procInfo, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 4 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	sid, err3 := strconv.Atoi(string(f[3]))
	if err1 != nil || err2 != nil || err3 != nil {
		return procInfo{}, false
	}
	return procInfo{ppid: ppid, pgrp: pgrp, sid: sid, zombie: f[0][0] == 'Z' || f[0][0] == 'X'}, true
}

// own holds the ids of the children this process started itself (servers'
// leaders, the watchdog), which their exec.Cmd waits for: the reaper of
// adopted orphans must leave them alone.
var own = struct {
	sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

// startOwn starts cmd and records it as this process's own child. The
// lock keeps the reaper from seeing the child before it is recorded.
func startOwn(start func() error, pid func() int) error {
	own.Lock()
	defer own.Unlock()
	if err := start(); err != nil {
		return err
	}
	own.pids[pid()] = true
	return nil
}

// forgetOwn drops a child that has been waited for.
func forgetOwn(pid int) {
	own.Lock()
	delete(own.pids, pid)
	own.Unlock()
}

var subreaper sync.Once

// BecomeSubreaper makes this process a child subreaper: a process of a
// server's tree whose parent exits is re-parented to the workbench rather
// than to init, so it stays within reach, and the workbench reaps it once
// it has ended. Call it once, early in main; it is not for processes that
// start children outside this package (their exit statuses could be
// taken). Elsewhere than on Linux it does nothing.
func BecomeSubreaper() error {
	var err error
	subreaper.Do(func() {
		if err = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return
		}
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGCHLD)
		go func() {
			for range sig {
				reapAdopted()
			}
		}()
	})
	return err
}

// reapAdopted waits for every ended child of this process that it did not
// start itself: orphans it adopted as a subreaper.
func reapAdopted() {
	own.Lock()
	defer own.Unlock()
	procs, _ := readProcs(nil)
	self := os.Getpid()
	for pid, p := range procs {
		if p.ppid == self && p.zombie && !own.pids[pid] {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
	}
}

// hasChild reports whether pid has a live child, by its parent id in
// /proc (the children files of /proc/PID/task need a kernel option).
func hasChild(pid int) (has, known bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		if info, ok := parseProcStat(stat); ok && info.ppid == pid && !info.zombie {
			return true, true
		}
	}
	return false, true
}
