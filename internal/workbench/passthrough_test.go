package workbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawHost is a host that speaks JSON-RPC by hand, so that a test sees the
// bytes of each result the workbench sends.
type rawHost struct {
	t    *testing.T
	conn mcp.Connection
	seq  int64
}

func (e *env) rawHost(wb *Workbench, protocol string) *rawHost {
	t := e.t
	ct, ss := e.serveInMemory(wb)
	ctx := context.Background()
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); ss.Close() })
	h := &rawHost{t: t, conn: conn}
	h.request("initialize", map[string]any{
		"protocolVersion": protocol, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "raw-host", "version": "1"},
	})
	if err := conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	return h
}

// request sends one request and returns its result's bytes.
func (h *rawHost) request(method string, params any) json.RawMessage {
	h.t.Helper()
	h.seq++
	id, _ := jsonrpc.MakeID(float64(h.seq))
	p, _ := json.Marshal(params)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.conn.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: p}); err != nil {
		h.t.Fatal(err)
	}
	for {
		msg, err := h.conn.Read(ctx)
		if err != nil {
			h.t.Fatalf("%s: %v", method, err)
		}
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == id {
			if resp.Error != nil {
				h.t.Fatalf("%s: %v", method, resp.Error)
			}
			return resp.Result
		}
	}
}

// TestUseToolResultsPassThroughAsSent calls a server whose results hold a
// field and a content type that no SDK knows: the host gets them, in the
// bytes the server sent, whichever protocol version it speaks.
func TestUseToolResultsPassThroughAsSent(t *testing.T) {
	e := newEnv(t)
	cfg, err := parseConfig(fmt.Sprintf(oneServer, fake("a", fakeserver.EnvExtraField, "1")), e)
	if err != nil {
		t.Fatal(err)
	}
	wb := e.newWorkbench(cfg)
	for _, protocol := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		h := e.rawHost(wb, protocol)
		got := h.request("tools/call", map[string]any{"name": "use_tool", "arguments": use("dev", "a", "echo", map[string]any{"text": "hi"})})
		want := `{"content":[{"type":"text","text":"{\"args\":{\"text\":\"hi\"},\"server\":\"a\"}"},{"type":"x-chart","spec":{"bars":[3,1,2]}}],"structuredContent":{"args":{"text":"hi"},"server":"a"},"x-cost":{"ms":3}}`
		if protocol < "2026-07-28" {
			if string(got) != want {
				t.Errorf("%s: host got\n%s\nwant the server's bytes\n%s", protocol, got, want)
			}
			continue
		}
		// A newer protocol's envelope is kept around the server's result.
		var res map[string]json.RawMessage
		if err := json.Unmarshal(got, &res); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"content", "x-cost", "resultType"} {
			if res[k] == nil {
				t.Errorf("%s: result lacks %q: %s", protocol, k, got)
			}
		}
		if !bytes.Contains(res["content"], []byte(`{"type":"x-chart","spec":{"bars":[3,1,2]}}`)) {
			t.Errorf("%s: content changed: %s", protocol, res["content"])
		}
	}
}
