package workbench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func TestMain(m *testing.M) { fakeserver.TestMain(m) }

// env is what test configurations expand: ${EXE} is this test binary (the
// fake server when FAKE_SERVER=1), ${STATE} the fake servers' counter
// folder, ${TAG} the process tag that finds whatever the test started.
type env struct {
	t     *testing.T
	state string
	tag   string
	logs  *fakeserver.Buffer
}

func newEnv(t *testing.T) *env {
	e := &env{t: t, state: t.TempDir(), tag: fmt.Sprintf("wb-%d", time.Now().UnixNano()), logs: &fakeserver.Buffer{}}
	t.Cleanup(func() {
		if left := fakeserver.WaitUntagged(e.tag, 20*time.Second); len(left) > 0 {
			t.Errorf("processes left behind: %v", left)
		}
		if t.Failed() {
			t.Logf("logs:\n%s", e.logs)
		}
	})
	return e
}

func (e *env) lookup(name string) (string, bool) {
	switch name {
	case "EXE":
		exe, _ := os.Executable()
		return exe, true
	case "STATE":
		return e.state, true
	case "TAG":
		return e.tag, true
	}
	return os.LookupEnv(name)
}

// fake is the JSON of a fake server entry named name with extra env.
func fake(name string, extra ...string) string {
	env := map[string]string{
		fakeserver.EnvServer: "1", fakeserver.EnvName: name,
		fakeserver.EnvStateDir: "${STATE}", fakeserver.TagVar: "${TAG}",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	b, _ := json.Marshal(env)
	return fmt.Sprintf(`{"command": "${EXE}", "env": %s, "maxRetries": 0}`, b)
}

func parseConfig(text string, e *env) (*config.Config, error) {
	return config.Parse([]byte(text), e.lookup)
}

// newWorkbench returns a Workbench for cfg with short waits, closed when
// the test ends.
func (e *env) newWorkbench(cfg *config.Config) *Workbench {
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	wb := New(cfg, Options{Version: "test", Logger: log, Stderr: e.logs, Downstream: &downstream.Options{
		StopGrace: 500 * time.Millisecond,
		Backoff:   func(int) time.Duration { return 10 * time.Millisecond },
	}})
	e.t.Cleanup(wb.Close)
	return wb
}

// serveInMemory serves wb on in-memory pipes, as a host's stdio, and
// returns the host's end.
func (e *env) serveInMemory(wb *Workbench) (mcp.Transport, *mcp.ServerSession) {
	hostR, wbW := io.Pipe()
	wbR, hostW := io.Pipe()
	ss, err := wb.Connect(context.Background(), wbR, wbW)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		wbR.Close()
		wbW.Close()
	})
	return &mcp.IOTransport{Reader: hostR, Writer: hostW}, ss
}

// connectManual connects a host session to wb in memory; closeAll ends it.
func (e *env) connectManual(wb *Workbench, opts *mcp.ClientOptions) (cs *mcp.ClientSession, closeAll func()) {
	t := e.t
	ct, ss := e.serveInMemory(wb)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, opts).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, func() {
		cs.Close()
		ss.Close()
	}
}

// connect is connectManual, closed when the test ends.
func (e *env) connect(wb *Workbench, opts *mcp.ClientOptions) *mcp.ClientSession {
	cs, closeAll := e.connectManual(wb, opts)
	e.t.Cleanup(closeAll)
	return cs
}

// workbench loads the configuration text and returns a Workbench and a
// host session connected to it in memory.
func (e *env) workbench(cfgText string) (*Workbench, *mcp.ClientSession) {
	cfg, err := parseConfig(cfgText, e)
	if err != nil {
		e.t.Fatalf("config: %v\n%s", err, cfgText)
	}
	wb := e.newWorkbench(cfg)
	return wb, e.connect(wb, nil)
}

func (e *env) starts() int { return len(fakeserver.ReadLines(e.state, fakeserver.StartsFile)) }

// call calls a tool of the workbench and returns its text and whether it
// is an error. It may run on any goroutine: a failure is reported with
// t.Errorf (t.Fatal must not leave a goroutine of its own) and returns
// ("", true).
func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Errorf("%s: protocol error %v (user mistakes and downstream failures must be tool results)", tool, err)
		return "", true
	}
	if len(res.Content) != 1 {
		t.Errorf("%s: %d content blocks", tool, len(res.Content))
		return "", true
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Errorf("%s: content of type %T", tool, res.Content[0])
		return "", true
	}
	return text.Text, res.IsError
}

func use(toolbox, server, tool string, args any) map[string]any {
	m := map[string]any{"tool": map[string]string{"toolbox": toolbox, "server": server, "tool": tool}}
	if args != nil {
		m["arguments"] = args
	}
	return m
}

