package workbench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineHost is a host that writes and reads the stdio transport's lines by
// hand: the test sees every byte of every message, and can send what no
// SDK would.
type lineHost struct {
	t *testing.T
	w io.Writer

	mu        sync.Mutex
	waiting   map[string]chan json.RawMessage // by the raw id
	responses map[string]json.RawMessage      // arrived before anyone waited
	other     chan json.RawMessage            // notifications, and errors without an id
}

// lineHost serves wb to a lineHost that has initialized a session.
func (e *env) lineHost(wb *Workbench, protocol string) *lineHost {
	t := e.t
	hostR, wbW := io.Pipe()
	wbR, hostW := io.Pipe()
	ss, err := wb.Connect(context.Background(), wbR, wbW)
	if err != nil {
		t.Fatal(err)
	}
	h := &lineHost{t: t, w: hostW, waiting: map[string]chan json.RawMessage{}, responses: map[string]json.RawMessage{}, other: make(chan json.RawMessage, 1000)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(hostR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			line := json.RawMessage(append([]byte(nil), sc.Bytes()...))
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if err := json.Unmarshal(line, &m); err != nil {
				t.Errorf("the workbench wrote a line that is not JSON: %v\n%.300s", err, line)
				continue
			}
			if m.Method != "" || len(m.ID) == 0 || string(m.ID) == "null" {
				h.other <- line
				continue
			}
			h.mu.Lock()
			if ch := h.waiting[string(m.ID)]; ch != nil {
				delete(h.waiting, string(m.ID))
				ch <- line
			} else {
				h.responses[string(m.ID)] = line
			}
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		hostW.Close()
		ss.Close()
		wbW.Close()
		<-done
	})
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"line-host","version":"1"}}}`, protocol))
	h.response("0")
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h
}

func (h *lineHost) send(line string) {
	if _, err := io.WriteString(h.w, line+"\n"); err != nil {
		h.t.Fatalf("writing to the workbench: %v", err)
	}
}

// response waits for the whole response to id (its raw JSON).
func (h *lineHost) response(id string) json.RawMessage {
	h.mu.Lock()
	if line, ok := h.responses[id]; ok {
		delete(h.responses, id)
		h.mu.Unlock()
		return line
	}
	ch := make(chan json.RawMessage, 1)
	h.waiting[id] = ch
	h.mu.Unlock()
	select {
	case line := <-ch:
		return line
	case <-time.After(60 * time.Second):
		h.t.Fatalf("no response to id %s", id)
		return nil
	}
}

// hasResponse reports whether a response to id arrived without anyone
// waiting for it.
func (h *lineHost) hasResponse(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.responses[id]
	return ok
}

// relayHost serves toolbox "dev" of one fake server "a" (with extra
// FAKE_* env pairs) to a lineHost on a 2025-11-25 session.
func relayHost(t *testing.T, extra ...string) (*env, *lineHost) {
	e := newEnv(t)
	cfg, err := parseConfig(fmt.Sprintf(oneServer, fake("a", extra...)), e)
	if err != nil {
		t.Fatal(err)
	}
	return e, e.lineHost(e.newWorkbench(cfg), "2025-11-25")
}

// useLine is a use_tool request line.
func useLine(id string, server, tool string, args string, meta string) string {
	m := ""
	if meta != "" {
		m = `,"_meta":` + meta
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"dev","server":%q,"tool":%q},"arguments":%s}%s}}`, id, server, tool, args, m)
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeResponse(t *testing.T, line json.RawMessage) rpcResponse {
	t.Helper()
	var r rpcResponse
	if err := json.Unmarshal(line, &r); err != nil || r.JSONRPC != "2.0" {
		t.Fatalf("not a JSON-RPC response: %v\n%.300s", err, line)
	}
	return r
}

// resultText is the text of a tools/call result and whether it is an error.
func resultText(t *testing.T, result json.RawMessage) (string, bool) {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(result, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("not a tools/call result: %v\n%.300s", err, result)
	}
	return res.Content[0].Text, res.IsError
}

