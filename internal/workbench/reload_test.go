package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// whoami returns the process id of the server behind toolbox/server, and
// the name it reports.
func whoami(t *testing.T, cs *mcp.ClientSession, toolbox, server string) (pid int, name string) {
	t.Helper()
	text, isErr := call(t, cs, "use_tool", use(toolbox, server, "whoami", nil))
	if isErr {
		t.Fatalf("whoami %s/%s: %s", toolbox, server, text)
	}
	var out struct {
		PID    int    `json:"pid"`
		Server string `json:"server"`
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("whoami: %v: %s", err, text)
	}
	return out.PID, out.Server
}

// openToolboxEnum returns open_toolbox's toolbox enum and description as
// the host lists them.
func openToolboxEnum(t *testing.T, cs *mcp.ClientSession) ([]string, string) {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name != "open_toolbox" {
			continue
		}
		var schema struct {
			Properties struct {
				ToolboxName struct {
					Enum []string `json:"enum"`
				} `json:"toolbox_name"`
			} `json:"properties"`
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		return schema.Properties.ToolboxName.Enum, tool.Description
	}
	t.Fatal("no open_toolbox")
	return nil, ""
}

func alive(t *testing.T, tag string, pid int) bool {
	pids, ok := fakeserver.Tagged(tag)
	if !ok {
		t.Skip("process checks need /proc")
	}
	return slices.Contains(pids, pid)
}

