package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/permissions"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// permTools are the tools of the permission tests' fake servers: one of
// each kind of annotations.
const permTools = `{"tools": [
  {"name": "delete_item", "description": "Deletes an item.", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": true}},
  {"name": "drop_table", "description": "Drops a table.", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": true}},
  {"name": "read_item", "description": "Reads an item.", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
  {"name": "create_item", "description": "Creates an item.", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": false, "openWorldHint": false}},
  {"name": "plain", "description": "Says nothing of itself.", "inputSchema": {"type": "object"}}
]}`

// permFake is the JSON of a fake server named name offering permTools,
// with the "permissions" object perms ("" for none).
func permFake(t *testing.T, name, perms string, extra ...string) string {
	file := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(file, []byte(permTools), 0o600); err != nil {
		t.Fatal(err)
	}
	s := fake(name, append([]string{fakeserver.EnvToolsFile, file}, extra...)...)
	if perms != "" {
		s = strings.TrimSuffix(s, "}") + `, "permissions": ` + perms + `}`
	}
	return s
}

// calls counts the calls the fake servers got of tool.
func (e *env) calls(tool string) int {
	n := 0
	for _, l := range fakeserver.ReadLines(e.state, fakeserver.CallsFile) {
		if l == tool {
			n++
		}
	}
	return n
}

// permHost is a host with elicitation that answers the permission
// questions as told, and records them.
type permHost struct {
	mu       sync.Mutex
	answer   *mcp.ElicitResult
	messages []string
}

func (h *permHost) set(action string, content map[string]any) {
	h.mu.Lock()
	h.answer = &mcp.ElicitResult{Action: action, Content: content}
	h.mu.Unlock()
}

func (h *permHost) asked() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.messages)
}

func (h *permHost) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.messages = append(h.messages, req.Params.Message)
			return h.answer, nil
		},
	}
}

// permSession connects a go-sdk host on protocol to a workbench of cfgText.
func (e *env) permSession(cfgText, protocol string, opts *mcp.ClientOptions) (*Workbench, *mcp.ClientSession) {
	t := e.t
	cfg, err := parseConfig(cfgText, e)
	if err != nil {
		t.Fatalf("config: %v\n%s", err, cfgText)
	}
	wb := e.newWorkbench(cfg)
	ct, ss := e.serveInMemory(wb)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, opts).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
	})
	return wb, cs
}

