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

// frameWriter writes frames to a server's stdin from a goroutine of its
// own, in the order they were sent: a server that stops reading its stdin
// blocks only its own calls, never the caller that sent them. Frames that
// queue up while a write is under way go out in one write.
type frameWriter struct {
	w    io.WriteCloser
	wake chan struct{}
	done chan struct{} // closed once w is closed

	mu      sync.Mutex
	queue   [][]byte
	closing bool
	err     error // the write that failed; later sends fail with it
}

func newFrameWriter(w io.WriteCloser) *frameWriter {
	fw := &frameWriter{w: w, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go fw.loop()
	return fw
}

// send queues frame (newline included).
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
	}
	fw.queue = append(fw.queue, frame)
	fw.mu.Unlock()
	select {
	case fw.wake <- struct{}{}:
	default:
	}
	return nil
}

// close closes the writer once what is queued is written.
func (fw *frameWriter) close() {
	fw.mu.Lock()
	fw.closing = true
	fw.mu.Unlock()
	select {
	case fw.wake <- struct{}{}:
	default:
	}
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
		for len(fw.queue) == 0 && !fw.closing {
			fw.mu.Unlock()
			<-fw.wake
			fw.mu.Lock()
		}
		batch, fw.queue = fw.queue, batch[:0]
		closing := fw.closing && len(batch) == 0
		fw.mu.Unlock()
		if closing {
			return
		}
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
		if err != nil {
			fw.mu.Lock()
			fw.err = err
			fw.queue = nil
			fw.mu.Unlock()
			return
		}
	}
}
