package workbench

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// catalogWorkbench is newWorkbench with the tool catalog cat.
func (e *env) catalogWorkbench(cfg *config.Config, cat *catalog.Catalog) *Workbench {
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	wb := New(cfg, Options{Version: "test", Logger: log, Stderr: e.logs, Catalog: cat, Downstream: &downstream.Options{
		StopGrace: 500 * time.Millisecond,
		Backoff:   func(int) time.Duration { return 10 * time.Millisecond },
	}})
	e.t.Cleanup(wb.Close)
	return wb
}

func (e *env) config(text string) *config.Config {
	e.t.Helper()
	cfg, err := parseConfig(text, e)
	if err != nil {
		e.t.Fatalf("config: %v\n%s", err, text)
	}
	return cfg
}

func openCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// keyOf is the catalog key of server in toolbox of cfg.
func keyOf(cfg *config.Config, toolbox, server string) string {
	return catalog.Key(cfg.Toolbox(toolbox).Server(server), downstream.ProtocolVersion)
}

func openText(t *testing.T, cs *mcp.ClientSession, toolbox string) openResult {
	t.Helper()
	text, isErr := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": toolbox})
	if isErr {
		t.Fatalf("open_toolbox %s failed: %s", toolbox, text)
	}
	return parseOpen(t, text)
}

func statuses(r openResult) string {
	var s []string
	for _, srv := range r.Servers {
		s = append(s, srv.Name+"="+srv.Status)
	}
	return strings.Join(s, " ")
}

func toolNames(r openResult) []string {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t["source_server"].(string)+"/"+t["name"].(string))
	}
	return names
}

// gatedConfig is a toolbox "dev" of two fake servers that do not get past
// their start until the file gate exists.
func gatedConfig(gate string) string {
	return `{"toolboxes": {"dev": {"description": "d", "mcpServers": {
		"a": ` + fake("a", fakeserver.EnvStartGate, gate) + `,
		"b": ` + fake("b", fakeserver.EnvStartGate, gate) + `}}}}`
}

// A first open waits for the servers and fills the catalog; a second
// workbench answers its open from the catalog while the servers cannot
// even start (their start gate is closed), with the same tools, and its
// first call waits for the start.
func TestCatalogMissThenHit(t *testing.T) {
	e := newEnv(t)
	cat := openCatalog(t)
	gate := filepath.Join(t.TempDir(), "gate")
	cfg := e.config(gatedConfig(gate))
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	wb1 := e.catalogWorkbench(cfg, cat)
	first := openText(t, e.connect(wb1, nil), "dev")
	if got := statuses(first); got != "a=connected b=connected" {
		t.Fatalf("a miss must wait for the servers: %s", got)
	}
	for _, s := range []string{"a", "b"} {
		e, ok, reason := cat.Get(keyOf(cfg, "dev", s))
		if !ok || len(e.Tools) != 15 {
			t.Fatalf("server %s: no catalog entry with its 15 tools after the open (%s)", s, reason)
		}
	}
	wb1.Close()

	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	wb2 := e.catalogWorkbench(cfg, cat)
	cs := e.connect(wb2, nil)
	second := openText(t, cs, "dev")
	if got := statuses(second); got != "a=starting b=starting" {
		t.Fatalf("a hit must answer at once, servers starting: %s", got)
	}
	if second.ServersConnected != 2 {
		t.Errorf("servers_connected = %d, want 2 (servers whose tools are offered)", second.ServersConnected)
	}
	a, _ := json.Marshal(first.Tools)
	b, _ := json.Marshal(second.Tools)
	if string(a) != string(b) {
		t.Errorf("the catalog's tools differ from the live ones:\nlive    %s\ncatalog %s", a, b)
	}
	// Two starts of the first workbench, two under way, waiting at the gate.
	fakeserver.Eventually(t, "the background starts", func() bool { return e.starts() == 4 })

	// The first call waits for the start, which the gate now lets through.
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	text, isErr := call(t, cs, "use_tool", use("dev", "a", "echo", map[string]any{"text": "hi"}))
	if isErr || !strings.Contains(text, `"server":"a"`) {
		t.Fatalf("call after a catalog open: %s", text)
	}
	if n := e.starts(); n != 4 {
		t.Errorf("%d starts, want 4: the call must use the background start", n)
	}
	// Once the servers run, an open shows them live.
	fakeserver.Eventually(t, "b connected", func() bool { return statuses(openText(t, cs, "dev")) == "a=connected b=connected" })
}

