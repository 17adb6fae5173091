// Command workbench-demo shows mcp-workbench working, the way a host uses
// it: it starts the workbench as a stdio MCP server, reads its
// instructions and tools, opens every toolbox of the configuration, and
// makes real calls through use_tool, printing each exchange. The workbench
// runs with a temporary home, so that its pins and tool catalog never land
// in the user's own folders.
//
//	workbench-demo [-bin bin/mcp-workbench] [-config workbench-config.example.json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	bin := flag.String("bin", "bin/mcp-workbench", "the workbench binary")
	cfg := flag.String("config", "workbench-config.example.json", "the configuration to open")
	flag.Parse()
	if err := demo(*bin, *cfg); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

func demo(bin, cfgPath string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	workspace, _ := filepath.Abs(".")
	// A fresh TMPDIR gives the memory server of the example config an
	// empty knowledge graph, so every run shows the same exchange; a home
	// of its own keeps the workbench's pins and tool catalog out of the
	// user's folders.
	tmp, err := os.MkdirTemp("", "workbench-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	npmCache := npmCacheDir()
	env, err := isolate(os.Environ(), tmp, npmCache)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "--config", cfgPath)
	cmd.Env = append(env, "WORKBENCH_WORKSPACE="+workspace)
	cmd.Stderr = os.Stderr
	step("The workbench runs with a home of its own, %s, removed at the end: its pins and tool catalog are written there, not in your folders", tmp)
	if npmCache != "" {
		fmt.Printf("npx keeps the servers' packages in npm's own cache, %s\n", npmCache)
	}

	step("Starting %s --config %s as a stdio MCP server", bin, cfgPath)
	start := time.Now()
	client := mcp.NewClient(&mcp.Implementation{Name: "workbench-demo", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return err
	}
	defer cs.Close()
	init := cs.InitializeResult()
	fmt.Printf("initialized in %v: %s %s\n\n--- instructions ---\n%s\n--------------------\n",
		time.Since(start).Round(time.Millisecond), init.ServerInfo.Name, init.ServerInfo.Version, init.Instructions)

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(tools)
	names := []string{}
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	step("tools/list: %s (%d bytes for the host's context)", strings.Join(names, ", "), len(b))

	// A search across every toolbox: the catalog does not know them yet,
	// so their servers start to be searched; later searches start nothing.
	step(`open_toolbox {"query": "remember a fact about a project", "limit": 3}`)
	start = time.Now()
	res, err := call(ctx, cs, "open_toolbox", map[string]any{"query": "remember a fact about a project", "limit": 3})
	if err != nil {
		return err
	}
	fmt.Printf("searched in %v\n", time.Since(start).Round(time.Millisecond))
	summarizeSearch(res)

	toolboxes := init.Instructions
	for _, line := range strings.Split(toolboxes, "\n") {
		if !strings.Contains(line, "(") || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "Use ") {
			continue
		}
		name := strings.TrimSpace(line[:strings.Index(line, "(")])
		step("open_toolbox %q", name)
		start := time.Now()
		res, err := call(ctx, cs, "open_toolbox", map[string]any{"toolbox_name": name})
		if err != nil {
			return err
		}
		fmt.Printf("opened in %v\n", time.Since(start).Round(time.Millisecond))
		summarizeOpen(res)
	}

	step(`use_tool knowledge/memory/create_entities`)
	if _, err := call(ctx, cs, "use_tool", map[string]any{
		"tool": map[string]string{"toolbox": "knowledge", "server": "memory", "tool": "create_entities"},
		"arguments": map[string]any{"entities": []any{map[string]any{
			"name": "mcp-workbench", "entityType": "project",
			"observations": []string{"groups MCP servers into toolboxes", "written in Go"},
		}}},
	}); err != nil {
		return err
	}
	step(`use_tool knowledge/memory/search_nodes {"query":"toolboxes"}`)
	if _, err := call(ctx, cs, "use_tool", map[string]any{
		"tool":      map[string]string{"toolbox": "knowledge", "server": "memory", "tool": "search_nodes"},
		"arguments": map[string]any{"query": "toolboxes"},
	}); err != nil {
		return err
	}
	step(`use_tool files/filesystem/list_directory %s`, workspace)
	if _, err := call(ctx, cs, "use_tool", map[string]any{
		"tool":      map[string]string{"toolbox": "files", "server": "filesystem", "tool": "list_directory"},
		"arguments": map[string]any{"path": workspace},
	}); err != nil {
		return err
	}
	step("use_tool files/filesystem/write_file (removed by toolFilters: refused)")
	if _, err := call(ctx, cs, "use_tool", map[string]any{
		"tool":      map[string]string{"toolbox": "files", "server": "filesystem", "tool": "write_file"},
		"arguments": map[string]any{"path": filepath.Join(workspace, "x"), "content": "no"},
	}); err != nil {
		return err
	}
	step("Closing the session: the workbench stops every server it started")
	return nil
}

