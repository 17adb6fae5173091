package downstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) { fakeserver.TestMain(m) }

type harness struct {
	t      *testing.T
	opts   *Options
	stderr *fakeserver.Buffer
	logs   *fakeserver.Buffer
	state  string // the fake servers' counter folder
	tag    string
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, stderr: &fakeserver.Buffer{}, logs: &fakeserver.Buffer{}, state: t.TempDir(), tag: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())}
	h.opts = &Options{
		Logger:    slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Stderr:    h.stderr,
		StopGrace: 500 * time.Millisecond,
		Backoff:   func(int) time.Duration { return 10 * time.Millisecond },
	}
	t.Cleanup(func() {
		if left := fakeserver.WaitUntagged(h.tag, 20*time.Second); len(left) > 0 {
			t.Errorf("processes left behind: %v", left)
		}
		if t.Failed() {
			t.Logf("stderr:\n%s\nlogs:\n%s", h.stderr, h.logs)
		}
	})
	return h
}

// config returns a fake server's config; extra are FAKE_* name/value pairs.
func (h *harness) config(name string, extra ...string) *config.Server {
	env := fakeserver.Env(append([]string{fakeserver.EnvName, name, fakeserver.EnvStateDir, h.state, fakeserver.TagVar, h.tag}, extra...)...)
	return fakeserver.Config(name, env)
}

func (h *harness) server(cfg *config.Server) *Server {
	s := NewServer("tb", cfg, h.opts)
	h.t.Cleanup(s.Close)
	return s
}

func (h *harness) lines(file string) []string { return fakeserver.ReadLines(h.state, file) }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// decodeResult decodes a raw call result as a host's SDK would.
func decodeResult(t *testing.T, raw json.RawMessage) *mcp.CallToolResult {
	t.Helper()
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("decoding result %s: %v", raw, err)
	}
	return &res
}

func resultText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	res := decodeResult(t, raw)
	if len(res.Content) == 0 {
		t.Fatalf("empty result %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("first content is %T", res.Content[0])
	}
	return tc.Text
}

