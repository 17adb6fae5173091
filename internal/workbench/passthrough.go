package workbench

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A downstream server's tools/call result reaches the host as the bytes the
// server sent. The SDK's server sends only what a handler returns, a
// *mcp.CallToolResult, and encoding a result into one would drop fields
// and content types the SDK does not know and cost a decode and an encode
// per call. So use_tool's handler holds the bytes and returns a
// placeholder that names them, and the connection to the host swaps the
// placeholder for the held bytes as the response goes out.

// heldKey is the placeholder's _meta key. The SDK may add an envelope of
// its own around a result (the 2026-07-28 protocol adds resultType and
// the server's identity in _meta): the swap keeps it.
const heldKey = "mcp-workbench/held"

var heldKeyJSON = []byte(`"` + heldKey + `":`)

type heldResults struct {
	mu  sync.Mutex
	seq uint64
	m   map[string]json.RawMessage
}

// hold keeps raw and returns the placeholder to answer with.
func (h *heldResults) hold(raw json.RawMessage) *mcp.CallToolResult {
	h.mu.Lock()
	h.seq++
	key := strconv.FormatUint(h.seq, 36)
	if h.m == nil {
		h.m = map[string]json.RawMessage{}
	}
	h.m[key] = raw
	h.mu.Unlock()
	return &mcp.CallToolResult{Meta: mcp.Meta{heldKey: key}, Content: []mcp.Content{}}
}

// take returns the result to send in place of an encoded placeholder: the
// held bytes, inside the SDK's envelope if it added one. It reports false
// for any other result.
func (h *heldResults) take(result json.RawMessage) (json.RawMessage, bool) {
	if !bytes.Contains(result, heldKeyJSON) {
		return nil, false
	}
	var env, meta map[string]json.RawMessage
	var key string
	if json.Unmarshal(result, &env) != nil || json.Unmarshal(env["_meta"], &meta) != nil || json.Unmarshal(meta[heldKey], &key) != nil {
		return nil, false
	}
	h.mu.Lock()
	raw, ok := h.m[key]
	delete(h.m, key)
	h.mu.Unlock()
	if !ok {
		return nil, false
	}
	delete(meta, heldKey)
	delete(env, "_meta")
	delete(env, "content")
	if len(env) == 0 && len(meta) == 0 {
		return raw, true
	}
	return wrap(raw, env, meta), true
}

// wrap adds the envelope's fields and _meta keys to a result, where the
// result has no field or key of that name already.
func wrap(raw json.RawMessage, env, meta map[string]json.RawMessage) json.RawMessage {
	var res map[string]json.RawMessage
	if json.Unmarshal(raw, &res) != nil {
		return raw
	}
	for k, v := range env {
		if _, ok := res[k]; !ok {
			res[k] = v
		}
	}
	if len(meta) > 0 {
		var m map[string]json.RawMessage
		if json.Unmarshal(res["_meta"], &m) != nil || m == nil {
			m = map[string]json.RawMessage{}
		}
		for k, v := range meta {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		res["_meta"], _ = json.Marshal(m)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return raw
	}
	return b
}

// hostTransport is the host's transport with held results swapped in.
type hostTransport struct {
	mcp.Transport
	held *heldResults
}

func (t *hostTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &hostConn{Connection: c, held: t.held}, nil
}

type hostConn struct {
	mcp.Connection
	held *heldResults
}

func (c *hostConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil {
		if raw, ok := c.held.take(resp.Result); ok {
			msg = &jsonrpc.Response{ID: resp.ID, Result: raw}
		}
	}
	return c.Connection.Write(ctx, msg)
}
