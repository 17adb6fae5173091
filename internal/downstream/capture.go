package downstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// captureTransport wraps a transport so that what the workbench passes on
// keeps the bytes the server sent: the tools of tools/list results and
// whole tools/call results. The SDK decodes both into structs, which drops
// fields it does not know, adds defaults on re-encoding and fails a call
// whose result holds a content type it does not know; open_toolbox and
// use_tool promise them unchanged.
//
// It cannot wrap the streamable HTTP client transport, whose connection
// needs SDK-internal callbacks that a wrapper would hide; there tools and
// results are re-encoded from the SDK's structs instead.
type captureTransport struct {
	mcp.Transport
	cap *capture
}

func (t *captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Connection: c, cap: t.cap}, nil
}

type captureConn struct {
	mcp.Connection
	cap *capture
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		switch req.Method {
		case "tools/list":
			c.cap.watchList(req.ID)
		case "tools/call":
			if tok, ok := callToken(req.Params); ok {
				c.cap.watchCall(req.ID, tok)
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.cap.deliverTo(resp)
	}
	return msg, err
}

// heldResult is what the SDK decodes in place of a captured call result.
var heldResult = json.RawMessage(`{"content":[]}`)

// tokenPrefix starts the params of every tools/call the workbench sends:
// the SDK writes _meta first, and the workbench's _meta holds only its own
// progress token (see conn.call).
var tokenPrefix = []byte(`{"_meta":{"progressToken":"` + tokenTag)

// callToken finds the workbench's progress token in a tools/call's params.
func callToken(params json.RawMessage) (string, bool) {
	if !bytes.HasPrefix(params, tokenPrefix) {
		return "", false
	}
	rest := params[len(tokenPrefix)-len(tokenTag):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return "", false
	}
	return string(rest[:end]), true
}

// capture holds the raw results of the requests it watches, from the
// moment the server's answer is read until the caller takes them. It
// bounds a listing's pages together by maxTools and maxBytes: a page past
// either reaches the SDK as an error, before the SDK decodes its tools.
type capture struct {
	maxTools, maxBytes int

	mu      sync.Mutex
	lists   map[jsonrpc.ID]bool // tools/list requests under way
	pages   []json.RawMessage   // their results, in order
	tools   int                 // the tools in pages
	bytes   int                 // the bytes of pages
	calls   map[jsonrpc.ID]string
	results map[string]json.RawMessage // by progress token
	refused *boundError                // the bound the listing under way passed, if any
}

// boundError is a tool list past one of its bounds (maxTools,
// maxToolListBytes): the same list would pass it again, so a start that
// meets it is not retried.
type boundError struct{ msg string }

func (e *boundError) Error() string { return e.msg }

func tooManyTools(max int) *boundError {
	return &boundError{fmt.Sprintf("the server lists more than %d tools (maxTools)", max)}
}

func listTooLarge(max int) *boundError {
	return &boundError{fmt.Sprintf("the server's tool list is larger than %s (maxToolListBytes)", sizeText(max))}
}

func newCapture(maxTools, maxBytes int) *capture {
	return &capture{maxTools: maxTools, maxBytes: maxBytes,
		lists: map[jsonrpc.ID]bool{}, calls: map[jsonrpc.ID]string{}, results: map[string]json.RawMessage{}}
}

// deliverTo delivers a response the SDK is about to read, and changes it
// to what the SDK should see: a captured call result becomes a stand-in
// (the SDK only needs to see that the call succeeded: the result itself
// goes to the caller as the server sent it), a tool list past the bounds
// an error. It reports whether it refused a list.
func (r *capture) deliverTo(resp *jsonrpc.Response) (refused bool) {
	held, err := r.deliver(resp.ID, resp.Result, resp.Error == nil)
	switch {
	case err != nil:
		resp.Result, resp.Error = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		return true
	case held:
		resp.Result = heldResult
	}
	return false
}

// listRoom is the most bytes the line that answers id may hold: what
// maxToolListBytes leaves of the listing, when id is a tools/list under
// way; else 0 (no bound of its own). A stdio line is refused as soon as
// it passes it, rather than read whole first.
func (r *capture) listRoom(id json.RawMessage) int {
	jid, ok := rpcID(id)
	if !ok || r.maxBytes <= 0 {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.lists[jid] {
		return 0
	}
	return max(1, r.maxBytes-r.bytes)
}

// refuseList ends the listing that id answers with err: its line passed
// a bound before it could be read.
func (r *capture) refuseList(id jsonrpc.ID, err *boundError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.lists, id)
	r.pages, r.refused = nil, err
}

// refusal returns the bound the listing under way passed, if any.
func (r *capture) refusal() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refused == nil {
		return nil // not a nil *boundError in an error
	}
	return r.refused
}