// A catalog entry that no longer matches the server (the server changed
// since it was stored) is shown, replaced by the live list, and a call
// the live list refuses says that the toolbox changed.
func TestCatalogStaleEntry(t *testing.T) {
	e := newEnv(t)
	cat := openCatalog(t)
	cfg := e.config(`{"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": ` + fake("a") + `}}}}`)
	key := keyOf(cfg, "dev", "a")
	stale := []json.RawMessage{
		json.RawMessage(`{"name":"echo","description":"Returns its arguments.","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"add","description":"Adds two strings.","inputSchema":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}}}`),
		json.RawMessage(`{"name":"old_tool","description":"Gone from the server.","inputSchema":{"type":"object"}}`),
	}
	if err := cat.Put(key, stale, nil); err != nil {
		t.Fatal(err)
	}

	wb := e.catalogWorkbench(cfg, cat)
	cs := e.connect(wb, nil)
	r := openText(t, cs, "dev")
	if got := strings.Join(toolNames(r), ","); got != "a/echo,a/add,a/old_tool" || statuses(r) != "a=starting" {
		t.Fatalf("open must show the catalog's entry: %s %s", statuses(r), got)
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"old_tool", nil, "no such tool"},
		{"add", map[string]any{"a": "x", "b": "y"}, "/a: got string, want number"},
	} {
		text, isErr := call(t, cs, "use_tool", use("dev", "a", c.tool, c.args))
		for _, want := range []string{
			"Cannot call tool '" + c.tool + "' in server 'a' (toolbox 'dev')",
			"the toolbox 'dev' changed since it was opened", "Open the toolbox again with open_toolbox", c.want,
		} {
			if !isErr || !strings.Contains(text, want) {
				t.Errorf("use_tool %s after the server changed: %q lacks %q", c.tool, text, want)
			}
		}
	}
	if text, isErr := call(t, cs, "use_tool", use("dev", "a", "add", map[string]any{"a": 1, "b": 2})); isErr || text != "3" {
		t.Errorf("a call the live list accepts: %s", text)
	}
	if got := fakeserver.ReadLines(e.state, fakeserver.CallsFile); len(got) != 1 {
		t.Errorf("the server got calls %v, want only the valid add", got)
	}

	ent, ok, reason := cat.Get(key)
	if !ok || len(ent.Tools) != 15 || strings.Contains(string(ent.Tools[1]), "two strings") {
		t.Fatalf("the stale entry was not replaced by the live list (%s): %d tools", reason, len(ent.Tools))
	}

	// Opened again, the toolbox shows the live list, and refusals are
	// plain ones again.
	r = openText(t, cs, "dev")
	if statuses(r) != "a=connected" || len(r.Tools) != 15 {
		t.Fatalf("open after the change: %s, %d tools", statuses(r), len(r.Tools))
	}
	text, _ := call(t, cs, "use_tool", use("dev", "a", "old_tool", nil))
	if strings.Contains(text, "changed since it was opened") || !strings.Contains(text, "no such tool") {
		t.Errorf("after a fresh open the refusal must be the plain one: %s", text)
	}
}

// A catalog file that does not check out is never trusted: the open waits
// for the server, shows the live tools, and the file is rewritten.
func TestCatalogCorruptFileIsIgnoredAndRewritten(t *testing.T) {
	e := newEnv(t)
	cat := openCatalog(t)
	cfg := e.config(`{"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": ` + fake("a") + `}}}}`)
	key := keyOf(cfg, "dev", "a")
	path := filepath.Join(cat.Dir(), key+".json")

	// A real entry, then tampered with: a tool's description changed
	// without its checksum (still valid JSON); and plain garbage.
	if err := cat.Put(key, []json.RawMessage{json.RawMessage(`{"name":"echo","description":"Returns its arguments.","inputSchema":{"type":"object"}}`)}, nil); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(string(good), "Returns its arguments.", "Runs rm -rf for you.", 1)
	for name, content := range map[string]string{"tampered": tampered, "garbage": "{\"version\":1,\x00not json"} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			wb := e.catalogWorkbench(cfg, cat)
			cs, closeAll := e.connectManual(wb, nil)
			defer closeAll()
			defer wb.Close()
			r := openText(t, cs, "dev")
			if statuses(r) != "a=connected" || len(r.Tools) != 15 {
				t.Fatalf("a corrupt entry must be a miss: %s, %d tools", statuses(r), len(r.Tools))
			}
			for _, tool := range r.Tools {
				if strings.Contains(tool["description"].(string), "rm -rf") {
					t.Fatal("the tampered entry was trusted")
				}
			}
			if ent, ok, reason := cat.Get(key); !ok || len(ent.Tools) != 15 {
				t.Fatalf("the corrupt file was not rewritten: %s", reason)
			}
		})
	}
	if !strings.Contains(e.logs.String(), "corrupt") {
		t.Errorf("the miss's reason is not logged:\n%s", e.logs)
	}
}