// TestPermissionAsksTheHost: under annotation defaults (destructive: ask,
// read-only: allow), a host on each protocol era with elicitation is asked
// before a destructive tool runs; a decline never calls the server, an
// accept calls it once, "allow for this session" stops the questions for
// that tool only.
func TestPermissionAsksTheHost(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			e := newEnv(t)
			host := &permHost{}
			cfg := fmt.Sprintf(`{"permissions": {"annotations": {"destructiveHint": "ask", "readOnlyHint": "allow"}},
				"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": %s}}}}`, permFake(t, "a", ""))
			_, cs := e.permSession(cfg, protocol, host.options())

			if got, isErr := call(t, cs, "use_tool", use("dev", "a", "read_item", nil)); isErr || e.calls("read_item") != 1 || len(host.asked()) != 0 {
				t.Fatalf("read-only tool: %s (error %v), %d calls, asked %q; want it called without a question", got, isErr, e.calls("read_item"), host.asked())
			}

			host.set("decline", nil)
			got, isErr := call(t, cs, "use_tool", use("dev", "a", "delete_item", map[string]any{"id": 7}))
			if !isErr || !strings.Contains(got, "the user declined") || e.calls("delete_item") != 0 {
				t.Errorf("declined: %s (error %v), %d calls; want a tool error and no call", got, isErr, e.calls("delete_item"))
			}
			asked := host.asked()
			if len(asked) != 1 {
				t.Fatalf("asked %d times, want once: %q", len(asked), asked)
			}
			for _, want := range []string{"'delete_item'", "'a'", "'dev'", `{"id":7}`, "destructiveHint", "permissions.annotations.destructiveHint"} {
				if !strings.Contains(asked[0], want) {
					t.Errorf("the question %q does not name %s", asked[0], want)
				}
			}

			host.set("accept", map[string]any{"allowForSession": false})
			if got, isErr := call(t, cs, "use_tool", use("dev", "a", "delete_item", map[string]any{"id": 8})); isErr || e.calls("delete_item") != 1 {
				t.Errorf("accepted: %s (error %v), %d calls; want the server called once", got, isErr, e.calls("delete_item"))
			}
			if got, isErr := call(t, cs, "use_tool", use("dev", "a", "delete_item", nil)); isErr || e.calls("delete_item") != 2 || len(host.asked()) != 3 {
				t.Errorf("accepted again: %s (error %v), %d calls, asked %d times; an accept of one call asks again next time", got, isErr, e.calls("delete_item"), len(host.asked()))
			}

			host.set("accept", map[string]any{"allowForSession": true})
			call(t, cs, "use_tool", use("dev", "a", "delete_item", nil))
			host.set("decline", nil) // a question now would refuse
			for range 2 {
				if got, isErr := call(t, cs, "use_tool", use("dev", "a", "delete_item", nil)); isErr {
					t.Errorf("allowed for the session: %s", got)
				}
			}
			if n, c := len(host.asked()), e.calls("delete_item"); n != 4 || c != 5 {
				t.Errorf("after allowing for the session: asked %d times (want 4), %d calls (want 5)", n, c)
			}
			// Another destructive tool is still asked about.
			if got, isErr := call(t, cs, "use_tool", use("dev", "a", "drop_table", nil)); !isErr || !strings.Contains(got, "declined") || e.calls("drop_table") != 0 || len(host.asked()) != 5 {
				t.Errorf("another tool after allowing one for the session: %s (error %v), asked %d", got, isErr, len(host.asked()))
			}
			if !strings.Contains(e.logs.String(), `msg="permission answer" toolbox=dev server=a tool=delete_item decision=allow who=user why="accepted, for the rest of the session"`) {
				t.Errorf("no record of the answer in the log:\n%s", e.logs)
			}
		})
	}
}

// TestPermissionHostWithoutForms: a host that cannot show a form gets the
// call refused, with what to do, and the server is never called.
func TestPermissionHostWithoutForms(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			e := newEnv(t)
			cfg := fmt.Sprintf(`{"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": %s}}}}`, permFake(t, "a", `{"tools": {"delete_*": "ask"}}`))
			_, cs := e.permSession(cfg, protocol, nil)
			got, isErr := call(t, cs, "use_tool", use("dev", "a", "delete_item", nil))
			for _, want := range []string{"asks the user before this tool runs", `the rule "delete_*" at toolboxes.dev.mcpServers.a.permissions.tools.delete_*`, "does not support elicitation", `"allow"`} {
				if !isErr || !strings.Contains(got, want) {
					t.Errorf("%s (error %v)\nlacks %q", got, isErr, want)
				}
			}
			if e.calls("delete_item") != 0 || e.starts() != 0 {
				t.Errorf("the server was called (%d) or started (%d)", e.calls("delete_item"), e.starts())
			}
		})
	}
}

