package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official servers through the whole of "no cost until used": a first
// session fills the tool catalog; a second one opens from it at once, every
// server starting in the background, and its calls work; a server idle for
// its idleTimeoutMs is stopped (its process gone) and the next call starts
// it again with its data; an edit of the configuration that adds a server
// and removes another is applied, with list_changed, while the kept
// servers serve on.
func TestOfficialServersCatalogIdleStopAndReload(t *testing.T) {
	memory := fakeserver.NPMServer(t, "mcp-server-memory")
	filesystem := fakeserver.NPMServer(t, "mcp-server-filesystem")
	everything := fakeserver.NPMServer(t, "mcp-server-everything")
	home := t.TempDir()
	for _, v := range fakeserver.HomeVars {
		t.Setenv(v, home)
	}
	files := t.TempDir()
	if err := os.WriteFile(filepath.Join(files, "note.txt"), []byte("hello from the workbench"), 0o644); err != nil {
		t.Fatal(err)
	}
	mark := "official-" + filepath.Base(home) // tells this test's memory server apart
	servers := map[string]any{
		"memory": map[string]any{"command": memory, "idleTimeoutMs": 1000, "env": map[string]string{
			"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl"), "WB_TEST_MARK": mark,
		}},
		"files":      map[string]any{"command": filesystem, "args": []string{files}},
		"everything": map[string]any{"command": everything},
	}
	config := func() map[string]any {
		return map[string]any{"toolboxes": map[string]any{"official": map[string]any{"description": "the official servers", "mcpServers": servers}}}
	}
	path := writeConfig(t, config())

	first, _ := runInProcess(t, "--config", path)
	if text, isErr := callTool(t, first, "open_toolbox", map[string]any{"toolbox_name": "official"}); isErr || strings.Count(text, `"status":"connected"`) != 3 {
		t.Fatalf("first open: %s", text)
	}

	changed := make(chan struct{}, 10)
	cs, stderr := runInProcessWith(t, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}, "--config", path, "--log-level", "info")
	text, isErr := callTool(t, cs, "open_toolbox", map[string]any{"toolbox_name": "official"})
	if isErr || strings.Count(text, `"status":"starting"`) != 3 || !strings.Contains(text, `"name":"read_text_file"`) {
		t.Fatalf("open from the catalog: %s", text)
	}
	if text, isErr := callTool(t, cs, "use_tool", use("official", "files", "read_text_file", map[string]any{"path": filepath.Join(files, "note.txt")})); isErr || !strings.Contains(text, "hello from the workbench") {
		t.Errorf("read_text_file after a catalog open: %s", text)
	}
	// The memory server may be stopped for idleness at any moment after
	// the call below (its idleTimeoutMs is short, and a busy machine can
	// pass it before the test looks), so whether /proc shows its process is
	// watched from before the call, not checked once after it.
	sawMemory := watchMarked(t, mark)
	if text, isErr := callTool(t, cs, "use_tool", use("official", "memory", "create_entities", map[string]any{
		"entities": []any{map[string]any{"name": "Ada Lovelace", "entityType": "person", "observations": []string{"wrote the first program"}}},
	})); isErr {
		t.Fatalf("create_entities: %s", text)
	}

	fakeserver.Eventually(t, "the idle memory server to be stopped", func() bool {
		return strings.Contains(stderr.String(), "idle for idleTimeoutMs") && markedProcesses(t, mark) == 0
	})
	if runtime.GOOS == "linux" && !sawMemory() {
		t.Fatal("the memory server's process was never to be found in /proc: the idle check above proves nothing")
	}
	if text, isErr := callTool(t, cs, "use_tool", use("official", "memory", "search_nodes", map[string]any{"query": "first program"})); isErr || !strings.Contains(text, "Ada Lovelace") {
		t.Errorf("search_nodes after the idle stop: %s", text)
	}

	// The edit: everything goes, a second filesystem server comes.
	delete(servers, "everything")
	servers["more-files"] = map[string]any{"command": filesystem, "args": []string{files}}
	data, _ := json.MarshalIndent(config(), "", "  ")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, changed, "list_changed after the edit")
	text, isErr = callTool(t, cs, "open_toolbox", map[string]any{"toolbox_name": "official"})
	if isErr || !strings.Contains(text, `"name":"more-files"`) || strings.Contains(text, `"name":"everything"`) {
		t.Fatalf("open after the edit: %s", text)
	}
	if text, isErr := callTool(t, cs, "use_tool", use("official", "more-files", "list_directory", map[string]any{"path": files})); isErr || !strings.Contains(text, "note.txt") {
		t.Errorf("the added server: %s", text)
	}
	if text, isErr := callTool(t, cs, "use_tool", use("official", "everything", "echo", map[string]any{"message": "hi"})); !isErr || !strings.Contains(text, "everything") {
		t.Errorf("the removed server answered: %s", text)
	}
	if text, isErr := callTool(t, cs, "use_tool", use("official", "files", "read_text_file", map[string]any{"path": filepath.Join(files, "note.txt")})); isErr || !strings.Contains(text, "hello from the workbench") {
		t.Errorf("the kept server after the edit: %s", text)
	}
}

// watchMarked polls markedProcesses until the test ends; the function it
// returns stops the polling and says whether a marked process was ever seen.
func watchMarked(t *testing.T, mark string) func() bool {
	var seen atomic.Bool
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			if markedProcesses(t, mark) > 0 {
				seen.Store(true)
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	finish := func() bool {
		once.Do(func() { close(stop); <-done })
		return seen.Load()
	}
	t.Cleanup(func() { finish() })
	return finish
}

// markedProcesses counts the processes whose environment holds
// WB_TEST_MARK=mark (Linux; elsewhere 0, and the log alone tells).
func markedProcesses(t *testing.T, mark string) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return 0
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	n := 0
	for _, p := range procs {
		env, err := os.ReadFile(p)
		if err == nil && slices.Contains(strings.Split(string(env), "\x00"), "WB_TEST_MARK="+mark) {
			n++
		}
	}
	return n
}
