package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// searchResult is open_toolbox's result for a query or a selection.
type searchResult struct {
	Query    string           `json:"query"`
	Toolbox  string           `json:"toolbox"`
	Tools    []map[string]any `json:"tools"`
	More     []summary        `json:"more"`
	NotShown []summary        `json:"not_shown"`
	Searched []struct {
		Toolbox, Server string
		Tools           int
	} `json:"searched"`
	NotSearched []struct {
		Toolbox, Server, Status, Error string
	} `json:"not_searched"`
	Note string `json:"note"`
}

func parseSearch(t *testing.T, text string) searchResult {
	t.Helper()
	var r searchResult
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, text)
	}
	return r
}

func searchTool(t *testing.T, cs *mcp.ClientSession, args map[string]any) searchResult {
	t.Helper()
	text, isErr := call(t, cs, "open_toolbox", args)
	if isErr {
		t.Fatalf("open_toolbox %v failed: %s", args, text)
	}
	return parseSearch(t, text)
}

// threeToolboxes: dev (fake servers a and b), web (fake server w) and off
// (a disabled server only).
func threeToolboxes() string {
	return `{"toolboxes": {
		"dev": {"description": "Development", "mcpServers": {"a": ` + fake("a") + `, "b": ` + fake("b") + `}},
		"web": {"description": "Web", "mcpServers": {"w": ` + fake("w", fakeserver.EnvTools, "3") + `}},
		"off": {"description": "Nothing on", "mcpServers": {"x": {"command": "nothing", "disabled": true}}}}}`
}

// A search with a warm catalog answers from it, starting no server; the
// first use_tool of a tool it found starts that tool's server only.
func TestSearchFromTheCatalogStartsNothing(t *testing.T) {
	e := newEnv(t)
	cat := openCatalog(t)
	cfg := e.config(threeToolboxes())
	warm := e.catalogWorkbench(cfg, cat)
	cs := e.connect(warm, nil)
	for _, tb := range []string{"dev", "web"} {
		openText(t, cs, tb)
	}
	warm.Close()
	before := e.starts()
	if before != 3 {
		t.Fatalf("%d starts to warm the catalog, want 3", before)
	}

	wb := e.catalogWorkbench(cfg, cat)
	cs = e.connect(wb, nil)
	if !strings.Contains(cs.InitializeResult().Instructions, "dev (2 servers, 30 tools)") {
		t.Errorf("the instructions should give the tool count the catalog knows:\n%s", cs.InitializeResult().Instructions)
	}
	r := searchTool(t, cs, map[string]any{"query": "process id and working directory of the server"})
	if len(r.Tools) == 0 || r.Tools[0]["name"] != "whoami" {
		t.Fatalf("the best match should be whoami: %v", toolIDs(r.Tools))
	}
	if len(r.Tools) > defaultLimit {
		t.Errorf("%d tools, want at most the default limit %d", len(r.Tools), defaultLimit)
	}
	for _, tool := range r.Tools {
		if tool["toolbox_name"] == nil || tool["source_server"] == nil || tool["inputSchema"] == nil {
			t.Errorf("a found tool must be the whole object with toolbox_name and source_server: %v", tool)
		}
	}
	if got := fmt.Sprint(r.Searched); got != "[{dev a 15} {dev b 15} {web w 18}]" {
		t.Errorf("searched = %s", got)
	}
	if len(r.NotSearched) != 1 || r.NotSearched[0].Toolbox != "off" || r.NotSearched[0].Status != "disabled" {
		t.Errorf("not_searched = %+v, want the disabled server of off", r.NotSearched)
	}
	if n := e.starts(); n != before {
		t.Fatalf("a search from the catalog started %d servers", n-before)
	}

	// The first call of a found tool starts its server, and only it.
	srv := r.Tools[0]["source_server"].(string)
	text, isErr := call(t, cs, "use_tool", use(r.Tools[0]["toolbox_name"].(string), srv, "whoami", nil))
	if isErr || !strings.Contains(text, `"server":"`+srv+`"`) {
		t.Fatalf("use_tool of a found tool: %s", text)
	}
	if n := e.starts(); n != before+1 {
		t.Errorf("%d servers started by the call, want 1", n-before)
	}
}

