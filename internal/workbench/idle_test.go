package workbench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// A server idle for idleTimeoutMs is stopped, its whole process tree
// with it; a call in flight is never cut; the next call starts it again.
func TestIdleStopAndRestart(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(`{"idleTimeoutMs": 300, "toolboxes": {"dev": {"description": "d", "mcpServers": {"a": ` + fake("a") + `}}}}`)

	if text, isErr := call(t, cs, "use_tool", use("dev", "a", "spawn", nil)); isErr {
		t.Fatalf("spawn: %s", text) // a child of the server: the tree must go too
	}
	// A call three times longer than the idle timeout is not cut.
	if text, isErr := call(t, cs, "use_tool", use("dev", "a", "sleep", map[string]any{"ms": 900})); isErr || text != "slept 900ms" {
		t.Fatalf("a call longer than idleTimeoutMs: %s", text)
	}
	// The sleep reached the server once and was answered: it was neither
	// cut nor sent again. (The count of starts is not checked: on a slow
	// machine more than idleTimeoutMs can pass between the start and the
	// first call, or between two calls, and the server is rightly stopped
	// and started again.)
	if n := count(e.lines(fakeserver.CallsFile), "sleep"); n != 1 {
		t.Fatalf("the server got the sleep call %d times, want once", n)
	}
	before := e.starts()
	fakeserver.Eventually(t, "the idle stop to be logged", func() bool {
		return strings.Contains(e.logs.String(), "idle for idleTimeoutMs")
	})
	if _, ok := fakeserver.Tagged(e.tag); !ok {
		t.Log("process trees are listed through /proc, which this system lacks: the stopped tree is not listed here")
	}
	if left := fakeserver.WaitUntagged(e.tag, 30*time.Second); len(left) > 0 {
		t.Fatalf("processes left after the idle timeout: %v", left)
	}
	if text, isErr := call(t, cs, "use_tool", use("dev", "a", "add", map[string]any{"a": 1, "b": 2})); isErr || text != "3" {
		t.Fatalf("the call after an idle stop: %s", text)
	}
	if n := e.starts(); n <= before {
		t.Errorf("%d starts, as many as before the idle stop: the call after the stop must start the server again", n)
	}
}

// Calls that come as the idle timer fires are never lost: they either keep
// the connection or go to a new one. add is neither read-only nor
// idempotent, so a cut call would not be retried and would show.
func TestIdleStopRacesCalls(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(`{"idleTimeoutMs": 30, "toolboxes": {"dev": {"description": "d", "mcpServers": {"a": ` + fake("a") + `}}}}`)
	for i := range 24 {
		if text, isErr := call(t, cs, "use_tool", use("dev", "a", "add", map[string]any{"a": i, "b": 1})); isErr || text != fmt.Sprint(i+1) {
			t.Fatalf("call %d: %s", i, text)
		}
		time.Sleep(time.Duration(i%8) * 6 * time.Millisecond) // around the idle timeout
	}
	if got := len(fakeserver.ReadLines(e.state, fakeserver.CallsFile)); got != 24 {
		t.Errorf("the server got %d calls, want 24", got)
	}
}

// A day's shape: ten toolboxes opened once and used; after the idle
// timeout no server process is left; opens are answered from the catalog
// and the next call works.
func TestDaysShape(t *testing.T) {
	e := newEnv(t)
	cat := openCatalog(t)
	var tbs []string
	for i := range 10 {
		tbs = append(tbs, fmt.Sprintf(`"tb%d": {"description": "toolbox %d", "mcpServers": {"s": %s}}`, i, i, fake(fmt.Sprintf("s%d", i))))
	}
	cfg := e.config(`{"idleTimeoutMs": 300, "toolboxes": {` + strings.Join(tbs, ",") + `}}`)
	wb := e.catalogWorkbench(cfg, cat)
	cs := e.connect(wb, nil)

	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			tb := fmt.Sprintf("tb%d", i)
			if r := openText(t, cs, tb); statuses(r) != "s=connected" {
				t.Errorf("first open of %s: %s", tb, statuses(r))
			}
			if text, isErr := call(t, cs, "use_tool", use(tb, "s", "echo", map[string]any{"text": tb})); isErr {
				t.Errorf("%s: %s", tb, text)
			}
		})
	}
	wg.Wait()
	// Ten starts, or more: on a slow machine a server may go idle between
	// its open and its call, which starts it again.
	if n := e.starts(); n < 10 {
		t.Fatalf("%d starts, want one per toolbox at least", n)
	}
	e.waitIdleStops()
	if left := fakeserver.WaitUntagged(e.tag, 30*time.Second); len(left) > 0 {
		t.Fatalf("server processes left after the idle timeout: %v", left)
	}

	// Later in the day: the opens are answered from the catalog, and a
	// call works.
	for i := range 10 {
		if r := openText(t, cs, fmt.Sprintf("tb%d", i)); statuses(r) != "s=starting" || len(r.Tools) != 15 {
			t.Errorf("open of tb%d after the idle stop: %s, %d tools", i, statuses(r), len(r.Tools))
		}
	}
	if text, isErr := call(t, cs, "use_tool", use("tb7", "s", "echo", map[string]any{"text": "evening"})); isErr || !strings.Contains(text, `"server":"s7"`) {
		t.Fatalf("the next call: %s", text)
	}
	// The servers the opens started in the background stop again.
	e.waitIdleStops()
	if left := fakeserver.WaitUntagged(e.tag, 30*time.Second); len(left) > 0 {
		t.Fatalf("server processes left after the second idle timeout: %v", left)
	}
}

// An open reports what each start produced: a server stopped for
// idleness while a slower one of its toolbox was still starting is shown
// with the tools it listed, not as failed.
func TestOpenReportsServersIdleStoppedMeanwhile(t *testing.T) {
	e := newEnv(t)
	gate := filepath.Join(t.TempDir(), "gate")
	_, cs := e.workbench(`{"toolboxes": {"dev": {"description": "d", "mcpServers": {
		"fast": ` + strings.Replace(fake("fast"), `"maxRetries": 0`, `"maxRetries": 0, "idleTimeoutMs": 50`, 1) + `,
		"slow": ` + fake("slow", fakeserver.EnvStartGate, gate) + `}}}}`)
	done := make(chan openResult, 1)
	go func() {
		text, _ := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev"})
		var r openResult
		_ = json.Unmarshal([]byte(text), &r)
		done <- r
	}()
	fakeserver.Eventually(t, "fast stopped for idleness", func() bool {
		return strings.Contains(e.logs.String(), "idle for idleTimeoutMs")
	})
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if got := statuses(r); got != "fast=connected slow=connected" || len(r.Tools) != 30 {
		t.Errorf("statuses %s with %d tools; want both connected with their 15 tools each", got, len(r.Tools))
	}
}

// waitIdleStops waits until every server start has been followed by an
// idle stop in the logs: where process trees cannot be listed (no /proc),
// this is how a test knows the servers went idle.
func (e *env) waitIdleStops() {
	e.t.Helper()
	fakeserver.Eventually(e.t, "every server started to stop when idle", func() bool {
		return strings.Count(e.logs.String(), "idle for idleTimeoutMs") >= e.starts()
	})
}
