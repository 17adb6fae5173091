package workbench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// TestHostileLinesLeaveTheWorkbenchServing sends what ended the workbench
// or blocked it: host lines nested millions of levels deep (a ping's
// params, a use_tool's arguments), a server's result as deep, a host line
// past the line limit. Each gets its error, under its id, and the session,
// the server and another toolbox's calls go on.
func TestHostileLinesLeaveTheWorkbenchServing(t *testing.T) {
	e := newEnv(t)
	cfg, err := parseConfig(fmt.Sprintf(twoToolboxes, fake("a", fakeserver.EnvDeepResult, "5000000"), fake("b"), fake("a")), e)
	if err != nil {
		t.Fatal(err)
	}
	h := e.lineHost(e.newWorkbench(cfg), "2025-11-25")
	use := func(id, toolbox, tool, args string) {
		h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":%q,"server":"a","tool":%q},"arguments":%s}}}`, id, toolbox, tool, args))
	}
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	otherToolboxWorks := func(id string) {
		t.Helper()
		use(id, "prod", "echo", `{"text":"still here"}`)
		if text, isErr := resultText(t, decodeResponse(t, h.response(id)).Result); isErr || !strings.Contains(text, "still here") {
			t.Errorf("another toolbox's call: %s", text)
		}
	}
	otherToolboxWorks(`"before"`)

	for _, c := range []struct{ name, id, line string }{
		{"ping params, 5,000,000 levels", `"deep-ping"`, `{"jsonrpc":"2.0","id":"deep-ping","method":"ping","params":{"x":` + deep(5_000_000) + `}}`},
		{"use_tool arguments, 1,000,000 levels", `7`, ``},
	} {
		if c.line == "" {
			use(c.id, "dev", "echo", `{"text":`+deep(1_000_000)+`}`)
		} else {
			h.send(c.line)
		}
		r := decodeResponse(t, h.response(c.id))
		if r.Error == nil || r.Error.Code != -32700 || !strings.Contains(r.Error.Message, "deeper than 10000 levels") {
			t.Errorf("%s: got %+v, want a parse error for nesting too deep", c.name, r.Error)
		}
	}

	use(`"deep-result"`, "dev", "deep", `{}`)
	text, isErr := resultText(t, decodeResponse(t, h.response(`"deep-result"`)).Result)
	if want := "Error executing tool 'deep' in server 'a' (toolbox 'dev'): the server's answer nests objects and arrays deeper than 10000 levels"; !isErr || text != want {
		t.Errorf("deep result: %q, want %q", text, want)
	}
	use(`"same"`, "dev", "echo", `{"text":"same server"}`)
	if text, isErr := resultText(t, decodeResponse(t, h.response(`"same"`)).Result); isErr {
		t.Errorf("the same server after its deep answer: %s", text)
	}

	// Past the line limit, with the id at the end: answered under it.
	h.send(`{"method":"ping","params":{"pad":"` + strings.Repeat("x", maxHostLine) + `"},"jsonrpc":"2.0","id":"long"}`)
	if r := decodeResponse(t, h.response(`"long"`)); r.Error == nil || r.Error.Message != "the message is longer than 64 MiB" {
		t.Errorf("a line past the limit: %+v", r.Error)
	}

	h.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	if r := decodeResponse(t, h.response(`"ping"`)); r.Error != nil {
		t.Errorf("ping after: %+v", r.Error)
	}
	otherToolboxWorks(`"after"`)
	if n := len(e.lines(fakeserver.StartsFile)); n != 3 {
		t.Errorf("%d server starts, want 3 (dev/a, dev/b and prod/a, once each)", n)
	}
}
