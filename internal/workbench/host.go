package workbench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The connection to the host. The MCP SDK's server session runs over it
// for everything but use_tool: initialize and version negotiation,
// tools/list, open_toolbox, ping, logging. A use_tool call is taken off the
// line before the SDK sees it and served as bytes (use.go): its response
// splices the server's result, as the server sent it, under the host's id,
// and its progress and cancellation are mapped by the host's token and id.

// maxHostLine bounds one message from the host.
const maxHostLine = 64 << 20

// hostTransport is the host's side of the stdio transport.
type hostTransport struct {
	w    *Workbench
	in   io.Reader
	out  io.Writer
	conn *hostConn // once connected
}

func (t *hostTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &hostConn{
		w:        t.w,
		log:      t.w.log,
		in:       frame.NewReader(t.in, maxHostLine),
		out:      t.out,
		incoming: make(chan jsonrpc.Message, 32),
		closed:   make(chan struct{}),
		calls:    map[string]*hostCall{},
		id:       rand.Text(),
	}
	t.conn = c
	go c.readLoop()
	return c, nil
}

// hostConn is an [mcp.Connection] to the host. A goroutine of its own
// reads the host's lines: it serves use_tool calls itself and passes every
// other message to the SDK.
type hostConn struct {
	w   *Workbench
	log *slog.Logger
	in  *frame.Reader

	incoming chan jsonrpc.Message // for the SDK; closed when reading ends
	readErr  error                // why reading ended; set before incoming closes
	closed   chan struct{}
	closing  sync.Once

	// initialized is set once the host sent initialize: the SDK refuses
	// calls before it, and so does the relay. newProtocol is set when the
	// host asked for 2026-07-28 or later, whose results carry a resultType.
	initialized atomic.Bool
	newProtocol atomic.Bool

	outMu  sync.Mutex
	out    io.Writer
	outErr error

	mu    sync.Mutex
	calls map[string]*hostCall // use_tool calls in flight, by the host's id

	// ss is the SDK's session over this connection, set once connected:
	// how the workbench asks a 2025 host what its servers ask (ask.go).
	// requestCaps are the capabilities of the latest request that named
	// its protocol version itself (2026-07-28), nil before one.
	ss          atomic.Pointer[mcp.ServerSession]
	requestCaps atomic.Pointer[mcp.ClientCapabilities]
	// id names the connection in the request states given to it
	// (roundtrip.go); held are its calls waiting for the host's answers.
	id     string
	heldMu sync.Mutex
	held   map[string]*heldCall
}

// hostCall is a use_tool call in flight.
type hostCall struct {
	cancel    func() // nil until the call has started
	cancelled bool   // the host gave it up: it gets no response
}

func (c *hostConn) readLoop() {
	defer close(c.incoming)
	answered := false // the long line being skipped has been answered
	for {
		line, err := c.in.Next()
		var long *frame.TooLongError
		if errors.As(err, &long) {
			// Answered as soon as its id is known: at once, or when its
			// end shows it; else once it has ended, without an id.
			if id := long.ID(); !answered && (id != nil || long.Ended) {
				c.refuse(id, frame.CodeInvalidRequest, fmt.Sprintf("the message is longer than %d MiB", long.Limit>>20))
				answered = true
			}
			if long.Ended {
				answered = false
			}
			continue
		}
		if err != nil {
			c.readErr = err
			return
		}
		var m frame.Message
		if err := frame.Parse(line, &m); err != nil {
			var pe *frame.ParseError
			errors.As(err, &pe)
			c.refuse(pe.ID, pe.Code, pe.Msg)
			continue
		}
		switch m.Method {
		case "tools/call":
			if m.IsRequest() && c.useTool(&m) {
				continue
			}
		case "notifications/cancelled":
			// With an id it is a request, not a cancellation: the SDK
			// answers it.
			if len(m.ID) == 0 && c.cancelled(&m) {
				continue
			}
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			c.refuse(m.ID, frame.CodeInvalidRequest, "the message is not a valid JSON-RPC message")
			continue
		}
		if m.Method == "initialize" && m.IsRequest() {
			// Results carry the newer envelope when the host asked for the
			// newer protocol, as the SDK decides for its own results.
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = frame.Unmarshal(m.Params, &p)
			c.newProtocol.Store(p.ProtocolVersion >= newProtocol)
			c.initialized.Store(true)
		}
		select {
		case c.incoming <- msg:
		case <-c.closed:
			c.readErr = io.EOF
			return
		}
	}
}

// refuse answers a line that is not a valid message with a JSON-RPC error,
// and logs it: the session goes on.
func (c *hostConn) refuse(id json.RawMessage, code int, msg string) {
	c.log.Error("the host sent a message that is not valid JSON-RPC; answered with an error", "code", code, "error", msg)
	_ = c.write(frame.AppendError(nil, id, code, msg))
}

