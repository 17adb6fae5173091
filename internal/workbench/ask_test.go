package workbench

//lint:file-ignore SA1019 roots and sampling are deprecated from 2026-07-28 on, but hosts and servers of the 2025 protocols still use them, and the workbench relays what they use.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askingHost is a host with elicitation, sampling and roots: it answers
// what it is asked, and records the elicitations' messages.
type askingHost struct {
	mu       sync.Mutex
	messages []string
}

func (a *askingHost) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{
			RootsV2:     &mcp.RootCapabilities{ListChanged: true},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a.mu.Lock()
			a.messages = append(a.messages, req.Params.Message)
			a.mu.Unlock()
			if req.Params.Mode == "url" {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "host-model", Content: &mcp.TextContent{Text: "hi from the host"}}, nil
		},
	}
}

func (a *askingHost) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.messages...)
}

// askingWorkbench serves toolbox "dev" of one fake server "a" with the
// tools that ask the client, to a go-sdk host on protocol.
func askingWorkbench(t *testing.T, protocol string, opts *mcp.ClientOptions) (*env, *mcp.Client, *mcp.ClientSession) {
	e := newEnv(t)
	cfg, err := parseConfig(fmt.Sprintf(oneServer, fake("a", fakeserver.EnvAsk, "1")), e)
	if err != nil {
		t.Fatal(err)
	}
	wb := e.newWorkbench(cfg)
	ct, ss := e.serveInMemory(wb)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, opts)
	client.AddRoots(&mcp.Root{URI: "file:///work/project", Name: "project"})
	cs, err := client.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
	})
	return e, client, cs
}

// TestServersAskTheHost: a server behind the workbench asks a host on
// each protocol era for a form, a URL, a sampled message and the roots,
// and gets what the host answered; the host can tell who asks.
func TestServersAskTheHost(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			host := &askingHost{}
			e, client, cs := askingWorkbench(t, protocol, host.options())

			caps, isErr := call(t, cs, "use_tool", use("dev", "a", "client_caps", map[string]any{}))
			if isErr {
				t.Fatalf("client_caps: %s", caps)
			}
			for _, want := range []string{`"elicitation":{"form":{},"url":{}}`, `"sampling":{}`, `"roots":{"listChanged":true}`} {
				if !strings.Contains(caps, want) {
					t.Errorf("the server was told %s; want %s in it", caps, want)
				}
			}

			got, isErr := call(t, cs, "use_tool", use("dev", "a", "ask", map[string]any{"what": "elicit"}))
			if isErr || !strings.Contains(got, `"action":"accept"`) || !strings.Contains(got, `"name":"Ada"`) {
				t.Errorf("elicitation: the server got %s (error %v)", got, isErr)
			}
			if msgs := host.asked(); len(msgs) != 1 || msgs[0] != "[dev/a] Your name?" {
				t.Errorf("the host was asked %q; want the message naming toolbox and server", msgs)
			}

			got, isErr = call(t, cs, "use_tool", use("dev", "a", "ask", map[string]any{"what": "url"}))
			if isErr || !strings.Contains(got, `"action":"accept"`) {
				t.Errorf("url elicitation: the server got %s (error %v)", got, isErr)
			}

			got, isErr = call(t, cs, "use_tool", use("dev", "a", "ask", map[string]any{"what": "sample"}))
			if isErr || !strings.Contains(got, "hi from the host") || !strings.Contains(got, "host-model") {
				t.Errorf("sampling: the server got %s (error %v)", got, isErr)
			}

			got, isErr = call(t, cs, "use_tool", use("dev", "a", "ask", map[string]any{"what": "roots"}))
			if isErr || !strings.Contains(got, "file:///work/project") {
				t.Errorf("roots: the server got %s (error %v)", got, isErr)
			}
			if protocol >= newProtocol {
				return
			}
			// A change of the host's roots reaches the server, and its next
			// question gets the new list.
			client.AddRoots(&mcp.Root{URI: "file:///work/other"})
			waitFor(t, "the server to hear of the roots change", func() bool {
				return len(fakeserver.ReadLines(e.state, fakeserver.RootsChangedFile)) > 0
			})
			got, _ = call(t, cs, "use_tool", use("dev", "a", "ask", map[string]any{"what": "roots"}))
			if !strings.Contains(got, "file:///work/other") {
				t.Errorf("roots after a change: the server got %s", got)
			}
		})
	}
}

// TestAHostWithoutCapabilities: the server is told none, and one that asks
// anyway gets an error at once; the call finishes.
func TestAHostWithoutCapabilities(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			_, _, cs := askingWorkbench(t, protocol, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
			caps, _ := call(t, cs, "use_tool", use("dev", "a", "client_caps", map[string]any{}))
			if caps != "{}" {
				t.Errorf("the server was told %s; want no capabilities", caps)
			}
			// The go-sdk server checks elicitation itself; sampling and
			// roots it sends anyway, and the workbench refuses them.
			for _, what := range []string{"sample", "roots"} {
				got, isErr := call(t, cs, "use_tool", use("dev", "a", "ask", map[string]any{"what": what}))
				if !isErr || !strings.Contains(got, "asking the client") {
					t.Errorf("%s: got %s (error %v); want the server's error", what, got, isErr)
				}
			}
		})
	}
}

