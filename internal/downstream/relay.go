package downstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"
)

// The relay: a tools/call to a stdio server written and read as frames.
// Its id and its progress token are one string the workbench owns,
// "wb-<n>"; the SDK's own requests on the same connection have number ids,
// so the two never meet. The answer's result goes to the caller as the
// bytes the server sent.

// relayKey returns the id and progress token of call n.
func relayKey(n uint64) string { return tokenTag + strconv.FormatUint(n, 36) }

var relayIDPrefix = []byte(`"` + tokenTag)

// relayKeyOf returns the key inside a JSON string of the relay's form.
func relayKeyOf(raw json.RawMessage) ([]byte, bool) {
	if len(raw) < len(relayIDPrefix)+1 || !bytes.HasPrefix(raw, relayIDPrefix) || raw[len(raw)-1] != '"' {
		return nil, false
	}
	return raw[1 : len(raw)-1], true
}

// relay writes a tools/call of t with args and returns at once. done gets
// the server's result object or an error, exactly once, on another
// goroutine or before relay returns. cancel gives the call up: the server
// is told (notifications/cancelled) and done gets context.Canceled.
//
// relay returns nil, sends nothing and never calls done when the
// connection has ended or is stopping for idleness: the call may go to a
// new connection.
func (c *conn) relay(t *Tool, args json.RawMessage, progress ProgressFunc, ask AskFunc, done func(json.RawMessage, error)) (cancel func()) {
	if bytes.ContainsAny(args, "\r\n") {
		// A frame is one line: arguments written over several lines (by
		// the call command, or a Go caller) are put on one.
		var b bytes.Buffer
		if err := json.Compact(&b, args); err == nil {
			args = b.Bytes()
		}
	}
	seq := tokenSeq.Add(1)
	key := relayKey(seq)
	call := &inflight{progress: progress, done: done, ask: ask, seq: seq}
	timeout := c.s.cfg.RequestTimeout
	c.callsMu.Lock()
	if c.calls == nil { // the connection has ended
		c.callsMu.Unlock()
		return nil
	}
	c.calls[key] = call
	c.callStartedLocked()
	call.timer = time.AfterFunc(timeout, func() {
		c.finishRelay(key, nil, fmt.Errorf("no response within %v (requestTimeoutMs); the call was cancelled", timeout), "timed out")
	})
	c.callsMu.Unlock()

	// {"jsonrpc":"2.0","id":"wb-…","method":"tools/call","params":{"name":…,"arguments":…,"_meta":{"progressToken":"wb-…"}}}
	line := make([]byte, 0, len(args)+len(t.Name)+2*len(key)+128)
	line = append(line, `{"jsonrpc":"2.0","id":"`...)
	line = append(line, key...)
	line = append(line, `","method":"tools/call","params":{"name":`...)
	line = frame.AppendString(line, t.Name)
	line = append(line, `,"arguments":`...)
	line = append(line, args...)
	line = append(line, `,"_meta":{"progressToken":"`...)
	line = append(line, key...)
	line = append(line, "\"}}}\n"...)
	if err := c.stdio.out.send(line); err != nil {
		// The server's stdin is closed or broken: it can take no call any
		// more. Ending the connection answers this call and the others
		// (if it is not ending already), and the next call starts the
		// server again.
		go c.end(fmt.Errorf("the server stopped reading its stdin (%v)", err), false)
	}
	return func() { c.finishRelay(key, nil, context.Canceled, "cancelled by the client") }
}

// finishRelay ends the relayed call key, if it has not ended yet, with
// result or err. A non-empty cancelReason tells the server the call is
// given up.
func (c *conn) finishRelay(key string, result json.RawMessage, err error, cancelReason string) {
	c.callsMu.Lock()
	call := c.calls[key]
	if call != nil {
		delete(c.calls, key)
		c.callEndedLocked()
	}
	c.callsMu.Unlock()
	if call == nil {
		return // ended already
	}
	call.timer.Stop()
	if cancelReason != "" {
		c.sendCancel(key, cancelReason)
	}
	call.finish(result, err)
}

// sendCancel tells the server that the workbench gave up call key.
func (c *conn) sendCancel(key, reason string) {
	p := append([]byte(`{"requestId":`), frame.AppendString(nil, key)...)
	p = append(p, `,"reason":`...)
	p = frame.AppendString(p, reason)
	p = append(p, '}')
	_ = c.stdio.out.send(frame.AppendNotification(nil, "notifications/cancelled", p))
}

// relayed handles a message from the server that belongs to a relayed
// call: its answer or its progress. It reports whether it did.
func (c *conn) relayed(m *frame.Message) bool {
	switch {
	case m.IsResponse():
		key, ok := relayKeyOf(m.ID)
		if !ok {
			return false
		}
		result, err := m.Result, error(nil)
		switch {
		case m.Error != nil:
			result, err = nil, serverError(m.Error)
		case len(result) == 0 || result[0] != '{':
			result, err = nil, fmt.Errorf("the server's result is not a JSON object")
		}
		c.finishRelay(string(key), result, err, "")
		return true
	case m.Method == "notifications/progress":
		var p struct {
			Token    json.RawMessage `json:"progressToken"`
			Progress json.RawMessage `json:"progress"`
			Total    json.RawMessage `json:"total"`
			Message  json.RawMessage `json:"message"`
		}
		if frame.Unmarshal(m.Params, &p) != nil {
			return false
		}
		key, ok := relayKeyOf(p.Token)
		if !ok {
			return false
		}
		c.callsMu.Lock()
		call := c.calls[string(key)]
		if call != nil && call.asking == 0 {
			call.timer.Reset(c.s.cfg.RequestTimeout)
		}
		c.callsMu.Unlock()
		if call != nil && call.progress != nil && len(p.Progress) > 0 {
			call.report(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
		}
		return true // late progress, after the result, is dropped
	}
	return false
}

// serverError is a JSON-RPC error object the server answered a call with.
func serverError(raw json.RawMessage) error {
	var e struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if frame.Unmarshal(raw, &e) != nil {
		return fmt.Errorf("the server answered with a malformed error: %s", raw)
	}
	if e.Code == CodeURLElicitationRequired {
		return &URLElicitationError{Message: e.Message, Data: e.Data}
	}
	return fmt.Errorf("the server answered with an error: %s (code %d)", e.Message, e.Code)
}

// CodeURLElicitationRequired is the JSON-RPC error a server answers a call
// with when the user must first open a page (URL-mode elicitation).
const CodeURLElicitationRequired = -32042

// URLElicitationError is a server's answer to a call that the user must
// open a page first (its data names the pages): the workbench passes it to
// the host as the server sent it, whose client shows the pages and may
// call again.
type URLElicitationError struct {
	Message string
	Data    json.RawMessage // as the server sent it
}

func (e *URLElicitationError) Error() string {
	return "the server needs the user to open a page first: " + e.Message + " " + string(e.Data)
}
