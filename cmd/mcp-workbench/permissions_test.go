package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// permissionConfig writes a configuration of one fake server offering
// testdata/permission-tools.json, under annotation defaults (destructive:
// ask, read-only: allow); state is its counters' folder.
func permissionConfig(t *testing.T) (cfg, state string) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	tools, err := filepath.Abs(filepath.Join("testdata", "permission-tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	state = t.TempDir()
	cfg = writeConfig(t, map[string]any{
		"permissions": map[string]any{"annotations": map[string]any{"destructiveHint": "ask", "readOnlyHint": "allow"}},
		"toolboxes": map[string]any{"data": map[string]any{"description": "Data", "mcpServers": map[string]any{
			"db": fakeServerEntry("db", fakeserver.EnvToolsFile, tools, fakeserver.EnvStateDir, state),
		}}},
	})
	return cfg, state
}

func countCalls(state, tool string) int {
	return len(slices.DeleteFunc(fakeserver.ReadLines(state, fakeserver.CallsFile), func(l string) bool { return l != tool }))
}

// TestPermissionsThroughTheTypeScriptHost: the official TypeScript client
// as the host, answering the workbench's questions: a destructive tool
// under the annotation default is asked about; a decline never calls the
// server, an accept calls it once, "allow for this session" stops the
// questions for that tool only.
func TestPermissionsThroughTheTypeScriptHost(t *testing.T) {
	cfg, state := permissionConfig(t)
	t.Setenv("HOST_ROOT", "file:///tmp")
	answers, _ := json.Marshal([]map[string]any{
		{"action": "decline"},
		{"action": "accept", "content": map[string]any{"allowForSession": false}},
		{"action": "accept", "content": map[string]any{"allowForSession": true}},
		{"action": "decline"}, // every question from here on
	})
	t.Setenv("HOST_ELICIT", string(answers))
	step := func(tool string) map[string]any {
		return map[string]any{"call": "use_tool", "arguments": use("data", "db", tool, map[string]any{"id": 1})}
	}
	out := tsHost(t, []map[string]any{
		step("read_item"),   // allowed, not asked
		step("delete_item"), // declined
		step("delete_item"), // accepted once
		step("delete_item"), // accepted for the session
		step("delete_item"), // not asked: allowed for the session
		step("drop_table"),  // asked, declined
	}, "--config", cfg)
	for i, want := range []struct {
		err  bool
		text string
	}{{false, "read_item"}, {true, "the user declined"}, {false, "delete_item"}, {false, "delete_item"}, {false, "delete_item"}, {true, "the user declined"}} {
		text, isErr := toolText(t, out[i])
		if isErr != want.err || !strings.Contains(text, want.text) {
			t.Errorf("step %d: %s (error %v); want %q (error %v)", i, text, isErr, want.text, want.err)
		}
	}
	if got := countCalls(state, "delete_item"); got != 3 {
		t.Errorf("the server got %d calls of delete_item, want 3 (the declined one never reached it)", got)
	}
	if got := countCalls(state, "drop_table"); got != 0 {
		t.Errorf("the server got %d calls of drop_table, want 0", got)
	}
}

// TestPermissionsTypeScriptHostWithoutForms: a host that declares no
// elicitation gets an asked call refused, with what to do.
func TestPermissionsTypeScriptHostWithoutForms(t *testing.T) {
	cfg, state := permissionConfig(t)
	out := tsHost(t, []map[string]any{{"call": "use_tool", "arguments": use("data", "db", "delete_item", nil)}}, "--config", cfg)
	text, isErr := toolText(t, out[0])
	if !isErr || !strings.Contains(text, "asks the user before this tool runs") || !strings.Contains(text, "does not support elicitation") || !strings.Contains(text, cfg) {
		t.Errorf("%s (error %v); want the explanatory refusal", text, isErr)
	}
	if n := countCalls(state, "delete_item"); n != 0 {
		t.Errorf("the server got %d calls", n)
	}
}

// TestPermissionsToolNamesWithSlashes: tool names may contain "/", and a
// glob's * matches it as any other character: a server's "*": "deny"
// denies "admin/drop_db", a toolbox's "raw/*" every tool of raw, slashes
// and all, and toolFilters select such a tool by a glob.
func TestPermissionsToolNamesWithSlashes(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	tools := filepath.Join(t.TempDir(), "tools.json")
	writeJSONFile(t, tools, map[string]any{"tools": []any{
		map[string]any{"name": "admin/drop_db", "description": "Drops the database.", "inputSchema": map[string]any{"type": "object"}},
		map[string]any{"name": "x/y/z", "description": "Does z.", "inputSchema": map[string]any{"type": "object"}},
	}})
	state := map[string]string{"deny": t.TempDir(), "raw": t.TempDir(), "picked": t.TempDir()}
	server := func(name string, extra map[string]any) map[string]any {
		e := fakeServerEntry(name, fakeserver.EnvToolsFile, tools, fakeserver.EnvStateDir, state[name])
		for k, v := range extra {
			e[k] = v
		}
		return e
	}
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{"data": map[string]any{
		"description": "Data",
		"permissions": map[string]any{"tools": map[string]any{"raw/*": "deny"}},
		"mcpServers": map[string]any{
			"deny":   server("deny", map[string]any{"permissions": map[string]any{"tools": map[string]any{"*": "deny"}}}),
			"raw":    server("raw", nil),
			"picked": server("picked", map[string]any{"toolFilters": []string{"admin*"}}),
		},
	}}})
	cs, _ := runInProcess(t, "--config", cfg)
	for _, tt := range []struct {
		server, tool string
		refused      string
	}{
		{"deny", "admin/drop_db", `the rule "*" at toolboxes.data.mcpServers.deny.permissions.tools`},
		{"deny", "x/y/z", `the rule "*"`},
		{"raw", "admin/drop_db", `the rule "raw/*" at toolboxes.data.permissions.tools`},
		{"raw", "x/y/z", `the rule "raw/*"`},
		{"picked", "admin/drop_db", ""},
		{"picked", "x/y/z", "toolFilters exclude it"},
	} {
		text, isErr := callTool(t, cs, "use_tool", use("data", tt.server, tt.tool, map[string]any{}))
		if tt.refused == "" {
			if isErr {
				t.Errorf("%s/%s: %s", tt.server, tt.tool, text)
			}
			continue
		}
		if !isErr || !strings.Contains(text, tt.refused) {
			t.Errorf("%s/%s: %s (error %v); want a refusal naming %s", tt.server, tt.tool, text, isErr, tt.refused)
		}
	}
	for _, name := range []string{"deny", "raw"} {
		if lines := fakeserver.ReadLines(state[name], fakeserver.CallsFile); len(lines) != 0 {
			t.Errorf("server %s was called: %v", name, lines)
		}
	}
}

