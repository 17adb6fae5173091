//go:build hosts && unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Codex CLI (testdata/hosts: @openai/codex) against a scripted OpenAI
// Responses API: Codex offers the workbench's tools as the namespace
// mcp__workbench, and sends a call's result back as a
// function_call_output.

// codexCall is a script step: the model calls the workbench's tool name
// with args.
func codexCall(callID, name string, args any) func(w io.Writer) {
	return func(w io.Writer) {
		sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_" + callID}})
		sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "item": map[string]any{
			"type": "function_call", "id": "fc_" + callID, "call_id": callID,
			"namespace": "mcp__workbench", "name": name, "arguments": mustJSON(args),
		}})
		sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
			"id": "resp_" + callID, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
		}})
	}
}

// codexText is a script step: the model's final answer.
func codexText(text string) func(w io.Writer) {
	return func(w io.Writer) {
		sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_final"}})
		sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "item": map[string]any{
			"type": "message", "role": "assistant", "id": "msg_final",
			"content": []any{map[string]any{"type": "output_text", "text": text}},
		}})
		sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
			"id": "resp_final", "usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
		}})
	}
}

// codexOutput returns the output Codex sent the model for callID in a
// request, or fails.
func codexOutput(t *testing.T, req map[string]any, callID string) string {
	t.Helper()
	items, _ := req["input"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m["type"] == "function_call_output" && m["call_id"] == callID {
			if s, ok := m["output"].(string); ok {
				return s
			}
			return mustJSON(m["output"])
		}
	}
	t.Fatalf("the model request carries no output for call %s: %s", callID, clipLog(mustJSON(items)))
	return ""
}

// codexWorkbenchTools returns the names of the tools Codex offered the
// model in the namespace mcp__workbench.
func codexWorkbenchTools(req map[string]any) []string {
	tools, _ := req["tools"].([]any)
	var names []string
	for _, it := range tools {
		m, _ := it.(map[string]any)
		if m["type"] != "namespace" || m["name"] != "mcp__workbench" {
			continue
		}
		inner, _ := m["tools"].([]any)
		for _, in := range inner {
			if f, ok := in.(map[string]any); ok {
				names = append(names, f["name"].(string))
			}
		}
	}
	return names
}

// setUpCodex gives the temporary user a Codex configured to use the
// scripted model API and the workbench; with hook, Codex also runs the
// workbench's PreToolUse hook.
func setUpCodex(t *testing.T, h *hostHome, api *modelAPI, hook bool) (codex string, env []string) {
	t.Helper()
	codex = hostBin(t, "codex")
	codexHome := filepath.Join(h.home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	// The model provider is the test's own; the workbench's entry and hook
	// are what mcp-workbench install codex writes.
	provider := `# The scripted model API of the test.
model = "scripted"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "` + api.URL + `/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
`
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(provider), 0o600); err != nil {
		t.Fatal(err)
	}
	env = h.env("CODEX_HOME="+codexHome, "SCRIPTED_API_KEY=scripted")
	h.install(t, env, "codex")
	if !hook {
		// The hook is install's too; this run goes without it.
		data, err := os.ReadFile(filepath.Join(codexHome, "config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		before, _, ok := strings.Cut(string(data), "# The workbench's permission rules")
		if !ok {
			t.Fatalf("install wrote no hook:\n%s", data)
		}
		if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(before), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return codex, env
}

// codexExec runs one Codex turn with prompt. Codex asks for its MCP
// servers' tools in the background and sends the first model request
// when they are ready or its grace time is up: the grace time is long
// here, as a busy machine starts the workbench slowly. What a user gives
// Codex interactively is given on the command line: the hook's trust (once,
// in Codex's /hooks), and the approval of the workbench's tools, which
// carry no annotations (Codex asks before each such call; codex exec,
// with nobody to ask, refuses it). The workbench's own rules still apply.
func codexExec(t *testing.T, h *hostHome, codex string, env []string, prompt string) (stdout, stderr string) {
	t.Helper()
	return h.runHost(t, env, codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
		"-c", "mcp_optional_startup_grace_ms=120000",
		"-c", `mcp_servers.workbench.default_tools_approval_mode="approve"`,
		"-C", filepath.Join(h.root, "work"), prompt)
}

// TestHostsCodexSearchAndUseTool: Codex, configured with the workbench,
// searches the toolboxes with open_toolbox, creates an entity in the
// official memory server with use_tool, and each result comes back to the
// model in Codex's next request.
func TestHostsCodexSearchAndUseTool(t *testing.T) {
	h := newHostHome(t, nil)
	api := startModelAPI(t,
		codexCall("call_open", "open_toolbox", map[string]any{"query": "create entity"}),
		codexCall("call_use", "use_tool", createAda),
		codexText("Ada Lovelace is in the knowledge graph."),
	)
	codex, env := setUpCodex(t, h, api, false)
	stdout, stderr := codexExec(t, h, codex, env, "Remember that Ada Lovelace wrote the first program.")

	if got := strings.Join(codexWorkbenchTools(api.request(t, 0)), ","); got != "open_toolbox,use_tool" {
		t.Fatalf("Codex offered the model the workbench's tools %q; want open_toolbox,use_tool\nstderr:\n%s", got, clipLog(stderr))
	}
	h.checkRoundTrip(t, "Codex", codexOutput(t, api.request(t, 1), "call_open"), codexOutput(t, api.request(t, 2), "call_use"), stdout, stderr)
	if n := api.count(); n != 3 {
		t.Errorf("Codex made %d model requests; want 3", n)
	}
}

// TestHostsCodexHookBlocksDenied: with the workbench's hook in Codex and a
// rule that denies the memory server's create_entities, an allowed call
// goes through (the hook says nothing), and the denied one is blocked by
// Codex before it reaches the workbench: the model's next request carries
// Codex's refusal with the rule, and the memory server stored nothing.
func TestHostsCodexHookBlocksDenied(t *testing.T) {
	h := newHostHome(t, map[string]any{"tools": map[string]any{"memory/create_entities": "deny"}})
	readGraph := map[string]any{"tool": map[string]string{"toolbox": "knowledge", "server": "memory", "tool": "read_graph"}, "arguments": map[string]any{}}
	api := startModelAPI(t,
		codexCall("call_read", "use_tool", readGraph),
		codexCall("call_create", "use_tool", createAda),
		codexText("The workbench does not let me create entities."),
	)
	codex, env := setUpCodex(t, h, api, true)
	_, stderr := codexExec(t, h, codex, env, "Remember that Ada Lovelace wrote the first program.")

	if out := codexOutput(t, api.request(t, 1), "call_read"); !strings.Contains(out, `"entities"`) || strings.Contains(out, "blocked") {
		t.Errorf("the allowed read_graph did not go through the hook to the memory server: %s\nstderr:\n%s", clipLog(out), clipLog(lines(stderr, "hook")))
	}
	out := codexOutput(t, api.request(t, 2), "call_create")
	const want = "Tool call blocked by PreToolUse hook: The workbench configuration denies tool 'create_entities' of server 'memory' (toolbox 'knowledge')"
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "memory/create_entities") {
		t.Errorf("the denied call's output is not Codex's refusal from the hook:\n got: %s\nwant: %s…\nstderr:\n%s", clipLog(out), want, clipLog(lines(stderr, "hook")))
	}
	if b, err := os.ReadFile(h.memoryFile); err == nil && strings.Contains(string(b), "Ada Lovelace") {
		t.Errorf("the denied call reached the memory server: %s", b)
	}
}
