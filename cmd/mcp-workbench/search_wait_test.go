package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// TestFirstSearchBesideAHangingServer: with one toolbox known (its server
// running) and another never listed whose server hangs in its start, the
// first search answers from what is known within searchTimeoutMs, naming
// the hanging server under "not_searched" as starting, while it still
// hangs: openTimeoutMs (an hour here, as the server's
// connectionTimeoutMs) is for opens. Issue 36 #13: the
// first search waited openTimeoutMs (45 s); only later ones did not.
// The next search after the server is up finds its tools.
func TestFirstSearchBesideAHangingServer(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	hangs := fakeServerEntry("hangs", fakeserver.EnvStartGate, gate)
	hangs["connectionTimeoutMs"] = 3600000 // it hangs until the gate opens
	cfg := writeConfig(t, map[string]any{
		"openTimeoutMs":   3600000,
		"searchTimeoutMs": 200,
		"toolboxes": map[string]any{
			"known": map[string]any{"description": "running", "mcpServers": map[string]any{"a": fakeServerEntry("a")}},
			"new":   map[string]any{"description": "never listed", "mcpServers": map[string]any{"hangs": hangs}},
		},
	})
	cs, _ := runInProcess(t, "--config", cfg)
	if text, isErr := callTool(t, cs, "use_tool", use("known", "a", "echo", map[string]any{"text": "x"})); isErr {
		t.Fatalf("the call that starts a: %s", text)
	}

	type result struct {
		Tools []struct {
			Name   string `json:"name"`
			Server string `json:"source_server"`
		} `json:"tools"`
		Searched    []struct{ Toolbox, Server string }                `json:"searched"`
		NotSearched []struct{ Toolbox, Server, Status, Error string } `json:"not_searched"`
	}
	search := func() result {
		t.Helper()
		text, isErr := callTool(t, cs, "open_toolbox", map[string]any{"query": "echo the text"})
		var r result
		if err := json.Unmarshal([]byte(text), &r); isErr || err != nil {
			t.Fatalf("search: %v %v %s", isErr, err, text)
		}
		return r
	}
	r := search()
	if _, err := os.Stat(gate); err == nil {
		t.Fatal("the gate is open: the server no longer hangs")
	}
	if len(r.Tools) == 0 || r.Tools[0].Name != "echo" || r.Tools[0].Server != "a" {
		t.Errorf("the first search's tools = %+v, want a's echo first", r.Tools)
	}
	if len(r.NotSearched) != 1 || r.NotSearched[0].Toolbox != "new" || r.NotSearched[0].Server != "hangs" ||
		r.NotSearched[0].Status != "starting" || !strings.Contains(r.NotSearched[0].Error, "search again in a moment") {
		t.Errorf("not_searched = %+v, want new/hangs starting", r.NotSearched)
	}

	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fakeserver.Eventually(t, "a search that sees the server once it is up", func() bool {
		r := search()
		return len(r.Searched) == 2 && len(r.NotSearched) == 0
	})
}
