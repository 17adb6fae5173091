//go:build !windows

package serverproc

import "os/exec"

// serverCommand returns the command that runs the program name with args.
// Outside Windows a program receives its arguments as an array, with no
// command interpreter re-parsing them, so exec.Command is all it takes.
func serverCommand(name string, args ...string) *exec.Cmd {
	return exec.Command(name, args...)
}
