package proctree

import (
	"errors"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// macOS's process list is the kern.proc.all sysctl (each process's
// parent, group, state and session leadership), and a process's
// environment as it was at exec is KERN_PROCARGS2's, which the kernel
// gives for the caller's own processes (see tree_procs.go for what a stop
// does with them). There is no subreaper: a tree's orphan is re-parented
// to launchd, and found again by the tag it inherited.

// From <sys/proc.h>: a zombie's p_stat, and e_flag's bit of a session
// leader.
const (
	darwinZombie        = 5
	darwinSessionLeader = 0x2
)

// listProcs is kern.proc.all: every process's kinfo_proc.
func listProcs() ([]unix.KinfoProc, error) { return unix.SysctlKinfoProcSlice("kern.proc.all") }

// procInfoOf is what readProcs keeps of a kinfo_proc. The session id is
// not in it (e_sess is a kernel address): a session leader's sid is its
// pid, which is all [tree.left] asks; others get 0.
func procInfoOf(k *unix.KinfoProc) procInfo {
	info := procInfo{ppid: int(k.Eproc.Ppid), pgrp: int(k.Eproc.Pgid), zombie: k.Proc.P_stat == darwinZombie}
	if k.Eproc.Flag&darwinSessionLeader != 0 {
		info.sid = int(k.Proc.P_pid)
	}
	return info
}

// readProcs reads every process's parent, group and state, and, when
// match is set, the ids of this user's processes whose treeVar value it
// accepts.
func readProcs(match func(string) bool) (map[int]procInfo, []int) {
	list, err := listProcs()
	if err != nil || len(list) == 0 {
		return nil, nil
	}
	uid := uint32(os.Getuid())
	procs := make(map[int]procInfo, len(list))
	var tagged []int
	for i := range list {
		k := &list[i]
		pid := int(k.Proc.P_pid)
		info := procInfoOf(k)
		procs[pid] = info
		if match == nil || info.zombie || pid <= 0 || k.Eproc.Ucred.Uid != uid {
			continue // KERN_PROCARGS2 is for the caller's own processes
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
	buf, err := unix.SysctlRaw("kern.procargs2", pid)
	// EIO is a failed copy out of a process in the middle of an exec or
	// an exit: once settled, it reads.
	for try := 0; try < 3 && errors.Is(err, unix.EIO); try++ {
		time.Sleep(time.Millisecond)
		buf, err = unix.SysctlRaw("kern.procargs2", pid)
	}
	if err != nil {
		return "", false, err
	}
	pa, err := parseProcArgs2(buf)
	if err != nil {
		return "", false, err
	}
	for _, kv := range pa.env {
		if v, ok := strings.CutPrefix(kv, treeVar+"="); ok {
			return v, true, nil
		}
	}
	return "", false, nil
}

func startOwn(start func() error, pid func() int) error { return start() }

func forgetOwn(pid int) {}

// BecomeSubreaper does nothing on macOS, which has no subreaper; see the
// Linux version.
func BecomeSubreaper() error { return nil }

// hasChild reports whether pid has a live child, by its parent id in the
// process list.
func hasChild(pid int) (has, known bool) {
	list, err := listProcs()
	if err != nil || len(list) == 0 {
		return false, false
	}
	for i := range list {
		if int(list[i].Eproc.Ppid) == pid && list[i].Proc.P_stat != darwinZombie {
			return true, true
		}
	}
	return false, true
}
