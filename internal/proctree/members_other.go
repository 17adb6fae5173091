//go:build unix && !linux

package proctree

// hasLiveMember trusts kill(2): elsewhere init reaps orphaned zombies.
func hasLiveMember(pgid int) bool { return true }
