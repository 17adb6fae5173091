package proctree

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary re-executed plays the processes of a server's tree:
// role "server" starts a sleep in a session of its own and a daemon (a
// child that starts such a sleep and exits), then sleeps itself.
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
		// A detached sleep that kept the tree's tag, and one that left
		// the tree on purpose (as StartDetached starts the shared
		// workbench).
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
	if err := BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "subreaper:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

func detached() {
	c := exec.Command("sleep", "600")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	_ = c.Start()
}

// tagged returns the live processes whose environment holds tagVar=tag.
func tagged(t *testing.T, tag string) map[int]procInfo {
	t.Helper()
	procs, _ := readProcs(nil)
	out := map[int]procInfo{}
	want := []byte(tagVar + "=" + tag + "\x00")
	for pid, p := range procs {
		if p.zombie || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
		if err == nil && bytes.Contains(append(env, 0), want) {
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
// itself, its detached sleep and its daemon's orphaned sleep.
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
	// The daemon has exited once its sleep, orphaned, is this process's
	// child: it is a subreaper.
	waitFor(t, "the server, its detached sleep and its daemon's orphan, re-parented to this subreaper", func() bool {
		procs := tagged(t, tag)
		orphans := 0
		for _, p := range procs {
			if p.ppid == os.Getpid() && p.pgrp != g.ID() {
				orphans++
			}
		}
		return len(procs) == 3 && orphans == 1
	})
	return g, tag, exited
}

// TestStopReachesDetachedAndOrphaned: stopping a group stops its
// descendants that started a session of their own, and the orphan a
// daemon left, which — this process being a subreaper — is its child now
// and is reaped once killed.
func TestStopReachesDetachedAndOrphaned(t *testing.T) {
	g, tag, exited := startServer(t)
	g.Stop(time.Second)
	<-exited
	// Stop waits a grace period for the killed processes to go, which a
	// busy machine can outlast; nothing else ends them (they sleep for
	// minutes), so a bounded wait still proves the stop reached them.
	waitFor(t, "no process of the tree left after Stop", func() bool { return len(tagged(t, tag)) == 0 })
	waitFor(t, "adopted zombies reaped", func() bool {
		procs, _ := readProcs(nil)
		for pid, p := range procs {
			if p.ppid == os.Getpid() && p.zombie {
				own.Lock()
				mine := own.pids[pid]
				own.Unlock()
				if !mine {
					return false
				}
			}
		}
		return true
	})
}

// TestStopSendsSIGTERMFirst: a process of the group that handles SIGTERM
// gets the chance to.
func TestStopSendsSIGTERMFirst(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "term")
	cmd := exec.Command("sh", "-c", `trap 'echo term > "$0"; exit 0' TERM; while :; do sleep 0.05; done`, mark)
	g, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.Wait() }()
	waitFor(t, "the shell", func() bool { return (&tree{pgids: map[int]bool{g.ID(): true}}).refresh() })
	g.Stop(10 * time.Second)
	if b, err := os.ReadFile(mark); err != nil || strings.TrimSpace(string(b)) != "term" {
		t.Errorf("no SIGTERM reached the group (%v)", err)
	}
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
	if left := tagged(t, tag); len(left) > 0 {
		t.Errorf("processes left after the watchdog's pipe closed: %v\n%s", left, logs.String())
	}
}

// TestWatchdogRun drives the watchdog's loop directly, without the token:
// a forgotten group is left alone, a listed one and everything below it is
// stopped, and it says so.
func TestWatchdogRun(t *testing.T) {
	kept, keptTag, _ := startServer(t)
	stopped, stoppedTag, exited := startServer(t)
	var errOut bytes.Buffer
	in := fmt.Sprintf("+%d\n+%d\n-%d\n+x\n+1\n", kept.ID(), stopped.ID(), kept.ID())
	// No token: only what is listed, and what is below it, is stopped.
	t.Setenv(tokenVar, "")
	run(io.NopCloser(strings.NewReader(in)), &errOut)
	<-exited
	// Without the token, the daemon's orphan (this process's child, in a
	// session of its own) is out of reach; the rest must be gone.
	for pid, p := range tagged(t, stoppedTag) {
		if p.ppid != os.Getpid() || p.pgrp == stopped.ID() {
			t.Errorf("the listed group's tree is still running: %d %+v", pid, p)
		}
	}
	if n := len(tagged(t, keptTag)); n != 3 {
		t.Errorf("the forgotten group's tree lost processes: %d of 3 left", n)
	}
	if !strings.Contains(errOut.String(), "watchdog: stopped") {
		t.Errorf("the watchdog did not report: %q", errOut.String())
	}
}

// TestStopSparesWhatLeftOnPurpose: a child that cleared the tree's tag and
// leads a session of its own (the shared workbench a workbench run as a
// server starts, used by other sessions too) is not stopped with the
// tree; a detached child that kept the tag is.
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
			env, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
			if p.sid == pid && !bytes.Contains(env, []byte(treeVar+"=")) {
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

// HasChild tells a command that has started a child (a package runner
// that has installed and runs the server) from one that has not, through
// /proc.
func TestHasChild(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
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
	deadline := time.Now().Add(30 * time.Second)
	for {
		if has, _ := g.HasChild(); has {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("HasChild did not see the child")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
