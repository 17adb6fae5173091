package front

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/shared"
)

// Sharing, the session's side. With "shared" on, serve hands the host's
// session to the shared workbench of its configuration (serve-shared, the
// same binary, started detached when none runs) and relays the host's
// lines to it and back, as they are. It reads each line's envelope only to
// keep what a new shared workbench would need to carry the session on:
// the requests in flight (answered with an error if the shared workbench
// ends under them) and the host's initialize (replayed, so that the next
// call starts a new shared workbench without the host noticing more).

// ErrNotShared is [ServeShared]'s answer when the session could not reach
// a shared workbench at all: the caller serves it itself ([ServeLocal]).
var ErrNotShared = errors.New("not shared")

// Timeouts of the relay: reaching (or starting) the shared workbench, and
// its answer to the hello and to a replayed initialize.
const (
	sharedDialTimeout   = 15 * time.Second
	sharedAnswerTimeout = 30 * time.Second
)

// Line limits: what a host may send (the workbench's own session has the
// same), and what the shared workbench may answer (a server's result is
// bounded at 64 MiB downstream, plus its envelope).
const (
	maxHostLine   = 16 << 20
	maxSharedLine = 80 << 20
)

// SharedOptions are [ServeShared]'s.
type SharedOptions struct {
	Options
	// Start starts the shared workbench of the configuration file config
	// (an absolute path), detached, to listen at sock: serve-shared. Its
	// channel gets an error when that process ends (see
	// [shared.DialOrStart]).
	Start func(sock, config string) (exited <-chan error, err error)
}

// ServeShared relays the host's session on in and out to the shared
// workbench of cfg, until the host leaves. It returns [ErrNotShared], after
// logging why, if no shared workbench could be reached or started.
func ServeShared(ctx context.Context, cfg *config.Config, o SharedOptions, in io.Reader, out io.Writer) error {
	log := o.Logger
	if !shared.Supported() {
		log.Warn("sharing is not supported on this system; this session runs its servers itself")
		return ErrNotShared
	}
	abs, err := filepath.Abs(cfg.Path)
	if err != nil {
		log.Warn("not sharing: the configuration's path", "error", err)
		return ErrNotShared
	}
	dir, err := shared.Dir()
	var sock string
	if err == nil {
		sock, err = shared.SocketPath(dir, abs, o.Version)
	}
	if err != nil {
		log.Warn("not sharing: no folder for the shared workbench's socket; this session runs its servers itself", "error", err)
		return ErrNotShared
	}
	cwd, _ := os.Getwd()
	c := &sharedClient{
		log:  log,
		sock: sock,
		hello: shared.Hello{
			Protocol: shared.Protocol, Version: o.Version, Config: abs, Kind: shared.KindSession,
			Cwd: cwd, Env: os.Environ(), PID: os.Getpid(), ShareAll: !cfg.Shared,
		},
		start: func() (<-chan error, error) { return o.Start(sock, abs) },
	}
	r := &sessionRelay{log: log, out: out}
	b, err := c.dial(ctx)
	if err != nil {
		log.Warn("the shared workbench could not be reached; this session runs its servers itself", "error", err)
		return ErrNotShared
	}
	log.Debug("relaying to the shared workbench", "socket", sock)
	r.connect = func(ctx context.Context) (io.ReadWriteCloser, error) {
		b, err := c.dial(ctx)
		if err == nil {
			return b, nil
		}
		// From here on the session runs its servers itself: it does
		// not try the shared workbench again.
		log.Warn("the shared workbench could not be started again; this session runs its servers itself from now on", "error", err)
		r.connect = func(ctx context.Context) (io.ReadWriteCloser, error) {
			return localBackend(ctx, cfg, o.Options), nil
		}
		return r.connect(ctx)
	}
	return r.run(ctx, in, b)
}

// sharedClient reaches the shared workbench of one configuration.
type sharedClient struct {
	log   *slog.Logger
	sock  string
	hello shared.Hello
	start func() (<-chan error, error)
}

