package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
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
				got := strings.NewReplacer(exe, "/usr/bin/mcp-workbench", out, "/home/me/wb.json", home, "/home/me").Replace(b.String())
				importGolden(t, tc.fixture+".txt", []byte(got))
			})
		}
	}
}

func importGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "import", "golden", name)
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
		t.Errorf("%s differs from its golden file (-update rewrites it):\n%s", name, got)
	}
}
