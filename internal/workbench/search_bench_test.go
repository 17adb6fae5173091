package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// BenchmarkSearchCatalog is open_toolbox with a query over 20 toolboxes
// of 50 tools each (1,000 tools) that the tool catalog knows: no server
// runs. "first" is the first search of a set of lists (the index is
// built), "again" every later one (the index is kept).
func BenchmarkSearchCatalog(b *testing.B) {
	var tbs []string
	for i := range 20 {
		tbs = append(tbs, fmt.Sprintf(`"tb%02d": {"description": "Toolbox %d", "mcpServers": {"s": {"command": "never-started-%d"}}}`, i, i, i))
	}
	cfg, err := config.Parse([]byte(`{"toolboxes": {`+strings.Join(tbs, ",")+`}}`), os.LookupEnv)
	if err != nil {
		b.Fatal(err)
	}
	cat, err := catalog.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	verbs := []string{"list", "get", "create", "update", "delete", "search", "read", "write", "run", "merge"}
	nouns := []string{"issue", "pull request", "file", "branch", "page", "database", "customer", "invoice", "deployment", "screenshot"}
	for i, tc := range cfg.Toolboxes {
		var tools []json.RawMessage
		for j := range 50 {
			v, n := verbs[(i+j)%len(verbs)], nouns[j%len(nouns)]
			tool := map[string]any{
				"name":        fmt.Sprintf("%s_%s_%d", v, strings.ReplaceAll(n, " ", "_"), j),
				"description": fmt.Sprintf("%s a %s of the workspace. Returns the %s as JSON, with its id, title and state.", strings.ToUpper(v[:1])+v[1:], n, n),
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
					"id":    map[string]any{"type": "string", "description": "The " + n + "'s id"},
					"owner": map[string]any{"type": "string", "description": "Who owns it"},
				}, "required": []string{"id"}},
			}
			raw, _ := json.Marshal(tool)
			tools = append(tools, raw)
		}
		if err := cat.Put(catalog.Key(tc.Servers[0], downstream.ProtocolVersion), tools, nil); err != nil {
			b.Fatal(err)
		}
	}
	run := func(b *testing.B, fresh bool) {
		wb := New(cfg, Options{Version: "bench", Logger: slog.New(slog.DiscardHandler), Catalog: cat})
		defer wb.Close()
		for b.Loop() {
			if fresh {
				wb.indexes = indexCache{}
			}
			res := wb.Search(context.Background(), "", "merge the pull request of the branch", 5)
			if res.IsError {
				b.Fatal(res.Content)
			}
		}
	}
	b.Run("first", func(b *testing.B) { run(b, true) })
	b.Run("again", func(b *testing.B) { run(b, false) })
}

// BenchmarkSearchBesideAHangingServer is a search over every toolbox while
// one server hangs in its start in the background (it never answers
// initialize): the catalog answers for the others, and the search does not
// wait for it (the issue measured 45 s a search before).
func BenchmarkSearchBesideAHangingServer(b *testing.B) {
	exe, _ := os.Executable()
	hang, _ := json.Marshal(map[string]any{"command": exe, "catalog": false, "connectionTimeoutMs": 3600000,
		"env": map[string]string{fakeserver.EnvServer: "1", fakeserver.EnvHangInit: "1"}})
	var tbs []string
	for i := range 5 {
		tbs = append(tbs, fmt.Sprintf(`"tb%d": {"description": "Toolbox %d", "mcpServers": {"s": {"command": "never-started-%d"}}}`, i, i, i))
	}
	tbs = append(tbs, `"stuck": {"description": "Hangs", "mcpServers": {"hang": `+string(hang)+`}}`)
	cfg, err := config.Parse([]byte(`{"toolboxes": {`+strings.Join(tbs, ",")+`}}`), os.LookupEnv)
	if err != nil {
		b.Fatal(err)
	}
	cat, err := catalog.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for i, tc := range cfg.Toolboxes[:5] {
		tool, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("merge_pull_request_%d", i), "description": "Merge a pull request.",
			"inputSchema": map[string]any{"type": "object"}})
		if err := cat.Put(catalog.Key(tc.Servers[0], downstream.ProtocolVersion), []json.RawMessage{tool}, nil); err != nil {
			b.Fatal(err)
		}
	}
	wb := New(cfg, Options{Version: "bench", Logger: slog.New(slog.DiscardHandler), Catalog: cat})
	defer wb.Close()
	s := wb.Servers("stuck")[0]
	s.StartInBackground()
	for b.Loop() {
		res := wb.Search(context.Background(), "", "merge the pull request", 5)
		if res.IsError {
			b.Fatal(res.Content)
		}
	}
	if st := s.State(); st.Status != downstream.StatusStarting {
		b.Fatalf("the hanging server is %s, want starting", st.Status)
	}
}
