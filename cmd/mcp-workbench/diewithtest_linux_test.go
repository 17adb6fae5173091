package main

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes cmd get SIGKILL if the test process dies first (a
// panic or a timeout skips the clean-ups), so that the replicas and
// haproxy of a test never outlive it.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
