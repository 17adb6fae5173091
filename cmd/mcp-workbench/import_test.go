package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
)

// importFixture is the path of a host configuration in testdata/import.
func importFixture(name string) string {
	return filepath.Join("..", "..", "testdata", "import", name)
}

// anyVarSet reports every variable as set, as importCommand does when it
// validates: the host's variables need not be set where the import runs.
// The value is "x" except for the variables that the fixtures use to build
// URLs, which need values that make a URL ("x" as a port does not);
// importCommand leaves such URLs unchecked instead.
func anyVarSet(name string) (string, bool) {
	switch name {
	case "API_BASE_URL":
		return "", true // set but empty: ${API_BASE_URL:-default} takes the default
	case "EVENTS_PORT":
		return "9000", true
	}
	return "x", true
}

// runImportCmd runs `mcp-workbench import ARGS…` and returns its exit
// status (0 for success) and output.
func runImportCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCmd(t, "", append([]string{"import"}, args...)...)
}

// rawAt returns the raw JSON value at path (object keys) in data.
func rawAt(t *testing.T, data []byte, path ...string) json.RawMessage {
	t.Helper()
	v := json.RawMessage(data)
	for _, k := range path {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(v, &m); err != nil {
			t.Fatalf("%v at %q: %v", path, k, err)
		}
		var ok bool
		if v, ok = m[k]; !ok {
			t.Fatalf("no %q in %v", k, path)
		}
	}
	return v
}