// TestRelayAnswersUnderTheHostsID calls with ids of both kinds, and
// checks each response carries the id exactly as the host wrote it, and
// the server's result as the server wrote it.
func TestRelayAnswersUnderTheHostsID(t *testing.T) {
	_, h := relayHost(t)
	for _, id := range []string{`1`, `"1"`, `"call-é-\"quoted\""`, `-7`, `9007199254740993`, `""`} {
		h.send(useLine(id, "a", "echo", `{"text":"hi"}`, ""))
		line := h.response(id)
		want := `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"{\"args\":{\"text\":\"hi\"},\"server\":\"a\"}"}],"structuredContent":{"args":{"text":"hi"},"server":"a"}}}`
		if string(line) != want {
			t.Errorf("id %s: got\n%s\nwant\n%s", id, line, want)
		}
	}
}

// TestRelayRoutesConcurrentCalls keeps 32 calls in flight on one server,
// several times over: every answer reaches the call it belongs to.
func TestRelayRoutesConcurrentCalls(t *testing.T) {
	_, h := relayHost(t)
	h.send(useLine("0.5", "a", "echo", `{}`, "")) // opens the toolbox
	h.response("0.5")
	for round := range 5 {
		var wg sync.WaitGroup
		for i := range 32 {
			id := fmt.Sprintf(`"r%d-%d"`, round, i)
			if i%2 == 0 {
				id = fmt.Sprint(1000*round + i + 1)
			}
			text := fmt.Sprintf("call %d of round %d", i, round)
			h.send(useLine(id, "a", "echo", fmt.Sprintf(`{"text":%q}`, text), ""))
			wg.Go(func() {
				r := decodeResponse(t, h.response(id))
				got, isErr := resultText(t, r.Result)
				if isErr || !strings.Contains(got, text+`"`) {
					t.Errorf("id %s got %q, want the echo of %q", id, got, text)
				}
			})
		}
		wg.Wait()
	}
}

// TestRelayCancellationFromTheHost cancels a call: the server is told, and
// the host gets no response to it, as the MCP spec asks.
func TestRelayCancellationFromTheHost(t *testing.T) {
	e, h := relayHost(t)
	h.send(useLine(`"open"`, "a", "echo", `{}`, ""))
	h.response(`"open"`)
	h.send(useLine(`"slow"`, "a", "sleep", `{"ms":30000}`, ""))
	fakeserver.Eventually(t, "the call to reach the server", func() bool { return has(e.lines(fakeserver.CallsFile), "sleep") })
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"the user changed their mind"}}`)
	fakeserver.Eventually(t, "the server to see the cancellation", func() bool { return has(e.lines(fakeserver.CancelsFile), "sleep") })
	// Calls after it work, and their answers come after whatever the
	// cancelled call would have had.
	h.send(useLine(`"after"`, "a", "echo", `{}`, ""))
	h.response(`"after"`)
	if h.hasResponse(`"slow"`) {
		t.Error("the host got a response to the call it cancelled")
	}
}

// TestRelayCancellationNamesTheIDAnyWay: a cancellation names the call by
// its id's value, however it is spelled (here a string with an escape, and
// a number written as a decimal).
func TestRelayCancellationNamesTheIDAnyWay(t *testing.T) {
	e, h := relayHost(t)
	h.send(useLine(`"open"`, "a", "echo", `{}`, ""))
	h.response(`"open"`)
	h.send(useLine(`"slow"`, "a", "sleep", `{"ms":30000}`, ""))
	h.send(useLine(`12`, "a", "sleep", `{"ms":30000}`, ""))
	fakeserver.Eventually(t, "the calls to reach the server", func() bool { return count(e.lines(fakeserver.CallsFile), "sleep") == 2 })
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sl\u006fw"}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12.0}}`)
	fakeserver.Eventually(t, "the server to see both cancellations", func() bool { return count(e.lines(fakeserver.CancelsFile), "sleep") == 2 })
	h.send(useLine(`"after"`, "a", "echo", `{}`, ""))
	h.response(`"after"`)
	if h.hasResponse(`"slow"`) || h.hasResponse(`12`) {
		t.Error("the host got a response to a call it cancelled")
	}
}

