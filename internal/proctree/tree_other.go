//go:build unix && !linux

package proctree

// Elsewhere than on Linux a stop reaches the process group only: there is
// no /proc to find a process that left it, and no subreaper. (FreeBSD's
// procctl(PROC_REAP_ACQUIRE) and macOS's lack of any equivalent are noted
// in docs/install.md.)

func (t *tree) refresh() bool { return t.groupsAlive() }

func startOwn(start func() error, pid func() int) error { return start() }

func forgetOwn(pid int) {}

// BecomeSubreaper does nothing here; see the Linux version.
func BecomeSubreaper() error { return nil }

// hasChild cannot tell without /proc.
func hasChild(int) (has, known bool) { return false, false }
