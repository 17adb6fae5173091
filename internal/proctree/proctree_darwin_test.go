package proctree

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The macOS CI job runs these; here they are only compiled
// (GOOS=darwin go test -c). The test binary re-executed plays the
// processes of a server's tree, as in the Linux tests: role "server"
// starts a sleep in a session of its own and a daemon (a child that
// starts such a sleep and exits, its sleep re-parented to launchd), then
// sleeps itself.
const (
	roleVar = "PROCTREE_TEST_ROLE"
	tagVar  = "PROCTREE_TEST_TAG"
	gateVar = "PROCTREE_TEST_GATE"
)

func TestMain(m *testing.M) {
	MaybeRun()
	switch os.Getenv(roleVar) {
	case "server":
		detached()
		d := exec.Command(os.Args[0])
		d.Env = append(os.Environ(), roleVar+"=daemon")
		_ = d.Run()
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	case "daemon":
		detached()
		os.Exit(0)
	case "leaver":
		detached()
		c := exec.Command("sleep", "600")
		c.Env = Untagged(os.Environ())
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		_ = c.Start()
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	case "runner": // waits for the file gateVar names, then runs a child
		for {
			if _, err := os.Stat(os.Getenv(gateVar)); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		_ = exec.Command("sleep", "600").Run()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func detached() {
	c := exec.Command("sleep", "600")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	_ = c.Start()
}

// envOf reads pid's environment through KERN_PROCARGS2.
func envOf(pid int) ([]string, error) {
	buf, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, err
	}
	pa, err := parseProcArgs2(buf)
	return pa.env, err
}

// tagged returns the live processes whose environment holds tagVar=tag.
func tagged(t *testing.T, tag string) map[int]procInfo {
	t.Helper()
	procs, _ := readProcs(nil)
	if procs == nil {
		t.Fatal("no process list (kern.proc.all)")
	}
	out := map[int]procInfo{}
	for pid, p := range procs {
		if p.zombie || pid == os.Getpid() {
			continue
		}
		if env, err := envOf(pid); err == nil && slices.Contains(env, tagVar+"="+tag) {
			out[pid] = p
		}
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startServer starts the "server" role as a group and waits for its tree:
// itself, its detached sleep and its daemon's orphaned sleep, both out of
// its process group, the orphan no longer its descendant.
func startServer(t *testing.T) (*Group, string, chan struct{}) {
	t.Helper()
	tag := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleVar+"=server", tagVar+"="+tag)
	g, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = g.Wait(); close(exited) }()
	t.Cleanup(func() {
		g.Kill()
		for pid := range tagged(t, tag) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	waitFor(t, "the server, its detached sleep and its daemon's orphan", func() bool {
		procs := tagged(t, tag)
		outside, orphans := 0, 0
		for _, p := range procs {
			if p.pgrp != g.ID() {
				outside++
			}
			if p.ppid != g.ID() && p.ppid != os.Getpid() {
				orphans++
			}
		}
		return len(procs) == 3 && outside == 2 && orphans == 1
	})
	return g, tag, exited
}

// TestTagOfReadsAChildsEnvironment: a child's treeVar is read through
// KERN_PROCARGS2, and one without it has none.
func TestTagOfReadsAChildsEnvironment(t *testing.T) {
	for _, env := range [][]string{{treeVar + "=test.1", "A=1"}, {"A=1"}} {
		cmd := exec.Command("sleep", "600")
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		v, has, err := tagOf(cmd.Process.Pid)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if err != nil || has != (len(env) == 2) || has && v != "test.1" {
			t.Errorf("tagOf(child with %q) = %q, %v, %v", env, v, has, err)
		}
	}
}

// TestStopReachesDetachedAndOrphaned: stopping a group stops its
// descendants that started a session of their own (setsid, Node's
// detached: true), and the orphan a daemon left, re-parented to launchd,
// by the tag they inherited.
func TestStopReachesDetachedAndOrphaned(t *testing.T) {
	g, tag, exited := startServer(t)
	g.Stop(time.Second)
	<-exited
	// Stop waits a grace period for the killed processes to go, which a
	// busy machine can outlast; nothing else ends them (they sleep for
	// minutes), so a bounded wait still proves the stop reached them.
	waitFor(t, "no process of the tree left after Stop", func() bool { return len(tagged(t, tag)) == 0 })
}

// TestWatchdogStopsTreesWhenTheWorkbenchGoes: the watchdog stops a listed
// group and everything carrying this workbench's token, detached and
// orphaned processes included, when its pipe closes.
func TestWatchdogStopsTreesWhenTheWorkbenchGoes(t *testing.T) {
	g, tag, exited := startServer(t)
	var logs bytes.Buffer
	wd := NewWatchdog(slog.New(slog.NewTextHandler(&logs, nil)))
	wd.Watch(g.ID())
	wd.Close()
	<-exited
	waitFor(t, "no process of the tree left after the watchdog's pipe closed", func() bool { return len(tagged(t, tag)) == 0 })
}

// TestStopSparesWhatLeftOnPurpose: a child that cleared the tree's tag and
// leads a session of its own (the shared workbench) is not stopped with
// the tree; a detached child that kept the tag is.
func TestStopSparesWhatLeftOnPurpose(t *testing.T) {
	tag := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleVar+"=leaver", tagVar+"="+tag)
	g, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = g.Wait(); close(exited) }()
	t.Cleanup(func() {
		g.Kill()
		for pid := range tagged(t, tag) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	leaver := 0
	waitFor(t, "the process, its detached sleep and the one that left", func() bool {
		procs := tagged(t, tag)
		leaver = 0
		for pid, p := range procs {
			if _, has, err := tagOf(pid); err == nil && !has && p.sid == pid {
				leaver = pid
			}
		}
		return len(procs) == 3 && leaver != 0
	})
	g.Stop(time.Second)
	<-exited
	waitFor(t, "only the process that left the tree still running", func() bool {
		procs := tagged(t, tag)
		_, ok := procs[leaver]
		return len(procs) == 1 && ok
	})
}

// TestHasChild tells a command that has started a child (a package runner
// that has installed and runs the server) from one that has not, through
// the process list.
func TestHasChild(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleVar+"=runner", gateVar+"="+gate)
	g, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { g.Stop(time.Second); _ = g.Wait() }()
	if has, known := g.HasChild(); has || !known {
		t.Fatalf("HasChild = %v, %v before the child, want false, true", has, known)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "HasChild to see the child", func() bool { has, _ := g.HasChild(); return has })
}
