package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func (e *env) lines(file string) []string { return fakeserver.ReadLines(e.state, file) }

func has(lines []string, s string) bool { return count(lines, s) > 0 }

func count(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if l == s {
			n++
		}
	}
	return n
}

const oneServer = `{"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": %s}}}}`

// TestProgressReachesOnlyItsCaller runs two calls with their own progress
// tokens, and one without, at once: each caller gets its own progress.
func TestProgressReachesOnlyItsCaller(t *testing.T) {
	e := newEnv(t)
	cfg, err := parseConfig(fmt.Sprintf(oneServer, fake("a")), e)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[any][]float64{}
	wb := e.newWorkbench(cfg)
	cs := e.connect(wb, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		got[req.Params.ProgressToken] = append(got[req.Params.ProgressToken], req.Params.Progress)
		mu.Unlock()
	}})
	callWith := func(token any, steps int) {
		params := &mcp.CallToolParams{Name: "use_tool", Arguments: use("dev", "a", "progress", map[string]any{"steps": steps, "delayMs": 20})}
		if token != nil {
			params.SetProgressToken(token)
		}
		res, err := cs.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			t.Errorf("progress call: %v %+v", err, res)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { callWith("alpha", 5) })
	wg.Go(func() { callWith(7, 3) })
	wg.Go(func() { callWith(nil, 4) })
	wg.Wait()
	// The server's last notification races its result, and progress is
	// never sent after a result: the last one may be dropped, no other.
	fakeserver.Eventually(t, "progress notifications", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got["alpha"]) >= 4 && len(got[float64(7)]) >= 2
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Errorf("progress went to tokens %v, want only alpha and 7", got)
	}
	for tok, steps := range map[any]int{"alpha": 5, float64(7): 3} {
		seq := got[tok]
		if len(seq) > steps {
			t.Errorf("token %v got %d notifications for %d steps: %v", tok, len(seq), steps, seq)
		}
		for i, p := range seq {
			if p != float64(i+1) {
				t.Errorf("token %v got %v, want 1, 2, … in order", tok, seq)
				break
			}
		}
	}
}

func TestCancellationReachesTheServer(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(fmt.Sprintf(oneServer, fake("a")))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "use_tool", Arguments: use("dev", "a", "sleep", map[string]any{"ms": 30000})})
		done <- err
	}()
	fakeserver.Eventually(t, "the call to reach the server", func() bool { return has(e.lines(fakeserver.CallsFile), "sleep") })
	cancel() // the host sends notifications/cancelled
	<-done
	fakeserver.Eventually(t, "the server to see the cancellation", func() bool { return has(e.lines(fakeserver.CancelsFile), "sleep") })
}

func TestShutdownCancelsCallsInFlight(t *testing.T) {
	e := newEnv(t)
	wb, cs := e.workbench(fmt.Sprintf(oneServer, fake("a")))
	type result struct {
		text  string
		isErr bool
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "use_tool", Arguments: use("dev", "a", "sleep", map[string]any{"ms": 30000})})
		if err != nil {
			done <- result{err.Error(), true}
			return
		}
		done <- result{res.Content[0].(*mcp.TextContent).Text, res.IsError}
	}()
	fakeserver.Eventually(t, "the call to reach the server", func() bool { return has(e.lines(fakeserver.CallsFile), "sleep") })
	wb.Close()
	select {
	case r := <-done:
		if !r.isErr {
			t.Errorf("a call cut by shutdown succeeded: %q", r.text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown left the call hanging")
	}
	fakeserver.Eventually(t, "the server to see the cancellation", func() bool { return has(e.lines(fakeserver.CancelsFile), "sleep") })
}

// TestHangingServerKeepsTheWorkbenchResponsive opens a toolbox whose
// server hangs at start (held at its start gate, it never answers
// initialize), and meanwhile uses another toolbox. The gate, not a
// timeout, ends the hang, so the order is certain whatever the machine's
// speed; the end of a start by connectionTimeoutMs is
// TestIsolationFromHangingAndJunkServers's.
func TestHangingServerKeepsTheWorkbenchResponsive(t *testing.T) {
	e := newEnv(t)
	gate := filepath.Join(t.TempDir(), "gate")
	_, cs := e.workbench(fmt.Sprintf(`{"toolboxes": {
		"stuck": {"description": "d", "mcpServers": {"h": %s}},
		"fine": {"description": "d", "mcpServers": {"a": %s}}}}`, fake("h", fakeserver.EnvStartGate, gate), fake("a")))
	stuckDone := make(chan string, 1)
	go func() {
		text, _ := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "stuck"})
		stuckDone <- text
	}()
	fakeserver.Eventually(t, "the hanging server to start", func() bool { return e.starts() >= 1 })
	for i := range 10 {
		if text, isErr := call(t, cs, "use_tool", use("fine", "a", "echo", map[string]any{"i": i})); isErr {
			t.Fatal(text)
		}
	}
	select {
	case text := <-stuckDone:
		t.Fatalf("the open of the hanging server ended before its gate opened: %s", text)
	default:
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := parseOpen(t, <-stuckDone); statuses(r) != "h=connected" {
		t.Errorf("the stuck open, once its server went on: %s", statuses(r))
	}
}

