package fakeserver

//lint:file-ignore SA1019 roots and sampling are deprecated from 2026-07-28 on, but hosts and servers of the 2025 protocols still use them, and the workbench relays what they use.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addAskTools adds the tools that ask the client what a server may ask of
// it: "ask" (elicitation, url elicitation, sampling, roots, or several at
// once) and "client_caps" (the capabilities the client declared).
func (f *fake) addAskTools() {
	f.server.AddTool(&mcp.Tool{
		Name:        "ask",
		Description: "Asks the client: what is elicit (a form), url (a URL elicitation), sample, roots, flood (N elicitations at once), or url_required (answers -32042).",
		InputSchema: schema(`{"type":"object","properties":{"what":{"type":"string"},"n":{"type":"integer"},"message":{"type":"string"}},"required":["what"]}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "ask")
		var in struct {
			What    string `json:"what"`
			N       int    `json:"n"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		ss := req.Session
		var out any
		var err error
		switch in.What {
		case "elicit":
			msg := in.Message
			if msg == "" {
				msg = "Your name?"
			}
			out, err = ss.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"},
			}})
		case "url":
			out, err = ss.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Open this page", URL: "https://example.com/pay?x=1", ElicitationID: "el-1"})
		case "sample":
			out, err = ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "say hi"}}}})
		case "roots":
			out, err = ss.ListRoots(ctx, nil)
		case "url_required":
			// The call needs a page opened first (-32042).
			return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{Mode: "url", Message: "Pay first", URL: "https://example.com/pay?order=7", ElicitationID: "pay-7"}})
		case "flood":
			var mu sync.Mutex
			var wg sync.WaitGroup
			oks, errs := 0, 0
			for range in.N {
				wg.Go(func() {
					_, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "flood", RequestedSchema: map[string]any{"type": "object"}})
					mu.Lock()
					if err != nil {
						errs++
					} else {
						oks++
					}
					mu.Unlock()
				})
			}
			wg.Wait()
			out = map[string]int{"answered": oks, "refused": errs}
		default:
			return nil, fmt.Errorf("unknown what %q", in.What)
		}
		if err != nil {
			res := &mcp.CallToolResult{}
			res.SetError(fmt.Errorf("asking the client: %w", err))
			return res, nil
		}
		b, _ := json.Marshal(out)
		return text(string(b)), nil
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "client_caps",
		Description: "Returns the client capabilities the server was told at initialize.",
		InputSchema: schema(`{"type":"object"}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		caps := req.Session.InitializeParams().Capabilities
		// As on the wire: the SDK's Roots field is always there.
		b, _ := json.Marshal(struct {
			Elicitation *mcp.ElicitationCapabilities `json:"elicitation,omitempty"`
			Sampling    *mcp.SamplingCapabilities    `json:"sampling,omitempty"`
			Roots       *mcp.RootCapabilities        `json:"roots,omitempty"`
		}{caps.Elicitation, caps.Sampling, caps.RootsV2})
		return text(string(b)), nil
	})
}
