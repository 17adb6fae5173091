package downstream

import (
	"context"
	"io"
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
}

func newStdioConn(c *conn, p *serverproc.Process) *stdioConn {
	return &stdioConn{c: c, proc: p, out: newFrameWriter(p.Stdin()), cap: newCapture()}
}

// Read returns the next message for the SDK. Answers and progress of the
// relay's calls are handled on the way and never reach the SDK; a line
// that is not a JSON-RPC message is noted on the server's stderr and
// skipped, rather than ending the session.
func (s *stdioConn) Read(context.Context) (jsonrpc.Message, error) {
	for {
		line, err := s.proc.ReadLine()
		if err != nil {
			return nil, err
		}
		var m frame.Message
		if frame.Parse(line, &m) == nil && s.c.relayed(&m) {
			continue
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			s.proc.Note("stdout message is not valid JSON-RPC, ignored: " + serverproc.Clip(string(line), 200))
			continue
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			s.cap.deliver(resp.ID, resp.Result, resp.Error == nil)
		}
		return msg, nil
	}
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
type frameWriter struct {
	w    io.WriteCloser
	try  func([]byte) (int, error) // nil: every frame goes through the queue
	wake chan struct{}
	done chan struct{} // closed once w is closed

	mu      sync.Mutex
	queue   [][]byte
	busy    bool // a write is under way, by a sender or by the loop
	closing bool
	err     error // the write that failed; later sends fail with it
}

func newFrameWriter(w io.WriteCloser) *frameWriter {
	fw := &frameWriter{w: w, try: serverproc.TryWriter(w), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go fw.loop()
	return fw
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
		fw.queue = append(fw.queue, frame)
		fw.mu.Unlock()
		fw.signal()
		return nil
	}
	fw.busy = true
	fw.mu.Unlock()
	n, err := fw.try(frame)
	fw.mu.Lock()
	fw.busy = false
	switch {
	case err != nil:
		fw.err = err
		fw.queue = nil
	case n < len(frame):
		// The pipe is full: the rest goes first, by the loop.
		fw.queue = append(fw.queue, nil)
		copy(fw.queue[1:], fw.queue)
		fw.queue[0] = frame[n:]
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
		if err != nil {
			fw.err = err
			fw.queue = nil
		}
		fw.mu.Unlock()
	}
}
