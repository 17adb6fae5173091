package downstream

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// captureTransport wraps a transport so that the raw bytes of tools/list
// results are kept as the server sent them. The SDK decodes tools into
// structs, which drops fields it does not know and adds defaults on
// re-encoding; open_toolbox promises each tool object unchanged.
//
// It cannot wrap the streamable HTTP client transport, whose connection
// needs SDK-internal callbacks that a wrapper would hide; those tools are
// re-encoded from the SDK's structs instead.
type captureTransport struct {
	mcp.Transport
	pages *rawPages
}

func (t *captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Connection: c, pages: t.pages}, nil
}

type captureConn struct {
	mcp.Connection
	pages *rawPages
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		c.pages.watch(req.ID)
	}
	return c.Connection.Write(ctx, msg)
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil {
		c.pages.deliver(resp.ID, resp.Result)
	}
	return msg, err
}

// rawPages collects the raw results of the tools/list requests sent while
// a listing is under way. Listings of one session never overlap (the
// server's list mutex), so pages arrive in order.
type rawPages struct {
	mu      sync.Mutex
	watched map[jsonrpc.ID]bool
	pages   []json.RawMessage
}

func newRawPages() *rawPages { return &rawPages{watched: map[jsonrpc.ID]bool{}} }

func (r *rawPages) watch(id jsonrpc.ID) {
	r.mu.Lock()
	r.watched[id] = true
	r.mu.Unlock()
}

func (r *rawPages) deliver(id jsonrpc.ID, result json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.watched[id] {
		delete(r.watched, id)
		r.pages = append(r.pages, result)
	}
}

// take returns the pages collected so far and starts afresh.
func (r *rawPages) take() []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pages
	r.pages = nil
	clear(r.watched)
	return p
}