type openResult struct {
	Toolbox          string `json:"toolbox"`
	Description      string `json:"description"`
	ServersConnected int    `json:"servers_connected"`
	Servers          []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Tools  int    `json:"tools"`
		Error  string `json:"error"`
	} `json:"servers"`
	Tools []map[string]any `json:"tools"`
}

func parseOpen(t *testing.T, text string) openResult {
	t.Helper()
	var r openResult
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatalf("open_toolbox result is not JSON: %v\n%s", err, text)
	}
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(fakeserver.RepoRoot(t), "testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/workbench -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./internal/workbench -update to accept):\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func indent(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		panic(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

const twoToolboxes = `{
  "toolboxes": {
    "dev": {
      "description": "Local development tools",
      "mcpServers": {
        "a": %s,
        "b": %s,
        "off": { "command": "nothing", "disabled": true }
      }
    },
    "prod": {
      "description": "Production read-only tools",
      "mcpServers": { "a": %s }
    }
  }
}`

func TestInitializeStartsNothing(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(fmt.Sprintf(twoToolboxes, fake("a"), fake("b"), fake("a")))
	init := cs.InitializeResult()
	want := "Available Toolboxes:\n\ndev (2 servers)\n  Description: Local development tools\n\n" +
		"prod (1 server)\n  Description: Production read-only tools\n\n" +
		"To find a tool, call open_toolbox with a \"query\" saying what the task needs: it searches the tools of every toolbox " +
		"and returns the best matches, ready for use_tool. Or open a whole toolbox with open_toolbox and its \"toolbox_name\", " +
		"then use_tool to invoke its tools."
	if init.Instructions != want {
		t.Errorf("instructions:\n%q\nwant\n%q", init.Instructions, want)
	}
	if init.ServerInfo.Name != "mcp-workbench" || init.ServerInfo.Version != "test" {
		t.Errorf("serverInfo = %+v", init.ServerInfo)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tools.Tools)
	golden(t, "tools-list.json", indent(b))
	if n := e.starts(); n != 0 {
		t.Errorf("%d servers started by initialize and tools/list, want none", n)
	}
	if pids, _ := fakeserver.Tagged(e.tag); len(pids) > 0 {
		t.Errorf("processes started at initialize: %v", pids)
	}
}

func TestNoToolboxes(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(`{"toolboxes": {}}`)
	if got := cs.InitializeResult().Instructions; !strings.HasPrefix(got, "No toolboxes configured.\n\n") || !strings.Contains(got, `"toolboxes"`) {
		t.Errorf("instructions = %q", got)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 2 {
		t.Fatalf("%d tools, want exactly 2", len(tools.Tools))
	}
	if b, _ := json.Marshal(tools.Tools[0].InputSchema); bytes.Contains(b, []byte(`"enum"`)) {
		t.Errorf("an empty enum is not a valid schema: %s", b)
	}
	text, isErr := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "x"})
	if !isErr || text != "Toolbox 'x' not found. No toolboxes are configured." {
		t.Errorf("open unknown = %v %q", isErr, text)
	}
}

func TestOpenToolbox(t *testing.T) {
	e := newEnv(t)
	cfg := fmt.Sprintf(twoToolboxes, fake("a"), fake("b"), fake("a"))
	// A filter on b keeps the golden result short and shows filtering.
	cfg = strings.Replace(cfg, `"b": {`, `"b": {"toolFilters": ["echo", "ad?"], `, 1)
	_, cs := e.workbench(cfg)

	text, isErr := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev"})
	if isErr {
		t.Fatalf("open failed: %s", text)
	}
	golden(t, "open-toolbox-dev.json", indent([]byte(text)))
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(text)); err != nil || compact.String() != text {
		t.Error("the open_toolbox result is not compact JSON")
	}
	r := parseOpen(t, text)
	if r.Toolbox != "dev" || r.Description != "Local development tools" || r.ServersConnected != 2 {
		t.Errorf("header = %+v", r)
	}
	var statuses []string
	for _, s := range r.Servers {
		statuses = append(statuses, fmt.Sprintf("%s:%s:%d", s.Name, s.Status, s.Tools))
	}
	if got := strings.Join(statuses, " "); got != "a:connected:15 b:connected:2 off:disabled:0" {
		t.Errorf("servers = %s", got)
	}
	for _, tool := range r.Tools {
		if tool["toolbox_name"] != "dev" || (tool["source_server"] != "a" && tool["source_server"] != "b") {
			t.Errorf("tool lacks its origin: %v", tool)
		}
	}
	if n := e.starts(); n != 2 {
		t.Errorf("%d starts, want 2 (the disabled server never starts)", n)
	}

	// Idempotent: the same result at once, no new process.
	again, _ := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev"})
	if again != text {
		t.Error("opening an open toolbox gave a different result")
	}
	if n := e.starts(); n != 2 {
		t.Errorf("%d starts after a second open, want 2", n)
	}
	// refresh lists again without starting anything.
	refreshed, _ := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev", "refresh": true})
	if refreshed != text || e.starts() != 2 {
		t.Errorf("refresh changed the result or started servers (%d starts)", e.starts())
	}

	text, isErr = call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "nope"})
	if !isErr || text != "Toolbox 'nope' not found. Available toolboxes: dev, prod" {
		t.Errorf("unknown toolbox: %v %q", isErr, text)
	}
	for _, args := range []any{map[string]any{}, map[string]any{"toolbox_name": ""}, map[string]any{"toolbox_name": 3}} {
		text, isErr = call(t, cs, "open_toolbox", args)
		if !isErr || !strings.Contains(text, "toolbox_name") {
			t.Errorf("open_toolbox %v: %v %q", args, isErr, text)
		}
	}
}