// dial connects to the shared workbench, starting it if none answers, and
// opens a session there.
func (c *sharedClient) dial(ctx context.Context) (io.ReadWriteCloser, error) {
	dctx, cancel := context.WithTimeout(ctx, sharedDialTimeout)
	defer cancel()
	wait := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		conn, err := shared.DialOrStart(dctx, c.sock, c.start)
		if err != nil {
			return nil, err
		}
		br, err := hello(conn, c.hello)
		if err == nil {
			return &bufConn{Reader: br, Conn: conn}, nil
		}
		conn.Close()
		var refused *refusedError
		switch {
		case dctx.Err() != nil:
			return nil, err
		case errors.As(err, &refused) && refused.retry:
			// It was stopping (its grace had passed, or stop-shared):
			// once it has gone, the next dial starts a new one.
			select {
			case <-time.After(wait):
			case <-dctx.Done():
				return nil, err
			}
			wait = min(2*wait, 200*time.Millisecond)
		case errors.As(err, &refused) || attempt == 2:
			return nil, err
		}
		// A shared workbench killed a moment ago may still take a
		// connection, then drop it: try once more, which starts a new one.
	}
}

// refusedError is a shared workbench's refusal of a session; retry is set
// when it was stopping.
type refusedError struct {
	msg   string
	retry bool
}

func (e *refusedError) Error() string { return "the shared workbench refused the session: " + e.msg }

// hello sends h on conn and reads the answer, bounded by
// sharedAnswerTimeout. The reader it returns holds what follows.
func hello(conn net.Conn, h shared.Hello) (*bufio.Reader, error) {
	_ = conn.SetDeadline(time.Now().Add(sharedAnswerTimeout))
	defer conn.SetDeadline(time.Time{})
	if err := shared.WriteLine(conn, h); err != nil {
		return nil, fmt.Errorf("the shared workbench did not take the session: %w", err)
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	var reply shared.Reply
	if err := shared.ReadLine(br, &reply); err != nil {
		return nil, fmt.Errorf("the shared workbench did not answer: %w", err)
	}
	if !reply.OK {
		return nil, &refusedError{msg: reply.Error, retry: reply.Retry}
	}
	return br, nil
}

// bufConn is a connection whose reads go through the reader that read its
// hello answer.
type bufConn struct {
	*bufio.Reader
	net.Conn
}

func (c *bufConn) Read(p []byte) (int, error) { return c.Reader.Read(p) }

// localBackend serves the session in this process, over pipes: a session
// whose shared workbench is gone and cannot be started again.
func localBackend(ctx context.Context, cfg *config.Config, o Options) io.ReadWriteCloser {
	fromWB, wbOut := io.Pipe()
	wbIn, toWB := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := ServeLocal(ctx, cfg, o, wbIn, wbOut); err != nil {
			o.Logger.Error("serving the session", "error", err)
		}
		wbOut.Close()
	}()
	return &pipeBackend{r: fromWB, w: toWB, done: done}
}

type pipeBackend struct {
	r    *io.PipeReader
	w    *io.PipeWriter
	done chan struct{}
}

func (p *pipeBackend) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeBackend) Write(b []byte) (int, error) { return p.w.Write(b) }

// Close ends the session: the workbench sees its input end, stops its
// servers and returns.
func (p *pipeBackend) Close() error {
	p.w.Close()
	<-p.done
	p.r.Close()
	return nil
}

// sessionRelay carries one host session to a backend (the shared
// workbench, or this process's own when that is gone), and to a new one
// when a backend ends under it.
type sessionRelay struct {
	log     *slog.Logger
	out     io.Writer // the host's stdin
	connect func(ctx context.Context) (io.ReadWriteCloser, error)

	outMu sync.Mutex // one line at a time to the host

	mu          sync.Mutex
	closed      bool     // the session is over: no new backend
	cur         *backend // nil when the last one ended
	gen         int
	initialize  *frame.Message   // the host's initialize, params copied
	initialized []byte           // the host's notifications/initialized line
	pending     map[string]rawID // the host's requests in flight
}

// rawID is a JSON-RPC id as it was written.
type rawID = []byte

type backend struct {
	rw    io.ReadWriteCloser
	ended chan struct{} // closed when its reader ends

	// fromBackend are its requests to the host in flight: a host's answer
	// to one of an ended backend is dropped.
	fromBackend map[string]bool
	// replay is the id of the initialize replayed to it, whose answer the
	// host never sees; replayed receives that answer.
	replay   string
	replayed chan error
}

