package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolboxEnum is open_toolbox's toolbox enum as the host lists it.
func toolboxEnum(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "open_toolbox" {
			var schema struct {
				Properties struct {
					ToolboxName struct {
						Enum []string `json:"enum"`
					} `json:"toolbox_name"`
				} `json:"properties"`
			}
			b, _ := json.Marshal(tool.InputSchema)
			_ = json.Unmarshal(b, &schema)
			return schema.Properties.ToolboxName.Enum
		}
	}
	t.Fatal("no open_toolbox")
	return nil
}

func waitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(15 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func downstreamPID(t *testing.T, cs *mcp.ClientSession, toolbox, server string) string {
	t.Helper()
	text, isErr := callTool(t, cs, "use_tool", map[string]any{"tool": map[string]string{"toolbox": toolbox, "server": server, "tool": "whoami"}})
	if isErr {
		t.Fatalf("whoami %s/%s: %s", toolbox, server, text)
	}
	var out struct{ PID json.Number }
	_ = json.Unmarshal([]byte(text), &out)
	return out.PID.String()
}

// The configuration file is watched while serving: an edit in place and a
// replacement by rename (as editors save) are applied and the host is told
// (a real client sees notifications/tools/list_changed); an invalid edit
// is logged, every problem with its JSON path, and the workbench keeps
// serving the configuration it had, its servers still running.
func TestServeReloadsTheConfigurationFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "workbench-config.json")
	write := func(name string, v any) {
		t.Helper()
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	one := map[string]any{"description": "first", "mcpServers": map[string]any{"a": fakeServerEntry("a")}}
	two := map[string]any{"description": "second", "mcpServers": map[string]any{"b": fakeServerEntry("b")}}
	write(path, map[string]any{"toolboxes": map[string]any{"one": one}})

	changed := make(chan struct{}, 10)
	cs, stderr := runInProcessWith(t, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}, "--config", path)
	pid := downstreamPID(t, cs, "one", "a")

	// An edit in place adds a toolbox.
	write(path, map[string]any{"toolboxes": map[string]any{"one": one, "two": two}})
	waitSignal(t, changed, "list_changed after an edit in place")
	if got := toolboxEnum(t, cs); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("toolboxes after the edit: %v", got)
	}
	if text, isErr := callTool(t, cs, "open_toolbox", map[string]any{"toolbox_name": "two"}); isErr {
		t.Fatalf("open of the added toolbox: %s", text)
	}

	// A broken edit changes nothing.
	write(path, map[string]any{"toolboxes": map[string]any{
		"one": one,
		"bad": map[string]any{"mcpServers": map[string]any{"x": map[string]any{"command": 5, "env": map[string]any{"K": "${WB_TEST_UNSET_VARIABLE}"}}}},
	}})
	// Waits for this edit's own problems: a busy machine can split a
	// write (truncate, then write), and the empty file it read meanwhile
	// is logged as kept out too.
	fakeserver.Eventually(t, "the invalid edit to be logged", func() bool {
		return strings.Contains(stderr.String(), "still serving the previous one") && strings.Contains(stderr.String(), "path=toolboxes.bad.mcpServers.x.command")
	})
	for _, want := range []string{"path=toolboxes.bad.description", "path=toolboxes.bad.mcpServers.x.command", "WB_TEST_UNSET_VARIABLE"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the log of the invalid edit lacks %q:\n%s", want, stderr)
		}
	}
	if got := toolboxEnum(t, cs); !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("toolboxes after an invalid edit: %v", got)
	}
	if now := downstreamPID(t, cs, "one", "a"); now != pid {
		t.Errorf("server one/a runs as pid %s, was %s: an invalid edit must leave it alone", now, pid)
	}

	// An editor's save: a new file renamed over the old one.
	tmp := filepath.Join(dir, ".workbench-config.json.swp")
	write(tmp, map[string]any{"toolboxes": map[string]any{"two": two}})
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, changed, "list_changed after a rename-replace")
	if got := toolboxEnum(t, cs); !slices.Equal(got, []string{"two"}) {
		t.Fatalf("toolboxes after the rename: %v", got)
	}
	text, isErr := callTool(t, cs, "use_tool", map[string]any{"tool": map[string]string{"toolbox": "one", "server": "a", "tool": "echo"}})
	if !isErr || !strings.Contains(text, "Toolbox 'one' not found. Available toolboxes: two") {
		t.Errorf("use of a removed toolbox: %s", text)
	}
}

// serve and check keep the tool catalog in the user's cache folder: a
// second session answers its open from it.
func TestServeAndCheckUseTheUserCatalog(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("LOCALAPPDATA", cache)
	t.Setenv("HOME", cache)
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "d", "mcpServers": map[string]any{"a": fakeServerEntry("a"), "b": fakeServerEntry("b")}},
	}})
	dir := filepath.Join(cache, "mcp-workbench", "catalog")
	if code, out, errOut := runCmd(t, "", "check", "--config", cfg); code != 0 {
		t.Fatalf("check: %d\n%s\n%s", code, out, errOut)
	}
	entries, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(entries) != 2 {
		t.Fatalf("check stored %d catalog entries in %s, want 2", len(entries), dir)
	}

	cs, _ := runInProcess(t, "--config", cfg)
	text, isErr := callTool(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev"})
	if isErr || strings.Count(text, `"status":"starting"`) != 2 {
		t.Errorf("open with the catalog check filled: %s", text)
	}
	text, isErr = callTool(t, cs, "use_tool", map[string]any{"tool": map[string]string{"toolbox": "dev", "server": "b", "tool": "add"}, "arguments": map[string]any{"a": 2, "b": 3}})
	if isErr || text != "5" {
		t.Errorf("call after a catalog open: %s", text)
	}
}
