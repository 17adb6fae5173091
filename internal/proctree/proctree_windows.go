//go:build windows

package proctree

// On Windows a group is a Job Object. Every process the leader starts is
// born into the leader's job, so TerminateJobObject reaches an npx.cmd
// wrapper's cmd.exe, node and everything below them.
//
// Job assignment: the leader is created suspended (CREATE_SUSPENDED),
// assigned to the job, and only then resumed, so it cannot run a single
// instruction — let alone start a child — outside the job. The cleaner
// PROC_THREAD_ATTRIBUTE_JOB_LIST, which puts a process in a job atomically
// at creation, is not reachable from Go without cgo: syscall.SysProcAttr
// exposes CreationFlags, ParentProcess, AdditionalInheritedHandles,
// NoInheritHandles and Token, but builds the attribute list itself with no
// job list (golang/go#79927 proposes one). Putting the workbench itself in a
// job would not tell one server's tree from another's.
//
// Go closes the main thread's handle inside syscall.StartProcess and does
// not report the thread id (golang/go#32404), so [resumeProcess] finds the
// suspended process's thread through a Tool Help snapshot. The pid cannot
// be reused meanwhile: cmd.Process holds a handle to the process until Wait.
//
// What remains: if the workbench dies in the instant between CreateProcess
// and AssignProcessToJobObject, the leader is left suspended outside any
// job. It never runs, but it lingers until someone kills it. Processes
// created on the tree's behalf by other parties (a service, WMI, the task
// scheduler, an out-of-process COM server) are not descendants and are not
// in the job either; no Windows mechanism short of a sandbox covers them.

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// supported is false: Windows needs no watchdog. The job is created with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and the workbench holds its only
// handle, so when the workbench exits for any reason — including being
// killed — the kernel closes the handle and terminates the whole job.
const supported = false

// terminatedExitCode is the exit code TerminateJobObject gives every process
// of a group that had to be killed.
const terminatedExitCode = 1

// groupSys holds the group's Job Object and a handle to its leader.
type groupSys struct {
	// job is closed exactly once, by stop; mu guards it against a
	// concurrent kill, which must not use a handle stop has closed.
	mu  sync.Mutex
	job windows.Handle // 0 once closed

	// leader is a handle to the leader process, kept so stop can tell
	// whether the leader has already exited. Only stop uses and closes it.
	leader windows.Handle

	stopOnce sync.Once
}

func (g *Group) start() error {
	job, err := newKillOnCloseJob()
	if err != nil {
		return err
	}
	setGroup(g.cmd)
	g.cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
	if err := g.cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return err // unwrapped, as on unix: callers inspect it with errors.Is
	}
	leader, err := adopt(job, uint32(g.cmd.Process.Pid))
	if err != nil {
		// The process never ran. Kill and reap it so that nothing leaks;
		// the caller will not Wait for a command whose start failed.
		_ = g.cmd.Process.Kill()
		_ = g.cmd.Wait()
		windows.CloseHandle(job)
		return err
	}
	g.sys.job, g.sys.leader = job, leader
	return nil
}

// stop ends the group and releases its handles. The caller has already
// closed the leader's stdin — the MCP stdio way of asking a server to exit —
// and waited up to grace for the leader.
//
// Windows has no SIGTERM for console programs. GenerateConsoleCtrlEvent
// reaches only processes attached to the caller's console, and a mistaken
// group id can deliver the event to the workbench itself, so stop does not
// use it. Instead: if the leader has exited, the rest of the tree got the
// same end of input and is given up to grace to follow it; if the leader is
// still running, it has already ignored end of input for grace and waiting
// longer would only delay shutdown. Whatever is left is terminated, stop
// waits up to grace for it to be gone, and the job handle is closed.
func (g *Group) stop(grace time.Duration) {
	g.sys.stopOnce.Do(func() {
		job := g.sys.job // written only before Start returned and below
		if job == 0 {
			return
		}
		leaderExited := true
		if g.sys.leader != 0 {
			leaderExited = hasExited(g.sys.leader)
			// Close it now: an exited process still referenced by a
			// handle may keep counting as active in the job.
			windows.CloseHandle(g.sys.leader)
			g.sys.leader = 0
		}
		if leaderExited {
			waitJobEmpty(job, grace)
		}
		if !jobEmpty(job) {
			_ = windows.TerminateJobObject(job, terminatedExitCode)
			waitJobEmpty(job, grace)
		}
		g.sys.mu.Lock()
		g.sys.job = 0
		g.sys.mu.Unlock()
		// Closing the last handle of a kill-on-close job also terminates
		// anything that started after TerminateJobObject.
		windows.CloseHandle(job)
	})
}