// A reload that adds, removes and changes toolboxes and servers: the host
// is told, removed servers stop (a call in flight to one ends with why),
// changed ones start again with their new definition, unchanged ones keep
// their process.
func TestReloadAddsRemovesAndChanges(t *testing.T) {
	e := newEnv(t)
	before := e.config(`{"toolboxes": {
		"keep":   {"description": "kept", "mcpServers": {"a": ` + fake("a") + `}},
		"gone":   {"description": "removed", "mcpServers": {"g": ` + fake("g") + `}},
		"change": {"description": "changed", "mcpServers": {"c": ` + fake("c") + `, "u": ` + fake("u") + `, "r": ` + fake("r") + `}}}}`)
	after := e.config(`{"toolboxes": {
		"keep":   {"description": "kept", "mcpServers": {"a": ` + fake("a") + `}},
		"change": {"description": "changed", "mcpServers": {"c": ` + fake("c2") + `, "u": ` + fake("u") + `}},
		"added":  {"description": "new", "mcpServers": {"n": ` + fake("n") + `}}}}`)
	wb := e.newWorkbench(before)
	changed := make(chan struct{}, 10)
	cs := e.connect(wb, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})

	pids := map[string]int{}
	for _, id := range []string{"keep/a", "gone/g", "change/c", "change/u", "change/r"} {
		tb, srv, _ := strings.Cut(id, "/")
		pids[id], _ = whoami(t, cs, tb, srv)
	}
	inFlight := make(chan string, 1)
	go func() {
		text, _ := call(t, cs, "use_tool", use("gone", "g", "sleep", map[string]any{"ms": 60000}))
		inFlight <- text
	}()
	fakeserver.Eventually(t, "the sleep call to arrive", func() bool {
		return has(fakeserver.ReadLines(e.state, fakeserver.CallsFile), "sleep")
	})

	ch := wb.Reload(after)
	if !slices.Equal(ch.ToolboxesAdded, []string{"added"}) || !slices.Equal(ch.ToolboxesRemoved, []string{"gone"}) || !slices.Equal(ch.ToolboxesChanged, []string{"change"}) {
		t.Errorf("changes: %+v", ch)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("the host got no notifications/tools/list_changed")
	}
	enum, desc := openToolboxEnum(t, cs)
	if !slices.Equal(enum, []string{"keep", "change", "added"}) || !strings.Contains(desc, "Toolboxes: keep, change, added.") {
		t.Errorf("open_toolbox after the reload: enum %v, description %q", enum, desc)
	}

	select {
	case text := <-inFlight:
		if !strings.Contains(text, "Error executing tool 'sleep' in server 'g' (toolbox 'gone')") || !strings.Contains(text, "removed from the workbench configuration") {
			t.Errorf("the call in flight to a removed server: %s", text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight to a removed server did not end")
	}
	for _, id := range []string{"gone/g", "change/c", "change/r"} {
		if alive(t, e.tag, pids[id]) {
			t.Errorf("%s (pid %d) still runs after the reload", id, pids[id])
		}
	}
	if text, _ := call(t, cs, "use_tool", use("gone", "g", "echo", nil)); !strings.Contains(text, "Toolbox 'gone' not found. Available toolboxes: keep, change, added") {
		t.Errorf("use of a removed toolbox: %s", text)
	}
	if text, _ := call(t, cs, "use_tool", use("change", "r", "echo", nil)); !strings.Contains(text, "toolbox 'change' has no server 'r'") {
		t.Errorf("use of a removed server: %s", text)
	}
	for _, id := range []string{"keep/a", "change/u"} {
		tb, srv, _ := strings.Cut(id, "/")
		if pid, _ := whoami(t, cs, tb, srv); pid != pids[id] {
			t.Errorf("unchanged %s runs as pid %d, was %d: it must keep running", id, pid, pids[id])
		}
	}
	if pid, name := whoami(t, cs, "change", "c"); pid == pids["change/c"] || name != "c2" {
		t.Errorf("changed server c: pid %d (was %d), name %q: it must start again with its new definition", pid, pids["change/c"], name)
	}
	if r := openText(t, cs, "added"); statuses(r) != "n=connected" {
		t.Errorf("open of an added toolbox: %s", statuses(r))
	}
	// A reload to the same configuration changes nothing and tells no one.
	if ch := wb.Reload(after); !ch.Empty() {
		t.Errorf("reload of the same configuration: %+v", ch)
	}
}

// Calls in flight to servers a reload keeps are never cut or lost, while
// reloads change the servers beside them and add and remove toolboxes.
func TestReloadUnderLoad(t *testing.T) {
	e := newEnv(t)
	cfgs := []string{
		`{"toolboxes": {"load": {"description": "l", "mcpServers": {"a": ` + fake("a") + `, "b": ` + fake("b1") + `}}}}`,
		`{"toolboxes": {"load": {"description": "l", "mcpServers": {"a": ` + fake("a") + `, "b": ` + fake("b2") + `}}, "extra": {"description": "x", "mcpServers": {"x": ` + fake("x") + `}}}}`,
	}
	wb := e.newWorkbench(e.config(cfgs[0]))
	cs := e.connect(wb, nil)
	pid, _ := whoami(t, cs, "load", "a")

	var made, failed atomic.Int64
	var failures sync.Map
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				made.Add(1)
				text, isErr := call(t, cs, "use_tool", use("load", "a", "sleep", map[string]any{"ms": 5 + (w+i)%20}))
				if isErr || !strings.HasPrefix(text, "slept ") {
					failed.Add(1)
					failures.Store(text, true)
				}
			}
		})
	}
	for i := 1; i <= 6; i++ {
		goal := made.Load() + 16
		fakeserver.Eventually(t, "calls in flight", func() bool { return made.Load() >= goal })
		wb.Reload(e.config(cfgs[i%2]))
	}
	close(stop)
	wg.Wait()

	if n := failed.Load(); n > 0 {
		var texts []string
		failures.Range(func(k, _ any) bool { texts = append(texts, k.(string)); return true })
		t.Fatalf("%d of %d calls failed across reloads: %v", n, made.Load(), texts)
	}
	sleeps := 0
	for _, l := range fakeserver.ReadLines(e.state, fakeserver.CallsFile) {
		if l == "sleep" {
			sleeps++
		}
	}
	if int64(sleeps) != made.Load() {
		t.Errorf("the server got %d calls, %d were made: calls were lost or doubled", sleeps, made.Load())
	}
	if now, _ := whoami(t, cs, "load", "a"); now != pid {
		t.Errorf("the unchanged server runs as pid %d, was %d", now, pid)
	}
	t.Logf("%d calls across 6 reloads", made.Load())
}

// Reloading after Close does nothing and starts nothing.
func TestReloadAfterClose(t *testing.T) {
	e := newEnv(t)
	cfg := e.config(`{"toolboxes": {"a": {"description": "a", "mcpServers": {"s": ` + fake("s") + `}}}}`)
	wb := e.newWorkbench(cfg)
	wb.Close()
	wb.Reload(e.config(`{"toolboxes": {"b": {"description": "b", "mcpServers": {"s": ` + fake("s") + `}}}}`))
	if got := fmt.Sprint(wb.state.Load().cfg.ToolboxNames()); got != "[a]" {
		t.Errorf("toolboxes after a reload after Close: %s", got)
	}
}