// Without a catalog, a search lists the servers it must (in parallel, as
// an open), and a search of one toolbox starts only that toolbox's.
func TestSearchStartsWhatItDoesNotKnow(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(threeToolboxes())
	r := searchTool(t, cs, map[string]any{"query": "generated tool number 2", "toolbox_name": "web", "limit": 2})
	if len(r.Tools) != 2 || r.Tools[0]["name"] != "tool_002" {
		t.Fatalf("tools = %v, want tool_002 first of 2", toolIDs(r.Tools))
	}
	if len(r.More) == 0 {
		t.Errorf("the next matches should be named under more: %+v", r)
	}
	for _, m := range r.More {
		if m.Toolbox != "web" || m.Server != "w" || m.Tool == "" || m.About != "" {
			t.Errorf("a further match is named by toolbox, server and tool only: %+v", m)
		}
	}
	if n := e.starts(); n != 1 {
		t.Errorf("%d starts, want 1 (only web's server)", n)
	}
	r = searchTool(t, cs, map[string]any{"query": "echo the text back"})
	if len(r.Tools) == 0 || r.Tools[0]["name"] != "echo" {
		t.Errorf("tools = %v, want echo first", toolIDs(r.Tools))
	}
	if n := e.starts(); n != 3 {
		t.Errorf("%d starts, want 3: the search of every toolbox lists dev's servers too", n)
	}
}

// A server that cannot start is named as not searched, with why; the
// others are searched.
func TestSearchReportsServersItCouldNotSearch(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(`{"toolboxes": {
		"dev": {"description": "d", "mcpServers": {"a": ` + fake("a") + `, "dead": ` + fake("dead", fakeserver.EnvExitAtStart, "3") + `}}}}`)
	r := searchTool(t, cs, map[string]any{"query": "echo"})
	if len(r.Tools) == 0 {
		t.Fatalf("no tools: %+v", r)
	}
	if len(r.NotSearched) != 1 || r.NotSearched[0].Server != "dead" || r.NotSearched[0].Status != "error" || r.NotSearched[0].Error == "" {
		t.Errorf("not_searched = %+v, want dead with its error", r.NotSearched)
	}
}

func TestSelectReturnsExactlyTheNamedTools(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(threeToolboxes())
	r := searchTool(t, cs, map[string]any{"toolbox_name": "dev", "tools": []string{"whoami", "b/echo"}})
	if got := toolIDs(r.Tools); got != "a/whoami b/whoami b/echo" {
		t.Errorf("tools = %s, want whoami of both servers and b's echo", got)
	}
	text, isErr := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev", "tools": []string{"echo", "whomai"}})
	if !isErr || !strings.Contains(text, "no tool 'whomai'") || !strings.Contains(text, "Closest: whoami") {
		t.Errorf("an unknown name must be an error that lists the closest: %s", text)
	}
}

// With a warm catalog, a selection starts nothing.
func TestSelectFromTheCatalogStartsNothing(t *testing.T) {
	e := newEnv(t)
	cat := openCatalog(t)
	cfg := e.config(threeToolboxes())
	warm := e.catalogWorkbench(cfg, cat)
	openText(t, e.connect(warm, nil), "web")
	warm.Close()
	wb := e.catalogWorkbench(cfg, cat)
	r := searchTool(t, e.connect(wb, nil), map[string]any{"toolbox_name": "web", "tools": []string{"tool_001"}})
	if got := toolIDs(r.Tools); got != "w/tool_001" {
		t.Errorf("tools = %s", got)
	}
	if n := e.starts(); n != 1 {
		t.Errorf("%d starts, want 1 (the warm-up's)", n)
	}
}

