package downstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/serverproc"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport is the connection to a server process. The SDK's client
// session runs over it for everything but tools/call: initialize, ping,
// tools/list, list_changed, logging. Calls are frames the connection's
// relay writes and reads itself (relay.go), so that a call's result
// reaches the caller as the bytes the server sent, without the SDK
// decoding it.
type stdioTransport struct{ conn *stdioConn }

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

// stdioConn is an [mcp.Connection] over a server process's stdio, shared
// by the SDK's session and the relay.
type stdioConn struct {
	c    *conn // the relay's calls live there
	proc *serverproc.Process
	out  *frameWriter
	cap  *capture // the raw pages of the SDK's tools/list requests

	// inner is a message the server wrote inside another's line, next
	// to read. Only Read uses it.
	inner []byte

	// longDone is set once the line too long that is being skipped has
	// been answered for; release once a large input was dropped, so that
	// the next Read gives its memory back. Only Read uses them.
	longDone, release bool
}

func newStdioConn(c *conn, p *serverproc.Process) *stdioConn {
	cfg := c.s.cfg
	s := &stdioConn{c: c, proc: p, out: newFrameWriter(p.Stdin(), c.s.o.maxQueued()), cap: newCapture(cfg.MaxTools, cfg.MaxToolListBytes)}
	p.LimitLines(s.cap.listRoom)
	return s
}

// Read returns the next message for the SDK. Answers and progress of the
// relay's calls are handled on the way and never reach the SDK; a line
// that is not a JSON-RPC message is noted on the server's stderr and
// skipped, rather than ending the session. An answer too long or nested
// too deep to read fails its request at once (a relayed call, or the
// SDK's, which gets an error in its place); the SDK's decoder never sees it.
func (s *stdioConn) Read(context.Context) (jsonrpc.Message, error) {
	for {
		if s.release {
			// What a refused list or a line past the limit took is garbage
			// by now (this loop's last line is out of scope), but an idle
			// workbench may not collect for minutes: tens of MiB would stay
			// resident. Rare, so worth a collection of its own.
			s.release = false
			go debug.FreeOSMemory()
		}
		line, err := s.inner, error(nil)
		if s.inner != nil {
			s.inner = nil
		} else {
			line, err = s.proc.ReadLine()
		}
		var long *frame.TooLongError
		if errors.As(err, &long) {
			if msg := s.tooLong(long); msg != nil {
				return msg, nil
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		var m frame.Message
		perr := frame.Parse(line, &m)
		if perr == nil && s.c.relayed(&m) {
			continue
		}
		var pe *frame.ParseError
		if errors.Is(perr, frame.ErrTooDeep) && errors.As(perr, &pe) {
			why := fmt.Sprintf("the server's answer nests objects and arrays deeper than %d levels", frame.MaxMessageDepth)
			if msg := s.fail(pe.ID, why, line); msg != nil {
				return msg, nil
			}
			continue
		}
		if perr != nil {
			if head, inner := frame.SplitInterleaved(line); inner != nil {
				// The server wrote a message before the end of this one's
				// line (frame.Reader.Next says how): that message is read
				// next, and this one's request fails, as it lost its end.
				s.inner = inner
				if msg := s.fail(frame.TopLevelID(head), "the server wrote another message inside its answer, cutting it short", head); msg != nil {
					return msg, nil
				}
				continue
			}
			if id := frame.TailID(line); id != nil && line[0] != '{' && line[0] != '[' {
				// The end of a message that another, written inside it,
				// cut short (above, or in frame.Reader past the limit):
				// it shows its id when the server writes the id last.
				if msg := s.fail(id, "the server wrote another message inside its answer, cutting it short", line); msg != nil {
					return msg, nil
				}
				continue
			}
		}
		if perr == nil && m.IsResponse() {
			// A tool list is bounded before the SDK decodes it (a copy of
			// its own, and every tool as a struct); its page is kept as
			// the line holds it.
			if jid, ok := rpcID(m.ID); ok {
				if _, err := s.cap.deliver(jid, m.Result, len(m.Error) == 0); err != nil {
					s.release = true
					return &jsonrpc.Response{ID: jid, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}}, nil
				}
			}
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			s.proc.Note("stdout message is not valid JSON-RPC, ignored: " + serverproc.Clip(string(line), 200))
			continue
		}
		if resp, ok := msg.(*jsonrpc.Response); ok && perr != nil && s.cap.deliverTo(resp) {
			s.release = true
		}
		return msg, nil
	}
}

// tooLong handles a line longer than the limit, reported as it passes the
// limit and again when it ends: its request fails as soon as its id is
// known (the line may never end).
func (s *stdioConn) tooLong(long *frame.TooLongError) jsonrpc.Message {
	defer func() {
		if long.Ended {
			s.longDone, s.release = false, true
		}
	}()
	id := long.ID()
	if s.longDone || (id == nil && !long.Ended) {
		return nil
	}
	s.longDone = true
	if id == nil {
		s.proc.Note(fmt.Sprintf("stdout line longer than %d MiB, ignored: ", long.Limit>>20) + serverproc.Clip(string(long.Head), 200))
		return nil
	}
	if long.Limit < serverproc.MaxLine { // the limit listRoom gave a tool list
		bound := listTooLarge(s.cap.maxBytes)
		if jid, ok := rpcID(id); ok {
			s.cap.refuseList(jid, bound)
		}
		return s.fail(id, bound.Error(), long.Head)
	}
	return s.fail(id, fmt.Sprintf("the server's answer exceeded %d MiB", long.Limit>>20), long.Head)
}

// fail fails the request that id answers, because its answer cannot be
// read (why): a relayed call ends with the error; the SDK gets an error
// response in its place, returned here. Without an id, or for a request
// nobody waits for, the line is only noted.
func (s *stdioConn) fail(id json.RawMessage, why string, line []byte) jsonrpc.Message {
	s.proc.Note(why + "; dropped it: " + serverproc.Clip(string(line), 200))
	if key, ok := relayKeyOf(id); ok {
		s.c.finishRelay(string(key), nil, errors.New(why), "")
		return nil
	}
	jid, ok := rpcID(id)
	if !ok {
		return nil
	}
	_, _ = s.cap.deliver(jid, nil, false)
	return &jsonrpc.Response{ID: jid, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: why}}
}