// Read returns the next message for the SDK.
func (c *hostConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg, ok := <-c.incoming:
		if !ok {
			return nil, c.readErr
		}
		return msg, nil
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write sends a message of the SDK's. Its errors speak JSON: the SDK's
// decoding errors name the Go types it decodes into.
func (c *hostConn) Write(_ context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Response); ok && r.Error != nil {
		if text := frame.ExplainError(r.Error); text != r.Error.Error() {
			plain := &jsonrpc.Error{Message: text}
			var wire *jsonrpc.Error
			if errors.As(r.Error, &wire) {
				plain.Code, plain.Data = wire.Code, wire.Data
			}
			r.Error = plain
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.write(append(data, '\n'))
}

func (c *hostConn) write(b []byte) error {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	if c.outErr != nil {
		return c.outErr
	}
	if _, err := c.out.Write(b); err != nil {
		c.outErr = err
		return err
	}
	return nil
}

// Close ends the connection: Read returns at once. The host's streams are
// the caller's to close.
func (c *hostConn) Close() error {
	c.closing.Do(func() { close(c.closed) })
	return nil
}

func (c *hostConn) SessionID() string { return "" }

// sdkVersions are the protocol versions the SDK speaks.
var sdkVersions = mcp.SupportedProtocolVersions()

func isObject(v json.RawMessage) bool { return len(v) > 0 && v[0] == '{' }

// newProtocol is the first protocol version whose results carry resultType.
const newProtocol = "2026-07-28"

// useTool serves a tools/call request if it calls use_tool, and reports
// whether it did; other calls go to the SDK.
func (c *hostConn) useTool(m *frame.Message) bool {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      json.RawMessage `json:"_meta"`
		// A retry of a call that answered input_required (roundtrip.go).
		InputResponses json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage `json:"requestState"`
	}
	if frame.Unmarshal(m.Params, &p) != nil || p.Name != "use_tool" {
		return false
	}
	var meta struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Protocol      json.RawMessage `json:"io.modelcontextprotocol/protocolVersion"`
		Capabilities  json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		ClientInfo    json.RawMessage `json:"io.modelcontextprotocol/clientInfo"`
	}
	if len(p.Meta) > 0 && frame.Unmarshal(p.Meta, &meta) != nil {
		meta.ProgressToken, meta.Protocol = nil, nil // not an object: no token, no version
	}
	// A request of the 2026-07-28 protocol may come without a session; it
	// names its version itself, and its result names the server too.
	var protocol string
	if len(meta.Protocol) > 0 {
		_ = frame.Unmarshal(meta.Protocol, &protocol) // a version that is not a string names none
	}
	perRequest := protocol >= newProtocol
	if perRequest && (!slices.Contains(sdkVersions, protocol) || !isObject(meta.Capabilities) ||
		(len(meta.ClientInfo) > 0 && !isObject(meta.ClientInfo))) {
		return false // the SDK refuses it, with the error the protocol asks for
	}
	if !perRequest && !c.initialized.Load() {
		return false // the SDK refuses calls before initialize
	}
	env := envelope{resultType: perRequest || c.newProtocol.Load(), serverInfo: perRequest}
	if perRequest {
		// What this host can answer now, for the servers it starts.
		if caps := requestCapabilities(meta.Capabilities); caps != nil {
			c.requestCaps.Store(caps)
		}
	}

	id := bytes.Clone(m.ID)
	var progress downstream.ProgressFunc
	if tok := meta.ProgressToken; len(tok) > 0 && string(tok) != "null" {
		tok = bytes.Clone(tok)
		progress = func(p downstream.Progress) { _ = c.write(progressFrame(tok, p)) }
	}
	key := frame.IDKey(id)
	call := &hostCall{}
	c.mu.Lock()
	if c.calls[key] != nil {
		c.mu.Unlock()
		c.refuse(id, frame.CodeInvalidRequest, "a request with this id is still in progress; JSON-RPC ids must be unique")
		return true
	}
	c.calls[key] = call
	c.mu.Unlock()
	reply := func(result json.RawMessage) {
		c.mu.Lock()
		live := c.calls[key] == call && !call.cancelled
		if live {
			delete(c.calls, key)
		}
		c.mu.Unlock()
		if !live {
			return
		}
		if e, ok := errorAnswer(result); ok {
			_ = c.write(frame.AppendErrorObject(nil, id, e))
			return
		}
		_ = c.write(frame.AppendResponse(nil, id, env.wrap(result, c.w)))
	}
	var state string
	_ = frame.Unmarshal(p.RequestState, &state)
	cancel := c.startUse(p.Arguments, state, p.InputResponses, perRequest || c.newProtocol.Load(), "", progress, nil, reply)
	c.mu.Lock()
	call.cancel = cancel
	cancelNow := call.cancelled
	c.mu.Unlock()
	if cancelNow {
		cancel()
	}
	return true
}

