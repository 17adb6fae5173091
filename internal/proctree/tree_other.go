//go:build unix && !linux && !darwin

package proctree

// Elsewhere than on Linux and macOS a stop reaches the process group
// only: nothing here lists processes to find one that left it, and there
// is no subreaper. (FreeBSD's procctl(PROC_REAP_ACQUIRE) is noted in
// docs/install.md.)

func (t *tree) refresh() bool { return t.groupsAlive() }

func startOwn(start func() error, pid func() int) error { return start() }

func forgetOwn(pid int) {}

// BecomeSubreaper does nothing here; see the Linux version.
func BecomeSubreaper() error { return nil }

// hasChild cannot tell without a process list.
func hasChild(int) (has, known bool) { return false, false }
