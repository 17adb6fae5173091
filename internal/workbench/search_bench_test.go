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
