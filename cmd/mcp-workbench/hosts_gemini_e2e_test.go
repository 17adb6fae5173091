//go:build hosts && unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Gemini CLI (testdata/hosts: @google/gemini-cli) against a scripted
// Gemini API (streamGenerateContent, SSE): Gemini CLI offers the
// workbench's tools as mcp_workbench_<tool> function declarations, and
// sends a call's result back as a functionResponse.

// geminiModel is the model the runs name (-m): with none, Gemini CLI first
// asks a classifier model which to use.
const geminiModel = "gemini-2.5-flash"

// geminiCall is a script step: the model calls the workbench's tool name
// with args.
func geminiCall(name string, args any) func(w io.Writer) {
	return func(w io.Writer) {
		sse(w, "", map[string]any{
			"candidates": []any{map[string]any{
				"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"name": "mcp_workbench_" + name, "args": args}}}},
				"finishReason": "STOP", "index": 0,
			}},
			"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
		})
	}
}

// geminiText is a script step: the model's final answer.
func geminiText(text string) func(w io.Writer) {
	return func(w io.Writer) {
		sse(w, "", map[string]any{
			"candidates": []any{map[string]any{
				"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}},
				"finishReason": "STOP", "index": 0,
			}},
			"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
		})
	}
}

// geminiResponse returns the functionResponse Gemini CLI sent the model
// for the workbench's tool name in a request, or fails.
func geminiResponse(t *testing.T, req map[string]any, name string) string {
	t.Helper()
	contents, _ := req["contents"].([]any)
	for i := len(contents) - 1; i >= 0; i-- {
		c, _ := contents[i].(map[string]any)
		parts, _ := c["parts"].([]any)
		for _, p := range parts {
			fr, _ := p.(map[string]any)["functionResponse"].(map[string]any)
			if fr != nil && fr["name"] == "mcp_workbench_"+name {
				return mustJSON(fr["response"])
			}
		}
	}
	t.Fatalf("the model request carries no functionResponse for %s: %s", name, clipLog(mustJSON(contents)))
	return ""
}

// geminiWorkbenchTools returns the names of the workbench's tools that
// Gemini CLI declared to the model.
func geminiWorkbenchTools(req map[string]any) []string {
	var names []string
	tools, _ := req["tools"].([]any)
	for _, tl := range tools {
		decls, _ := tl.(map[string]any)["functionDeclarations"].([]any)
		for _, d := range decls {
			if name, _ := d.(map[string]any)["name"].(string); strings.HasPrefix(name, "mcp_workbench_") {
				names = append(names, name)
			}
		}
	}
	return names
}

// runGemini sets Gemini CLI up for h (its settings for an offline run with
// an API key, against api; the workbench's entry and hook as mcp-workbench
// install gemini-cli writes them) and runs one prompt.
func runGemini(t *testing.T, h *hostHome, api *modelAPI, prompt string) (stdout, stderr string) {
	t.Helper()
	gemini := hostBin(t, "gemini")
	settings := `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "general": {"enableAutoUpdate": false}
}
`
	if err := os.MkdirAll(filepath.Join(h.home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.home, ".gemini", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	env := h.env("GEMINI_API_KEY=scripted", "GOOGLE_GEMINI_BASE_URL="+api.URL, "GEMINI_CLI_TRUST_WORKSPACE=true")
	h.install(t, env, "gemini-cli")
	// --yolo: in -p, Gemini CLI offers MCP tools only to a run that need
	// not ask (or a server marked trusted).
	return h.runHost(t, env, gemini, "-p", prompt, "--yolo", "-m", geminiModel)
}

// TestHostsGeminiSearchAndUseTool: Gemini CLI, configured with the
// workbench (and its hook) by mcp-workbench install gemini-cli, searches the toolboxes
// with open_toolbox, creates an entity in the official memory server with
// use_tool, and each result comes back to the model in its next request.
func TestHostsGeminiSearchAndUseTool(t *testing.T) {
	h := newHostHome(t, nil)
	api := startModelAPI(t,
		geminiCall("open_toolbox", map[string]any{"query": "create entity"}),
		geminiCall("use_tool", createAda),
		geminiText("Ada Lovelace is in the knowledge graph."),
	)
	stdout, stderr := runGemini(t, h, api, "Remember that Ada Lovelace wrote the first program.")

	if got := strings.Join(geminiWorkbenchTools(api.request(t, 0)), ","); got != "mcp_workbench_open_toolbox,mcp_workbench_use_tool" {
		t.Fatalf("Gemini CLI declared the workbench's tools %q; want mcp_workbench_open_toolbox,mcp_workbench_use_tool\nstderr:\n%s", got, clipLog(stderr))
	}
	h.checkRoundTrip(t, "Gemini CLI", geminiResponse(t, api.request(t, 1), "open_toolbox"), geminiResponse(t, api.request(t, 2), "use_tool"), stdout, stderr)
	for i, p := range api.requestPaths() {
		if !strings.HasSuffix(p, "/models/"+geminiModel+":streamGenerateContent") {
			t.Errorf("model request %d went to %s", i+1, p)
		}
	}
}

// TestHostsGeminiHookBlocksDenied: with the hook install gemini-cli
// writes and a rule that denies the memory server's create_entities, an
// allowed call goes through (the hook says nothing), and the denied one is
// blocked by Gemini CLI before it reaches the workbench: the model's next
// request carries Gemini CLI's refusal with the rule, and the memory
// server stored nothing.
func TestHostsGeminiHookBlocksDenied(t *testing.T) {
	h := newHostHome(t, map[string]any{"tools": map[string]any{"memory/create_entities": "deny"}})
	readGraph := map[string]any{"tool": map[string]string{"toolbox": "knowledge", "server": "memory", "tool": "read_graph"}, "arguments": map[string]any{}}
	api := startModelAPI(t,
		geminiCall("use_tool", readGraph),
		geminiCall("use_tool", createAda),
		geminiText("The workbench does not let me create entities."),
	)
	_, stderr := runGemini(t, h, api, "Remember that Ada Lovelace wrote the first program.")

	if out := geminiResponse(t, api.request(t, 1), "use_tool"); !strings.Contains(out, `entities`) || strings.Contains(out, "blocked") {
		t.Errorf("the allowed read_graph did not go through the hook to the memory server: %s\nstderr:\n%s", clipLog(out), clipLog(lines(stderr, "hook")))
	}
	out := geminiResponse(t, api.request(t, 2), "use_tool")
	const want = "Tool execution blocked: The workbench configuration denies tool 'create_entities' of server 'memory' (toolbox 'knowledge')"
	if !strings.Contains(out, want) || !strings.Contains(out, "memory/create_entities") {
		t.Errorf("the denied call's output is not Gemini CLI's refusal from the hook:\n got: %s\nwant: …%s…\nstderr:\n%s", clipLog(out), want, clipLog(lines(stderr, "hook")))
	}
	if b, err := os.ReadFile(h.memoryFile); err == nil && strings.Contains(string(b), "Ada Lovelace") {
		t.Errorf("the denied call reached the memory server: %s", b)
	}
}
