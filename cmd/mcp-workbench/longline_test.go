package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// TestLongAnswerLeavesTheConnection: a Node server answers a call with a
// 70 MiB line (past the 64 MiB limit), written in 1 MiB pieces with a wait
// for 'drain' between them, as Node servers write under backpressure. The
// call fails saying why, and the next call to the same server is answered,
// both when the server writes its answers in turn and when it answers the
// next call at once, between the long line's pieces (its answer then ends
// the long line: issue 36's poisoned connection, and issue 27's "not
// JSON-RPC, ignored" line for the rest of it), and when it holds the long
// line's end until the next call comes and writes the two in one write, so
// that the next call's answer follows the newline that ends the line being
// skipped, in the same read (issue 42's item 17). That line is 1,000 bytes
// longer than 70 MiB: a line of whole 64 KiB blocks would end at the end
// of the reader's buffer, and the answer come in the next read.
func TestLongAnswerLeavesTheConnection(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed")
	}
	script := filepath.Join(fakeserver.RepoRoot(t), "testdata", "npm", "bigline-server.mjs")
	for _, interleave := range []string{"0", "1", "tail"} {
		t.Run("interleave="+interleave, func(t *testing.T) {
			env := map[string]string{"BIG_INTERLEAVE": interleave}
			if interleave == "tail" {
				env["BIG_BYTES"] = strconv.Itoa(70<<20 + 1000)
			}
			cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
				"tb": map[string]any{"description": "long answers", "mcpServers": map[string]any{
					"node": map[string]any{"command": node, "args": []string{script}, "env": env},
				}},
			}})
			cs, _ := runInProcess(t, "--config", cfg)
			text, isErr := callTool(t, cs, "use_tool", use("tb", "node", "big", map[string]any{}))
			if want := "Error executing tool 'big' in server 'node' (toolbox 'tb'): the server's answer exceeded 64 MiB"; !isErr || text != want {
				t.Fatalf("the long answer: %v %.300s, want %q", isErr, text, want)
			}
			for _, word := range []string{"after", "again"} {
				if text, isErr := callTool(t, cs, "use_tool", use("tb", "node", "echo", map[string]any{"text": word})); isErr || text != word {
					t.Errorf("a call %s it: %v %.300s", word, isErr, text)
				}
			}
			if text, isErr := callTool(t, cs, "open_toolbox", map[string]any{"toolbox_name": "tb"}); isErr || !strings.Contains(text, `"servers_connected":1`) {
				t.Errorf("the server's connection (a tools/list through the SDK) after: %v %.300s", isErr, text)
			}
		})
	}
}