// TestRelayTimeoutAndCrash: a call that outlives requestTimeoutMs, and a
// server that dies under a call, end as tool errors in the same words as
// the workbench always used; the server is told of the timeout.
func TestRelayTimeoutAndCrash(t *testing.T) {
	e := newEnv(t)
	// Only a has the short requestTimeoutMs, which its sleep must miss; b
	// keeps the default, so that its crash and the call after it are not
	// raced by that timeout on a slow machine.
	entry := strings.Replace(fake("a"), `"maxRetries": 0`, `"maxRetries": 0, "requestTimeoutMs": 300`, 1)
	cfg, err := parseConfig(`{"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": `+entry+`, "b": `+fake("b")+`}}}}`, e)
	if err != nil {
		t.Fatal(err)
	}
	h := e.lineHost(e.newWorkbench(cfg), "2025-11-25")
	h.send(useLine(`1`, "a", "sleep", `{"ms":30000}`, ""))
	text, isErr := resultText(t, decodeResponse(t, h.response(`1`)).Result)
	if want := "Error executing tool 'sleep' in server 'a' (toolbox 'dev'): no response within 300ms (requestTimeoutMs); the call was cancelled"; !isErr || text != want {
		t.Errorf("timeout: got %q (isError %v), want %q", text, isErr, want)
	}
	fakeserver.Eventually(t, "the server to see the cancellation", func() bool { return has(e.lines(fakeserver.CancelsFile), "sleep") })

	h.send(useLine(`2`, "b", "crash", `{}`, ""))
	text, isErr = resultText(t, decodeResponse(t, h.response(`2`)).Result)
	if want := "Error executing tool 'crash' in server 'b' (toolbox 'dev'): server process exited with exit status 3"; !isErr || text != want {
		t.Errorf("crash: got %q (isError %v), want %q", text, isErr, want)
	}
	// The next call starts the server again.
	h.send(useLine(`3`, "b", "echo", `{}`, ""))
	if text, isErr := resultText(t, decodeResponse(t, h.response(`3`)).Result); isErr {
		t.Errorf("after the crash: %s", text)
	}
}

// TestRelayIgnoresAnswersToUnknownIDs: a server that answers ids nobody
// asked for — of the relay's form and of the SDK's — disturbs nothing.
func TestRelayIgnoresAnswersToUnknownIDs(t *testing.T) {
	e, h := relayHost(t, fakeserver.EnvStrayIDs, "1")
	for i := range 5 {
		id := fmt.Sprint(i + 1)
		h.send(useLine(id, "a", "echo", fmt.Sprintf(`{"text":"n%d"}`, i), ""))
		text, isErr := resultText(t, decodeResponse(t, h.response(id)).Result)
		if isErr || !strings.Contains(text, fmt.Sprintf(`"n%d"`, i)) {
			t.Errorf("call %d got %q", i, text)
		}
	}
	if e.starts() != 1 {
		t.Errorf("the server was started %d times; stray answers must not end its session", e.starts())
	}
}

// TestRelayPassesLargeResults: an 8 MiB result reaches the host whole.
func TestRelayPassesLargeResults(t *testing.T) {
	_, h := relayHost(t)
	const size = 8 << 20
	h.send(useLine(`1`, "a", "big", fmt.Sprintf(`{"bytes":%d}`, size), ""))
	text, isErr := resultText(t, decodeResponse(t, h.response(`1`)).Result)
	if isErr || len(text) != size || strings.Trim(text, "x") != "" {
		t.Errorf("got %d bytes (isError %v), want %d x's", len(text), isErr, size)
	}
}