// isolate returns env for a workbench that writes nothing into the user's
// folders: HOME, the XDG folders (Linux and other unix) and the Windows
// application data folders all point into tmp, as does TMPDIR. The
// folders the workbench keeps its pins, logins and tool catalog in derive
// from those. npm keeps its own cache (npmCache, when known) and the
// user's settings (~/.npmrc: a registry or proxy of theirs), so that npx
// does not fetch the servers again on every run.
func isolate(env []string, tmp, npmCache string) ([]string, error) {
	realHome, _ := os.UserHomeDir()
	set := map[string]string{
		"HOME":            filepath.Join(tmp, "home"),
		"USERPROFILE":     filepath.Join(tmp, "home"),
		"XDG_CONFIG_HOME": filepath.Join(tmp, "config"),
		"XDG_CACHE_HOME":  filepath.Join(tmp, "cache"),
		"XDG_DATA_HOME":   filepath.Join(tmp, "data"),
		"XDG_STATE_HOME":  filepath.Join(tmp, "state"),
		"APPDATA":         filepath.Join(tmp, "appdata"),
		"LOCALAPPDATA":    filepath.Join(tmp, "localappdata"),
		"TMPDIR":          tmp,
	}
	for _, dir := range set {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	given := map[string]bool{}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		given[name] = true
	}
	keep := func(name, value string) { // the user's own setting wins
		if !given[name] && value != "" {
			set[name] = value
		}
	}
	keep("npm_config_cache", npmCache)
	if realHome != "" {
		keep("npm_config_userconfig", filepath.Join(realHome, ".npmrc"))
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; !ok {
			out = append(out, kv)
		}
	}
	for name, value := range set {
		out = append(out, name+"="+value)
	}
	return out, nil
}

// npmCacheDir is the folder npm keeps its cache in for this user, or ""
// if npm cannot say.
func npmCacheDir() string {
	out, err := exec.Command("npm", "config", "get", "cache").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func step(format string, args ...any) {
	fmt.Printf("\n==> "+format+"\n", args...)
}

// call calls a workbench tool and prints the exchange.
func call(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req, _ := json.Marshal(args)
	fmt.Printf("request:  %s %s\n", name, req)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && name == "use_tool" {
			fmt.Printf("response: isError=%v %s\n", res.IsError, clip(t.Text, 600))
		}
	}
	return res, nil
}

func summarizeOpen(res *mcp.CallToolResult) {
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		fmt.Println("error:", text)
		return
	}
	var out struct {
		Servers []struct {
			Name, Status, Error string
			Tools               int
		}
		Tools []struct {
			Name         string `json:"name"`
			SourceServer string `json:"source_server"`
		}
	}
	_ = json.Unmarshal([]byte(text), &out)
	for _, s := range out.Servers {
		fmt.Printf("server %-12s %-10s %2d tools %s\n", s.Name, s.Status, s.Tools, s.Error)
	}
	var names []string
	for _, t := range out.Tools {
		names = append(names, t.SourceServer+"/"+t.Name)
	}
	fmt.Printf("tools: %s\nresult: %d bytes of compact JSON\n", strings.Join(names, ", "), len(text))
}

func summarizeSearch(res *mcp.CallToolResult) {
	if len(res.Content) == 0 {
		return
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var r struct {
		Tools []struct {
			Name    string `json:"name"`
			Server  string `json:"source_server"`
			Toolbox string `json:"toolbox_name"`
		} `json:"tools"`
		More []struct{ Toolbox, Server, Tool string } `json:"more"`
	}
	if json.Unmarshal([]byte(text), &r) != nil {
		return
	}
	for i, t := range r.Tools {
		fmt.Printf("match %d: %s/%s/%s (whole object)\n", i+1, t.Toolbox, t.Server, t.Name)
	}
	for _, m := range r.More {
		fmt.Printf("more:    %s/%s/%s (named)\n", m.Toolbox, m.Server, m.Tool)
	}
	fmt.Printf("result: %d bytes of compact JSON\n", len(text))
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
