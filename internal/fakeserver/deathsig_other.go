//go:build !linux

package fakeserver

import "os/exec"

// dieWithTest does nothing here: only Linux has a parent-death signal.
func dieWithTest(cmd *exec.Cmd) {}

// newSession does nothing here: FAKE_DETACH is checked through /proc.
func newSession(cmd *exec.Cmd) {}