// TestAFloodOfRequestsIsBounded: a server asking the host many things at
// once gets some refused; the rest are answered and the call finishes.
func TestAFloodOfRequestsIsBounded(t *testing.T) {
	gate := make(chan struct{})
	var n sync.WaitGroup
	n.Add(8)
	var seen atomic.Int32
	opts := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if seen.Add(1) <= 8 {
			n.Done()
		}
		select { // held until every slot is taken
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	e, _, cs := askingWorkbench(t, "2025-11-25", opts)
	go func() {
		n.Wait()
		// Every slot is taken: wait for a refusal before answering.
		for range 1200 {
			if strings.Contains(e.logs.String(), "asks the host too much at once") {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		close(gate)
	}()
	got, isErr := call(t, cs, "use_tool", use("dev", "a", "ask", map[string]any{"what": "flood", "n": 20}))
	var counts struct{ Answered, Refused int }
	if err := json.Unmarshal([]byte(got), &counts); isErr || err != nil {
		t.Fatalf("flood: %s (error %v)", got, isErr)
	}
	if counts.Answered < 8 || counts.Refused == 0 || counts.Answered+counts.Refused != 20 {
		t.Errorf("flood of 20: %+v; want at least 8 answered (the bound) and the others refused", counts)
	}
}

// TestRequestStateIsChecked: a 2026-07-28 host retries a held call with a
// tampered, a foreign-tool and a replayed requestState: each refused,
// and the good retry completes the call.
func TestRequestStateIsChecked(t *testing.T) {
	e := newEnv(t)
	cfg, err := parseConfig(fmt.Sprintf(oneServer, fake("a", fakeserver.EnvAsk, "1")), e)
	if err != nil {
		t.Fatal(err)
	}
	h := e.lineHost(e.newWorkbench(cfg), "2025-11-25")
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	h.send(useLine("1", "a", "ask", `{"what":"elicit"}`, meta))
	var first struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	r := decodeResponse(t, h.response("1"))
	if err := json.Unmarshal(r.Result, &first); err != nil || first.ResultType != "input_required" || len(first.InputRequests) != 1 || first.RequestState == "" {
		t.Fatalf("want input_required with one request and a state, got %s", r.Result)
	}
	var key string
	for k, v := range first.InputRequests {
		key = k
		if !strings.Contains(string(v), `"method":"elicitation/create"`) || !strings.Contains(string(v), `[dev/a] Your name?`) {
			t.Errorf("input request: %s", v)
		}
	}
	retry := func(id, tool, state, responses string) (string, bool) {
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"dev","server":"a","tool":%q},"arguments":{"what":"elicit"}},"_meta":%s,"inputResponses":%s,"requestState":%q}}`,
			id, tool, meta, responses, state)
		h.send(line)
		return resultText(t, decodeResponse(t, h.response(id)).Result)
	}
	answer := fmt.Sprintf(`{%q:{"action":"accept","content":{"name":"Grace"}}}`, key)
	tampered := first.RequestState[:len(first.RequestState)-2] + "AA"
	if got, isErr := retry("2", "ask", tampered, answer); !isErr || !strings.Contains(got, "not one the workbench gave") {
		t.Errorf("tampered state: %s (error %v)", got, isErr)
	}
	if got, isErr := retry("3", "echo", first.RequestState, answer); !isErr || !strings.Contains(got, "belongs to a call of tool 'ask'") {
		t.Errorf("state of another call: %s (error %v)", got, isErr)
	}
	if got, isErr := retry("4", "ask", first.RequestState, `{"nope":{"action":"accept"}}`); !isErr || !strings.Contains(got, "names no input request") {
		t.Errorf("unknown key: %s (error %v)", got, isErr)
	}
	if got, isErr := retry("5", "ask", first.RequestState, fmt.Sprintf(`{%q:{"action":"accept"}}`, key)); !isErr || !strings.Contains(got, `must have the form's "content"`) {
		t.Errorf("accept without content: %s (error %v)", got, isErr)
	}
	if got, isErr := retry("6", "ask", first.RequestState, answer); isErr || !strings.Contains(got, `"name":"Grace"`) {
		t.Errorf("good retry: %s (error %v)", got, isErr)
	}
	if got, isErr := retry("7", "ask", first.RequestState, answer); !isErr || !strings.Contains(got, "used already") {
		t.Errorf("replayed state: %s (error %v)", got, isErr)
	}
}

