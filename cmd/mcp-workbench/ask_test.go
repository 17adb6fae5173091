package main

//lint:file-ignore SA1019 roots and sampling are deprecated from 2026-07-28 on, but hosts and servers of the 2025 protocols still use them, and the workbench relays what they use.

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askConfig is a toolbox of the official everything server, whose tools
// ask the client for a form, a sampled message and the roots, and the
// official filesystem server started without folders: it serves the
// client's roots.
func askConfig(t *testing.T) (path, project, outside string) {
	everything := fakeserver.NPMServer(t, "mcp-server-everything")
	filesystem := fakeserver.NPMServer(t, "mcp-server-filesystem")
	home := t.TempDir()
	for _, v := range fakeserver.HomeVars {
		t.Setenv(v, home)
	}
	project, outside = t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "note.txt"), []byte("inside the roots"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside the roots"), 0o644); err != nil {
		t.Fatal(err)
	}
	path = writeConfig(t, map[string]any{"toolboxes": map[string]any{"ask": map[string]any{
		"description": "servers that ask the host",
		"mcpServers": map[string]any{
			"everything": map[string]any{"command": everything},
			"files":      map[string]any{"command": filesystem},
		},
	}}})
	return path, project, outside
}

func fileURI(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

// TestOfficialServersAskTheHost: the official everything server behind
// the workbench asks a go-sdk host, on the 2025-11-25 protocol (requests
// of the workbench's own) and on 2026-07-28 (input_required and the host's
// retry), for a form, a sampled message and its roots, and returns what
// the host answered; the official filesystem server serves inside the
// host's roots and refuses outside them.
func TestOfficialServersAskTheHost(t *testing.T) {
	path, project, outside := askConfig(t)
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			opts := &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req.Params.Message)
					mu.Unlock()
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				},
				CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: "assistant", Model: "go-host-model", Content: &mcp.TextContent{Text: "hi from the go host"}}, nil
				},
			}
			cs, _ := runInProcessAtWithRoots(t, protocol, opts, []*mcp.Root{{URI: fileURI(project), Name: "project"}}, "--config", path)

			text, isErr := callTool(t, cs, "use_tool", use("ask", "everything", "trigger-elicitation-request", map[string]any{}))
			if isErr || !strings.Contains(text, "Ada") {
				t.Errorf("elicitation: %s", text)
			}
			mu.Lock()
			if len(asked) != 1 || !strings.HasPrefix(asked[0], "[ask/everything] ") {
				t.Errorf("the host was asked %q; want one message naming toolbox and server", asked)
			}
			mu.Unlock()
			text, isErr = callTool(t, cs, "use_tool", use("ask", "everything", "trigger-sampling-request", map[string]any{"prompt": "hello"}))
			if isErr || !strings.Contains(text, "hi from the go host") {
				t.Errorf("sampling: %s", text)
			}
			text, isErr = callTool(t, cs, "use_tool", use("ask", "everything", "get-roots-list", map[string]any{}))
			if isErr || !strings.Contains(text, fileURI(project)) {
				t.Errorf("roots: %s", text)
			}
			if protocol >= "2026-07-28" {
				return // the filesystem server asks for roots outside a call: the session's folder (docs/how-it-works.md)
			}
			text, isErr = callTool(t, cs, "use_tool", use("ask", "files", "read_text_file", map[string]any{"path": filepath.Join(project, "note.txt")}))
			if isErr || !strings.Contains(text, "inside the roots") {
				t.Errorf("read inside the roots: %s", text)
			}
			text, isErr = callTool(t, cs, "use_tool", use("ask", "files", "read_text_file", map[string]any{"path": filepath.Join(outside, "secret.txt")}))
			if !isErr || strings.Contains(text, "outside the roots") {
				t.Errorf("read outside the roots: %s (error %v); want it refused", text, isErr)
			}
		})
	}
}

// TestOfficialServersAskTheTypeScriptHost: the same through the official
// TypeScript client as the host.
func TestOfficialServersAskTheTypeScriptHost(t *testing.T) {
	path, project, _ := askConfig(t)
	t.Setenv("HOST_ROOT", fileURI(project))
	out := tsHost(t, []map[string]any{
		{"call": "use_tool", "arguments": use("ask", "everything", "trigger-elicitation-request", map[string]any{})},
		{"call": "use_tool", "arguments": use("ask", "everything", "trigger-sampling-request", map[string]any{"prompt": "hello"})},
		{"call": "use_tool", "arguments": use("ask", "everything", "get-roots-list", map[string]any{})},
		{"call": "use_tool", "arguments": use("ask", "files", "read_text_file", map[string]any{"path": filepath.Join(project, "note.txt")})},
	}, "--config", path)
	for i, want := range []string{"Ada", "hi from the TypeScript host", fileURI(project), "inside the roots"} {
		if !strings.Contains(string(out[i]), want) || strings.Contains(string(out[i]), `"isError":true`) {
			t.Errorf("step %d: %s; want %q in it", i, out[i], want)
		}
	}
}