func compact(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// importCase is a host configuration and what importing it must give.
type importCase struct {
	fixture string
	// servers are the imported names in file order, each with the path of
	// its entry in the fixture.
	servers []string
	from    map[string][]string
	stderr  string // a note that must be printed, if any
	// claudeCode: the next steps give the claude command, not the
	// mcpServers entry of the other hosts.
	claudeCode bool
	// places are the lines that say where the servers are in the file.
	places []string
}

var importCases = []importCase{
	{
		fixture: "claude_desktop_config.json",
		servers: []string{"zeta-files", "alpha-memory", "github"},
		from: map[string][]string{
			"zeta-files":   {"mcpServers", "zeta-files"},
			"alpha-memory": {"mcpServers", "alpha-memory"},
			"github":       {"mcpServers", "github"},
		},
		places: []string{`top-level "mcpServers": zeta-files, alpha-memory, github`},
	},
	{
		fixture: "claude-code-project.mcp.json",
		servers: []string{"postgres", "api", "local-events"},
		from: map[string][]string{
			"postgres":     {"mcpServers", "postgres"},
			"api":          {"mcpServers", "api"},
			"local-events": {"mcpServers", "local-events"},
		},
		claudeCode: true,
	},
	{
		// Projects come first in this file; the site's memory server is the
		// app's with its keys in another order, so it is imported once,
		// while its db server differs and is kept as db-2.
		fixture: "claude-code-user.claude.json",
		servers: []string{"db", "memory", "db-2", "docs"},
		from: map[string][]string{
			"db":     {"projects", "/home/me/app", "mcpServers", "db"},
			"memory": {"projects", "/home/me/app", "mcpServers", "memory"},
			"db-2":   {"projects", "/home/me/site", "mcpServers", "db"},
			"docs":   {"mcpServers", "docs"},
		},
		stderr:     `level=WARN msg="import: two different servers are named \"db\" (in project /home/me/app and in project /home/me/site): the later one is imported as \"db-2\""`,
		claudeCode: true,
		// Both projects' servers are to be removed where they are.
		places: []string{
			`"projects" → "/home/me/app" → "mcpServers": db, memory`,
			`"projects" → "/home/me/site" → "mcpServers": db, memory`,
			`top-level "mcpServers": docs`,
		},
	},
	{
		fixture: "cursor-mcp.json",
		servers: []string{"linear", "browser", "fetch"},
		from: map[string][]string{
			"linear":  {"mcpServers", "linear"},
			"browser": {"mcpServers", "browser"},
			"fetch":   {"mcpServers", "fetch"},
		},
		places: []string{`top-level "mcpServers": linear, browser, fetch`},
	},
}

func TestImportHostConfigs(t *testing.T) {
	for _, tc := range importCases {
		for _, mode := range []string{"per-server", "one-toolbox"} {
			t.Run(tc.fixture+"/"+mode, func(t *testing.T) {
				src := importFixture(tc.fixture)
				out := filepath.Join(t.TempDir(), "wb.json")
				// Flags go after PATH in one mode and before it in the
				// other: both orders must work.
				args := []string{src, "--out", out}
				if mode == "one-toolbox" {
					args = []string{"--toolbox", "all", "--out", out, src}
				}
				code, stdout, stderr := runImportCmd(t, args...)
				if code != 0 {
					t.Fatalf("exit status %d\nstderr: %s", code, stderr)
				}
				if !strings.Contains(stderr, tc.stderr) {
					t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
				}
				written, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(written, []byte("{\n  \"$schema\": \"https://raw.githubusercontent.com/mcpworkbench/mcp-workbench/main/workbench-config.schema.json\",\n  \"toolboxes\": {\n")) {
					t.Errorf("the file does not start with $schema then toolboxes:\n%s", written)
				}
				if info, err := os.Stat(out); err != nil || info.Mode().Perm()&0o600 != 0o600 {
					t.Errorf("file mode: %v, %v", info, err)
				}

				cfg, err := config.Parse(written, anyVarSet)
				if err != nil {
					t.Fatalf("the written file does not load: %v\n%s", err, written)
				}
				var gotBoxes, gotServers []string
				for _, tb := range cfg.Toolboxes {
					gotBoxes = append(gotBoxes, tb.Name)
					if !strings.HasPrefix(tb.Description, "Draft: ") {
						t.Errorf("toolbox %s: description %q is not marked a draft", tb.Name, tb.Description)
					}
					for _, s := range tb.Servers {
						gotServers = append(gotServers, s.Name)
						if len(tb.Servers) > 1 && !strings.Contains(tb.Description, s.Name+": ") {
							t.Errorf("toolbox %s: description %q does not name %s", tb.Name, tb.Description, s.Name)
						}
					}
				}
				if !reflect.DeepEqual(gotServers, tc.servers) {
					t.Errorf("servers %v, want %v in file order", gotServers, tc.servers)
				}
				wantBoxes := tc.servers
				if mode == "one-toolbox" {
					wantBoxes = []string{"all"}
				}
				if !reflect.DeepEqual(gotBoxes, wantBoxes) {
					t.Errorf("toolboxes %v, want %v", gotBoxes, wantBoxes)
				}

				source, err := os.ReadFile(src)
				if err != nil {
					t.Fatal(err)
				}
				for i, name := range tc.servers {
					box := wantBoxes[min(i, len(wantBoxes)-1)]
					got := compact(t, rawAt(t, written, "toolboxes", box, "mcpServers", name))
					want := compact(t, rawAt(t, source, tc.from[name]...))
					if got != want {
						t.Errorf("%s changed on the way:\n got %s\nwant %s", name, got, want)
					}
				}

				abs, err := filepath.Abs(out)
				if err != nil {
					t.Fatal(err)
				}
				exe, err := os.Executable()
				if err != nil {
					t.Fatal(err)
				}
				wants := append([]string{`Make each "Draft: " description`, "Remove the imported servers"}, tc.places...)
				// A project's .mcp.json gets the workbench in that project,
				// ~/.claude.json in every project.
				scope := "user"
				if strings.HasSuffix(tc.fixture, ".mcp.json") {
					scope = "project"
				}
				claudeCmd := `claude mcp add-json --scope ` + scope + ` workbench '{"type":"stdio","command":"` + exe + `","args":["--config","` + abs + `"],"alwaysLoad":true}'`
				entry := []string{`"args": ["--config", "` + abs + `"]`, `"command": "` + exe + `"`}
				if tc.claudeCode {
					wants = append(wants, claudeCmd, `"matcher": "mcp__workbench__use_tool"`, `"command": "`+exe+` hook claude-code --config `+abs+`"`)
					if strings.Contains(stdout, `"mcpServers": {`) {
						t.Errorf("stdout gives Claude Code another host's entry:\n%s", stdout)
					}
				} else {
					wants = append(wants, entry...)
					if strings.Contains(stdout, "claude mcp") || strings.Contains(stdout, "Claude Code") {
						t.Errorf("stdout speaks of Claude Code for another host's file:\n%s", stdout)
					}
				}
				for _, want := range wants {
					if !strings.Contains(stdout, want) {
						t.Errorf("stdout lacks %q:\n%s", want, stdout)
					}
				}
				for _, name := range tc.servers {
					if !strings.Contains(stdout, name) {
						t.Errorf("stdout does not say where %s went:\n%s", name, stdout)
					}
				}
			})
		}
	}
}

// TestImportDefaultOut checks that without --out the file is
// workbench-config.json in the current directory, the one the workbench
// itself looks for.
func TestImportDefaultOut(t *testing.T) {
	src, err := filepath.Abs(importFixture("cursor-mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := runImportCmd(t, src)
	if code != 0 {
		t.Fatalf("exit status %d\nstderr: %s", code, stderr)
	}
	want := filepath.Join(dir, config.DefaultPath)
	info, err := os.Stat(want)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
		t.Errorf("the configuration, which holds env and header values, has mode %04o, want 0600", info.Mode().Perm())
	}
	if !strings.Contains(stdout, want) {
		t.Errorf("stdout lacks the absolute path %s:\n%s", want, stdout)
	}
}

func TestImportOverwrite(t *testing.T) {
	src := importFixture("claude_desktop_config.json")
	out := filepath.Join(t.TempDir(), "wb.json")
	const old = "hand-written, keep me\n"
	if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runImportCmd(t, src, "--out", out)
	if code != 1 {
		t.Fatalf("without --force: exit status %d, want 1", code)
	}
	for _, want := range []string{out, "already exists", "--force", "--out"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, stderr)
		}
	}
	if stdout != "" {
		t.Errorf("stdout: %q, want nothing", stdout)
	}
	if got, _ := os.ReadFile(out); string(got) != old {
		t.Fatalf("the file was changed without --force: %q", got)
	}

	code, _, stderr = runImportCmd(t, src, "--out", out, "--force")
	if code != 0 {
		t.Fatalf("with --force: exit status %d\nstderr: %s", code, stderr)
	}
	got, _ := os.ReadFile(out)
	if _, err := config.Parse(got, anyVarSet); err != nil {
		t.Fatalf("with --force the file is not the imported configuration: %v\n%s", err, got)
	}
}