// rpcID is a message's raw id as the SDK's jsonrpc.ID.
func rpcID(id json.RawMessage) (jsonrpc.ID, bool) {
	var v any
	if len(id) == 0 || frame.Unmarshal(id, &v) != nil {
		return jsonrpc.ID{}, false
	}
	jid, err := jsonrpc.MakeID(v)
	return jid, err == nil && jid.IsValid()
}

// Write sends a message of the SDK's.
func (s *stdioConn) Write(_ context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		s.cap.watchList(req.ID)
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return s.out.send(append(data, '\n'))
}

// Close closes the server's stdin once what is queued is written. Its
// stdout stays open: the process closes it once the tree is gone, so that
// a server writing on its way out does not die of a broken pipe.
func (s *stdioConn) Close() error {
	s.out.close()
	return nil
}

func (s *stdioConn) SessionID() string { return "" }

// frameWriter writes frames to a server's stdin in the order they were
// sent, without ever blocking the sender: a server that stops reading its
// stdin blocks only its own calls. A frame is written at once, by the
// sender, when nothing is queued and the pipe takes it whole without
// waiting (serverproc.TryWriter); anything else goes to the writer's own
// goroutine, which writes the frames that queued up meanwhile together.
//
// What waits in the queue is bounded by maxQueued bytes (a frame is
// always taken when nothing waits, whatever its size): past it the server
// counts as no longer reading, and the send fails, as every later one.
type frameWriter struct {
	w         io.WriteCloser
	try       func([]byte) (int, error) // nil: every frame goes through the queue
	wake      chan struct{}
	done      chan struct{} // closed once w is closed
	maxQueued int

	mu      sync.Mutex
	queue   [][]byte
	queued  int  // the bytes in queue
	busy    bool // a write is under way, by a sender or by the loop
	closing bool
	err     error // the write that failed; later sends fail with it
}

