//go:build unix

package serverproc

import (
	"errors"
	"io"
	"syscall"
)

// TryWriter returns a write to w that never waits: it writes what the pipe
// takes at once and reports how much that was. It returns nil where w is
// not a pipe the runtime polls (then every write may block).
func TryWriter(w io.Writer) func([]byte) (int, error) {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return func(p []byte) (n int, err error) {
		werr := rc.Write(func(fd uintptr) bool {
			for n < len(p) {
				m, e := syscall.Write(int(fd), p[n:])
				if m > 0 {
					n += m
				}
				switch {
				case e == nil:
				case errors.Is(e, syscall.EINTR):
				case errors.Is(e, syscall.EAGAIN):
					return true // full: the caller queues the rest
				default:
					err = e
					return true
				}
			}
			return true
		})
		if err == nil {
			err = werr
		}
		return n, err
	}
}