func TestIsolationFromHangingAndJunkServers(t *testing.T) {
	e := newEnv(t)
	// Only the servers that never answer get a short start timeout: they
	// miss it whatever the machine's speed. The one that exits at start
	// keeps a generous one, which a race-built child slow to exit must not
	// reach first.
	short := func(s string) string {
		return strings.Replace(s, `"maxRetries": 0`, `"maxRetries": 1, "connectionTimeoutMs": 300`, 1)
	}
	retryOnce := func(s string) string { return strings.Replace(s, `"maxRetries": 0`, `"maxRetries": 1`, 1) }
	_, cs := e.workbench(fmt.Sprintf(`{"toolboxes": {"mixed": {"description": "d", "mcpServers": {
		"ok": %s, "hangs": %s, "junk": %s, "dies": %s}}}}`,
		fake("ok"),
		short(fake("hangs", fakeserver.EnvHangInit, "1")),
		short(fake("junk", fakeserver.EnvHangInit, "1", fakeserver.EnvJunk, "1")),
		retryOnce(fake("dies", fakeserver.EnvExitAtStart, "2"))))
	text, isErr := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "mixed"})
	if isErr {
		t.Fatalf("open failed: %s", text)
	}
	r := parseOpen(t, text)
	want := map[string]string{"ok": "", "hangs": "could not start (2 attempts): no answer within 300ms", "junk": "could not start (2 attempts): no answer within 300ms", "dies": "could not start (2 attempts): exited with exit status 2"}
	for _, s := range r.Servers {
		if w := want[s.Name]; w == "" && s.Status != "connected" || w != "" && (s.Status != "error" || !strings.HasPrefix(s.Error, w)) {
			t.Errorf("server %s: %s %q, want %q", s.Name, s.Status, s.Error, w)
		}
	}
	if r.ServersConnected != 1 || len(r.Tools) == 0 {
		t.Errorf("the healthy server's tools are missing: %s", text)
	}
}

// TestLoad makes thousands of calls, dozens at a time, across two servers,
// and checks every answer against its request; then that every goroutine
// the workbench started is gone.
func TestLoad(t *testing.T) {
	const calls, inFlight = 3000, 48
	baseline := runtime.NumGoroutine()
	e := newEnv(t)
	cfg, err := parseConfig(fmt.Sprintf(`{"toolboxes": {"one": {"description": "d", "mcpServers": {"a": %s}}, "two": {"description": "d", "mcpServers": {"b": %s}}}}`, fake("a"), fake("b")), e)
	if err != nil {
		t.Fatal(err)
	}
	wb := e.newWorkbench(cfg)
	cs, closeAll := e.connectManual(wb, nil)

	var next atomic.Int64
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= calls {
					return
				}
				toolbox, server := "one", "a"
				if i%2 == 1 {
					toolbox, server = "two", "b"
				}
				id := fmt.Sprintf("req-%d", i)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "use_tool", Arguments: use(toolbox, server, "echo", map[string]any{"text": id})})
				if err != nil || res.IsError {
					t.Errorf("call %d: %v %+v", i, err, res)
					continue
				}
				var got struct {
					Server string
					Args   struct{ Text string }
				}
				if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil || got.Server != server || got.Args.Text != id {
					t.Errorf("call %d to %s got %+v: misrouted or mixed up", i, server, got)
				}
			}
		})
	}
	wg.Wait()
	if n := len(e.lines(fakeserver.CallsFile)); n != calls {
		t.Errorf("servers saw %d calls, want %d", n, calls)
	}
	closeAll()
	wb.Close()
	fakeserver.Eventually(t, fmt.Sprintf("goroutines back to %d", baseline), func() bool { return runtime.NumGoroutine() <= baseline })
}