// TestPermissionRules: deny, allow and annotation defaults, the most
// specific rule winning, per toolbox and per server.
func TestPermissionRules(t *testing.T) {
	e := newEnv(t)
	cfg := fmt.Sprintf(`{
	  "permissions": {"tools": {"*/drop_*": "deny", "b/read_item": "deny"}, "annotations": {"destructiveHint": "deny", "readOnlyHint": "allow"}},
	  "toolboxes": {
	    "dev": {"description": "d", "permissions": {"tools": {"a/drop_table": "allow"}, "default": "deny"},
	            "mcpServers": {"a": %s, "b": %s}},
	    "ops": {"description": "o", "mcpServers": {"a": %s}}}}`,
		permFake(t, "a", `{"tools": {"create_*": "deny"}, "annotations": {"destructiveHint": "allow"}}`),
		permFake(t, "b", ""),
		permFake(t, "a", `{"default": "allow"}`))
	_, cs := e.workbench(cfg)
	for _, tt := range []struct {
		toolbox, server, tool string
		allowed               bool
		why                   string
	}{
		// dev/a: its own rules first, then the toolbox's, the top's, then
		// annotations (its destructiveHint "allow" beats the top's "deny").
		{"dev", "a", "create_item", false, `the rule "create_*" at toolboxes.dev.mcpServers.a.permissions.tools.create_*`},
		{"dev", "a", "drop_table", true, ""}, // the toolbox's rule beats the top's */drop_*
		{"dev", "a", "delete_item", true, ""},
		{"dev", "a", "read_item", true, ""},
		{"dev", "a", "plain", true, ""}, // destructive by MCP's defaults
		// dev/b: the top's rule naming it; the top's annotations; the toolbox's default.
		{"dev", "b", "read_item", false, `the rule "b/read_item" at permissions.tools.b/read_item`},
		{"dev", "b", "drop_table", false, `the rule "*/drop_*" at permissions.tools.*/drop_*`},
		{"dev", "b", "delete_item", false, `the tool's destructiveHint, given "deny" at permissions.annotations.destructiveHint`},
		{"dev", "b", "create_item", false, `the default "deny" at toolboxes.dev.permissions.default`},
		// ops/a: another toolbox's server of the same name has its own rules.
		{"ops", "a", "create_item", true, ""},
		{"ops", "a", "drop_table", false, `the rule "*/drop_*"`},
		{"ops", "a", "read_item", true, ""},
		{"ops", "a", "delete_item", false, "the tool's destructiveHint"},
	} {
		before := e.calls(tt.tool)
		got, isErr := call(t, cs, "use_tool", use(tt.toolbox, tt.server, tt.tool, nil))
		after := e.calls(tt.tool)
		if tt.allowed {
			if isErr || after != before+1 {
				t.Errorf("%s/%s/%s: %s (error %v); want it called", tt.toolbox, tt.server, tt.tool, got, isErr)
			}
			continue
		}
		if !isErr || !strings.Contains(got, "configuration denies this tool ("+tt.why) || after != before {
			t.Errorf("%s/%s/%s: %s (error %v), calls %d→%d\nwant it denied by %s", tt.toolbox, tt.server, tt.tool, got, isErr, before, after, tt.why)
		}
	}
	if !strings.Contains(e.logs.String(), `msg="permission denial" toolbox=dev server=b tool=read_item decision=deny who=rule`) {
		t.Errorf("no record of a denial in the log:\n%s", e.logs)
	}
}

// TestPermissionDenyByNameStartsNothing: a rule naming a tool decides
// before the server starts.
func TestPermissionDenyByNameStartsNothing(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(fmt.Sprintf(oneServer, permFake(t, "a", `{"tools": {"delete_item": "deny"}}`)))
	if got, isErr := call(t, cs, "use_tool", use("dev", "a", "delete_item", nil)); !isErr || !strings.Contains(got, "denies") {
		t.Errorf("%s (error %v)", got, isErr)
	}
	if e.starts() != 0 {
		t.Errorf("%d starts; a denial by name needs no server", e.starts())
	}
}

// TestPermissionQuestionHidesSecrets: the question shows the arguments
// cut, never a secret-looking argument nor a value of the server's env.
func TestPermissionQuestionHidesSecrets(t *testing.T) {
	e := newEnv(t)
	host := &permHost{}
	host.set("decline", nil)
	cfg := fmt.Sprintf(oneServer, permFake(t, "a", `{"default": "ask"}`, "API_KEY", "sk-live-0123456789"))
	_, cs := e.permSession(cfg, "2025-11-25", host.options())
	args := map[string]any{"apiToken": "tok-abcdef", "note": "key sk-live-0123456789 here", "long": strings.Repeat("y", 5000)}
	call(t, cs, "use_tool", use("dev", "a", "plain", args))
	asked := host.asked()
	if len(asked) != 1 {
		t.Fatalf("asked %q", asked)
	}
	for _, secret := range []string{"tok-abcdef", "sk-live-0123456789", strings.Repeat("y", 300)} {
		if strings.Contains(asked[0], secret) {
			t.Errorf("the question shows %.40q:\n%.600s", secret, asked[0])
		}
	}
	if !strings.Contains(asked[0], `"apiToken":"***"`) || !strings.Contains(asked[0], "key *** here") || !strings.Contains(asked[0], "more bytes") {
		t.Errorf("the question does not show the masked, cut arguments:\n%.800s", asked[0])
	}
	if strings.Contains(e.logs.String(), "sk-live-0123456789") {
		t.Error("a secret reached the log")
	}
}

