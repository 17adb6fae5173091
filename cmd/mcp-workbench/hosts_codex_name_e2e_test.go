//go:build hosts && unix

package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostsCodexHookNamedEntry: a real Codex with the workbench installed
// as --name wb-ops, whose configuration gives the memory server a
// ${WB_E2E_TOKEN} that only the entry's [mcp_servers.wb-ops.env] sets (as
// import tells users to do). Codex names the tool mcp__wb_ops__use_tool,
// and the hook install wrote matches it: the allowed call goes through
// (the hook, in Codex's environment without the variable, does not block
// it), the denied one is blocked by Codex with the rule.
func TestHostsCodexHookNamedEntry(t *testing.T) {
	h := newHostHome(t, map[string]any{"tools": map[string]any{"memory/create_entities": "deny"}})
	var cfg map[string]any
	b, err := os.ReadFile(h.config)
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	mem := cfg["toolboxes"].(map[string]any)["knowledge"].(map[string]any)["mcpServers"].(map[string]any)["memory"].(map[string]any)
	mem["env"].(map[string]any)["WB_E2E_TOKEN"] = "${WB_E2E_TOKEN}"
	if b, err = json.MarshalIndent(cfg, "", "  "); err == nil {
		err = os.WriteFile(h.config, b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}

	const namespace = "mcp__wb_ops" // Codex's name of the server wb-ops
	call := func(callID string, args any) func(w io.Writer) {
		return func(w io.Writer) {
			sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_" + callID}})
			sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "item": map[string]any{
				"type": "function_call", "id": "fc_" + callID, "call_id": callID,
				"namespace": namespace, "name": "use_tool", "arguments": mustJSON(args),
			}})
			sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
				"id": "resp_" + callID, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
			}})
		}
	}
	readGraph := map[string]any{"tool": map[string]string{"toolbox": "knowledge", "server": "memory", "tool": "read_graph"}, "arguments": map[string]any{}}
	api := startModelAPI(t,
		call("call_read", readGraph),
		call("call_create", createAda),
		codexText("The workbench does not let me create entities."),
	)

	codex := hostBin(t, "codex")
	codexHome := filepath.Join(h.home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(codexHome, "config.toml")
	provider := "model = \"scripted\"\nmodel_provider = \"scripted\"\n\n[model_providers.scripted]\nname = \"scripted\"\nbase_url = \"" + api.URL + "/v1\"\nwire_api = \"responses\"\nenv_key = \"SCRIPTED_API_KEY\"\n"
	if err := os.WriteFile(file, []byte(provider), 0o600); err != nil {
		t.Fatal(err)
	}
	env := h.env("CODEX_HOME="+codexHome, "SCRIPTED_API_KEY=scripted")
	cmd := exec.Command(h.bin, "install", "codex", "--config", h.config, "--name", "wb-ops")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mcp-workbench install codex --name wb-ops: %v\n%s", err, out)
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString("\n[mcp_servers.wb-ops.env]\nWB_E2E_TOKEN = \"set-for-the-workbench-only\"\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}

	_, stderr := h.runHost(t, env, codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
		"-c", "mcp_optional_startup_grace_ms=120000",
		"-c", `mcp_servers.wb-ops.default_tools_approval_mode="approve"`,
		"-C", filepath.Join(h.root, "work"), "Remember that Ada Lovelace wrote the first program.")

	var offered []string
	tools, _ := api.request(t, 0)["tools"].([]any)
	for _, it := range tools {
		if m, _ := it.(map[string]any); m["type"] == "namespace" {
			offered = append(offered, m["name"].(string))
		}
	}
	if !strings.Contains(strings.Join(offered, ","), namespace) {
		t.Fatalf("Codex offered the namespaces %q; want %s\nstderr:\n%s", offered, namespace, clipLog(stderr))
	}
	if out := codexOutput(t, api.request(t, 1), "call_read"); !strings.Contains(out, `"entities"`) || strings.Contains(out, "blocked") {
		t.Errorf("the allowed read_graph did not go through the hook to the memory server: %s\nstderr:\n%s", clipLog(out), clipLog(lines(stderr, "hook")))
	}
	out := codexOutput(t, api.request(t, 2), "call_create")
	const want = "Tool call blocked by PreToolUse hook: The workbench configuration denies tool 'create_entities' of server 'memory' (toolbox 'knowledge')"
	if !strings.HasPrefix(out, want) {
		t.Errorf("the denied call's output is not Codex's refusal from the hook:\n got: %s\nwant: %s…\nstderr:\n%s", clipLog(out), want, clipLog(lines(stderr, "hook")))
	}
	if b, err := os.ReadFile(h.memoryFile); err == nil && strings.Contains(string(b), "Ada Lovelace") {
		t.Errorf("the denied call reached the memory server: %s", b)
	}
}