// TestHookApprovalOncePerUser: the approval the Claude Code hook adds to
// an asked call counts once for the user, whichever workbench process it
// reaches: used in workbench A, it is ignored by workbench B (running at
// the same time, or started after A ended), which asks as usual (and, its
// host having no forms, refuses); the server is called once.
func TestHookApprovalOncePerUser(t *testing.T) {
	cfg, state := permissionConfig(t)
	hookIn, _ := json.Marshal(map[string]any{
		"hook_event_name": "PreToolUse", "tool_name": "mcp__workbench__use_tool",
		"tool_input": use("data", "db", "delete_item", map[string]any{"id": 7}),
	})
	code, stdout, stderr := runCmd(t, string(hookIn), "hook", "claude-code", "--config", cfg)
	var out hookOutput
	if code != 0 || json.Unmarshal([]byte(stdout), &out) != nil || out.HookSpecificOutput.PermissionDecision != "ask" || len(out.HookSpecificOutput.UpdatedInput) == 0 {
		t.Fatalf("the hook: exit %d\n%s%s", code, stdout, stderr)
	}
	var approved map[string]any
	if err := json.Unmarshal(out.HookSpecificOutput.UpdatedInput, &approved); err != nil {
		t.Fatal(err)
	}
	// A workbench process of its own, with a host that has no forms.
	workbench := func() *mcp.ClientSession {
		exe, _ := os.Executable()
		cmd := exec.Command(exe, "--config", cfg)
		cmd.Env = append(os.Environ(), envMain+"=1")
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctxT(t), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	a, b := workbench(), workbench()
	if text, isErr := callTool(t, a, "use_tool", approved); isErr {
		t.Fatalf("workbench A, the approved call: %s", text)
	}
	for name, cs := range map[string]*mcp.ClientSession{"A again": a, "B, beside A": b} {
		if text, isErr := callTool(t, cs, "use_tool", approved); !isErr || !strings.Contains(text, "the host cannot ask") {
			t.Errorf("workbench %s, the approval used already: %s (error %v); want it asked about, and refused", name, text, isErr)
		}
	}
	a.Close()
	b.Close()
	c := workbench()
	defer c.Close()
	if text, isErr := callTool(t, c, "use_tool", approved); !isErr || !strings.Contains(text, "the host cannot ask") {
		t.Errorf("workbench C, after A ended: %s (error %v); want it asked about, and refused", text, isErr)
	}
	if n := countCalls(state, "delete_item"); n != 1 {
		t.Errorf("the server got %d calls of delete_item, want 1", n)
	}
}

// TestPermissionsAnswerNotFittingTheForm: a 2025 host's accept whose
// content does not fit the permission form — a field of the wrong type,
// or one the form does not have — refuses the call saying so, not that
// the host cannot ask.
func TestPermissionsAnswerNotFittingTheForm(t *testing.T) {
	cfg, state := permissionConfig(t)
	for _, content := range []map[string]any{{"allowForSession": "yes please"}, {"remember": true}} {
		cs, _ := runInProcessAt(t, "2025-11-25", &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: content}, nil
			},
		}, "--config", cfg)
		text, isErr := callTool(t, cs, "use_tool", use("data", "db", "delete_item", map[string]any{"id": 1}))
		if !isErr || !strings.Contains(text, "does not match its form") || strings.Contains(text, "cannot ask") {
			t.Errorf("%v: %s (error %v); want a refusal saying the answer does not fit the form", content, text, isErr)
		}
	}
	if n := countCalls(state, "delete_item"); n != 0 {
		t.Errorf("the server got %d calls", n)
	}
}
