package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// capturedServers returns the captured tool lists of real servers in
// testdata/search/tools, by server name.
func capturedServers(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fakeserver.RepoRoot(t), "testdata", "search", "tools", "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("want at least 10 captured tool lists in testdata/search/tools, found %d (%v)", len(files), err)
	}
	out := map[string]string{}
	for _, f := range files {
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = f
	}
	return out
}

// tsHost runs testdata/npm/host.mjs: the official TypeScript client
// starts the workbench (this test binary as main) with args and runs the
// steps, one JSON result per line.
func tsHost(t *testing.T, steps []map[string]any, args ...string) []json.RawMessage {
	t.Helper()
	lines, _ := tsHostWith(t, steps, nil, args...)
	return lines
}

// tsHostWith is tsHost with more of the host's environment (HOST_URL:
// a workbench served over HTTP, which it then starts none of); it returns
// the host's stderr too.
func tsHostWith(t *testing.T, steps []map[string]any, env []string, args ...string) ([]json.RawMessage, string) {
	t.Helper()
	root := fakeserver.RepoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "testdata", "npm", "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		msg := "the TypeScript MCP client is not installed: run 'make test-deps' (npm ci in testdata/npm)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed")
	}
	exe, _ := os.Executable()
	stepsJSON, _ := json.Marshal(steps)
	cmd := exec.Command(node, append([]string{filepath.Join(root, "testdata", "npm", "host.mjs"), exe}, args...)...)
	cmd.Env = append(append(os.Environ(), envMain+"=1", "HOST_STEPS="+string(stepsJSON)), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("host: %v\nstderr:\n%s", err, clipLog(stderr.String()))
	}
	var lines []json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		lines = append(lines, json.RawMessage(slices.Clone(sc.Bytes())))
	}
	if len(lines) != len(steps) {
		t.Fatalf("host printed %d results for %d steps:\n%s\nstderr:\n%s", len(lines), len(steps), out, clipLog(stderr.String()))
	}
	return lines, stderr.String()
}

func clipLog(s string) string {
	if len(s) > 4000 {
		return s[len(s)-4000:]
	}
	return s
}

// toolText is the text of a tools/call result, and whether it is an error.
func toolText(t *testing.T, raw json.RawMessage) (string, bool) {
	t.Helper()
	var res struct {
		Content []struct{ Text string }
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("not a one-text tool result: %s", raw)
	}
	return res.Content[0].Text, res.IsError
}

