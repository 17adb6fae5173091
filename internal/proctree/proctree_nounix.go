//go:build !unix

package proctree

import "time"

// What serves the unix watchdog and its reaping does nothing elsewhere:
// on Windows, kill-on-close Job Objects make the watchdog unnecessary and
// hold every descendant of a server, whoever its parent is (use
// [Group.Stop]); other platforms have neither.

func stopGroups(pgids []int, token string, grace time.Duration) int { return 0 }

func startOwn(start func() error, pid func() int) error { return start() }

func forgetOwn(pid int) {}

// BecomeSubreaper does nothing on this platform.
func BecomeSubreaper() error { return nil }

func ignoreSignals() {}

func (g *Group) wait() error { return g.cmd.Wait() }

// hasChild cannot tell here: a package runner's install is not told from
// its server.
func hasChild(int) (has, known bool) { return false, false }