// TestImportNeverOverwritesTheSource checks that --out naming the host
// configuration is refused even with --force: it holds the user's servers.
func TestImportNeverOverwritesTheSource(t *testing.T) {
	orig, err := os.ReadFile(importFixture("cursor-mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(src, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runImportCmd(t, src, "--out", src, "--force")
	if code != 1 || !strings.Contains(stderr, "host configuration being imported") {
		t.Errorf("exit status %d, stderr %q", code, stderr)
	}
	if got, _ := os.ReadFile(src); !bytes.Equal(got, orig) {
		t.Errorf("the host configuration was changed:\n%s", got)
	}
}

func TestImportErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.json")
	tests := []struct {
		name string
		args []string // "OUT" stands for a fresh output path
		code int
		want []string // in stderr
	}{
		{"no path", []string{"--out", "OUT"}, 2, []string{"missing PATH", "Usage: mcp-workbench import"}},
		{"two paths", []string{importFixture("cursor-mcp.json"), importFixture("no-servers.json"), "--out", "OUT"}, 2, []string{`unexpected argument "` + importFixture("no-servers.json") + `"`, "Usage:"}},
		{"unknown flag", []string{importFixture("cursor-mcp.json"), "--bogus"}, 2, []string{"flag provided but not defined: --bogus", "Usage:"}},
		{"flag without value", []string{importFixture("cursor-mcp.json"), "--out"}, 2, []string{"flag needs an argument: --out", "Usage:"}},
		{"empty toolbox name", []string{importFixture("cursor-mcp.json"), "--toolbox", " ", "--out", "OUT"}, 2, []string{"--toolbox needs a toolbox name"}},
		{"empty out", []string{importFixture("cursor-mcp.json"), "--out", ""}, 2, []string{"--out needs a file name"}},
		{"missing file", []string{missing, "--out", "OUT"}, 1, []string{"mcp-workbench: cannot read the host configuration", missing}},
		{"syntax error", []string{importFixture("broken-syntax.json"), "--out", "OUT"}, 1, []string{"mcp-workbench: " + importFixture("broken-syntax.json") + ": line 3, column 28: invalid JSON"}},
		{"truncated", []string{importFixture("truncated.json"), "--out", "OUT"}, 1, []string{"mcp-workbench: " + importFixture("truncated.json") + ": line 4, column 1: invalid JSON: unexpected end of file"}},
		{"no servers", []string{importFixture("no-servers.json"), "--out", "OUT"}, 1, []string{"mcp-workbench: no MCP servers found in " + importFixture("no-servers.json")}},
		{"neither command nor url", []string{importFixture("no-command-or-url.json"), "--out", "OUT"}, 1, []string{
			"mcp-workbench: nothing written: the servers of " + importFixture("no-command-or-url.json"),
			`toolboxes.bad.mcpServers.bad: needs "command"`,
		}},
		{"not a host configuration", []string{importFixture("not-an-object.json"), "--out", "OUT"}, 1, []string{importFixture("not-an-object.json") + " is not a host configuration"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "wb.json")
			args := make([]string, len(tt.args))
			for i, a := range tt.args {
				args[i] = strings.ReplaceAll(a, "OUT", out)
			}
			code, stdout, stderr := runImportCmd(t, args...)
			if code != tt.code {
				t.Errorf("exit status %d, want %d\nstderr: %s", code, tt.code, stderr)
			}
			for _, want := range tt.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if tt.code == 2 && strings.Count(strings.TrimSpace(strings.SplitN(stderr, "\n\n", 2)[0]), "\n") != 0 {
				t.Errorf("a usage error must be one line before the usage:\n%s", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout: %q, want nothing", stdout)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was written (%v)", out, err)
			}
		})
	}
}

