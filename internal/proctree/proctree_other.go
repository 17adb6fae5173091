//go:build !unix

package proctree

import (
	"os/exec"
	"time"
)

// Process groups and the watchdog are unix-only for now.
const supported = false

// SetGroup does nothing on this platform.
func SetGroup(cmd *exec.Cmd) {}

// GroupAlive reports false on this platform.
func GroupAlive(pgid int) bool { return false }

// StopGroup does nothing on this platform.
func StopGroup(pgid int, grace time.Duration) {}

// KillGroup does nothing on this platform.
func KillGroup(pgid int) {}

func ignoreSignals() {}