func TestConcurrentOpensShareOneStart(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(fmt.Sprintf(`{"toolboxes": {"dev": {"description": "d", "mcpServers": {"slow": %s}}}}`,
		fake("slow", fakeserver.EnvStartDelay, "300")))
	var wg sync.WaitGroup
	results := make([]string, 8)
	for i := range results {
		wg.Go(func() { results[i], _ = call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev"}) })
	}
	wg.Wait()
	for _, r := range results[1:] {
		if r != results[0] {
			t.Fatal("concurrent opens disagree")
		}
	}
	if n := e.starts(); n != 1 {
		t.Errorf("%d starts for 8 concurrent opens, want 1", n)
	}
}

func TestFailureIsolation(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(fmt.Sprintf(`{"toolboxes": {
		"mixed": {"description": "d", "mcpServers": {"ok": %s, "dies": %s}},
		"broken": {"description": "d", "mcpServers": {"x": %s, "y": %s}}}}`,
		fake("ok"), fake("dies", fakeserver.EnvExitAtStart, "4"),
		fake("x", fakeserver.EnvExitAtStart, "5"), fake("y", fakeserver.EnvExitAtStart, "6")))

	text, isErr := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "mixed"})
	if isErr {
		t.Fatalf("one failed server failed the toolbox: %s", text)
	}
	r := parseOpen(t, text)
	if r.ServersConnected != 1 || r.Servers[1].Status != "error" || !strings.Contains(r.Servers[1].Error, "exit status 4") {
		t.Errorf("mixed = %s", text)
	}
	text, isErr = call(t, cs, "use_tool", use("mixed", "ok", "echo", nil))
	if isErr {
		t.Errorf("the healthy server is not usable: %s", text)
	}

	text, isErr = call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "broken"})
	if !isErr {
		t.Fatalf("all servers failed but the open succeeded: %s", text)
	}
	for _, want := range []string{"'broken'", "server 'x'", "exit status 5", "server 'y'", "exit status 6"} {
		if !strings.Contains(text, want) {
			t.Errorf("all-failed error lacks %q:\n%s", want, text)
		}
	}
	// A later open leaves the failed server to its schedule and says when
	// it is tried again; a refresh tries it now, not the healthy one.
	before := e.starts()
	text, _ = call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "mixed"})
	if got := e.starts() - before; got != 0 || !strings.Contains(text, "exit status 4") || !strings.Contains(text, "next try in") {
		t.Errorf("second open made %d starts, want none, and the failure with its next try:\n%s", got, text)
	}
	call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "mixed", "refresh": true})
	if got := e.starts() - before; got != 1 {
		t.Errorf("a refresh made %d starts, want 1 (only the failed server)", got)
	}
}

