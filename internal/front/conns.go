package front

import (
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Connections. A client may open connections and then send nothing, send
// a body a byte a minute, or not read what it is sent: each holds a
// descriptor and a goroutine. Without bounds, a few hundred such
// connections take every descriptor and a real user's initialize never
// gets in. The bounds:
//
//   - at most "maxConnections" open at once (connLimit): past it a new
//     one waits in the kernel's queue until another closes;
//   - headers must arrive within "readTimeoutMs" (the server's
//     ReadHeaderTimeout), then the body within as long again (deadlines,
//     per request, lifted once the body is read);
//   - each write must be taken by the client within "writeTimeoutMs"
//     (deadlines, renewed before every write and flush);
//   - a connection between requests is closed after "idleConnectionMs"
//     (the server's IdleTimeout).
//
// There is no bound on a request's whole life: a session's event stream
// (GET) lasts as long as the session, and a call may wait minutes for its
// server or its user. http.Server's ReadTimeout and WriteTimeout would
// cut both; the per-request deadlines bound only the parts a client
// controls.

// connLimit is a listener that keeps at most n connections open.
type connLimit struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
	open  atomic.Int64
}

func newConnLimit(ln net.Listener, n int) *connLimit {
	return &connLimit{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection.
func (l *connLimit) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	l.open.Add(1)
	return &limitedConn{Conn: c, l: l}, nil
}

func (l *connLimit) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its slot back when closed.
type limitedConn struct {
	net.Conn
	l    *connLimit
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.open.Add(-1)
		<-c.l.slots
	})
	return err
}

// deadlines bounds what a client controls of a request: the arrival of its
// body (read, from now) and the taking of each write (write).
func deadlines(read, write time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		// A keep-alive connection keeps the last request's write
		// deadline: lift it, for what the server writes itself (100
		// Continue) before this request's first write.
		_ = rc.SetWriteDeadline(time.Time{})
		if r.Body != nil && r.Body != http.NoBody {
			if rc.SetReadDeadline(time.Now().Add(read)) == nil {
				r.Body = &bodyDeadline{ReadCloser: r.Body, rc: rc}
			}
		}
		dw := &writeDeadline{ResponseWriter: w, rc: rc, d: write}
		next.ServeHTTP(dw, r)
		// Time for the server's last flush of the answer.
		_ = rc.SetWriteDeadline(time.Now().Add(write))
	})
}

// bodyDeadline lifts the read deadline once the body has been read: the
// server then reads the connection to notice the client going, which a
// deadline would turn into the request's cancellation.
type bodyDeadline struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *bodyDeadline) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// writeDeadline renews the write deadline before each write and flush: a
// stream may be quiet for any length of time, but what it sends must be
// taken.
type writeDeadline struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *writeDeadline) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
	return w.ResponseWriter.Write(p)
}

func (w *writeDeadline) Flush() {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
	_ = w.rc.Flush()
}

func (w *writeDeadline) FlushError() error {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
	return w.rc.Flush()
}

func (w *writeDeadline) Unwrap() http.ResponseWriter { return w.ResponseWriter }