// run relays until the host's input ends or ctx does.
func (r *sessionRelay) run(ctx context.Context, in io.Reader, first io.ReadWriteCloser) error {
	r.pending = map[string]rawID{}
	r.mu.Lock()
	r.cur = r.start(first, "")
	r.mu.Unlock()
	// The host's lines are sent on by the goroutine that reads them: a
	// hand-off to another would cost a wake-up per message.
	readErr := make(chan error, 1)
	go func() {
		fr := frame.NewReader(in, maxHostLine)
		for {
			line, err := fr.Next()
			if err != nil {
				var long *frame.TooLongError
				if errors.As(err, &long) {
					if long.Ended {
						r.answer(long.ID(), fmt.Sprintf("the message is longer than %d MiB", maxHostLine>>20))
					}
					continue
				}
				readErr <- err
				return
			}
			if ctx.Err() != nil {
				return
			}
			r.fromHost(ctx, line)
		}
	}()
	defer func() {
		r.mu.Lock()
		b := r.cur
		r.cur = nil
		r.closed = true // no new backend from here on
		r.mu.Unlock()
		if b != nil {
			b.rw.Close()
			<-b.ended
		}
	}()
	select {
	case err := <-readErr:
		if !errors.Is(err, io.EOF) {
			r.log.Debug("reading the host's messages", "error", err)
		}
	case <-ctx.Done():
		r.log.Info("shutting down", "reason", context.Cause(ctx))
	}
	return nil
}

// fromHost sends one of the host's lines on.
func (r *sessionRelay) fromHost(ctx context.Context, line []byte) {
	var m frame.Message
	parsed := frame.Parse(line, &m) == nil
	key := ""
	r.mu.Lock()
	// What a new backend is told of the session before this line: the
	// line itself may be the initialize, which it must not get twice.
	init, initialized := r.initialize, r.initialized
	if parsed {
		switch {
		case m.IsRequest():
			key = frame.IDKey(m.ID)
			r.pending[key] = append(rawID(nil), m.ID...)
			if m.Method == "initialize" {
				r.initialize = &frame.Message{ID: append(rawID(nil), m.ID...), Params: append([]byte(nil), m.Params...)}
			}
		case m.Method == "notifications/initialized":
			r.initialized = append([]byte(nil), line...)
		case m.Method == "notifications/cancelled":
			// A cancelled call gets no answer: it is no longer in flight.
			// Nor is there anything to cancel in a backend that ended.
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if frame.Unmarshal(m.Params, &p) == nil && len(p.RequestID) > 0 {
				delete(r.pending, frame.IDKey(p.RequestID))
			}
			if r.cur == nil {
				r.mu.Unlock()
				return
			}
		case m.IsResponse():
			// An answer to a request of an ended backend: no one waits
			// for it any more.
			if b := r.cur; b == nil || !b.fromBackend[frame.IDKey(m.ID)] {
				r.mu.Unlock()
				return
			}
			delete(r.cur.fromBackend, frame.IDKey(m.ID))
		}
	}
	r.mu.Unlock()
	line = append(line, '\n') // the line is a slice of its own
	for attempt := 1; ; attempt++ {
		b := r.backend(ctx, init, initialized)
		if b == nil {
			if key != "" {
				r.fail(key, "the workbench could not serve this session any more")
			}
			return
		}
		if key != "" {
			r.mu.Lock()
			_, inFlight := r.pending[key]
			r.mu.Unlock()
			if !inFlight {
				return // answered already, when the backend it found ended
			}
		}
		_, err := b.rw.Write(line)
		if err == nil {
			return
		}
		// The backend went before the line reached it (stop-shared, the
		// grace ended, a crash): the request did not run there, so it
		// is not one of those lost with it, and a new backend gets it,
		// once.
		var id rawID
		inFlight := false
		if key != "" {
			r.mu.Lock()
			id, inFlight = r.pending[key]
			delete(r.pending, key)
			r.mu.Unlock()
		}
		r.lost(b, err)
		if !inFlight { // a notification, or a request cancelled meanwhile
			return
		}
		if attempt == 2 {
			r.answer(id, "the shared workbench ended before the request reached it; the next call starts it again")
			return
		}
		r.mu.Lock()
		r.pending[key] = id
		r.mu.Unlock()
	}
}