// The acceptance of open_toolbox's search, as a host sees it: the official
// TypeScript client, a configuration of the real tool lists of 16
// servers, each served by a process of its own, and a catalog warmed by
// check. A search over every toolbox answers with the right servers'
// whole tool objects and starts no server; the first use_tool of a found
// tool starts its server and works; a selection returns exactly the named
// tools; opening GitHub's toolbox keeps to the result budget.
func TestSearchThroughTheTypeScriptClient(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	t.Setenv("LOCALAPPDATA", cache)
	state := t.TempDir()
	servers := capturedServers(t)
	toolboxes := map[string]any{}
	for name, file := range servers {
		toolboxes[name] = map[string]any{"description": "The " + name + " server's tools", "mcpServers": map[string]any{
			name: fakeServerEntry(name, fakeserver.EnvToolsFile, file, fakeserver.EnvStateDir, state),
		}}
	}
	cfg := writeConfig(t, map[string]any{"toolboxes": toolboxes})
	starts := func() int { return len(fakeserver.ReadLines(state, fakeserver.StartsFile)) }

	if code, out, errOut := runCmd(t, "", "check", "--config", cfg); code != 0 {
		t.Fatalf("check: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := starts(); n != len(servers) {
		t.Fatalf("check started %d servers, want %d", n, len(servers))
	}

	type tool struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
		Server      string         `json:"source_server"`
		Toolbox     string         `json:"toolbox_name"`
	}
	var search struct {
		Tools    []tool `json:"tools"`
		More     []struct{ Toolbox, Server, Tool string }
		Searched []struct{ Toolbox, Server string }
	}
	queries := []struct {
		query   string
		servers []string // the top tool must be one of theirs
	}{
		{"open a pull request for my branch", []string{"github"}},
		{"take a screenshot of the current web page", []string{"playwright", "chrome-devtools"}},
		{"list the pods running in the cluster", []string{"kubernetes"}},
	}
	steps := []map[string]any{{"list": true}}
	for _, q := range queries {
		steps = append(steps, map[string]any{"call": "open_toolbox", "arguments": map[string]any{"query": q.query}})
	}
	steps = append(steps, map[string]any{"call": "open_toolbox", "arguments": map[string]any{"toolbox_name": "github", "tools": []string{"create_pull_request", "list_issues"}}})
	steps = append(steps, map[string]any{"call": "open_toolbox", "arguments": map[string]any{"toolbox_name": "github", "tools": []string{"create_pul_request"}}})
	out := tsHost(t, steps, "--config", cfg)

	// tools/list: both tools, with the hosts' _meta.
	var list struct {
		Tools []struct {
			Name string
			Meta map[string]any `json:"_meta"`
		}
	}
	if err := json.Unmarshal(out[0], &list); err != nil || len(list.Tools) != 2 {
		t.Fatalf("tools/list: %v %s", err, out[0])
	}
	for _, tl := range list.Tools {
		if tl.Meta["anthropic/alwaysLoad"] != true || tl.Meta["anthropic/maxResultSizeChars"] != float64(500000) {
			t.Errorf("%s: _meta = %v", tl.Name, tl.Meta)
		}
	}

	var first tool
	for i, q := range queries {
		text, isErr := toolText(t, out[1+i])
		if isErr {
			t.Fatalf("search %q: %s", q.query, text)
		}
		search.Tools = nil
		if err := json.Unmarshal([]byte(text), &search); err != nil {
			t.Fatal(err)
		}
		if len(search.Tools) != 5 || len(search.Searched) != len(servers) {
			t.Errorf("search %q: %d tools from %d servers searched; want 5 from all %d", q.query, len(search.Tools), len(search.Searched), len(servers))
			continue
		}
		if top := search.Tools[0]; !slices.Contains(q.servers, top.Server) {
			t.Errorf("search %q: the best match is %s/%s, want a tool of %v", q.query, top.Server, top.Name, q.servers)
		}
		for _, tl := range search.Tools {
			if tl.InputSchema == nil || tl.Description == "" || tl.Toolbox == "" {
				t.Errorf("search %q: %s is not the whole tool object", q.query, tl.Name)
			}
		}
		if i == 0 {
			first = search.Tools[0]
		}
	}
	if n := starts(); n != len(servers) {
		t.Errorf("the searches started %d servers; with a warm catalog they must start none", n-len(servers))
	}

	text, isErr := toolText(t, out[len(queries)+1])
	var sel struct{ Tools []tool }
	if err := json.Unmarshal([]byte(text), &sel); isErr || err != nil || len(sel.Tools) != 2 || sel.Tools[0].Name != "create_pull_request" || sel.Tools[1].Name != "list_issues" {
		t.Errorf("tools [create_pull_request list_issues]: %.500s", text)
	}
	if text, isErr := toolText(t, out[len(queries)+2]); !isErr || !strings.Contains(text, "Closest: create_pull_request") {
		t.Errorf("an unknown tool name must list the closest: %s", text)
	}
	if n := starts(); n != len(servers) {
		t.Errorf("the selections started %d servers; with a warm catalog they must start none", n-len(servers))
	}

	// A new session: the first call of the tool found first starts its
	// server, and only it; opening GitHub's whole toolbox keeps to the
	// budget, each tool it includes whole.
	out = tsHost(t, []map[string]any{
		{"call": "open_toolbox", "arguments": map[string]any{"query": queries[0].query, "limit": 1}},
		{"call": "use_tool", "arguments": map[string]any{"tool": map[string]string{"toolbox": first.Toolbox, "server": first.Server, "tool": first.Name},
			"arguments": map[string]any{"owner": "o", "repo": "r", "title": "t", "head": "h", "base": "main"}}},
		{"call": "open_toolbox", "arguments": map[string]any{"toolbox_name": "github"}},
	}, "--config", cfg)
	if text, isErr := toolText(t, out[1]); isErr || !strings.HasPrefix(text, first.Name+" ") {
		t.Errorf("use_tool of the found tool %s/%s: %s", first.Server, first.Name, text)
	}
	if n := starts(); n != len(servers)+1 {
		t.Errorf("%d servers started for one use_tool, want 1", n-len(servers))
	}
	text, isErr = toolText(t, out[2])
	var open struct {
		Tools    []json.RawMessage
		NotShown []struct{ Tool, About string } `json:"not_shown"`
	}
	if err := json.Unmarshal([]byte(text), &open); isErr || err != nil {
		t.Fatalf("open github: %v %.300s", err, text)
	}
	if len([]rune(text)) > 40000 || len(open.Tools) == 0 || len(open.Tools)+len(open.NotShown) != 85 {
		t.Errorf("open github: %d characters, %d tools whole, %d named; want at most 40000 characters and all 85 tools", len([]rune(text)), len(open.Tools), len(open.NotShown))
	}
	// Each tool included is whole: its description and inputSchema are
	// those the server lists (the fake server lists them through the
	// SDK, which may order keys its own way).
	var github struct{ Tools []map[string]any }
	data, _ := os.ReadFile(servers["github"])
	_ = json.Unmarshal(data, &github)
	byName := map[string]map[string]any{}
	for _, tl := range github.Tools {
		byName[tl["name"].(string)] = tl
	}
	for _, raw := range open.Tools {
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		want := byName[fmt.Sprint(got["name"])]
		if want == nil || !reflect.DeepEqual(got["inputSchema"], want["inputSchema"]) || got["description"] != want["description"] {
			t.Errorf("a GitHub tool in the open result is not whole: %.200s", raw)
		}
	}
	t.Logf("open github: %d characters, %d tools whole, %d named", len([]rune(text)), len(open.Tools), len(open.NotShown))
}