// waitFor polls cond, bounded.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 600 {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestURLElicitationRequiredPassesThrough: a server's -32042 answer to a
// call reaches a 2025 host as the JSON-RPC error it is (the pages as the
// server named them, the message naming toolbox and server), and the call
// command's path as a tool error.
func TestURLElicitationRequiredPassesThrough(t *testing.T) {
	e := newEnv(t)
	cfg, err := parseConfig(fmt.Sprintf(oneServer, fake("a", fakeserver.EnvAsk, "1")), e)
	if err != nil {
		t.Fatal(err)
	}
	wb := e.newWorkbench(cfg)
	h := e.lineHost(wb, "2025-11-25")
	h.send(useLine("1", "a", "ask", `{"what":"url_required"}`, ""))
	r := decodeResponse(t, h.response("1"))
	if r.Error == nil || r.Error.Code != -32042 || !strings.HasPrefix(r.Error.Message, "[dev/a] ") {
		t.Fatalf("want the -32042 error naming the server, got %+v %s", r.Error, r.Result)
	}
	var full struct {
		Error struct {
			Data struct {
				Elicitations []struct{ URL, ElicitationID string } `json:"elicitations"`
			} `json:"data"`
		} `json:"error"`
	}
	h.send(useLine("2", "a", "ask", `{"what":"url_required"}`, ""))
	if err := json.Unmarshal(h.response("2"), &full); err != nil || len(full.Error.Data.Elicitations) != 1 ||
		full.Error.Data.Elicitations[0].URL != "https://example.com/pay?order=7" || full.Error.Data.Elicitations[0].ElicitationID != "pay-7" {
		t.Errorf("the pages did not pass as the server sent them: %+v (%v)", full, err)
	}
	res := wb.Use(context.Background(), "dev", "a", "ask", json.RawMessage(`{"what":"url_required"}`), nil)
	if text, isErr := resultText(t, res); !isErr || !strings.Contains(text, "open a page first") || !strings.Contains(text, "https://example.com/pay?order=7") {
		t.Errorf("Use: %s", res)
	}
}

// TestHostErrorsAndCancellationsMapBothWays: a 2025 host answers a
// server's elicitation with an error, which the server gets; then the host
// cancels a use_tool call whose server waits for the host, and the
// workbench cancels its own request to the host.
func TestHostErrorsAndCancellationsMapBothWays(t *testing.T) {
	e := newEnv(t)
	cfg, err := parseConfig(fmt.Sprintf(oneServer, fake("a", fakeserver.EnvAsk, "1")), e)
	if err != nil {
		t.Fatal(err)
	}
	h := e.lineHostWith(e.newWorkbench(cfg), "2025-11-25", `{"elicitation":{"form":{}}}`)
	// The workbench's own request to the host, as the host reads it.
	nextRequest := func(method string) (id json.RawMessage, params json.RawMessage) {
		for {
			select {
			case line := <-h.other:
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
				}
				_ = json.Unmarshal(line, &m)
				if m.Method == method {
					return m.ID, m.Params
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("no %s from the workbench", method)
			}
		}
	}
	h.send(useLine("1", "a", "ask", `{"what":"elicit"}`, ""))
	id, params := nextRequest("elicitation/create")
	if !strings.Contains(string(params), `"message":"[dev/a] Your name?"`) {
		t.Errorf("elicitation params: %s", params)
	}
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"the user closed the dialog"}}`, id))
	got, isErr := resultText(t, decodeResponse(t, h.response("1")).Result)
	if !isErr || !strings.Contains(got, "the user closed the dialog") {
		t.Errorf("the host's error did not reach the server: %s (error %v)", got, isErr)
	}

	h.send(useLine("2", "a", "ask", `{"what":"elicit"}`, ""))
	id, _ = nextRequest("elicitation/create")
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	_, params = nextRequest("notifications/cancelled")
	var c struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &c) != nil || string(c.RequestID) != string(id) {
		t.Errorf("cancelled %s; want the elicitation's id %s", params, id)
	}
	if h.hasResponse("2") {
		t.Error("the cancelled call got a response")
	}
}

// TestA2026HostOutsideACall: a host on 2026-07-28 cannot be asked outside a
// call: roots/list and anything else are refused (a server keeps what it
// was given, as it would with such a host).
func TestA2026HostOutsideACall(t *testing.T) {
	e := newEnv(t)
	cfg, err := parseConfig(fmt.Sprintf(oneServer, fake("a")), e)
	if err != nil {
		t.Fatal(err)
	}
	wb := e.newWorkbench(cfg)
	h := e.lineHost(wb, "2025-11-25")
	h.send(useLine("1", "a", "echo", `{}`, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{},"elicitation":{}}}`))
	h.response("1")
	for _, method := range []string{"roots/list", "elicitation/create"} {
		if _, err := wb.Ask(context.Background(), method, json.RawMessage(`{"message":"hi"}`)); err == nil || !strings.Contains(err.Error(), "only during a call") {
			t.Errorf("%s outside a call: %v; want it refused", method, err)
		}
	}
}