// TestRelayProgressUnderTheHostsToken: progress reaches the host under
// the token it chose, number or string, with the server's values.
func TestRelayProgressUnderTheHostsToken(t *testing.T) {
	_, h := relayHost(t)
	for _, tok := range []string{`"tok-1"`, `42`} {
		h.send(useLine(`"p"`, "a", "progress", `{"steps":3,"delayMs":10}`, `{"progressToken":`+tok+`}`))
		h.response(`"p"`)
		// The server's last notification races its result; the first two
		// come before it.
		for step := 1; step <= 2; step++ {
			select {
			case line := <-h.other:
				want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":3,"message":"step %d"}}`, tok, step, step)
				if string(line) != want {
					t.Errorf("got\n%s\nwant\n%s", line, want)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("token %s: no progress notification %d", tok, step)
			}
		}
		for len(h.other) > 0 { // the last one, if it came
			<-h.other
		}
	}
}

// TestBadLinesGetErrorsAndTheSessionGoesOn sends what is not a JSON-RPC
// message: each gets a JSON-RPC error, logged, and the session goes on.
func TestBadLinesGetErrorsAndTheSessionGoesOn(t *testing.T) {
	e, h := relayHost(t)
	for _, c := range []struct {
		line string
		code int
		id   string
	}{
		{`this is not JSON`, -32700, "null"},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{`, -32700, "null"},
		{`[{"jsonrpc":"2.0","id":6,"method":"ping"}]`, -32600, "null"},
		{`"a string"`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":7}`, -32600, "7"},
		{`{"id":8,"method":"ping"}`, -32600, "8"},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, -32600, "null"},
	} {
		h.send(c.line)
		var line json.RawMessage
		if c.id == "null" {
			select {
			case line = <-h.other:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: no error response", c.line)
			}
		} else {
			line = h.response(c.id)
		}
		r := decodeResponse(t, line)
		if r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id {
			t.Errorf("%s: got %s, want error %d with id %s", c.line, line, c.code, c.id)
		}
	}
	h.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	if r := decodeResponse(t, h.response(`"ping"`)); r.Error != nil {
		t.Errorf("ping after bad lines: %+v", r.Error)
	}
	h.send(useLine(`"use"`, "a", "echo", `{}`, ""))
	if text, isErr := resultText(t, decodeResponse(t, h.response(`"use"`)).Result); isErr {
		t.Errorf("use_tool after bad lines: %s", text)
	}
	if n := strings.Count(e.logs.String(), "level=ERROR msg=\"the host sent a message that is not valid JSON-RPC"); n != 8 {
		t.Errorf("%d bad lines logged at error level, want 8", n)
	}
}

// TestRefreshAsksTheServer: open_toolbox with refresh lists the tools of a
// running server again, even right after the start that listed them.
func TestRefreshAsksTheServer(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(fmt.Sprintf(oneServer, fake("a")))
	call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev"})
	if n := len(e.lines(fakeserver.ListsFile)); n != 1 {
		t.Fatalf("the start listed the tools %d times", n)
	}
	call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev", "refresh": true})
	if n := len(e.lines(fakeserver.ListsFile)); n != 2 {
		t.Errorf("after refresh the server was asked for its tools %d times in all, want 2", n)
	}
}

// TestFirstUseOfAFailingToolboxTriesOnce: use_tool on a toolbox never
// opened opens it, which tries its failing server 1+maxRetries times; the
// call does not try it all over again.
func TestFirstUseOfAFailingToolboxTriesOnce(t *testing.T) {
	e := newEnv(t)
	entry := strings.Replace(fake("a", fakeserver.EnvExitAtStart, "4"), `"maxRetries": 0`, `"maxRetries": 2`, 1)
	_, cs := e.workbench(fmt.Sprintf(oneServer, entry))
	text, isErr := call(t, cs, "use_tool", use("dev", "a", "echo", nil))
	if !isErr || !strings.Contains(text, "could not start (3 attempts)") {
		t.Errorf("got %q (isError %v)", text, isErr)
	}
	if n := e.starts(); n != 3 {
		t.Errorf("the server was started %d times, want 3 (1 + maxRetries)", n)
	}
	if n := strings.Count(e.logs.String(), `msg="could not start"`); n != 1 {
		t.Errorf("the failure was logged %d times, want once", n)
	}
}