// kill terminates every process of the job at once. It leaves the handle
// open: stop, which always follows, closes it, so a kill racing a stop can
// never use a closed (and possibly reused) handle value.
func (g *Group) kill() {
	g.sys.mu.Lock()
	defer g.sys.mu.Unlock()
	if g.sys.job != 0 {
		_ = windows.TerminateJobObject(g.sys.job, terminatedExitCode)
	}
}

// newKillOnCloseJob creates an unnamed Job Object whose processes are all
// terminated when its last handle is closed. The handle is not inheritable,
// so no child can keep the job alive by holding a copy.
func newKillOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("creating job object: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	_, err = windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	if err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("setting kill-on-close on job object: %w", err)
	}
	return job, nil
}

// adopt assigns the suspended process pid to job, then lets it run. It
// returns a handle to the process for [Group.stop].
//
// If the workbench itself runs in a job (a CI runner, the task scheduler,
// some terminals), the new job nests inside it; nested jobs exist since
// Windows 8, below every Windows that Go supports.
func adopt(job windows.Handle, pid uint32) (windows.Handle, error) {
	const access = windows.PROCESS_SET_QUOTA | windows.PROCESS_TERMINATE | windows.SYNCHRONIZE
	proc, err := windows.OpenProcess(access, false, pid)
	if err != nil {
		return 0, fmt.Errorf("opening process %d: %w", pid, err)
	}
	if err := windows.AssignProcessToJobObject(job, proc); err != nil {
		windows.CloseHandle(proc)
		return 0, fmt.Errorf("assigning process %d to its job object: %w", pid, err)
	}
	if err := resumeProcess(pid); err != nil {
		windows.CloseHandle(proc)
		return 0, fmt.Errorf("resuming process %d: %w", pid, err)
	}
	return proc, nil
}

// resumeProcess resumes the threads of process pid, which was created
// suspended and so has only its main thread. Go does not hand out that
// thread's handle, so it is found by listing the system's threads.
func resumeProcess(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("listing threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != pid {
			continue
		}
		thread, openErr := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if openErr != nil {
			return fmt.Errorf("opening thread %d: %w", entry.ThreadID, openErr)
		}
		_, resumeErr := windows.ResumeThread(thread)
		windows.CloseHandle(thread)
		if resumeErr != nil {
			return fmt.Errorf("resuming thread %d: %w", entry.ThreadID, resumeErr)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("listing threads: %w", err)
	}
	if resumed == 0 {
		return errors.New("no thread found")
	}
	return nil
}

// hasExited reports whether the process behind handle has ended.
func hasExited(process windows.Handle) bool {
	ev, err := windows.WaitForSingleObject(process, 0)
	return err == nil && ev == windows.WAIT_OBJECT_0
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which
// golang.org/x/sys/windows does not define.
type jobAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// jobEmpty reports whether no process of job is running. When the job
// cannot be queried it reports false, so that callers terminate the job
// rather than assume it is gone.
func jobEmpty(job windows.Handle) bool {
	var info jobAccounting
	err := windows.QueryInformationJobObject(job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return err == nil && info.ActiveProcesses == 0
}

// waitJobEmpty waits up to d for job to have no running process and reports
// whether it got there. A job object is not signaled when its processes
// exit, so this polls, backing off like the unix waitGone.
func waitJobEmpty(job windows.Handle, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		if jobEmpty(job) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(delay)
	}
}

// setGroup makes cmd the root of a new console process group. Windows then
// starts it with Ctrl-C ignored, a setting its descendants inherit, so a
// Ctrl-C typed in the workbench's console does not hit the servers before
// the workbench has stopped them in order. (Ctrl-Break still reaches every
// process attached to the console, and a process may re-enable Ctrl-C.)
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP
}
