//go:build hosts && unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// OpenCode (testdata/hosts: opencode-linux-x64, the native program of
// opencode-ai for Linux on x86-64) with an openai-compatible
// provider pointed at a scripted Chat Completions API: OpenCode offers the
// workbench's tools as workbench_<tool> functions, beside its own, and
// first asks the model, without tools, for the session's title.

// opencodeBin returns OpenCode's native program: testdata/hosts pins the
// package opencode-ai installs for Linux on x86-64 (opencode-linux-x64),
// as an optional dependency, since the registry this project's CI uses
// does not serve every platform's package that opencode-ai names (npm ci
// then refuses the lock), and opencode-ai's own launcher needs its
// postinstall script, which make hosts-e2e does not run. On another
// system the test fails saying so.
func opencodeBin(t *testing.T) string {
	t.Helper()
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	p := filepath.Join(fakeserver.RepoRoot(t), "testdata", "hosts", "node_modules", "opencode-"+runtime.GOOS+"-"+arch, "bin", "opencode")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("OpenCode is not installed for %s/%s: run make hosts-e2e (npm ci in testdata/hosts): %v", runtime.GOOS, runtime.GOARCH, err)
	}
	return p
}

// TestHostsOpenCodeSearchAndUseTool: OpenCode, configured with the
// workbench by mcp-workbench install opencode (its user file) and with a
// scripted model in the project's opencode.json, searches the toolboxes
// with open_toolbox, creates an entity in the official memory server with
// use_tool, and each result comes back to the model in its next request.
func TestHostsOpenCodeSearchAndUseTool(t *testing.T) {
	opencode := opencodeBin(t)
	h := newHostHome(t, nil)
	api := startModelAPIAside(t,
		func(req map[string]any) func(w io.Writer) {
			if tools, _ := req["tools"].([]any); len(tools) == 0 {
				return chatText("Ada")
			}
			return nil
		},
		chatCall("call_search", "workbench_open_toolbox", map[string]any{"query": "create entity"}),
		chatCall("call_create", "workbench_use_tool", createAda),
		chatText("Ada Lovelace is in the knowledge graph."),
	)
	project := `{
  "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": "` + api.URL + `/v1", "apiKey": "scripted"}, "models": {"m": {"tool_call": true}}}},
  "model": "scripted/m",
  "small_model": "scripted/m"
}
`
	if err := os.WriteFile(filepath.Join(h.root, "work", "opencode.json"), []byte(project), 0o600); err != nil {
		t.Fatal(err)
	}
	env := h.env("OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1")
	h.install(t, env, "opencode")

	stdout, stderr := h.runHost(t, env, opencode, "run", "--pure", "Remember that Ada Lovelace wrote the first program.")

	if got := strings.Join(chatWorkbenchTools(api.request(t, 0), "workbench_"), ","); got != "workbench_open_toolbox,workbench_use_tool" {
		t.Fatalf("OpenCode offered the workbench's tools %q; want workbench_open_toolbox,workbench_use_tool\nstdout:\n%s\nstderr:\n%s", got, clipLog(stdout), clipLog(stderr))
	}
	h.checkRoundTrip(t, "OpenCode", chatToolResult(t, api.request(t, 1), "call_search"), chatToolResult(t, api.request(t, 2), "call_create"), stdout, stderr)
	if n := api.count(); n != 3 {
		t.Errorf("OpenCode made %d model requests with tools; want the script's 3", n)
	}
	for i, p := range api.requestPaths() {
		if p != "/v1/chat/completions" {
			t.Errorf("model request %d went to %s", i+1, p)
		}
	}
}
