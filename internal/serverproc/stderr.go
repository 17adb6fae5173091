package serverproc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Limits of stderr forwarding. A server that floods stderr must not flood
// the host's log or slow the workbench down: past maxLinesPerSecond, lines
// are counted and dropped, and the count is reported once the flood ebbs.
const (
	maxStderrLine     = 4 << 10
	maxLinesPerSecond = 200
	tailLines         = 3
)

// stderrForwarder copies a server's stderr to the workbench's stderr, each
// line prefixed with [toolbox/server], and keeps the last few lines so that
// a server that dies at start-up can be explained in its error.
type stderrForwarder struct {
	prefix string
	out    io.Writer

	mu          sync.Mutex
	tail        []string
	windowStart time.Time
	inWindow    int
	dropped     int
	// npx, when set, looks at every line for a broken npx cache entry.
	npx *npxScan
}

func newStderrForwarder(prefix string, out io.Writer) *stderrForwarder {
	return &stderrForwarder{prefix: prefix, out: out}
}

// copy forwards r line by line until it ends.
func (f *stderrForwarder) copy(r io.ReadCloser) {
	defer r.Close()
	br := bufio.NewReaderSize(r, maxStderrLine)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			f.line(string(line) + " …(line truncated)")
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		} else if len(line) > 0 {
			f.line(string(line))
		}
		if err != nil {
			f.flushDropped()
			return
		}
	}
}

// line forwards one line of the server's stderr.
func (f *stderrForwarder) line(s string) {
	s = strings.TrimRight(s, "\r\n")
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.TrimSpace(s) != "" {
		if len(f.tail) == tailLines {
			f.tail = append(f.tail[:0], f.tail[1:]...)
		}
		f.tail = append(f.tail, s)
		if f.npx != nil {
			f.npx.line(s)
		}
	}
	now := time.Now()
	if now.Sub(f.windowStart) >= time.Second {
		f.reportDroppedLocked()
		f.windowStart, f.inWindow = now, 0
	}
	if f.inWindow >= maxLinesPerSecond {
		f.dropped++
		return
	}
	f.inWindow++
	f.writeLocked(s)
}

// note writes a message of the workbench's own about this server.
func (f *stderrForwarder) note(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writeLocked("(workbench) " + s)
}

func (f *stderrForwarder) flushDropped() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reportDroppedLocked()
}

func (f *stderrForwarder) reportDroppedLocked() {
	if f.dropped > 0 {
		f.writeLocked(fmt.Sprintf("(workbench) %d lines of stderr dropped: more than %d a second", f.dropped, maxLinesPerSecond))
		f.dropped = 0
	}
}

func (f *stderrForwarder) writeLocked(s string) {
	if f.out == nil {
		return
	}
	buf := make([]byte, 0, len(f.prefix)+len(s)+2)
	buf = append(buf, f.prefix...)
	buf = append(buf, ' ')
	buf = append(buf, s...)
	buf = append(buf, '\n')
	_, _ = f.out.Write(buf)
}

// brokenNPXEntry is the npx cache entry the lines so far say is broken,
// or "".
func (f *stderrForwarder) brokenNPXEntry() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.npx == nil {
		return ""
	}
	return f.npx.broken()
}

// lastWords returns the last lines the server wrote to stderr, joined for
// an error message, or "".
func (f *stderrForwarder) lastWords() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.tail, " | ")
}