func (r *capture) watchList(id jsonrpc.ID) {
	r.mu.Lock()
	r.lists[id] = true
	r.mu.Unlock()
}

func (r *capture) watchCall(id jsonrpc.ID, token string) {
	r.mu.Lock()
	r.calls[id] = token
	r.mu.Unlock()
}

// deliver keeps result if id is a watched request that succeeded, and
// reports whether it was a tools/call whose result it kept. A tools/list
// page that takes the listing past its bounds is not kept: the pages kept
// so far are dropped, and the error says which bound it passed.
func (r *capture) deliver(id jsonrpc.ID, result json.RawMessage, ok bool) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lists[id] {
		delete(r.lists, id)
		if ok {
			return false, r.addPage(result)
		}
		return false, nil
	}
	tok, watched := r.calls[id]
	if !watched {
		return false, nil
	}
	delete(r.calls, id)
	if ok {
		r.results[tok] = result
	}
	return ok, nil
}

// addPage keeps a tools/list page if the listing stays within its bounds.
func (r *capture) addPage(page json.RawMessage) error {
	var err *boundError
	if r.bytes += len(page); r.maxBytes > 0 && r.bytes > r.maxBytes {
		err = listTooLarge(r.maxBytes)
	} else {
		var p struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if frame.Unmarshal(page, &p) == nil {
			r.tools += len(p.Tools)
		}
		if r.maxTools > 0 && r.tools > r.maxTools {
			err = tooManyTools(r.maxTools)
		}
	}
	if err != nil {
		r.pages, r.refused = nil, err // give the memory back at once
		return err
	}
	r.pages = append(r.pages, page)
	return nil
}

// listBound bounds the bytes of a streamable HTTP server's tool list as
// they are read, as capture does for the other transports: the SDK's
// streamable client cannot be wrapped (see captureTransport), so the bound
// sits on the HTTP bodies that answer its tools/list requests, their
// pages together. Past it, the body fails the read and the listing ends
// with the bound it passed.
type listBound struct {
	base    http.RoundTripper
	max     int
	used    atomic.Int64
	refused atomic.Pointer[boundError]
}

// reset starts a new listing.
func (b *listBound) reset() {
	b.used.Store(0)
	b.refused.Store(nil)
}

// refusal returns the bound the listing under way passed, if any.
func (b *listBound) refusal() error {
	if err := b.refused.Load(); err != nil {
		return err
	}
	return nil
}

func (b *listBound) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(req)
	if err == nil && b.max > 0 && isToolsList(req) {
		resp.Body = &boundedBody{ReadCloser: resp.Body, b: b}
	}
	return resp, err
}

// listMethod starts the method of an MCP tools/list request as the SDK
// encodes it: after "jsonrpc" and "id", within the body's first bytes.
var listMethod = []byte(`"method":"tools/list"`)

// isToolsList reports whether req posts a tools/list request, from a copy
// of its body's first bytes.
func isToolsList(req *http.Request) bool {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	var head [128]byte
	n, _ := io.ReadFull(body, head[:])
	return bytes.Contains(head[:n], listMethod)
}

type boundedBody struct {
	io.ReadCloser
	b *listBound
}

func (r *boundedBody) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if r.b.used.Add(int64(n)) > int64(r.b.max) {
		bound := listTooLarge(r.b.max)
		r.b.refused.CompareAndSwap(nil, bound)
		return 0, bound
	}
	return n, err
}

// sizeText says a number of bytes for a message: in MiB when it is whole
// MiB, else in bytes.
func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// takePages returns the tools/list pages collected so far and starts afresh.
// Listings of one session never overlap (conn.listMu), so pages come in order.
func (r *capture) takePages() []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pages
	r.pages, r.tools, r.bytes, r.refused = nil, 0, 0, nil
	clear(r.lists)
	return p
}

// takeResult returns the result of the call with token, if it came, and
// forgets the call either way.
func (r *capture) takeResult(token string) (json.RawMessage, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.results[token]
	if ok {
		delete(r.results, token)
		return res, true
	}
	for id, tok := range r.calls { // no answer came: the call failed or was cancelled
		if tok == token {
			delete(r.calls, id)
			break
		}
	}
	return nil, false
}