// backend returns the backend lines go to: the current one, or a new one
// that has been told of the host's initialize.
func (r *sessionRelay) backend(ctx context.Context, init *frame.Message, initialized []byte) *backend {
	r.mu.Lock()
	b, closed := r.cur, r.closed
	r.mu.Unlock()
	if b != nil || closed {
		return b
	}
	rw, err := r.connect(ctx)
	if err != nil {
		r.log.Error("no workbench to serve the session", "error", err)
		return nil
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		rw.Close()
		return nil
	}
	replay := ""
	if init != nil {
		replay = `"wb-replay-` + strconv.Itoa(r.gen+1) + `"`
	}
	b = r.start(rw, replay)
	r.mu.Unlock()
	if init == nil {
		return b // the host has not initialized yet: its initialize comes next
	}
	// The new workbench learns the session from the host's own initialize;
	// its answer is for the relay alone.
	req := []byte(`{"jsonrpc":"2.0","id":` + b.replay + `,"method":"initialize","params":`)
	req = append(append(req, init.Params...), "}\n"...)
	if _, err := b.rw.Write(req); err != nil {
		r.lost(b, err)
		return nil
	}
	select {
	case err := <-b.replayed:
		if err != nil {
			r.log.Error("the new shared workbench refused the session's initialize", "error", err)
			r.lost(b, err)
			return nil
		}
	case <-b.ended:
		return nil
	case <-time.After(sharedAnswerTimeout):
		r.lost(b, errors.New("no answer to initialize"))
		return nil
	case <-ctx.Done():
		return nil
	}
	if initialized != nil {
		if _, err := b.rw.Write(append(initialized, '\n')); err != nil {
			r.lost(b, err)
			return nil
		}
	}
	r.log.Info("the session goes on with a new shared workbench")
	return b
}

// start makes rw the current backend and starts reading it. r.mu is held.
func (r *sessionRelay) start(rw io.ReadWriteCloser, replay string) *backend {
	r.gen++
	b := &backend{rw: rw, ended: make(chan struct{}), fromBackend: map[string]bool{}, replay: replay, replayed: make(chan error, 1)}
	r.cur = b
	go r.fromBackend(b)
	return b
}

// fromBackend relays b's lines to the host until b ends.
func (r *sessionRelay) fromBackend(b *backend) {
	fr := frame.NewReader(b.rw, maxSharedLine)
	var err error
	for {
		var line []byte
		line, err = fr.Next()
		if err != nil {
			var long *frame.TooLongError
			if errors.As(err, &long) {
				if id := long.ID(); long.Ended && id != nil {
					r.fail(frame.IDKey(id), fmt.Sprintf("the workbench's answer is longer than %d MiB", maxSharedLine>>20))
				}
				continue
			}
			break
		}
		var m frame.Message
		if frame.Parse(line, &m) == nil {
			switch {
			case m.IsResponse():
				key := frame.IDKey(m.ID)
				if b.replay != "" && key == b.replay {
					var reply error
					if m.Error != nil {
						reply = errors.New(string(m.Error))
					}
					b.replayed <- reply
					continue
				}
				r.mu.Lock()
				_, inFlight := r.pending[key]
				delete(r.pending, key)
				r.mu.Unlock()
				if !inFlight {
					// Answered already (with an error, when this backend
					// was given up), or cancelled: one answer per request.
					continue
				}
			case m.IsRequest():
				r.mu.Lock()
				b.fromBackend[frame.IDKey(m.ID)] = true
				r.mu.Unlock()
			}
		}
		r.toHost(append(line, '\n'))
	}
	r.lost(b, err)
	close(b.ended)
}

// lost ends backend b, once, and answers the host's requests in flight
// there: their answers will not come.
func (r *sessionRelay) lost(b *backend, err error) {
	r.mu.Lock()
	if r.cur != b {
		r.mu.Unlock()
		return
	}
	r.cur = nil
	pending := r.pending
	r.pending = map[string]rawID{}
	r.mu.Unlock()
	b.rw.Close()
	if len(pending) > 0 || !errors.Is(err, io.EOF) {
		r.log.Warn("the shared workbench ended; the next call starts it again", "error", err, "requests_failed", len(pending))
	}
	for _, id := range pending {
		r.answer(id, "the shared workbench ended during this request; it starts again with the next call, which may be this one again")
	}
}

// fail answers the host's request key with an error, if it is still in
// flight.
func (r *sessionRelay) fail(key, msg string) {
	r.mu.Lock()
	id, ok := r.pending[key]
	delete(r.pending, key)
	r.mu.Unlock()
	if ok {
		r.answer(id, msg)
	}
}

// answer sends the host an error response to id (nothing if id is nil).
func (r *sessionRelay) answer(id rawID, msg string) {
	if len(id) == 0 {
		return
	}
	r.toHost(frame.AppendError(nil, id, -32603, msg))
}

func (r *sessionRelay) toHost(line []byte) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	if _, err := r.out.Write(line); err != nil {
		r.log.Debug("writing to the host", "error", err)
	}
}
