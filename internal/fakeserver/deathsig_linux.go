package fakeserver

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes cmd get SIGKILL if the test process dies first (a
// panic or a timeout skips the test's clean-up), so that a server the test
// started never outlives it.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// newSession makes cmd start a session of its own, out of its parent's
// process group.
func newSession(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