func TestImportHelp(t *testing.T) {
	code, stdout, _ := runImportCmd(t, "--help")
	if code != 0 || !strings.Contains(stdout, "Usage: mcp-workbench import [PATH]") {
		t.Errorf("exit status %d, stdout %q", code, stdout)
	}
}

// TestImportWarnings checks what import points out on stderr: a ${VAR}
// that is not set here, at its place in the written file; not the TODO
// descriptions it writes itself (stdout says to replace them). With
// --log-level error it says nothing.
func TestImportWarnings(t *testing.T) {
	t.Setenv("EVENTS_PORT", "9000")
	t.Setenv("API_KEY", "")
	os.Unsetenv("API_KEY") // restored by t.Setenv
	out := filepath.Join(t.TempDir(), "wb.json")
	code, stdout, stderr := runImportCmd(t, importFixture("claude-code-project.mcp.json"), "--out", out)
	// The line validate writes for the same variable.
	want := `level=WARN msg="configuration: toolboxes.api.mcpServers.api.headers.Authorization: environment variable API_KEY is not set here: set it where the host starts the workbench`
	if code != 0 || !strings.Contains(stderr, want) || strings.Contains(stderr, "TODO") || strings.Contains(stderr, "Draft") || strings.Contains(stderr, "EVENTS_PORT") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, `Make each "Draft: " description`) {
		t.Errorf("stdout does not say to finish the drafts:\n%s", stdout)
	}
	if _, _, vErr := runCmd(t, "", "validate", "--config", out); !strings.Contains(vErr, want) {
		t.Errorf("validate warns of API_KEY otherwise than import:\n%s", vErr)
	}
	code, _, stderr = runImportCmd(t, importFixture("claude-code-project.mcp.json"), "--out", out, "--force", "--log-level", "error")
	if code != 0 || stderr != "" {
		t.Errorf("--log-level error: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestValidateWarnsOfTODO checks that a configuration written by import
// and not finished yet loads, with a warning for each TODO description
// and each ${VAR} not set in the shell.
func TestValidateWarnsOfTODO(t *testing.T) {
	out := filepath.Join(t.TempDir(), "wb.json")
	if code, _, stderr := runImportCmd(t, importFixture("cursor-mcp.json"), "--out", out, "--toolbox", "all"); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	// LINEAR_TOKEN is not set here: the host sets it where it starts the
	// workbench. validate warns, as import did; serving would fail.
	code, stdout, stderr := runCmd(t, "", "validate", "--config", out)
	if code != 0 || !strings.Contains(stdout, "valid, 1 toolbox(es)") {
		t.Errorf("validate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if want := `level=WARN msg="configuration: toolboxes.all.description: still a TODO`; strings.Count(stderr, want) != 1 {
		t.Errorf("stderr does not warn once of the TODO description:\n%s", stderr)
	}
	if want := `environment variable LINEAR_TOKEN is not set here: set it where the host starts the workbench`; strings.Count(stderr, want) != 1 {
		t.Errorf("stderr does not warn once of the unset LINEAR_TOKEN:\n%s", stderr)
	}
	if code, _, stderr := runCmd(t, "", "check", "--config", out); code != 1 || !strings.Contains(stderr, "environment variable LINEAR_TOKEN is not set") {
		t.Errorf("check with LINEAR_TOKEN unset: exit %d\n%s", code, stderr)
	}
}

// TestImportNamesWithDollarBraces: a host's server named with "${" keeps
// its name: the workbench expands ${VAR} in keys, so import escapes it,
// and the file it writes loads.
func TestImportNamesWithDollarBraces(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "host.json")
	if err := os.WriteFile(src, []byte(`{"mcpServers":{"a b/c":{"command":"x"},"${weird}":{"command":"y"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "wb.json")
	code, _, stderr := runImportCmd(t, src, "--out", out)
	if code != 0 {
		t.Fatalf("import (%d): %s", code, stderr)
	}
	cfg, err := config.LoadWith(out, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("the imported configuration does not load: %v", err)
	}
	var names []string
	for _, tb := range cfg.Toolboxes {
		for _, s := range tb.Servers {
			names = append(names, s.Name)
		}
	}
	if !slices.Contains(names, "${weird}") || !slices.Contains(names, "a b/c") {
		t.Errorf("servers after import: %q", names)
	}
}

// TestImportWarnsOfADisabledToolbox: a toolbox whose only servers are
// disabled offers nothing; import and validate both say so.
func TestImportWarnsOfADisabledToolbox(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "claude_desktop_config.json")
	host := `{"mcpServers": {"off": {"command": "npx", "args": ["-y", "x"], "disabled": true}, "on": {"command": "npx"}}}`
	if err := os.WriteFile(src, []byte(host), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "wb.json")
	want := `configuration: toolboxes.off.mcpServers: every server is disabled`
	code, _, stderr := runImportCmd(t, src, "--out", out)
	if code != 0 || !strings.Contains(stderr, want) || strings.Contains(stderr, "toolboxes.on.") {
		t.Errorf("import (%d):\n%s", code, stderr)
	}
	if _, _, vErr := runCmd(t, "", "validate", "--config", out); !strings.Contains(vErr, want) {
		t.Errorf("validate:\n%s", vErr)
	}
	// In one toolbox with an enabled server, nothing to say.
	code, _, stderr = runImportCmd(t, src, "--out", out, "--force", "--toolbox", "all")
	if code != 0 || strings.Contains(stderr, "disabled") {
		t.Errorf("import --toolbox all (%d):\n%s", code, stderr)
	}
}

// TestImportMakesTheOutFolder checks the README's own command on a fresh
// home: --out in a folder that does not exist yet makes the folder
// (0700) and writes the file 0600, with no temporary file left beside it.
func TestImportMakesTheOutFolder(t *testing.T) {
	home := t.TempDir()
	out := filepath.Join(home, ".config", "mcp-workbench", "config.json")
	code, _, stderr := runImportCmd(t, importFixture("cursor-mcp.json"), "--out", out)
	if code != 0 {
		t.Fatalf("exit status %d\nstderr: %s", code, stderr)
	}
	if _, err := config.LoadWith(out, anyVarSet); err != nil {
		t.Errorf("the written file does not load: %v", err)
	}
	entries, err := os.ReadDir(filepath.Dir(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the folder holds %v, want config.json alone", entries)
	}
	if runtime.GOOS == "windows" {
		return // modes are not unix permissions there
	}
	for path, want := range map[string]os.FileMode{
		out:                            0o600,
		filepath.Dir(out):              0o700,
		filepath.Join(home, ".config"): 0o700,
	} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}
	// A second import without --force leaves the file as it is.
	before, _ := os.ReadFile(out)
	if code, _, stderr := runImportCmd(t, importFixture("claude_desktop_config.json"), "--out", out); code == 0 || !strings.Contains(stderr, "already exists") {
		t.Errorf("second import: exit %d, stderr %s", code, stderr)
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(before, after) {
		t.Error("a refused import changed the file")
	}
}