func TestConnectListsToolsAsSent(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("f1", fakeserver.EnvExtraField, "1"))
	if st := s.State(); st.Status != StatusIdle {
		t.Fatalf("before use: status %q, want idle (nothing started)", st.Status)
	}
	if n := len(h.lines(fakeserver.StartsFile)); n != 0 {
		t.Fatalf("%d starts before first use", n)
	}
	ts, err := s.Connect(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	echo := ts.Lookup("echo")
	if echo == nil {
		t.Fatalf("no echo tool among %v", ts.offeredNames())
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(echo.JSON, &obj); err != nil {
		t.Fatal(err)
	}
	// Fields the SDK does not know are kept, and ours are added.
	for key, want := range map[string]string{
		"x-vendor":      `{"cost":"low","tags":["a","b"]}`,
		"execution":     `{"taskSupport":"optional"}`,
		"source_server": `"f1"`,
		"toolbox_name":  `"tb"`,
		"name":          `"echo"`,
		"title":         `"Echo"`,
	} {
		if got := string(obj[key]); got != want {
			t.Errorf("echo.%s = %s, want %s", key, got, want)
		}
	}
	if !echo.ReadOnly {
		t.Error("echo's readOnlyHint annotation was not read")
	}
	if bytes.Contains(echo.JSON, []byte("\n")) {
		t.Error("tool JSON is not compact")
	}
	st := s.State()
	if st.Status != StatusConnected || st.Tools != ts {
		t.Errorf("state after connect = %+v", st)
	}
	// Connecting again is free: same tools, no new process.
	if ts2, err := s.Connect(ctxT(t)); err != nil || ts2 != ts {
		t.Errorf("second Connect = %v, %v", ts2, err)
	}
	if n := len(h.lines(fakeserver.StartsFile)); n != 1 {
		t.Errorf("%d starts, want 1", n)
	}
}

func TestPaginationAndFilters(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("paged", fakeserver.EnvTools, "25", fakeserver.EnvPageSize, "4")
	all, err := h.server(cfg).Connect(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(all.Tools); n < 25+10 {
		t.Fatalf("got %d tools over pages of 4, want every page", n)
	}
	filtered := *cfg
	filtered.ToolFilters = []string{"tool_00?", "echo", "nothing_matches_*"}
	ts, err := h.server(&filtered).Connect(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"echo", "tool_000", "tool_001", "tool_002", "tool_003", "tool_004", "tool_005", "tool_006", "tool_007", "tool_008", "tool_009"}
	got := ts.offeredNames()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("filtered tools = %v, want %v", got, want)
	}
	if !ts.isFiltered("add") || ts.isFiltered("echo") || ts.isFiltered("no_such_tool") {
		t.Error("isFiltered() does not tell filtered tools from offered and unknown ones")
	}
	if !strings.Contains(h.logs.String(), "entry=toolFilters[2]") { // named by its place: the value may come from a ${VAR}
		t.Error("a filter matching nothing was not warned about")
	}
}

func TestCallPassesResultsThrough(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("f1"))
	ctx := ctxT(t)

	res, err := s.Call(ctx, "echo", json.RawMessage(`{"text":"hi","extra":[1,2]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != `{"args":{"text":"hi","extra":[1,2]},"server":"f1"}` {
		t.Errorf("echo text = %s", got)
	}

	res, err = s.Call(ctx, "rich", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := res
	for _, want := range []string{
		`"_meta":{"fake/trace":"abc"}`, `"type":"image"`, `"mimeType":"image/png"`, `"type":"audio"`,
		`"type":"resource_link"`, `"type":"resource"`, `"text":"embedded"`, `"structuredContent":{"list":["a","b"],"n":1.5}`,
		`"annotations":{"priority":0.5}`,
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("rich result lacks %s:\n%s", want, b)
		}
	}

	res, err = s.Call(ctx, "fail", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !decodeResult(t, res).IsError || resultText(t, res) != "fail: something went wrong downstream" {
		t.Errorf("a downstream tool error must stay a tool error with its text, got %+v", res)
	}

	_, err = s.Call(ctx, "rpc_error", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "the fake server refuses (code -32001)") {
		t.Errorf("rpc_error: err = %v", err)
	}
}

func TestRefusalsSendNothing(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("f1")
	cfg.ToolFilters = []string{"add", "echo", "tuple", "bad_schema"}
	s := h.server(cfg)
	ctx := ctxT(t)
	tests := []struct {
		tool, args string
		want       []string
	}{
		{"nope", `{}`, []string{"no such tool", "add, bad_schema, echo, tuple"}},
		{"fail", `{}`, []string{"toolFilters exclude it"}},
		{"add", `{"a":"1"}`, []string{"/a: got string, want number", "(root): missing property 'b'"}},
		{"add", `{"a":1,"b":[]}`, []string{"/b: got array, want number"}},
		{"tuple", `{"point":[1,"x"]}`, []string{"/point/1: got string, want number"}},
	}
	for _, tt := range tests {
		_, err := s.Call(ctx, tt.tool, json.RawMessage(tt.args), nil)
		var refused *RefusedError
		if !errors.As(err, &refused) {
			t.Errorf("%s %s: err = %v, want a refusal", tt.tool, tt.args, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(refused.Reason, w) {
				t.Errorf("%s %s: refusal %q lacks %q", tt.tool, tt.args, refused.Reason, w)
			}
		}
	}
	if calls := h.lines(fakeserver.CallsFile); len(calls) != 0 {
		t.Errorf("refused calls reached the server: %v", calls)
	}

	// Extra arguments pass unless the schema forbids them; draft-07 tuples
	// validate; format is not asserted.
	for _, c := range []struct{ tool, args string }{
		{"add", `{"a":1,"b":2,"c":"extra"}`},
		{"tuple", `{"point":[1,2],"when":"not a date"}`},
		{"bad_schema", `{"x":1,"y":2}`}, // its schema does not compile: not validated, still callable
	} {
		if _, err := s.Call(ctx, c.tool, json.RawMessage(c.args), nil); err != nil {
			t.Errorf("%s %s: %v", c.tool, c.args, err)
		}
	}
	if !strings.Contains(h.logs.String(), "does not compile") {
		t.Error("a schema that cannot compile was not logged")
	}
}

func TestDisabledServerNeverStarts(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("off")
	cfg.Disabled = true
	s := h.server(cfg)
	if _, err := s.Connect(ctxT(t)); !errors.Is(err, errDisabled) {
		t.Errorf("Connect: %v, want errDisabled", err)
	}
	_, err := s.Call(ctxT(t), "echo", nil, nil)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Reason, "disabled") {
		t.Errorf("Call: %v", err)
	}
	if _, err := s.Join()(ctxT(t)); !errors.Is(err, errDisabled) {
		t.Errorf("Join: %v, want errDisabled", err)
	}
	s.StartInBackground()
	done := make(chan json.RawMessage, 1)
	s.Start("echo", nil, nil, func(res json.RawMessage, err error) {
		if !errors.Is(err, errDisabled) {
			t.Errorf("Start: %v, want errDisabled", err)
		}
		done <- res
	})
	<-done
	if st := s.State(); st.Status != StatusDisabled {
		t.Errorf("status %q", st.Status)
	}
	if n := len(h.lines(fakeserver.StartsFile)); n != 0 {
		t.Errorf("a disabled server started %d times", n)
	}
}

// TestStartFailureWaitsForLastWords: a server that dies during start-up
// is explained with the last line it wrote to stderr, even when its exit is
// seen before that line has been read. Here the line waits in the pipe
// behind the one before it, whose forwarding is held until the process is
// gone and a while longer: without the wait for stderr's end the error
// said only "exited with exit status 3 during start-up".
func TestStartFailureWaitsForLastWords(t *testing.T) {
	h := newHarness(t)
	held := &heldWriter{w: h.stderr, release: make(chan struct{})}
	h.opts.Stderr = held
	go func() {
		for deadline := time.Now().Add(30 * time.Second); len(h.lines(fakeserver.StartsFile)) == 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		fakeserver.WaitUntagged(h.tag, 30*time.Second)
		time.Sleep(200 * time.Millisecond) // lets the workbench see the exit first, as a slow machine can
		close(held.release)
	}()
	cfg := h.config("dies", fakeserver.EnvFlood, "1", fakeserver.EnvExitAtStart, "3")
	_, err := h.server(cfg).Connect(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "exit status 3 during start-up: ") || !strings.Contains(err.Error(), "exiting at start as asked (status 3)") {
		t.Errorf("err = %v, want the server's last words after its exit status", err)
	}
}

// heldWriter passes writes to w once release is closed.
type heldWriter struct {
	w       io.Writer
	release chan struct{}
}

func (h *heldWriter) Write(p []byte) (int, error) {
	<-h.release
	return h.w.Write(p)
}

func TestStartFailures(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)

	exits := h.config("exits", fakeserver.EnvExitAtStart, "7")
	exits.MaxRetries = 2
	_, err := h.server(exits).Connect(ctx)
	for _, want := range []string{"3 attempts", "exit status 7", "during start-up", "exiting at start as asked"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("exit at start: err = %v, want it to say %q", err, want)
		}
	}

	// A server that ends well at start still ended too soon; one whose
	// answer to initialize cannot be read is told so, not that it exited
	// (it does, once told to stop).
	clean := h.config("clean", fakeserver.EnvExitAtStart, "0")
	if _, err := h.server(clean).Connect(ctx); err == nil || !strings.Contains(err.Error(), "exited with exit status 0 during start-up") {
		t.Errorf("exit 0 at start: err = %v", err)
	}
	badInit := h.config("bad-init", fakeserver.EnvBadInit, "1")
	if _, err := h.server(badInit).Connect(ctx); err == nil || !strings.Contains(err.Error(), `expected a string at "protocolVersion", got a number`) || strings.Contains(err.Error(), "exited") {
		t.Errorf("malformed initialize result: err = %v", err)
	}

	missing := &config.Server{Name: "missing", Transport: config.Stdio, Command: "mcp-workbench-no-such-command", ConnectionTimeout: time.Second, MaxRetries: 5}
	_, err = h.server(missing).Connect(ctx)
	if err == nil || !strings.Contains(err.Error(), `command "mcp-workbench-no-such-command" not found`) || !strings.Contains(err.Error(), "1 attempt") {
		t.Errorf("missing command: err = %v, want not found after 1 attempt (no retries for what cannot change)", err)
	}

	hangs := h.config("hangs", fakeserver.EnvHangInit, "1")
	hangs.ConnectionTimeout = 300 * time.Millisecond
	start := time.Now()
	_, err = h.server(hangs).Connect(ctx)
	if err == nil || !strings.Contains(err.Error(), "no answer within 300ms (connectionTimeoutMs)") {
		t.Errorf("hang at initialize: err = %v", err)
	}
	if d := time.Since(start); d > 30*time.Second { // a ceiling far above the 300ms; the context's 60s is the hang
		t.Errorf("hang at initialize took %v to fail", d)
	}
}

func TestRetriesUntilStartSucceeds(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("flaky", fakeserver.EnvFailFirst, "2")
	cfg.MaxRetries = 2
	s := h.server(cfg)
	if _, err := s.Connect(ctxT(t)); err != nil {
		t.Fatalf("third attempt should succeed: %v", err)
	}
	if n := len(h.lines(fakeserver.StartsFile)); n != 3 {
		t.Errorf("%d starts, want 3", n)
	}
}

func TestFailedConnectIsRetriedOnNextUse(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("flaky", fakeserver.EnvFailFirst, "1")
	s := h.server(cfg) // MaxRetries 0: the first Connect fails
	if _, err := s.Connect(ctxT(t)); err == nil {
		t.Fatal("first connect should fail")
	}
	if st := s.State(); st.Status != StatusError || st.Err == nil {
		t.Fatalf("state after failure = %+v", st)
	}
	if _, err := s.Connect(ctxT(t)); err != nil {
		t.Fatalf("second connect: %v", err)
	}
}

func TestConcurrentConnectsShareOneStart(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("shared", fakeserver.EnvStartDelay, "200"))
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			_, err := s.Connect(ctxT(t))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := len(h.lines(fakeserver.StartsFile)); n != 1 {
		t.Errorf("%d starts for 20 concurrent connects, want 1", n)
	}
}

// TestStoppingKeepsStdoutOpenUntilExit stops a server that writes once
// more on its way out: the write must reach an open pipe (closing stdout
// early kills such servers with EPIPE, noisily).
func TestStoppingKeepsStdoutOpenUntilExit(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("bye", fakeserver.EnvWriteAtEOF, "1"))
	if _, err := s.Call(ctxT(t), "echo", nil, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := h.lines(fakeserver.AtEOFFile); len(got) != 1 || got[0] != "written" {
		t.Errorf("the server's last write: %q, want it written", got)
	}
}

func TestCloseStopsTheProcessTree(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the wrapper is a POSIX shell script; on Windows, the Job Object's end of a .cmd's node.exe is checked by cmd/mcp-workbench's TestWindowsKillEndsServers and TestWindowsMemoryServerBehindCmd")
	}
	h := newHarness(t)
	cfg := h.config("wrapped")
	// A wrapper whose child outlives it unless the whole group is stopped.
	cfg.Args = []string{"-c", "sleep 600 & exec \"$0\"", cfg.Command}
	cfg.Command = "sh"
	s := h.server(cfg)
	if _, err := s.Connect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	res, err := s.Call(ctxT(t), "spawn", nil, nil) // and a grandchild of the server's own
	if err != nil || decodeResult(t, res).IsError {
		t.Fatal(err, res)
	}
	pids, ok := fakeserver.Tagged(h.tag)
	if !ok {
		t.Log("process trees are listed through /proc, which this system lacks: only Close and the refused Connect are checked here")
	}
	if ok && len(pids) < 3 {
		t.Fatalf("expected server, sleep and spawned sleep tagged, got %v", pids)
	}
	s.Close()
	if ok {
		if left, _ := fakeserver.Tagged(h.tag); len(left) > 0 {
			t.Errorf("after Close returned, still running: %v", left)
		}
	}
	if _, err := s.Connect(ctxT(t)); !errors.Is(err, errClosed) {
		t.Errorf("Connect after Close: %v", err)
	}
}