// startUse starts a use_tool call of arguments args, or takes the host's
// retry of a held one (state, responses: its requestState and
// inputResponses), and returns what gives it up. held says the host takes
// no requests from servers (2026-07-28): their requests turn the call's
// result into input_required (roundtrip.go); else the server asks with
// ask (nil: the workbench's Ask). reply gets the call's answer once, as
// use.go makes it.
func (c *hostConn) startUse(args json.RawMessage, state string, responses json.RawMessage, held bool, scope string, progress downstream.ProgressFunc, ask downstream.AskFunc, reply func(json.RawMessage)) (cancel func()) {
	return c.startParsed(parseUse(args), state, responses, held, scope, progress, ask, reply)
}

// startParsed is startUse of arguments parsed once (parseUse): the
// identifier of the tool is read once per call, whatever else needs it.
func (c *hostConn) startParsed(in parsedUse, state string, responses json.RawMessage, held bool, scope string, progress downstream.ProgressFunc, ask downstream.AskFunc, reply func(json.RawMessage)) (cancel func()) {
	ref := in.ref
	if state != "" || (len(responses) > 0 && string(responses) != "null") {
		// The host's answers to a held call's input requests.
		if in.err != nil {
			reply(resultJSON("use_tool: "+in.err.Error(), true))
			return func() {}
		}
		h, why := c.resume(ref, state, responses)
		if h == nil {
			reply(ref.refused(why))
			return func() {}
		}
		h.attach(reply)
		return h.giveUp
	}
	if !held {
		return c.w.useParsed(in, scope, progress, ask, reply)
	}
	h := c.holdCall(ref, reply)
	stop := c.w.useParsed(in, scope, progress, h.ask, h.finish)
	h.mu.Lock()
	h.cancel = stop
	h.mu.Unlock()
	return func() { h.giveUp(); stop() }
}

// cancelled handles notifications/cancelled for a use_tool call, and
// reports whether it was one. The call gets no response, as the MCP spec
// asks of cancelled requests.
func (c *hostConn) cancelled(m *frame.Message) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if frame.Unmarshal(m.Params, &p) != nil {
		return false
	}
	key := frame.IDKey(p.RequestID)
	c.mu.Lock()
	call := c.calls[key]
	var cancel func()
	if call != nil {
		delete(c.calls, key)
		call.cancelled = true
		cancel = call.cancel
	}
	c.mu.Unlock()
	if call == nil {
		return false // not a use_tool call: the SDK's
	}
	if cancel != nil {
		cancel()
	}
	return true
}

// progressFrame is a progress notification to the host under its token.
func progressFrame(tok []byte, p downstream.Progress) []byte {
	params := make([]byte, 0, 64+len(tok)+len(p.Message))
	params = append(params, `{"progressToken":`...)
	params = append(params, tok...)
	params = append(params, `,"progress":`...)
	params = append(params, p.Progress...)
	if len(p.Total) > 0 {
		params = append(params, `,"total":`...)
		params = append(params, p.Total...)
	}
	if len(p.Message) > 0 {
		params = append(params, `,"message":`...)
		params = append(params, p.Message...)
	}
	params = append(params, '}')
	return frame.AppendNotification(nil, "notifications/progress", params)
}

// envelope is what the newer protocol adds around a result: resultType
// (2026-07-28 sessions and requests) and the server's identity in _meta
// (requests that name their version themselves). The server's own fields
// win.
type envelope struct {
	resultType, serverInfo bool
}

func (e envelope) wrap(result json.RawMessage, w *Workbench) json.RawMessage {
	if !e.resultType && !e.serverInfo {
		return result
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(result, &res) != nil {
		return result
	}
	if _, ok := res["resultType"]; !ok && e.resultType {
		res["resultType"] = json.RawMessage(`"complete"`)
	}
	if e.serverInfo {
		var meta map[string]json.RawMessage
		if json.Unmarshal(res["_meta"], &meta) != nil || meta == nil {
			meta = map[string]json.RawMessage{}
		}
		if _, ok := meta[mcp.MetaKeyServerInfo]; !ok {
			meta[mcp.MetaKeyServerInfo] = mustJSON(&mcp.Implementation{Name: Name, Version: w.version})
			res["_meta"] = mustJSON(meta)
		}
	}
	return mustJSON(res)
}
