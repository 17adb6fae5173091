package workbench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// TestInputRequiredShape: a held call's input_required result over stdio
// has the shape the go-sdk gives it over HTTP, "content": [] included, so
// that a host sees one result whatever the transport.
func TestInputRequiredShape(t *testing.T) {
	e := newEnv(t)
	cfg, err := parseConfig(fmt.Sprintf(oneServer, fake("a", fakeserver.EnvAsk, "1")), e)
	if err != nil {
		t.Fatal(err)
	}
	h := e.lineHost(e.newWorkbench(cfg), "2026-07-28")
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	h.send(useLine("1", "a", "ask", `{"what":"elicit"}`, meta))
	r := decodeResponse(t, h.response("1"))
	if !strings.Contains(string(r.Result), `"resultType":"input_required"`) || !strings.Contains(string(r.Result), `"content":[]`) {
		t.Errorf("the input_required result over stdio: %s; want content [] as over HTTP", r.Result)
	}
}