// "catalog": false keeps a server out of the catalog: its opens always
// wait for it, and nothing of it is stored.
func TestCatalogOff(t *testing.T) {
	e := newEnv(t)
	cat := openCatalog(t)
	cfg := e.config(`{"catalog": false, "toolboxes": {"dev": {"description": "d", "mcpServers": {"a": ` + fake("a") + `}}}}`)
	for range 2 {
		wb := e.catalogWorkbench(cfg, cat)
		cs, closeAll := e.connectManual(wb, nil)
		if r := openText(t, cs, "dev"); statuses(r) != "a=connected" {
			t.Errorf("catalog false: %s", statuses(r))
		}
		closeAll()
		wb.Close()
	}
	if _, ok, _ := cat.Get(keyOf(cfg, "dev", "a")); ok {
		t.Error("a server with catalog false was stored")
	}
}

// A server that cannot start any more still fails its calls with the
// start's error, though the catalog answered its open.
func TestCatalogHitOfAServerThatFailsToStart(t *testing.T) {
	e := newEnv(t)
	cat := openCatalog(t)
	gate := filepath.Join(t.TempDir(), "gate")
	cfg := e.config(`{"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": ` + fake("a", fakeserver.EnvStartGate, gate) + `}}}}`)
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wb := e.catalogWorkbench(cfg, cat)
	cs, closeAll := e.connectManual(wb, nil)
	openText(t, cs, "dev")
	closeAll()
	wb.Close()

	if err := os.WriteFile(gate, []byte("exit"), 0o644); err != nil {
		t.Fatal(err)
	}
	wb = e.catalogWorkbench(cfg, cat)
	cs = e.connect(wb, nil)
	if r := openText(t, cs, "dev"); statuses(r) != "a=starting" {
		t.Fatalf("open: %s", statuses(r))
	}
	text, isErr := call(t, cs, "use_tool", use("dev", "a", "echo", nil))
	if !isErr || !strings.Contains(text, "Error executing tool 'echo' in server 'a' (toolbox 'dev'): could not start") || !strings.Contains(text, "the start gate says exit") {
		t.Errorf("call to a server that cannot start: %s", text)
	}
	// Once its start has failed, the catalog no longer speaks for it: the
	// next open says why it failed, and when it is tried again.
	if text, isErr := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev"}); !isErr || !strings.Contains(text, "the start gate says exit") {
		t.Errorf("open after the failed start (error %v): %s", isErr, text)
	}
}

// Closing the workbench while servers start in the background (after a
// catalog open) stops them at once: their start is cut short.
func TestCloseDuringBackgroundStart(t *testing.T) {
	e := newEnv(t)
	cat := openCatalog(t)
	gate := filepath.Join(t.TempDir(), "gate")
	cfg := e.config(gatedConfig(gate))
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wb := e.catalogWorkbench(cfg, cat)
	cs, closeAll := e.connectManual(wb, nil)
	openText(t, cs, "dev")
	closeAll()
	wb.Close()

	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	wb = e.catalogWorkbench(cfg, cat)
	cs, closeAll = e.connectManual(wb, nil)
	defer closeAll()
	if r := openText(t, cs, "dev"); statuses(r) != "a=starting b=starting" {
		t.Fatalf("open: %s", statuses(r))
	}
	fakeserver.Eventually(t, "the background starts", func() bool { return e.starts() == 4 })
	closed := make(chan struct{})
	go func() { wb.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(15 * time.Second):
		t.Fatal("Close hangs on servers starting in the background")
	}
	if left := fakeserver.WaitUntagged(e.tag, 30*time.Second); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}
