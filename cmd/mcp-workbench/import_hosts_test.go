package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
)

// importHostCases are each host's realistic file and the host import must
// tell it is, without --from.
var importHostCases = []struct{ fixture, host string }{
	{"codex-config.toml", "codex"},
	{"vscode-mcp.json", "vscode"},
	{"gemini-settings.json", "gemini-cli"},
	{"copilot-mcp-config.json", "copilot-cli"},
	{"opencode.json", "opencode"},
	{"windsurf-mcp_config.json", "windsurf"},
	{"zed-settings.json", "zed"},
	{"cline_mcp_settings.json", "cline"},
}

// TestImportEachHost imports each host's file and compares, with
// testdata/import/golden/FIXTURE.txt, the configuration written, the
// warnings (every key not carried over, by file, server and key) and the
// next steps (the host's own entry). The written file must load.
func TestImportEachHost(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // the entries name the user's files
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CODEX_HOME", "")
	t.Setenv("COPILOT_HOME", "")
	// The goldens hold the warnings for the fixtures' variables that are
	// not set: none of them is, whatever the machine's environment.
	for _, name := range []string{"GITHUB_PERSONAL_ACCESS_TOKEN", "LINEAR_API_KEY", "LINEAR_ORG", "PERPLEXITY_KEY",
		"DB_CONNECTION_STRING", "EXTERNAL_API_KEY", "API_TOKEN", "SSE_KEY", "CONTEXT7_KEY", "SENTRY_TOKEN",
		"FIGMA_TOKEN", "BRAVE_API_KEY", "CLINE_TOKEN", "WORKSPACE_FOLDER"} {
		t.Setenv(name, "")
		os.Unsetenv(name) // restored by t.Setenv
	}
	for _, tc := range importHostCases {
		for _, from := range []string{"", tc.host} {
			t.Run(tc.fixture+"/from="+from, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "wb.json")
				args := []string{importFixture(tc.fixture), "--out", out}
				if from != "" {
					args = append(args, "--from", from)
				}
				code, stdout, stderr := runImportCmd(t, args...)
				if code != 0 {
					t.Fatalf("exit %d\nstderr: %s", code, stderr)
				}
				written, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := config.Parse(written, anyVarSet); err != nil {
					t.Errorf("the written file does not load: %v\n%s", err, written)
				}
				if !strings.Contains(stdout, "docs/hosts/"+tc.host+".md") {
					t.Errorf("not read as %s's file:\n%s", tc.host, stdout)
				}
				exe, _ := os.Executable()
				home, _ := os.UserHomeDir()
				var b bytes.Buffer
				b.WriteString("== warnings ==\n" + stderr + "== " + tc.fixture + " → workbench-config.json ==\n")
				b.Write(written)
				b.WriteString("== next steps ==\n" + stdout)
				src, _ := filepath.Abs(importFixture(tc.fixture))
				got := strings.NewReplacer(exe, "/usr/bin/mcp-workbench", out, "/home/me/wb.json", src, "/home/me/"+tc.fixture, home, "/home/me").Replace(b.String())
				importGolden(t, tc.fixture+".txt", []byte(got))
			})
		}
	}
}

func importGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	compareGolden(t, filepath.Join("..", "..", "testdata", "import", "golden", name), got)
}

// compareGolden checks got against the golden file at path, which -update
// rewrites.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file (-update rewrites it):\n%s", filepath.Base(path), got)
	}
}

// TestImportDraftsFromTheCatalog checks that a server the workbench has
// already run gets a draft description naming its tools, from the tool
// catalog, and one it has not run a draft naming its package.
func TestImportDraftsFromTheCatalog(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("LOCALAPPDATA", cache)
	host := filepath.Join(t.TempDir(), "mcp.json")
	memory := `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}`
	if err := os.WriteFile(host, []byte(`{"mcpServers": {"memory": `+memory+`, "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(`{"toolboxes": {"memory": {"description": "x", "mcpServers": {"memory": `+memory+`}}}}`), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := catalog.DefaultDir()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tools := []json.RawMessage{
		json.RawMessage(`{"name": "create_entities", "description": "Create multiple new entities in the knowledge graph. Each has a name.", "inputSchema": {"type": "object"}}`),
		json.RawMessage(`{"name": "read_graph", "description": "Read the entire knowledge graph", "inputSchema": {"type": "object"}}`),
	}
	if err := cat.Put(catalog.Key(cfg.Toolboxes[0].Servers[0], downstream.ProtocolVersion), tools, nil); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "wb.json")
	if code, _, stderr := runImportCmd(t, host, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	written, err := config.LoadUnsetAsWarnings(out, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"memory": "Draft: tools create_entities (Create multiple new entities in the knowledge graph), read_graph (Read the entire knowledge graph)",
		"fetch":  "Draft: the tools of the Python package mcp-server-fetch",
	}
	for _, tb := range written.Toolboxes {
		if tb.Description != want[tb.Name] {
			t.Errorf("toolbox %s: description %q, want %q", tb.Name, tb.Description, want[tb.Name])
		}
	}
}

// TestImportListsHostFiles checks import without a file: the host files
// found in the home folder and the current folder, each with its
// servers, and one that does not parse named with its error.
func TestImportListsHostFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("APPDATA", filepath.Join(home, "AppData"))
	t.Setenv("CODEX_HOME", "")
	t.Setenv("COPILOT_HOME", "")
	for path, fixture := range map[string]string{
		filepath.Join(home, ".codex", "config.toml"):    "codex-config.toml",
		filepath.Join(home, ".gemini", "settings.json"): "gemini-settings.json",
		filepath.Join(home, ".cursor", "mcp.json"):      "broken-syntax.json",
	} {
		data, err := os.ReadFile(importFixture(fixture))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runImportCmd(t)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Codex  " + filepath.Join(home, ".codex", "config.toml") + "\n      5 server(s): memory, github, scratch, linear, docs",
		"Gemini CLI  " + filepath.Join(home, ".gemini", "settings.json") + "\n      4 server(s): pythonTools, nodeServer, httpServer, sseServer",
		"Cursor  " + filepath.Join(home, ".cursor", "mcp.json") + "\n      no servers to import: ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Count(stdout, "server(s)") != 2 {
		t.Errorf("other files listed:\n%s", stdout)
	}

	// install --print shows the entry and writes nothing.
	code, stdout, _ = runCmd(t, "", "install", "gemini-cli", "--print", "--config", filepath.Join(home, "wb.json"))
	if code != 0 || !strings.Contains(stdout, "gemini mcp add --scope user workbench ") {
		t.Errorf("install --print: exit %d\n%s", code, stdout)
	}
	if data, _ := os.ReadFile(filepath.Join(home, ".gemini", "settings.json")); strings.Contains(string(data), "workbench") {
		t.Error("install --print wrote the file")
	}
}
