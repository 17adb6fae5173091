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

// On Linux a stop reaches more than the process group: a server's child
// that starts a session of its own (setsid, Node's detached: true) leaves
// the group, and one whose parent exits is no longer anybody's descendant.
// Two things find them. Every process started through [Start] carries
// treeVar in its environment, which its descendants inherit unless they
// clear it; and the processes below any member of the tree, by parent id,
// are in it too. The workbench is a child subreaper ([BecomeSubreaper]):
// orphans of its trees are re-parented to it, not to init, and it reaps
// them once they end.
//
// One process below a tree member is not of the tree: one that cleared
// treeVar and leads a session of its own, both on purpose ([Untagged] and
// setsid: the shared workbench a workbench run as a server starts, which
// other sessions use too). A server's sloppy child keeps the tag it
// inherited.

// procInfo is what /proc/PID/stat says of a process.
type procInfo struct {
	ppid, pgrp, sid int
	zombie          bool
}

// readProcs reads every process's parent, group and state, and, when
// match is set, the ids of those whose treeVar value it accepts.
func readProcs(match func(string) bool) (map[int]procInfo, []int) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil
	}
	procs := make(map[int]procInfo, len(entries))
	var tagged []int
	want := []byte(treeVar + "=")
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
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue // another user's, or gone
		}
		for kv := range bytes.SplitSeq(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, want); ok {
				if match(string(v)) {
					tagged = append(tagged, pid)
				}
				break
			}
		}
	}
	return procs, tagged
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

// refresh reads /proc again: every live process of the tree's groups, its
// tagged processes (on the first read only: environments cost more to
// read, and what a tagged process starts later is found by parent id) and
// everything below them join the tree. It reports whether any of them is
// alive.
func (t *tree) refresh() bool {
	var match func(string) bool
	if !t.read {
		t.read = true
		match = t.match
	}
	procs, tagged := readProcs(match)
	if procs == nil {
		return t.groupsAlive() // no /proc: what kill(2) says
	}
	children := map[int][]int{}
	queue := tagged
	for pid, p := range procs {
		children[p.ppid] = append(children[p.ppid], pid)
		if t.pgids[p.pgrp] {
			queue = append(queue, pid)
		}
	}
	for pid := range t.pids {
		queue = append(queue, pid)
	}
	t.pids = map[int]int{}
	seen := map[int]bool{}
	alive := false
	for len(queue) > 0 {
		pid := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		p, ok := procs[pid]
		if !ok {
			continue // gone
		}
		if !p.zombie {
			alive = true
			if !t.pgids[p.pgrp] {
				t.pids[pid] = p.pgrp
			}
		}
		for _, c := range children[pid] {
			if !t.left(c, procs[c]) {
				queue = append(queue, c)
			}
		}
	}
	return alive
}

// left reports whether pid, the child of a tree member, left the tree on
// purpose: it leads a session of its own and has no treeVar (see above).
func (t *tree) left(pid int, p procInfo) bool {
	if p.sid != pid || p.zombie || t.pgids[p.pgrp] {
		return false
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	return !bytes.Contains(append([]byte{0}, env...), []byte("\x00"+treeVar+"="))
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
