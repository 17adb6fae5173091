package workbench

import (
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// returns runs f, and fails the test if it has not returned within a
// minute: what it must not do is wait for a server that hangs for good.
func returns[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s waited for a server that hangs", what)
		panic("unreachable")
	}
}

// Searches and opens never wait for a server that hangs in its start in
// the background, nor start again, on every request, a server that fails
// every start: they answer from what the catalog and the running servers
// know, name the others under not_searched with since when they start or
// when they failed and will be tried again, and keep to each failed
// server's schedule. openTimeoutMs is an hour here: any wait for the
// hanging server holds a search past the test's bound.
func TestHangingAndFailingServersDoNotHoldUpOthers(t *testing.T) {
	e := newEnv(t)
	cat := openCatalog(t)
	gate := filepath.Join(t.TempDir(), "gate")
	badState := t.TempDir() // the failing server's starts
	cfgText := `{"openTimeoutMs": 3600000, "toolboxes": {
		"dev": {"description": "Development", "mcpServers": {"a": ` + fake("a") + `}},
		"web": {"description": "Web", "mcpServers": {"w": ` + fake("w", fakeserver.EnvTools, "3") + `}},
		"stuck": {"description": "Hangs", "mcpServers": {
			"hang": ` + strings.Replace(fake("hang", fakeserver.EnvStartGate, gate), `{`, `{"catalog": false, "connectionTimeoutMs": 3600000, `, 1) + `}},
		"broken": {"description": "Fails", "mcpServers": {"bad": ` + fake("bad", fakeserver.EnvExitAtStart, "3", fakeserver.EnvStateDir, badState) + `}}}}`
	cfg := e.config(cfgText)

	// The healthy toolboxes' tools are in the catalog.
	warm := e.catalogWorkbench(cfg, cat)
	cs, closeAll := e.connectManual(warm, nil)
	openText(t, cs, "dev")
	openText(t, cs, "web")
	closeAll()
	warm.Close()

	var retryAfter atomic.Int64
	retryAfter.Store(int64(time.Hour))
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	wb := New(cfg, Options{Version: "test", Logger: log, Stderr: e.logs, Catalog: cat, Downstream: &downstream.Options{
		StopGrace:  500 * time.Millisecond,
		Backoff:    func(int) time.Duration { return 10 * time.Millisecond },
		RetryAfter: func(int) time.Duration { return time.Duration(retryAfter.Load()) },
	}})
	t.Cleanup(wb.Close)
	cs = e.connect(wb, nil)
	hang, bad := wb.Servers("stuck")[0], wb.Servers("broken")[0]
	stillHanging := func() {
		t.Helper()
		if _, err := os.Stat(gate); err == nil {
			t.Fatal("the gate is open")
		}
		if st := hang.State(); st.Status != downstream.StatusStarting {
			t.Fatalf("the hanging server is %s (%v), want starting", st.Status, st.Err)
		}
	}
	// An open of "stuck" has started its server, which hangs for good.
	hang.StartInBackground()
	stillHanging()

	// The first search starts "bad", which was never started: it fails.
	badStarts := func() int { return len(fakeserver.ReadLines(badState, fakeserver.StartsFile)) }
	for i := range 3 {
		r := returns(t, "a search of every toolbox", func() searchResult { return searchTool(t, cs, map[string]any{"query": "echo"}) })
		stillHanging()
		var searched []string
		for _, s := range r.Searched {
			searched = append(searched, s.Toolbox+"/"+s.Server)
		}
		if strings.Join(searched, " ") != "dev/a web/w" {
			t.Errorf("search %d searched %v, want dev/a web/w", i, searched)
		}
		if len(r.Tools) == 0 {
			t.Errorf("search %d found nothing", i)
		}
		why := map[string]string{}
		for _, n := range r.NotSearched {
			why[n.Toolbox+"/"+n.Server] = n.Status + ": " + n.Error
		}
		if w := why["stuck/hang"]; !strings.HasPrefix(w, "starting: starting since ") {
			t.Errorf("search %d: stuck/hang is %q, want starting since …", i, w)
		}
		// The first search tried it; the next ones say when it failed.
		w := why["broken/bad"]
		if !strings.HasPrefix(w, "error: ") || i > 0 && !strings.HasPrefix(w, "error: failed ") || !strings.Contains(w, "exiting at start as asked") || !nextTryInAnHour.MatchString(w) {
			t.Errorf("search %d: broken/bad is %q, want (when it failed), why, and when it is tried again", i, w)
		}

		for _, tb := range []string{"dev", "web"} {
			o := returns(t, "an open of "+tb, func() openResult { return openText(t, cs, tb) })
			if len(o.Tools) == 0 {
				t.Errorf("open %s: no tools", tb)
			}
		}
		sel := returns(t, "a selection", func() searchResult {
			return searchTool(t, cs, map[string]any{"toolbox_name": "dev", "tools": []string{"echo"}})
		})
		if len(sel.Tools) != 1 {
			t.Errorf("selection: %d tools", len(sel.Tools))
		}
		text, isErr := returns(t, "an open of the failing toolbox", func() callOut { return callOf(t, cs, "broken") }).get()
		if !isErr || !strings.Contains(text, "next try in") {
			t.Errorf("open of the failing toolbox (error %v): %s", isErr, text)
		}
		text, isErr = returns(t, "an open of the hanging toolbox", func() callOut { return callOf(t, cs, "stuck") }).get()
		if isErr || !strings.Contains(text, `"note":"starting since `) {
			t.Errorf("open of the hanging toolbox (error %v): %s", isErr, text)
		}
		stillHanging()
	}
	if n := badStarts(); n != 1 {
		t.Errorf("the failing server started %d times, want once: it is tried on its schedule, not on every request", n)
	}
	if st := bad.State(); st.Failures != 1 || st.NextTry.Sub(st.FailedAt) != time.Hour {
		t.Errorf("bad's schedule: %+v", st)
	}
	if !strings.Contains(e.logs.String(), "next_try_in=1h0m0s") {
		t.Error("the log does not say when the failing server is tried again")
	}

	// Its next try due, the next search starts it again, in the background.
	retryAfter.Store(0)
	returns(t, "a search", func() searchResult { return searchTool(t, cs, map[string]any{"query": "echo"}) })
	deadline := time.Now().Add(time.Minute)
	for bad.State().Failures < 2 || badStarts() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the failing server was not tried again when due: %+v", bad.State())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stillHanging()

	// The hanging server was hanging, not dead: let it start.
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(time.Minute)
	for hang.State().Status != downstream.StatusConnected {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not start once its gate opened: %+v", hang.State())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var nextTryInAnHour = regexp.MustCompile(`; next try in 3[56]\d\d s`)

type callOut struct {
	text  string
	isErr bool
}

func (c callOut) get() (string, bool) { return c.text, c.isErr }

func callOf(t *testing.T, cs *mcp.ClientSession, toolbox string) callOut {
	text, isErr := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": toolbox})
	return callOut{text, isErr}
}