func TestDiscoveryBadInput(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(threeToolboxes())
	many := make([]string, 51)
	for i := range many {
		many[i] = fmt.Sprint("t", i)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"query": "  "}, `"query" is empty`},
		{map[string]any{"query": strings.Repeat("x", 1001)}, `"query" is 1001 characters long; at most 1000`},
		{map[string]any{"query": 5}, `"query" must be a string`},
		{map[string]any{"query": "echo", "limit": 0}, `"limit" must be a whole number from 1 to 20, got 0`},
		{map[string]any{"query": "echo", "limit": 21}, `"limit" must be a whole number from 1 to 20, got 21`},
		{map[string]any{"query": "echo", "limit": 2.5}, `"limit" must be a whole number from 1 to 20, got 2.5`},
		{map[string]any{"query": "echo", "limit": "5"}, `"limit" must be a whole number from 1 to 20, got "5"`},
		{map[string]any{"toolbox_name": "dev", "limit": 5}, `"limit" goes with "query"`},
		{map[string]any{"toolbox_name": "dev", "tools": "echo"}, `"tools" must be a list of tool names`},
		{map[string]any{"toolbox_name": "dev", "tools": []any{"echo", 3}}, `"tools"[1] must be a tool name`},
		{map[string]any{"toolbox_name": "dev", "tools": []string{}}, `"tools" is empty`},
		{map[string]any{"toolbox_name": "dev", "tools": many}, `"tools" names 51 tools; at most 50`},
		{map[string]any{"tools": []string{"echo"}}, `"tools" needs "toolbox_name"`},
		{map[string]any{"toolbox_name": "dev", "tools": []string{"echo"}, "query": "x"}, `give "query" or "tools", not both`},
		{map[string]any{"query": "echo", "toolbox_name": "nope"}, `Toolbox 'nope' not found`},
		{map[string]any{}, `open_toolbox needs "toolbox_name" (one of dev, web, off) or a "query"`},
	} {
		text, isErr := call(t, cs, "open_toolbox", c.args)
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("%v: got %q (isError %v), want it to contain %q", c.args, text, isErr, c.want)
		}
	}
	// The session goes on.
	if r := searchTool(t, cs, map[string]any{"query": "echo"}); len(r.Tools) == 0 {
		t.Error("no search after the bad input")
	}
	if n := e.starts(); n != 3 {
		t.Errorf("%d starts: bad input must start nothing, the last search 3", n)
	}
}

// An open whose tools pass the character budget returns the objects of
// as many as fit, whole, and names the rest.
func TestOpenKeepsToTheBudget(t *testing.T) {
	e := newEnv(t)
	cfg := `{"openResultMaxChars": %d, "toolboxes": {"big": {"description": "Many tools", "mcpServers": {
		"w": ` + fake("w", fakeserver.EnvTools, "100") + `}}}}`
	_, cs := e.workbench(fmt.Sprintf(cfg, 12000))
	text, isErr := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "big"})
	if isErr {
		t.Fatal(text)
	}
	if len(text) > 12000 {
		t.Errorf("the result has %d characters, over the budget of 12000", len(text))
	}
	r := parseSearch(t, text)
	if len(r.Tools) == 0 || len(r.NotShown) == 0 {
		t.Fatalf("want some tools whole and the rest named: %d whole, %d named", len(r.Tools), len(r.NotShown))
	}
	for _, tool := range r.Tools {
		if tool["inputSchema"] == nil || tool["description"] == nil {
			t.Errorf("a tool object was cut: %v", tool)
		}
	}
	if got := len(r.Tools) + len(r.NotShown); got != 115 {
		t.Errorf("%d tools whole or named, want all 115", got)
	}
	if r.NotShown[0].About == "" || !strings.Contains(r.Note, `"tools"`) || !strings.Contains(r.Note, `"query"`) {
		t.Errorf("the named tools need their first sentence, and the note how to get them: %+v %q", r.NotShown[0], r.Note)
	}

	// 0: no budget.
	e2 := newEnv(t)
	_, cs = e2.workbench(fmt.Sprintf(cfg, 0))
	r = searchTool(t, cs, map[string]any{"toolbox_name": "big"})
	if len(r.Tools) != 115 || len(r.NotShown) != 0 {
		t.Errorf("without a budget: %d whole, %d named; want 115 whole", len(r.Tools), len(r.NotShown))
	}
}

