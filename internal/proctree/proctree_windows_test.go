//go:build windows

package proctree

import (
	"os/exec"
	"slices"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// These tests start real process trees: cmd.exe running ping, which stays
// up for ten minutes unless something ends it. Waits are bounded loops, not
// timed assertions.

const treeTimeout = 30 * time.Second

// startTree starts "cmd /c <script>" as a group and registers clean-up that
// ends it and reaps the leader whatever the test did.
func startTree(t *testing.T, script ...string) (*Group, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command("cmd.exe", append([]string{"/d", "/c"}, script...)...)
	g, err := Start(cmd)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	waited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(waited)
	}()
	t.Cleanup(func() {
		g.Kill()
		g.Stop(time.Second)
		<-waited
	})
	return g, cmd
}

// jobPIDs lists the processes currently in g's job.
func jobPIDs(t *testing.T, g *Group) []uint32 {
	t.Helper()
	var list struct {
		Assigned uint32
		InList   uint32
		IDs      [256]uintptr
	}
	g.sys.mu.Lock()
	job := g.sys.job
	g.sys.mu.Unlock()
	if job == 0 {
		return nil
	}
	err := windows.QueryInformationJobObject(job, windows.JobObjectBasicProcessIdList,
		uintptr(unsafe.Pointer(&list)), uint32(unsafe.Sizeof(list)), nil)
	if err != nil {
		t.Fatalf("listing the job's processes: %v", err)
	}
	pids := make([]uint32, 0, list.InList)
	for _, id := range list.IDs[:list.InList] {
		pids = append(pids, uint32(id))
	}
	return pids
}

// awaitMember waits until the job holds a process other than the leader
// and returns a handle to it, opened while it is known to be in the job so
// that a reused pid cannot mislead the test later.
func awaitMember(t *testing.T, g *Group, leader int) windows.Handle {
	t.Helper()
	deadline := time.Now().Add(treeTimeout)
	for time.Now().Before(deadline) {
		for _, pid := range jobPIDs(t, g) {
			if int(pid) == leader {
				continue
			}
			h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
			if err != nil {
				continue // gone meanwhile
			}
			t.Cleanup(func() { windows.CloseHandle(h) })
			return h
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no child of the leader appeared in the job within %v", treeTimeout)
	return 0
}

// openLeader returns a handle to the leader for checking that it ended.
func openLeader(t *testing.T, cmd *exec.Cmd) windows.Handle {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(cmd.Process.Pid))
	if err != nil {
		t.Fatalf("opening the leader: %v", err)
	}
	t.Cleanup(func() { windows.CloseHandle(h) })
	return h
}

// requireGone fails unless every process in hs ends within treeTimeout.
func requireGone(t *testing.T, what string, hs ...windows.Handle) {
	t.Helper()
	for _, h := range hs {
		ev, err := windows.WaitForSingleObject(h, uint32(treeTimeout/time.Millisecond))
		if err != nil || ev != windows.WAIT_OBJECT_0 {
			t.Fatalf("%s: a process is still running after %v (wait result %d, %v)", what, treeTimeout, ev, err)
		}
	}
}

func TestStopEndsLeaderAndChild(t *testing.T) {
	g, cmd := startTree(t, "ping", "-n", "600", "127.0.0.1")
	leader := openLeader(t, cmd)
	child := awaitMember(t, g, cmd.Process.Pid)
	g.Stop(2 * time.Second)
	requireGone(t, "after Stop", leader, child)
	if g.sys.job != 0 {
		t.Error("Stop left the job handle open")
	}
}

func TestKillEndsLeaderAndChild(t *testing.T) {
	g, cmd := startTree(t, "ping", "-n", "600", "127.0.0.1")
	leader := openLeader(t, cmd)
	child := awaitMember(t, g, cmd.Process.Pid)
	g.Kill()
	requireGone(t, "after Kill", leader, child)
	g.Stop(time.Second) // still needed, to close the job handle
	if g.sys.job != 0 {
		t.Error("Stop after Kill left the job handle open")
	}
}

// A wrapper that starts its server in the background and exits must not
// leave the server running: the job, not the leader, defines the group.
func TestStopEndsChildOfExitedLeader(t *testing.T) {
	cmd := exec.Command("cmd.exe", "/d", "/c", "start", "/b", "ping", "-n", "600", "127.0.0.1")
	g, err := Start(cmd)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	t.Cleanup(func() {
		g.Kill()
		g.Stop(time.Second)
	})
	child := awaitMember(t, g, cmd.Process.Pid)
	select { // the leader exits at once; ping stays
	case <-waited:
	case <-time.After(treeTimeout):
		t.Fatalf("the leader did not exit within %v", treeTimeout)
	}
	if ev, _ := windows.WaitForSingleObject(child, 0); ev == windows.WAIT_OBJECT_0 {
		t.Fatal("the background child ended with its leader; the test proves nothing")
	}
	g.Stop(200 * time.Millisecond)
	requireGone(t, "after Stop", child)
}

// Children are in the job from their first instruction: the leader was
// created suspended and assigned before it could start anything.
func TestGrandchildIsInJob(t *testing.T) {
	g, cmd := startTree(t, "cmd.exe", "/d", "/c", "ping", "-n", "600", "127.0.0.1")
	deadline := time.Now().Add(treeTimeout)
	for len(jobPIDs(t, g)) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("job holds %v, want the leader, its cmd.exe child and ping", jobPIDs(t, g))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !slices.Contains(jobPIDs(t, g), uint32(cmd.Process.Pid)) {
		t.Errorf("the leader %d is not in its own job", cmd.Process.Pid)
	}
}

func TestStopAndKillAreIdempotent(t *testing.T) {
	g, cmd := startTree(t, "ping", "-n", "600", "127.0.0.1")
	leader := openLeader(t, cmd)
	g.Stop(time.Second)
	g.Stop(time.Second)
	g.Kill()
	requireGone(t, "after Stop", leader)
}

func TestStartFailureLeavesNothing(t *testing.T) {
	cmd := exec.Command(`C:\does\not\exist\server.exe`)
	if g, err := Start(cmd); err == nil {
		g.Kill()
		g.Stop(time.Second)
		t.Fatal("Start of a missing program succeeded")
	}
}

func TestSetGroupKeepsExistingFlags(t *testing.T) {
	cmd := exec.Command("cmd.exe")
	setGroup(cmd)
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NO_WINDOW
	setGroup(cmd)
	want := uint32(windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_NO_WINDOW)
	if got := cmd.SysProcAttr.CreationFlags; got != want {
		t.Errorf("CreationFlags = %#x, want %#x", got, want)
	}
}
