//go:build unix

package serverproc

import (
	"errors"
	"io"
	"syscall"
)

// TryWriter returns a write to w that never waits: it writes what the pipe
// takes at once and reports how much that was. It returns nil where w is
// not a pipe the runtime polls (then every write may block). The write it
// returns is for one goroutine at a time.
func TryWriter(w io.Writer) func([]byte) (int, error) {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	t := &tryWriter{rc: rc}
	t.attempt = t.writeFD // bound once: a closure per write would be an allocation per write
	return t.write
}

type tryWriter struct {
	rc      syscall.RawConn
	attempt func(fd uintptr) bool

	// The write under way.
	p   []byte
	n   int
	err error
}

func (t *tryWriter) write(p []byte) (int, error) {
	t.p, t.n, t.err = p, 0, nil
	werr := t.rc.Write(t.attempt)
	n, err := t.n, t.err
	t.p = nil
	if err == nil {
		err = werr
	}
	return n, err
}

// writeFD writes as much of t.p as the pipe takes now. Returning true
// tells the runtime not to wait for the pipe to have room.
func (t *tryWriter) writeFD(fd uintptr) bool {
	for t.n < len(t.p) {
		m, e := syscall.Write(int(fd), t.p[t.n:])
		if m > 0 {
			t.n += m
		}
		switch {
		case e == nil:
		case errors.Is(e, syscall.EINTR):
		case errors.Is(e, syscall.EAGAIN):
			return true // full: the caller queues the rest
		default:
			t.err = e
			return true
		}
	}
	return true
}
