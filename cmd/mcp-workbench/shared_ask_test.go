package main

//lint:file-ignore SA1019 roots and sampling are deprecated from 2026-07-28 on, but hosts and servers of the 2025 protocols still use them, and the workbench relays what they use.

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSharedSessionsAskTheirOwnHosts: two sessions of one shared
// workbench, each host with roots of its own. A server that is not shared
// ("shared": false) asks each session's host only: each sees its own
// roots, and an elicitation reaches only the host whose call caused it. A
// shared server is told no client capabilities, and its requests are
// refused at once.
func TestSharedSessionsAskTheirOwnHosts(t *testing.T) {
	tag, wbTag := sharingTest(t, "ask")
	own := taggedServer(tag, "own", fakeserver.EnvAsk, "1")
	own["shared"] = false
	cfg := sharedConfig(t, map[string]any{
		"tb": map[string]any{"description": "d", "mcpServers": map[string]any{
			"own": own, "common": taggedServer(tag, "common", fakeserver.EnvAsk, "1"),
		}},
	})
	type host struct {
		p      *process
		mu     sync.Mutex
		asked  []string
		client *mcp.Client
	}
	hosts := map[string]*host{"alpha": {}, "beta": {}}
	for name, h := range hosts {
		h.client = mcp.NewClient(&mcp.Implementation{Name: "host-" + name, Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				h.mu.Lock()
				h.asked = append(h.asked, req.Params.Message)
				h.mu.Unlock()
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
			},
		})
		h.client.AddRoots(&mcp.Root{URI: "file:///projects/" + name})
		h.p = launchClient(t, []string{"--config", cfg}, wbTag, "", h.client, "2025-11-25")
	}
	for name, h := range hosts {
		got, isErr := callTool(t, h.p.cs, "use_tool", use("tb", "own", "ask", map[string]any{"what": "roots"}))
		if isErr || !strings.Contains(got, "/projects/"+name) || strings.Contains(got, "/projects/"+other(name)) {
			t.Errorf("%s's roots: %s", name, got)
		}
		got, isErr = callTool(t, h.p.cs, "use_tool", use("tb", "own", "ask", map[string]any{"what": "elicit", "message": "from " + name}))
		if isErr || !strings.Contains(got, `"name":"`+name+`"`) {
			t.Errorf("%s's elicitation: %s", name, got)
		}
		caps, _ := callTool(t, h.p.cs, "use_tool", use("tb", "common", "client_caps", map[string]any{}))
		if caps != "{}" {
			t.Errorf("the shared server was told %s; want no capabilities", caps)
		}
		got, isErr = callTool(t, h.p.cs, "use_tool", use("tb", "common", "ask", map[string]any{"what": "sample"}))
		if !isErr {
			t.Errorf("a shared server's sampling request: %s; want it refused", got)
		}
	}
	for name, h := range hosts {
		h.mu.Lock()
		if len(h.asked) != 1 || !strings.HasSuffix(h.asked[0], "from "+name) {
			t.Errorf("host %s was asked %q; want its own elicitation only", name, h.asked)
		}
		h.mu.Unlock()
	}
}

func other(name string) string {
	if name == "alpha" {
		return "beta"
	}
	return "alpha"
}