// TestPermissionAnswerNotMatchingForm: an accept whose content the form
// does not have refuses the call.
func TestPermissionAnswerNotMatchingForm(t *testing.T) {
	e := newEnv(t)
	host := &permHost{}
	host.set("accept", map[string]any{"name": "Ada"})
	cfg := fmt.Sprintf(oneServer, permFake(t, "a", `{"default": "ask"}`))
	_, cs := e.permSession(cfg, "2026-07-28", host.options())
	got, isErr := call(t, cs, "use_tool", use("dev", "a", "plain", nil))
	if !isErr || e.calls("plain") != 0 {
		t.Errorf("%s (error %v), %d calls; want refused", got, isErr, e.calls("plain"))
	}
	if !strings.Contains(got, `does not match its form (it has "name"`) {
		t.Errorf("the refusal does not say what is wrong: %s", got)
	}
}

// TestPermissionAllowanceIsPerSession: with a shared workbench, one
// session's "allow for this session" is its own: another session of the
// same shared server is still asked.
func TestPermissionAllowanceIsPerSession(t *testing.T) {
	e := newEnv(t)
	text := `{"shared": true, "toolboxes": {"dev": {"description": "d", "mcpServers": {"a": ` + permFake(t, "a", `{"default": "ask"}`) + `}}}}`
	p := e.newPool(downstream.Options{})
	hosts := []*permHost{{}, {}}
	var sessions []*mcp.ClientSession
	for _, h := range hosts {
		ct, ss := e.serveInMemory(e.pooled(p, e.config(text)))
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, h.options()).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cs.Close()
			ss.Close()
		})
		sessions = append(sessions, cs)
	}
	hosts[0].set("accept", map[string]any{"allowForSession": true})
	hosts[1].set("decline", nil)
	for range 2 {
		if got, isErr := call(t, sessions[0], "use_tool", use("dev", "a", "plain", nil)); isErr {
			t.Fatalf("session 1: %s", got)
		}
	}
	got, isErr := call(t, sessions[1], "use_tool", use("dev", "a", "plain", nil))
	if !isErr || !strings.Contains(got, "declined") {
		t.Errorf("session 2, after session 1 allowed the tool for its session: %s (error %v); want it asked and declined", got, isErr)
	}
	if a, b, c, s := len(hosts[0].asked()), len(hosts[1].asked()), e.calls("plain"), e.starts(); a != 1 || b != 1 || c != 2 || s != 1 {
		t.Errorf("asked %d and %d times, %d calls, %d starts; want 1, 1, 2 calls of one shared server", a, b, c, s)
	}
}

// TestPermissionReload: a reload that changes only the rules applies them
// to the next call, and the server keeps running.
func TestPermissionReload(t *testing.T) {
	e := newEnv(t)
	server := permFake(t, "a", "")
	text := func(perms string) string {
		return `{"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": ` + strings.TrimSuffix(server, "}") + perms + `}}}}}`
	}
	wb, cs := e.workbench(text(""))
	if got, isErr := call(t, cs, "use_tool", use("dev", "a", "plain", nil)); isErr {
		t.Fatalf("before: %s", got)
	}
	ch := wb.Reload(e.config(text(`, "permissions": {"tools": {"plain": "deny"}}`)))
	if len(ch.ServersChanged) != 0 {
		t.Errorf("a change of rules changed servers: %+v", ch)
	}
	if got, isErr := call(t, cs, "use_tool", use("dev", "a", "plain", nil)); !isErr || !strings.Contains(got, "denies") {
		t.Errorf("after the reload: %s (error %v); want denied", got, isErr)
	}
	if e.starts() != 1 || e.calls("plain") != 1 {
		t.Errorf("%d starts, %d calls; want the server kept and not called again", e.starts(), e.calls("plain"))
	}
}