func TestUseTool(t *testing.T) {
	e := newEnv(t)
	cfg := fmt.Sprintf(twoToolboxes, fake("a"), fake("b"), fake("a"))
	cfg = strings.Replace(cfg, `"b": {`, `"b": {"toolFilters": ["echo", "add"], `, 1)
	_, cs := e.workbench(cfg)

	// Not opened yet: use_tool opens the toolbox first.
	text, isErr := call(t, cs, "use_tool", use("dev", "a", "echo", map[string]any{"text": "hi"}))
	if isErr || text != `{"args":{"text":"hi"},"server":"a"}` {
		t.Errorf("echo = %v %s", isErr, text)
	}
	// Arguments sent as a JSON string are taken as the object they hold.
	text, isErr = call(t, cs, "use_tool", map[string]any{"tool": map[string]string{"toolbox": "dev", "server": "b", "tool": "add"}, "arguments": `{"a":2,"b":3}`})
	if isErr || text != "5" {
		t.Errorf("add = %v %s", isErr, text)
	}
	// A downstream tool error stays a tool error with its text.
	text, isErr = call(t, cs, "use_tool", use("dev", "a", "fail", nil))
	if !isErr || text != "fail: something went wrong downstream" {
		t.Errorf("fail = %v %s", isErr, text)
	}
	callsBefore := len(fakeserver.ReadLines(e.state, fakeserver.CallsFile))

	refusals := []struct {
		args map[string]any
		want string
	}{
		{use("nope", "a", "echo", nil), "Cannot call tool 'echo' in server 'a' (toolbox 'nope'): Toolbox 'nope' not found. Available toolboxes: dev, prod"},
		{use("dev", "zz", "echo", nil), "Cannot call tool 'echo' in server 'zz' (toolbox 'dev'): toolbox 'dev' has no server 'zz'. Its servers: a, b, off"},
		{use("dev", "off", "echo", nil), "Cannot call tool 'echo' in server 'off' (toolbox 'dev'): the server is disabled in the workbench configuration"},
		{use("dev", "a", "nope", nil), "Cannot call tool 'nope' in server 'a' (toolbox 'dev'): no such tool; this server's tools are: add, bad_schema, big, change_tools, crash, crash_once, echo,"},
		{use("dev", "b", "fail", nil), "Cannot call tool 'fail' in server 'b' (toolbox 'dev'): the tool is not offered: the workbench configuration's toolFilters exclude it"},
		{use("dev", "b", "add", map[string]any{"a": "x"}), "Cannot call tool 'add' in server 'b' (toolbox 'dev'): arguments do not match the tool's inputSchema:\n- (root): missing property 'b'\n- /a: got string, want number"},
		{use("dev", "b", "add", []int{1}), `Cannot call tool 'add' in server 'b' (toolbox 'dev'): "arguments" must be a JSON object`},
		{map[string]any{"tool": map[string]string{"toolbox": "dev", "tool": "echo"}}, "use_tool: the tool identifier needs a non-empty server"},
		{map[string]any{"tool": "dev/a/echo"}, `use_tool: "tool" must be an object {"toolbox": "...", "server": "...", "tool": "..."}`},
		{map[string]any{}, `use_tool: "tool" is missing; "tool" must be an object`},
	}
	for _, r := range refusals {
		text, isErr := call(t, cs, "use_tool", r.args)
		if !isErr || !strings.HasPrefix(text, r.want) {
			b, _ := json.Marshal(r.args)
			t.Errorf("use_tool %s:\n got %v %q\nwant prefix %q", b, isErr, text, r.want)
		}
	}
	if n := len(fakeserver.ReadLines(e.state, fakeserver.CallsFile)); n != callsBefore {
		t.Errorf("refused calls reached a server: %d calls, want %d", n, callsBefore)
	}

	// Transport failures become tool errors with their context.
	text, isErr = call(t, cs, "use_tool", use("dev", "a", "crash", nil))
	if !isErr || !strings.HasPrefix(text, "Error executing tool 'crash' in server 'a' (toolbox 'dev'): ") || !strings.Contains(text, "exit status 3") {
		t.Errorf("crash = %v %q", isErr, text)
	}
	// The next call starts the server again.
	if text, isErr = call(t, cs, "use_tool", use("dev", "a", "echo", nil)); isErr {
		t.Errorf("after a crash: %s", text)
	}
}

func TestSameServerNameInTwoToolboxesIsTwoProcesses(t *testing.T) {
	e := newEnv(t)
	d1, d2 := t.TempDir(), t.TempDir()
	cfg := fmt.Sprintf(`{"toolboxes": {
		"one": {"description": "d", "mcpServers": {"srv": %s}},
		"two": {"description": "d", "mcpServers": {"srv": %s}}}}`, fake("srv"), fake("srv"))
	j1, _ := json.Marshal(d1) // as JSON: a Windows path's backslashes escaped
	j2, _ := json.Marshal(d2)
	cfg = strings.Replace(cfg, `"maxRetries": 0}`, `"maxRetries": 0, "cwd": `+string(j1)+`}`, 1)
	cfg = strings.Replace(cfg, `"maxRetries": 0}`, `"maxRetries": 0, "cwd": `+string(j2)+`}`, 1)
	_, cs := e.workbench(cfg)
	who := func(tb string) map[string]any {
		text, isErr := call(t, cs, "use_tool", use(tb, "srv", "whoami", nil))
		if isErr {
			t.Fatal(text)
		}
		var m map[string]any
		_ = json.Unmarshal([]byte(text), &m)
		return m
	}
	one, two := who("one"), who("two")
	if one["pid"] == two["pid"] {
		t.Errorf("both toolboxes reached process %v", one["pid"])
	}
	if one["cwd"] != d1 || two["cwd"] != d2 {
		t.Errorf("cwd: one %v two %v, want %s and %s", one["cwd"], two["cwd"], d1, d2)
	}
}