// defaultMaxQueued bounds the bytes waiting to be written to one server.
const defaultMaxQueued = 64 << 20

func newFrameWriter(w io.WriteCloser, maxQueued int) *frameWriter {
	fw := &frameWriter{w: w, try: serverproc.TryWriter(w), wake: make(chan struct{}, 1), done: make(chan struct{}), maxQueued: maxQueued}
	go fw.loop()
	return fw
}

// queueLocked queues frame, unless the queue would pass its bound: then
// the writer fails for good. fw.mu is held.
func (fw *frameWriter) queueLocked(frame []byte) error {
	if len(fw.queue) > 0 && fw.queued+len(frame) > fw.maxQueued {
		fw.err = fmt.Errorf("more than %s waits to be written to it", sizeText(fw.maxQueued))
		fw.queue, fw.queued = nil, 0
		return fw.err
	}
	fw.queue = append(fw.queue, frame)
	fw.queued += len(frame)
	return nil
}

func (fw *frameWriter) signal() {
	select {
	case fw.wake <- struct{}{}:
	default:
	}
}

// send writes frame (newline included), or queues it.
func (fw *frameWriter) send(frame []byte) error {
	fw.mu.Lock()
	switch {
	case fw.err != nil:
		err := fw.err
		fw.mu.Unlock()
		return err
	case fw.closing:
		fw.mu.Unlock()
		return io.ErrClosedPipe
	case fw.try == nil || fw.busy || len(fw.queue) > 0:
		err := fw.queueLocked(frame)
		fw.mu.Unlock()
		fw.signal()
		return err
	}
	fw.busy = true
	fw.mu.Unlock()
	n, err := fw.try(frame)
	fw.mu.Lock()
	fw.busy = false
	switch {
	case err != nil:
		fw.err = err
		fw.queue, fw.queued = nil, 0
	case n < len(frame):
		// The pipe is full: the rest goes first, by the loop.
		fw.queue = append(fw.queue, nil)
		copy(fw.queue[1:], fw.queue)
		fw.queue[0] = frame[n:]
		fw.queued += len(frame) - n
	}
	wake := fw.err != nil || fw.closing || len(fw.queue) > 0
	fw.mu.Unlock()
	if wake {
		fw.signal()
	}
	return err
}

// close closes the writer once what is queued is written.
func (fw *frameWriter) close() {
	fw.mu.Lock()
	fw.closing = true
	fw.mu.Unlock()
	fw.signal()
}

// coalesceLimit bounds the frames copied together into one write.
const coalesceLimit = 64 << 10

func (fw *frameWriter) loop() {
	defer close(fw.done)
	defer fw.w.Close()
	var batch [][]byte
	var buf []byte
	for {
		fw.mu.Lock()
		for fw.err == nil && (fw.busy || (len(fw.queue) == 0 && !fw.closing)) {
			fw.mu.Unlock()
			<-fw.wake
			fw.mu.Lock()
		}
		if fw.err != nil || len(fw.queue) == 0 { // failed, or closing with nothing left
			fw.mu.Unlock()
			return
		}
		batch, fw.queue = fw.queue, batch[:0]
		fw.queued = 0
		fw.busy = true
		fw.mu.Unlock()
		var err error
		for i := 0; i < len(batch) && err == nil; {
			if len(batch[i]) >= coalesceLimit || i == len(batch)-1 {
				_, err = fw.w.Write(batch[i])
				i++
				continue
			}
			// Small frames go out together.
			buf = buf[:0]
			for i < len(batch) && len(buf)+len(batch[i]) <= coalesceLimit {
				buf = append(buf, batch[i]...)
				i++
			}
			_, err = fw.w.Write(buf)
		}
		clear(batch)
		fw.mu.Lock()
		fw.busy = false
		if err != nil && fw.err == nil {
			fw.err = err
			fw.queue, fw.queued = nil, 0
		}
		fw.mu.Unlock()
	}
}
