//go:build linux || darwin

package proctree

// On Linux and macOS a stop reaches more than the process group: a
// server's child that starts a session of its own (setsid, Node's
// detached: true) leaves the group, and one whose parent exits is no
// longer anybody's descendant. Two things find them. Every process started
// through [Start] carries treeVar in its environment, which its
// descendants inherit unless they clear it; and the processes below any
// member of the tree, by parent id, are in it too. The process list and
// environments come from /proc on Linux (tree_linux.go) and from sysctl on
// macOS (tree_darwin.go): readProcs and tagOf.
//
// One process below a tree member is not of the tree: one that cleared
// treeVar and leads a session of its own, both on purpose ([Untagged] and
// setsid: the shared workbench a workbench run as a server starts, which
// other sessions use too). A server's sloppy child keeps the tag it
// inherited.

// procInfo is what the process list says of a process.
type procInfo struct {
	ppid, pgrp, sid int
	zombie          bool
}

// refresh lists the processes again: every live process of the tree's
// groups, its tagged processes (on the first read only: environments cost
// more to read, and what a tagged process starts later is found by parent
// id) and everything below them join the tree. It reports whether any of
// them is alive.
func (t *tree) refresh() bool {
	var match func(string) bool
	if !t.read {
		t.read = true
		match = t.match
	}
	procs, tagged := readProcs(match)
	if procs == nil {
		return t.groupsAlive() // no list: what kill(2) says
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
	_, has, err := tagOf(pid)
	return err == nil && !has
}