// An open waits at most openTimeoutMs: a server still starting is shown
// as such, the ready ones with their tools, and the next open picks it up.
func TestOpenTimeoutAnswersWithWhatIsReady(t *testing.T) {
	e := newEnv(t)
	gate := filepath.Join(t.TempDir(), "gate")
	_, cs := e.workbench(`{"openTimeoutMs": 300, "toolboxes": {"dev": {"description": "d", "mcpServers": {
		"a": ` + fake("a") + `, "slow": ` + fake("slow", fakeserver.EnvStartGate, gate) + `}}}}`)
	// a is started first by a call, which waits for it alone: the open
	// then has a ready server and one that cannot be ready, whatever the
	// machine's speed; openTimeoutMs is the thing that must fire.
	if text, isErr := call(t, cs, "use_tool", use("dev", "a", "echo", nil)); isErr {
		t.Fatalf("the call that starts a: %s", text)
	}
	r := openText(t, cs, "dev")
	if got := statuses(r); got != "a=connected slow=starting" {
		t.Fatalf("statuses = %s, want a connected and slow starting", got)
	}
	if len(r.Tools) != 15 {
		t.Errorf("%d tools, want a's 15", len(r.Tools))
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fakeserver.Eventually(t, "slow connected", func() bool {
		return statuses(openText(t, cs, "dev")) == "a=connected slow=connected"
	})
	if n := e.starts(); n != 2 {
		t.Errorf("%d starts, want 2: the late server's start goes on, it is not started again", n)
	}
}

// Both tools carry the _meta keys that make Claude Code keep them loaded
// and take their results inline.
func TestToolsCarryHostMeta(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(threeToolboxes())
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Meta["anthropic/alwaysLoad"] != true || tool.Meta["anthropic/maxResultSizeChars"] != float64(500000) {
			t.Errorf("%s: _meta = %v", tool.Name, tool.Meta)
		}
	}
}

// The instructions stay under 4 KB for 20 toolboxes, long descriptions
// cut short.
func TestInstructionsStaySmall(t *testing.T) {
	e := newEnv(t)
	var tbs []string
	for i := range 20 {
		tbs = append(tbs, fmt.Sprintf(`"toolbox_%02d": {"description": %q, "mcpServers": {"s": {"command": "x"}}}`, i, strings.Repeat("A long description. ", 30)))
	}
	wb := e.newWorkbench(e.config(`{"toolboxes": {` + strings.Join(tbs, ",") + `}}`))
	got := wb.Instructions()
	if len(got) > 4000 || !strings.Contains(got, "toolbox_19 (1 server)") || !strings.Contains(got, `"query"`) {
		t.Errorf("%d bytes:\n%s", len(got), got)
	}
}

func toolIDs(tools []map[string]any) string {
	var ids []string
	for _, t := range tools {
		ids = append(ids, fmt.Sprint(t["source_server"], "/", t["name"]))
	}
	return strings.Join(ids, " ")
}

// A tool whose inputSchema does not compile is named in its server's
// entry: its arguments go unchecked.
func TestOpenNamesUncheckedTools(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(threeToolboxes())
	r := openText(t, cs, "dev")
	text, _ := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev"})
	if !strings.Contains(text, `"warnings":["tool 'bad_schema': its inputSchema does not compile, so its arguments are passed unchecked: `) {
		t.Errorf("no warning for bad_schema in the server's entry:\n%.600s", text)
	}
	if r.ServersConnected != 2 {
		t.Errorf("servers_connected = %d", r.ServersConnected)
	}
}

// A budget too small to name every tool names as many as fit, and says
// how many more were left out.
func TestOpenNamesWhatFitsOfATinyBudget(t *testing.T) {
	e := newEnv(t)
	_, cs := e.workbench(`{"openResultMaxChars": 2500, "toolboxes": {"big": {"description": "Many tools", "mcpServers": {
		"w": ` + fake("w", fakeserver.EnvTools, "100") + `}}}}`)
	text, isErr := call(t, cs, "open_toolbox", map[string]any{"toolbox_name": "big"})
	if isErr || len(text) > 2500 {
		t.Fatalf("%d characters (isError %v), want at most 2500:\n%s", len(text), isErr, text)
	}
	r := parseSearch(t, text)
	if len(r.Tools) != 0 || len(r.NotShown) == 0 || len(r.NotShown) >= 115 || !strings.Contains(r.Note, "more are left out") {
		t.Errorf("%d whole, %d named, note %q; want names only, not all of them, and the rest counted", len(r.Tools), len(r.NotShown), r.Note)
	}
}