// TestPermissionHookApproval: a call that carries the hook's approval of
// that very call (Claude Code's own prompt asked) is not asked again;
// the same approval again, one for other arguments, and one that was not
// signed with the key are ignored: those calls are asked about.
func TestPermissionHookApproval(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	keyPath, err := permissions.KeyPath()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	host := &permHost{}
	host.set("decline", nil)
	_, cs := e.permSession(fmt.Sprintf(oneServer, permFake(t, "a", `{"tools": {"delete_item": "ask"}}`)), "2025-11-25", host.options())
	args := map[string]any{"id": 3}
	token, err := permissions.SignApproval(keyPath, "dev", "a", "delete_item", json.RawMessage(`{"id":3}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	approved := func(token string, args any) map[string]any {
		in := use("dev", "a", "delete_item", args)
		in[permissions.ApprovalField] = token
		return in
	}
	if got, isErr := call(t, cs, "use_tool", approved(token, args)); isErr || len(host.asked()) != 0 || e.calls("delete_item") != 1 {
		t.Fatalf("approved by the hook: %s (error %v), asked %d; want called without a question", got, isErr, len(host.asked()))
	}
	other, _ := permissions.SignApproval(keyPath, "dev", "a", "delete_item", json.RawMessage(`{"id":4}`), time.Now())
	forged := "wbh1." + strings.SplitN(strings.TrimPrefix(token, "wbh1."), ".", 2)[0] + ".AAAA"
	for i, tok := range []string{token, other, forged} {
		if got, isErr := call(t, cs, "use_tool", approved(tok, args)); !isErr || !strings.Contains(got, "declined") || len(host.asked()) != i+1 {
			t.Errorf("approval %d that does not count: %s (error %v), asked %d times", i, got, isErr, len(host.asked()))
		}
	}
	if e.calls("delete_item") != 1 {
		t.Errorf("%d calls, want 1", e.calls("delete_item"))
	}
}

// TestPermissionInputRequired: to a 2026-07-28 host the question is the
// call's input_required, before the server is called; the retry with a
// decline ends the call without calling it.
func TestPermissionInputRequired(t *testing.T) {
	e := newEnv(t)
	cfg, err := parseConfig(fmt.Sprintf(oneServer, permFake(t, "a", `{"tools": {"delete_*": "ask"}}`)), e)
	if err != nil {
		t.Fatal(err)
	}
	h := e.lineHost(e.newWorkbench(cfg), "2025-11-25")
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	h.send(useLine("1", "a", "delete_item", `{"id":1}`, meta))
	var first struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	r := decodeResponse(t, h.response("1"))
	if err := json.Unmarshal(r.Result, &first); err != nil || first.ResultType != "input_required" || len(first.InputRequests) != 1 {
		t.Fatalf("want input_required with the question, got %s", r.Result)
	}
	var key string
	for k, v := range first.InputRequests {
		key = k
		for _, want := range []string{`"method":"elicitation/create"`, `allowForSession`, `'delete_item'`} {
			if !strings.Contains(string(v), want) {
				t.Errorf("input request %s lacks %s", v, want)
			}
		}
	}
	if e.calls("delete_item") != 0 {
		t.Error("the server was called before the answer")
	}
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"dev","server":"a","tool":"delete_item"},"arguments":{"id":1}},"_meta":%s,"inputResponses":{%q:{"action":"decline"}},"requestState":%q}}`,
		meta, key, first.RequestState))
	if got, isErr := resultText(t, decodeResponse(t, h.response("2")).Result); !isErr || !strings.Contains(got, "declined") || e.calls("delete_item") != 0 {
		t.Errorf("declined retry: %s (error %v), %d calls", got, isErr, e.calls("delete_item"))
	}
}
