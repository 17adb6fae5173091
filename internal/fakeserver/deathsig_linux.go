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