// TestFirstUseWaitsOnlyForItsServer: the first use_tool of a toolbox
// opens it, and waits for the server it calls, not for another server of
// the toolbox that hangs at start.
func TestFirstUseWaitsOnlyForItsServer(t *testing.T) {
	e := newEnv(t)
	hang := strings.Replace(fake("b", fakeserver.EnvHangInit, "1"), `"maxRetries": 0`, `"maxRetries": 0, "connectionTimeoutMs": 600000`, 1)
	_, cs := e.workbench(fmt.Sprintf(`{"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": %s, "b": %s}}}}`, fake("a"), hang))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "use_tool", Arguments: use("dev", "a", "echo", map[string]any{"text": "hi"})})
	if err != nil || res.IsError {
		t.Fatalf("the first use of a toolbox with a server that hangs: %v %+v", err, res)
	}
}

// TestInputErrorsSpeakJSON: mistakes in the two tools' own input are tool
// errors that say what JSON was expected, never a Go type.
func TestInputErrorsSpeakJSON(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(fmt.Sprintf(oneServer, fake("a")))
	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{"open_toolbox", map[string]any{"toolbox_name": 5}, `open_toolbox: "toolbox_name" must be a string`},
		{"open_toolbox", map[string]any{"toolbox_name": "dev", "refresh": "yes"}, `"refresh" must be true or false`},
		{"open_toolbox", []int{1}, `open_toolbox takes {"toolbox_name": "<name>"`},
		{"use_tool", map[string]any{"tool": "dev/a/echo"}, `use_tool: "tool" must be an object`},
		{"use_tool", map[string]any{"tool": map[string]any{"toolbox": "dev", "server": 1, "tool": "echo"}}, `use_tool: "tool" must be an object`},
		{"use_tool", map[string]any{"tool": map[string]any{"toolbox": "dev", "server": "a"}}, "the tool identifier needs a non-empty tool"},
		{"use_tool", map[string]any{"tool": map[string]any{"toolbox": "dev", "server": "a", "tool": "echo"}, "arguments": []int{1}}, `Cannot call tool 'echo' in server 'a' (toolbox 'dev'): "arguments" must be a JSON object`},
	} {
		text, isErr := call(t, cs, c.tool, c.args)
		if !isErr || !strings.Contains(text, c.want) || strings.Contains(text, "Go ") || strings.Contains(text, "unmarshal") {
			t.Errorf("%s %v: got %q (isError %v), want it to contain %q and no Go types", c.tool, c.args, text, isErr, c.want)
		}
	}
}

// TestServerErrorsSpeakJSON: a server whose tools/list result has the
// wrong shape is reported in JSON terms, never with the Go types the SDK
// decoded it into.
func TestServerErrorsSpeakJSON(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(fmt.Sprintf(oneServer, fake("a", fakeserver.EnvBadList, "1")))
	text, isErr := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev"})
	if !isErr || !strings.Contains(text, `expected an array at "tools", got an object`) || strings.Contains(text, "Go ") || strings.Contains(text, "mcp.") {
		t.Errorf("open of a server with a malformed tools/list: %q", text)
	}
}

// TestArgumentsTooDeep: arguments nested deeper than the workbench
// decodes are refused at once, naming the limit, and the session goes on.
func TestArgumentsTooDeep(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(fmt.Sprintf(oneServer, fake("a")))
	const n = 5000 // below the host's JSON encoder's own limit
	var deep any = "bottom"
	for range n {
		deep = []any{deep}
	}
	text, isErr := call(t, cs, "use_tool", use("dev", "a", "echo", map[string]any{"text": deep}))
	if !isErr || !strings.Contains(text, "deeper than 1000 levels") {
		t.Errorf("arguments %d levels deep: %.300s", n, text)
	}
	if text, isErr := call(t, cs, "use_tool", use("dev", "a", "echo", map[string]any{"text": "hi"})); isErr {
		t.Errorf("a call after: %s", text)
	}
}

