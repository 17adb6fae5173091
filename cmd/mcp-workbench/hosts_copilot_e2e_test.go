//go:build hosts && unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GitHub Copilot CLI (testdata/hosts: @github/copilot) in its
// bring-your-own-model mode, offline, against a scripted Chat Completions
// API (streamed chunks): Copilot CLI offers the workbench's tools as
// workbench-<tool> functions and sends a call's result back as a "tool"
// message. Its MCP client speaks 2026-07-28 first.

// TestHostsCopilotSearchAndUseTool: Copilot CLI, configured with the
// workbench by mcp-workbench install copilot-cli, negotiates 2026-07-28
// with it over stdio, searches the toolboxes with open_toolbox, creates
// an entity in the official memory server with use_tool, and each result
// comes back to the model in its next request.
func TestHostsCopilotSearchAndUseTool(t *testing.T) {
	copilot := hostBin(t, "copilot")
	h := newHostHome(t, nil)
	api := startModelAPI(t,
		chatCall("call_search", "workbench-open_toolbox", map[string]any{"query": "create entity"}),
		chatCall("call_create", "workbench-use_tool", createAda),
		chatText("Ada Lovelace is in the knowledge graph."),
	)
	copilotHome := filepath.Join(h.home, ".copilot")
	env := h.env("COPILOT_HOME="+copilotHome, "COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false",
		"COPILOT_PROVIDER_BASE_URL="+api.URL+"/v1", "COPILOT_PROVIDER_API_KEY=scripted", "COPILOT_MODEL=m")
	// mcp-workbench install writes $COPILOT_HOME/mcp-config.json.
	h.install(t, env, "copilot-cli")

	stdout, stderr := h.runHost(t, env, copilot, "-p", "Remember that Ada Lovelace wrote the first program.", "--allow-all-tools", "--no-color")

	if got := strings.Join(chatWorkbenchTools(api.request(t, 0), "workbench-"), ","); got != "workbench-open_toolbox,workbench-use_tool" {
		t.Fatalf("Copilot CLI offered the workbench's tools %q; want workbench-open_toolbox,workbench-use_tool\nstdout:\n%s\nstderr:\n%s", got, clipLog(stdout), clipLog(stderr))
	}
	h.checkRoundTrip(t, "Copilot CLI", chatToolResult(t, api.request(t, 1), "call_search"), chatToolResult(t, api.request(t, 2), "call_create"), stdout, stderr)
	for i, p := range api.requestPaths() {
		if p != "/v1/chat/completions" {
			t.Errorf("model request %d went to %s", i+1, p)
		}
	}
	// Copilot CLI's log names the protocol its MCP client settled on.
	logs, _ := filepath.Glob(filepath.Join(copilotHome, "logs", "*.log"))
	var all strings.Builder
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		all.Write(b)
	}
	if !strings.Contains(all.String(), `protocol_version: ProtocolVersion(\"2026-07-28\")`) {
		t.Errorf("Copilot CLI's log does not show a 2026-07-28 session with the workbench: %s", clipLog(lines(all.String(), "protocol_version")))
	}
}
