package front

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// raw2026 is a host of the 2026-07-28 protocol written by hand: each call
// a POST of its own, the answers to a held call's questions written as
// the test gives them, byte for byte.
type raw2026 struct {
	t    *testing.T
	url  string
	meta string // the requests' _meta
	id   int
}

func newRaw2026(t *testing.T, url, clientName, caps string) *raw2026 {
	return &raw2026{t: t, url: url, meta: fmt.Sprintf(`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s,"io.modelcontextprotocol/clientInfo":{"name":%q,"version":"1"}}`, caps, clientName)}
}

// use calls use_tool; state and responses, when set, make it a retry. It
// returns the call's result.
func (h *raw2026) use(server, tool, args, state, responses string) map[string]any {
	h.t.Helper()
	h.id++
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"use_tool",%s,"arguments":{"tool":{"toolbox":"dev","server":%q,"tool":%q},"arguments":%s}`, h.id, h.meta, server, tool, args)
	if state != "" {
		body += fmt.Sprintf(`,"requestState":%q,"inputResponses":%s`, state, responses)
	}
	body += "}}"
	code, out, _ := do(h.t, http.MethodPost, h.url, mcpHeaders("MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "use_tool"), body)
	if i := strings.Index(out, "data: "); i >= 0 { // an event stream of one response
		out = strings.TrimSpace(out[i+len("data: "):])
	}
	var resp struct {
		Result map[string]any `json:"result"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(out), &resp) != nil || resp.Result == nil {
		h.t.Fatalf("use_tool %s: %d %s", tool, code, out)
	}
	return resp.Result
}

// resultText is a tool result's text and whether it is an error.
func resultText(res map[string]any) (string, bool) {
	var b strings.Builder
	content, _ := res["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			s, _ := m["text"].(string)
			b.WriteString(s)
		}
	}
	isErr, _ := res["isError"].(bool)
	return b.String(), isErr
}

// heldState is the requestState of an input_required result, and the
// method its one input request asks.
func heldState(t *testing.T, res map[string]any) (state, method string) {
	t.Helper()
	reqs, _ := res["inputRequests"].(map[string]any)
	r1, _ := reqs["r1"].(map[string]any)
	state, _ = res["requestState"].(string)
	method, _ = r1["method"].(string)
	if res["resultType"] != "input_required" || state == "" || len(reqs) != 1 {
		t.Fatalf("want input_required with one input request: %v", res)
	}
	return state, method
}

const askEcho = `{"permissions": {"tools": {"echo": "ask"}}, "toolboxes": {"dev": {"description": "Development tools", "mcpServers": {"a": FAKE_A}}}}`

// TestHTTPPermissionAcceptWithEmptyContent: a 2026-07-28 host's accept of
// the permission form with "content": {} (the form's one field left at
// its default) lets the call go on, as it does from a 2025 host.
func TestHTTPPermissionAcceptWithEmptyContent(t *testing.T) {
	e := serveHTTPFor(t, askEcho, HTTPOptions{})
	h := newRaw2026(t, e.url, "host-a", `{"elicitation":{"form":{}}}`)
	args := `{"message":"hello"}`
	state, method := heldState(t, h.use("a", "echo", args, "", ""))
	if method != "elicitation/create" {
		t.Fatalf("asked %s, want the permission form", method)
	}
	text, isErr := resultText(h.use("a", "echo", args, state, `{"r1":{"action":"accept","content":{}}}`))
	if isErr || !strings.Contains(text, "hello") {
		t.Errorf("the accepted call: %s (error %v); want the echo", text, isErr)
	}
}

// TestHTTPSamplingAnswerWithoutModel: MCP's CreateMessageResult requires
// "model"; a 2026-07-28 host's sampling answer without one is refused as
// not valid, naming the field, as over stdio, and never reaches the
// server as "model": "". With one, it does.
func TestHTTPSamplingAnswerWithoutModel(t *testing.T) {
	e := serveHTTPFor(t, oneToolbox, HTTPOptions{})
	h := newRaw2026(t, e.url, "host-a", `{"sampling":{}}`)
	args := `{"what":"sample"}`
	state, method := heldState(t, h.use("a", "ask", args, "", ""))
	if method != "sampling/createMessage" {
		t.Fatalf("asked %s, want sampling", method)
	}
	text, isErr := resultText(h.use("a", "ask", args, state, `{"r1":{"role":"assistant","content":{"type":"text","text":"hi"}}}`))
	if !isErr || !strings.Contains(text, `the answer under 'r1' to sampling/createMessage is not valid: it has no "model"`) {
		t.Errorf("an answer without model: %s (error %v); want it refused, naming \"model\"", text, isErr)
	}
	// The held call still waits for a good answer, under the same state.
	text, isErr = resultText(h.use("a", "ask", args, state, `{"r1":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m-1"}}`))
	if isErr || !strings.Contains(text, `"model":"m-1"`) {
		t.Errorf("an answer with model: %s (error %v)", text, isErr)
	}
}

// TestHTTPSessionGrantStaysWithItsClient: the 2026-07-28 requests of one
// user share a workbench, but "allow for the rest of the session" is
// kept for the client that accepted it: host A allows the tool for its
// session and is not asked again; host B (another client, the same user,
// no elicitation) is asked, and, unable to answer, refused; a host whose
// requests name no client keeps no grant.
func TestHTTPSessionGrantStaysWithItsClient(t *testing.T) {
	e := serveHTTPFor(t, askEcho, HTTPOptions{})
	a := newRaw2026(t, e.url, "host-a", `{"elicitation":{"form":{}}}`)
	args := `{"message":"hello"}`
	state, _ := heldState(t, a.use("a", "echo", args, "", ""))
	if text, isErr := resultText(a.use("a", "echo", args, state, `{"r1":{"action":"accept","content":{"allowForSession":true}}}`)); isErr {
		t.Fatalf("host A's accepted call: %s", text)
	}
	if text, isErr := resultText(a.use("a", "echo", args, "", "")); isErr || !strings.Contains(text, "hello") {
		t.Fatalf("host A, allowed for its session: %s (error %v); want the echo, unasked", text, isErr)
	}
	b := newRaw2026(t, e.url, "host-b", `{}`)
	if text, isErr := resultText(b.use("a", "echo", args, "", "")); !isErr || !strings.Contains(text, "the host cannot ask") {
		t.Errorf("host B: %s (error %v); want it asked, and refused: it cannot answer", text, isErr)
	}
	// A host that names no client: its grant is for the call alone.
	anon := &raw2026{t: t, url: e.url, meta: `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`}
	state, _ = heldState(t, anon.use("a", "echo", args, "", ""))
	if text, isErr := resultText(anon.use("a", "echo", args, state, `{"r1":{"action":"accept","content":{"allowForSession":true}}}`)); isErr {
		t.Fatalf("the unnamed host's accepted call: %s", text)
	}
	heldState(t, anon.use("a", "echo", args, "", "")) // asked again
}
