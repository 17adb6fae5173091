package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
// of the reader's buffer, and the answer come in the next read. A server
// that writes the id last, as the TypeScript SDK does (order=ts), has its
// call fail once the line's end shows it.
func TestLongAnswerLeavesTheConnection(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed")
	}
	script := filepath.Join(fakeserver.RepoRoot(t), "testdata", "npm", "bigline-server.mjs")
	for _, name := range []string{"0", "1", "tail", "0,order=ts"} {
		t.Run("interleave="+name, func(t *testing.T) {
			interleave, order, _ := strings.Cut(name, ",order=")
			env := map[string]string{"BIG_INTERLEAVE": interleave, "BIG_ORDER": order}
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

// TestAnswerInsideALongLine: a Node server writes a 70 MiB answer in
// pieces and, once past the 64 MiB limit, answers the next call at once,
// inside the long line, before the line's end (issue 42's item 17). That
// answer reaches its caller, and later calls are answered, whether the
// server writes "jsonrpc" and "id" first or, as the TypeScript SDK does,
// last: then the line's last bytes are the other answer's, and its id is
// not the long line's (the other call failed in its place, and its answer
// was lost); the long line's call fails once the rest of its line shows
// its id.
func TestAnswerInsideALongLine(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed")
	}
	script := filepath.Join(fakeserver.RepoRoot(t), "testdata", "npm", "bigline-server.mjs")
	for _, order := range []string{"sdk", "ts"} {
		t.Run("order="+order, func(t *testing.T) {
			cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
				"tb": map[string]any{"description": "long answers", "mcpServers": map[string]any{
					"node": map[string]any{"command": node, "args": []string{script},
						"env": map[string]string{"BIG_INTERLEAVE": "inside", "BIG_ORDER": order}},
				}},
			}})
			cs, stderr := runInProcess(t, "--config", cfg)
			if text, isErr := callTool(t, cs, "use_tool", use("tb", "node", "echo", map[string]any{"text": "before"})); isErr || text != "before" {
				t.Fatalf("a call before: %v %.300s", isErr, text)
			}
			type outcome struct {
				text  string
				isErr bool
				err   error
			}
			big := make(chan outcome, 1)
			go func() {
				res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "use_tool", Arguments: use("tb", "node", "big", map[string]any{})})
				if err != nil {
					big <- outcome{err: err}
					return
				}
				var b strings.Builder
				for _, c := range res.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						b.WriteString(tc.Text)
					}
				}
				big <- outcome{text: b.String(), isErr: res.IsError}
			}()
			// The next call must reach the server once it writes the long
			// line: its answer then goes inside the line.
			for i := 0; !strings.Contains(stderr.String(), "bigline: writing a long line"); i++ {
				if i == 6000 {
					t.Fatalf("the server never started the long line; stderr:\n%s", stderr)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if text, isErr := callTool(t, cs, "use_tool", use("tb", "node", "echo", map[string]any{"text": "inside"})); isErr || text != "inside" {
				t.Errorf("the call answered inside the long line: %v %.300s", isErr, text)
			}
			if text, isErr := callTool(t, cs, "use_tool", use("tb", "node", "echo", map[string]any{"text": "after"})); isErr || text != "after" {
				t.Errorf("a call after it: %v %.300s", isErr, text)
			}
			o := <-big
			want := "the server's answer exceeded 64 MiB"
			if order == "ts" {
				want = "the server wrote another message inside its answer, cutting it short"
			}
			if o.err != nil || !o.isErr || !strings.Contains(o.text, want) {
				t.Errorf("the long answer: %v %v %.300s, want an error saying %q", o.err, o.isErr, o.text, want)
			}
		})
	}
}