// TestToolsCallParamsSpeakJSON: a tools/call whose params are not what MCP
// asks gets -32602 in JSON terms, never Go's types.
func TestToolsCallParamsSpeakJSON(t *testing.T) {
	_, h := relayHost(t)
	for id, params := range map[string]string{
		"1": `"use_tool"`,
		"2": `{"name":5}`,
		"3": `{"name":"use_tool","_meta":[]}`,
	} {
		h.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`)
		line := h.response(id)
		r := decodeResponse(t, line)
		if id == "3" { // a malformed _meta is served without it
			if r.Error != nil {
				t.Errorf("params %s: %s", params, line)
			}
			continue
		}
		if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "expected") || strings.Contains(string(line), "Go ") {
			t.Errorf("params %s: got %s, want -32602 in JSON terms", params, line)
		}
	}
}

// TestRelayRefusesAnIDInUse: a host that reuses the id of a call still in
// flight gets an error for the second request, and the first call its
// answer.
func TestRelayRefusesAnIDInUse(t *testing.T) {
	// The sleep ends when the test opens its gate, after the second
	// request was answered: the id is in use then, whatever the speed.
	gate := filepath.Join(t.TempDir(), "gate")
	e, h := relayHost(t, fakeserver.EnvSleepGate, gate)
	h.send(useLine(`"open"`, "a", "echo", `{}`, ""))
	h.response(`"open"`)
	h.send(useLine(`"dup"`, "a", "sleep", `{"ms":1}`, ""))
	fakeserver.Eventually(t, "the call to reach the server", func() bool { return has(e.lines(fakeserver.CallsFile), "sleep") })
	h.send(useLine(`"dup"`, "a", "echo", `{}`, ""))
	if r := decodeResponse(t, h.response(`"dup"`)); r.Error == nil || r.Error.Code != -32600 {
		t.Errorf("the second request with an id in use got %+v, want a -32600 error", r)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := decodeResponse(t, h.response(`"dup"`))
	if text, isErr := resultText(t, r.Result); isErr || text != "slept 1ms" {
		t.Errorf("the first call got %q (isError %v)", text, isErr)
	}
}

// TestRelayCancelWithAnIDIsARequest: notifications/cancelled sent with an
// id is a request, which JSON-RPC answers, here with the SDK's -32600, and
// which cancels nothing: the call it names goes on to its answer.
func TestRelayCancelWithAnIDIsARequest(t *testing.T) {
	// The sleep ends when the test opens its gate, after the request was
	// answered: the call is still in flight when it comes.
	gate := filepath.Join(t.TempDir(), "gate")
	e, h := relayHost(t, fakeserver.EnvSleepGate, gate)
	h.send(useLine(`"open"`, "a", "echo", `{}`, ""))
	h.response(`"open"`)
	h.send(useLine(`"slow"`, "a", "sleep", `{"ms":1}`, ""))
	fakeserver.Eventually(t, "the call to reach the server", func() bool { return has(e.lines(fakeserver.CallsFile), "sleep") })
	h.send(`{"jsonrpc":"2.0","id":"c","method":"notifications/cancelled","params":{"requestId":"slow"}}`)
	if r := decodeResponse(t, h.response(`"c"`)); r.Error == nil || r.Error.Code != -32600 {
		t.Errorf("notifications/cancelled with an id got %+v, want a -32600 error", r)
	}
	if has(e.lines(fakeserver.CancelsFile), "sleep") {
		t.Error("the request named like a cancellation cancelled the call")
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if text, isErr := resultText(t, decodeResponse(t, h.response(`"slow"`)).Result); isErr || text != "slept 1ms" {
		t.Errorf("the call named by the request got %q (isError %v), want its answer", text, isErr)
	}
}
