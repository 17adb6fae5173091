package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const fixtures = "../../testdata/config"

func env(vars map[string]string) LookupFunc {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestLoadValidFull(t *testing.T) {
	path := filepath.Join(fixtures, "valid-full.json")
	cfg, err := LoadWith(path, env(map[string]string{"HOME": "/home/u", "API_KEY": "k1", "TOKEN": "t0k"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.ToolboxNames(), []string{"zeta", "alpha"}; !reflect.DeepEqual(got, want) {
		t.Errorf("toolbox order = %v, want file order %v", got, want)
	}
	zeta := cfg.Toolbox("zeta")
	var names []string
	for _, s := range zeta.Servers {
		names = append(names, s.Name)
	}
	if want := []string{"filesystem", "remote", "legacy", "off"}; !reflect.DeepEqual(names, want) {
		t.Errorf("server order = %v, want file order %v", names, want)
	}
	if n := zeta.EnabledServers(); n != 2 {
		t.Errorf("EnabledServers = %d, want 2", n)
	}

	fs := zeta.Server("filesystem")
	wantFS := &Server{
		Name:              "filesystem",
		Transport:         Stdio,
		Command:           "npx",
		Args:              []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/u/dev"},
		Env:               map[string]string{"API_KEY": "k1", "MODE": "safe"},
		Cwd:               filepath.Join(fixtures, "work"),
		ToolFilters:       []string{"read_*", "list_directory"},
		Shown:             "npx -y @modelcontextprotocol/server-filesystem ${HOME}/dev", // as written
		ShownFilters:      []string{"read_*", "list_directory"},
		ConnectionTimeout: 10 * time.Second, // top-level default
		RequestTimeout:    DefaultRequestTimeout,
		MaxRetries:        1, // top-level default
		Catalog:           true,
		ToolChanges:       ToolChangesBlock,
		MaxTools:          DefaultMaxTools,
		MaxToolListBytes:  DefaultMaxToolListBytes,
	}
	if !reflect.DeepEqual(fs, wantFS) {
		t.Errorf("filesystem =\n%+v\nwant\n%+v", fs, wantFS)
	}

	remote := zeta.Server("remote")
	if remote.Transport != HTTP || remote.URL != "https://example.com/mcp" ||
		remote.Headers["Authorization"] != "Bearer t0k" || remote.RequestTimeout != 5*time.Second {
		t.Errorf("remote = %+v", remote)
	}
	if l := zeta.Server("legacy"); l.Transport != SSE || !l.Disabled {
		t.Errorf("legacy = %+v, want a disabled sse server", l)
	}
	if o := zeta.Server("off"); !o.Disabled || o.MaxRetries != 0 {
		t.Errorf("off = %+v, want disabled with maxRetries 0", o)
	}
	alpha := cfg.Toolbox("alpha")
	if a := alpha.Server("a"); a.Transport != HTTP {
		t.Errorf("streamable-http transport = %q, want http", a.Transport)
	}
	if b := alpha.Server("b"); b.ConnectionTimeout != 10*time.Second || b.RequestTimeout != DefaultRequestTimeout || b.MaxRetries != 1 {
		t.Errorf("b limits = %v %v %d", b.ConnectionTimeout, b.RequestTimeout, b.MaxRetries)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("unexpected warnings: %q", cfg.Warnings)
	}
}

func TestLoadEmptyToolboxes(t *testing.T) {
	cfg, err := LoadWith(filepath.Join(fixtures, "empty-toolboxes.json"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Toolboxes) != 0 {
		t.Errorf("toolboxes = %v", cfg.Toolboxes)
	}
}

func TestUnknownKeysWarn(t *testing.T) {
	cfg, err := LoadWith(filepath.Join(fixtures, "unknown-keys.json"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"globalShortcut: unknown top-level key, ignored",
		"toolboxes.dev.color: unknown toolbox key, ignored",
		"toolboxes.dev.mcpServers.s.alwaysAllow: unknown server key, ignored",
		"toolboxes.dev.mcpServers.s.headers: ignored: this is a stdio server",
	}
	got := append([]string(nil), cfg.Warnings...)
	for _, w := range want {
		found := false
		for _, g := range got {
			if g == w {
				found = true
			}
		}
		if !found {
			t.Errorf("missing warning %q in %q", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d warnings, want %d: %q", len(got), len(want), got)
	}
}

// TestLoadErrors checks that each broken fixture is rejected with every
// problem at its JSON path.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		file string
		// want maps each expected JSON path to a fragment of its message.
		want map[string]string
		// whole is a fragment of the error for files that cannot be decoded.
		whole string
	}{
		{file: "no-toolboxes.json", want: map[string]string{"toolboxes": "required"}},
		{file: "missing-toolboxes.json", want: map[string]string{"": "this is an MCP host's configuration"}},
		{file: "not-object.json", want: map[string]string{"": "must hold a JSON object"}},
		{file: "syntax.json", whole: "line 3, column 34: invalid JSON"},
		{file: "truncated.json", whole: "unexpected end of file"},
		{file: "empty.json", whole: "the file is empty"},
		{file: "dup-keys.json", want: map[string]string{"toolboxes.dev": "duplicate key"}},
		{file: "env-key.json", want: map[string]string{ // a key written with a ${VAR} is named so
			"toolboxes.${TB_NAME:-dev}.description":          "environment variable WB_TEST_DESC is not set",
			"toolboxes.${TB_NAME:-dev}.mcpServers.s.args[0]": "unterminated ${",
		}},
		{file: "many-problems.json", want: map[string]string{
			"requestTimeoutMs":                                      "must be at least 1 (milliseconds), got 0",
			"toolboxes.dev.description":                             "must not be empty",
			"toolboxes.dev.mcpServers.fs.args[1]":                   "must be a string, not a number",
			"toolboxes.dev.mcpServers.fs.env.PORT":                  "must be a string, not a number (put it in quotes)",
			"toolboxes.dev.mcpServers.fs.connectionTimeoutMs":       "must be at least 1 (milliseconds), got -5",
			"toolboxes.dev.mcpServers.none":                         `needs "command"`,
			"toolboxes.dev.mcpServers.both":                         `both "command" and "url"`,
			"toolboxes.dev.mcpServers.badurl.url":                   "must be an http:// or https:// URL",
			"toolboxes.dev.mcpServers.badtransport.transport":       `unknown transport "websocket"`,
			"toolboxes.dev.mcpServers.badtransport.url":             `must be an http:// or https:// URL, got "ws://x"`,
			"toolboxes.dev.mcpServers.filters.toolFilters[1]":       `bad glob pattern "[abc"`,
			"toolboxes.dev.mcpServers.filters.toolFilters[2]":       "must be a string",
			"toolboxes.dev.mcpServers.flags":                        "contradict",
			"toolboxes.dev.mcpServers.retries.maxRetries":           "must be a whole number, not 1.5",
			"toolboxes.dev.mcpServers.retries.requestTimeoutMs":     `not the string "100" (write it without quotes)`,
			"toolboxes.dev.mcpServers.secret.headers.Authorization": "environment variable WB_TEST_UNSET_TOKEN is not set",
			"toolboxes.dev.mcpServers.secret.headers.X-Api-Key":     "must be a string, not a number (put it in quotes)",
			"toolboxes.dev.mcpServers.mismatch.type":                `says "sse" but "transport" says "http"`,
			"toolboxes.empty.mcpServers":                            "at least one server",
			"toolboxes.noservers.mcpServers":                        "required",
			"toolboxes.str":                                         "must be an object",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := LoadWith(filepath.Join(fixtures, tt.file), env(nil))
			if err == nil {
				t.Fatal("loaded without error")
			}
			if tt.whole != "" {
				if !strings.Contains(err.Error(), tt.whole) {
					t.Errorf("error %q does not contain %q", err, tt.whole)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is a %T, want *config.Error", err, err)
			}
			if !strings.HasSuffix(ce.File, tt.file) {
				t.Errorf("error names file %q", ce.File)
			}
			got := map[string]string{}
			for _, p := range ce.Problems {
				if _, dup := got[p.Path]; dup {
					t.Errorf("two problems at %q", p.Path)
				}
				got[p.Path] = p.Msg
			}
			for path, frag := range tt.want {
				msg, ok := got[path]
				if !ok {
					t.Errorf("no problem reported at %q", path)
					continue
				}
				if !strings.Contains(msg, frag) {
					t.Errorf("%s: message %q does not contain %q", path, msg, frag)
				}
			}
			if strings.Contains(err.Error(), "982451653") {
				t.Errorf("a header's value appears in the error:\n%v", err)
			}
			if len(ce.Problems) != len(tt.want) {
				t.Errorf("got %d problems, want %d:\n%v", len(ce.Problems), len(tt.want), err)
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	_, err := LoadWith(filepath.Join(t.TempDir(), "nope.json"), env(nil))
	if err == nil || !strings.Contains(err.Error(), "not found") || !strings.Contains(err.Error(), "--config") {
		t.Fatalf("err = %v, want a not-found error that says how to give a config", err)
	}
}

func TestErrorListsEveryProblem(t *testing.T) {
	_, err := Parse([]byte(`{"toolboxes":{"a":{"mcpServers":{"s":{}}}}}`), env(nil))
	msg := err.Error()
	for _, want := range []string{"(2 problems)", "toolboxes.a.description: required", `toolboxes.a.mcpServers.s: needs "command"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
}

func TestResolvePath(t *testing.T) {
	tests := []struct {
		flag string
		env  map[string]string
		want string
	}{
		{"f.json", map[string]string{envConfig: "e.json"}, "f.json"},
		{"", map[string]string{envConfig: "e.json"}, "e.json"},
		{"", map[string]string{envConfig: ""}, DefaultPath},
		{"", nil, DefaultPath},
	}
	for _, tt := range tests {
		if got := ResolvePath(tt.flag, env(tt.env)); got != tt.want {
			t.Errorf("ResolvePath(%q, %v) = %q, want %q", tt.flag, tt.env, got, tt.want)
		}
	}
}

func TestJoinPath(t *testing.T) {
	tests := []struct{ path, key, want string }{
		{"", "toolboxes", "toolboxes"},
		{"toolboxes", "dev", "toolboxes.dev"},
		{"toolboxes", "my.box", `toolboxes["my.box"]`},
		{"toolboxes", "a b", `toolboxes["a b"]`},
		{"toolboxes", "", `toolboxes[""]`},
	}
	for _, tt := range tests {
		if got := JoinPath(tt.path, tt.key); got != tt.want {
			t.Errorf("JoinPath(%q, %q) = %q, want %q", tt.path, tt.key, got, tt.want)
		}
	}
}

// TestShippedSchemaIsTheOneUsed keeps the repository's
// workbench-config.schema.json (what editors read) equal to the schema the
// loader embeds and applies.
func TestShippedSchemaIsTheOneUsed(t *testing.T) {
	shipped, err := os.ReadFile("../../workbench-config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shipped, Schema) {
		t.Error("workbench-config.schema.json differs from internal/config/workbench-config.schema.json: edit the latter and copy it to the top of the repository")
	}
}

// TestExampleConfigLoads checks the example users start from, with its
// $schema, against the real loader.
func TestExampleConfigLoads(t *testing.T) {
	cfg, err := LoadWith("../../workbench-config.example.json", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Toolboxes) == 0 || len(cfg.Warnings) != 0 {
		t.Errorf("toolboxes %d, warnings %q", len(cfg.Toolboxes), cfg.Warnings)
	}
}

// FuzzParse feeds the loader arbitrary documents: it must return a config
// or an error, never panic. The fixtures are the seed corpus.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fixtures, "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"toolboxes":{"a":{"description":"d","mcpServers":{"s":{"url":"http://x","type":"sse","toolFilters":["["]}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, env(map[string]string{"HOME": "/h"}))
		if err == nil && cfg == nil {
			t.Fatal("no config and no error")
		}
	})
}

// TestNearMissKeys checks that a misspelt key that would change what the
// workbench does is an error naming the key meant, while the keys hosts
// add of their own stay warnings.
func TestNearMissKeys(t *testing.T) {
	server := func(extra string) string {
		return `{"toolboxes": {"dev": {"description": "d", "mcpServers": {"s": {"command": "x"` + extra + `}}}}}`
	}
	mistakes := []struct{ doc, path, want string }{
		{server(`, "toolFilter": ["read_*"]`), "toolboxes.dev.mcpServers.s.toolFilter", `unknown server key: did you mean "toolFilters"?`},
		{server(`, "ToolFilters": ["read_*"]`), "toolboxes.dev.mcpServers.s.ToolFilters", `did you mean "toolFilters"?`},
		{server(`, "tool_filters": ["read_*"]`), "toolboxes.dev.mcpServers.s.tool_filters", `did you mean "toolFilters"?`},
		{server(`, "comand": "y"`), "toolboxes.dev.mcpServers.s.comand", `did you mean "command"?`},
		{server(`, "disable": true`), "toolboxes.dev.mcpServers.s.disable", `did you mean "disabled"?`},
		{server(`, "enable": false`), "toolboxes.dev.mcpServers.s.enable", `did you mean "enabled"?`},
		{server(`, "header": {}`), "toolboxes.dev.mcpServers.s.header", `did you mean "headers"?`},
		{server(`, "arg": []`), "toolboxes.dev.mcpServers.s.arg", `did you mean "args"?`},
		{server(`, "envs": {}`), "toolboxes.dev.mcpServers.s.envs", `did you mean "env"?`},
		{server(`, "requestTimeotMs": 5`), "toolboxes.dev.mcpServers.s.requestTimeotMs", `did you mean "requestTimeoutMs"?`},
		{server(`, "maxRetry": 5`), "toolboxes.dev.mcpServers.s.maxRetry", `did you mean "maxRetries"?`},
		{`{"toolboxes": {"dev": {"descripton": "d", "description": "d", "mcpServers": {"s": {"command": "x"}}}}}`, "toolboxes.dev.descripton", `unknown toolbox key: did you mean "description"?`},
		{`{"toolboxes": {"dev": {"description": "d", "mcpServer": {}, "mcpServers": {"s": {"command": "x"}}}}}`, "toolboxes.dev.mcpServer", `did you mean "mcpServers"?`},
		{`{"toolbox": {}, "toolboxes": {}}`, "toolbox", `unknown top-level key: did you mean "toolboxes"?`},
	}
	for _, tt := range mistakes {
		_, err := Parse([]byte(tt.doc), env(nil))
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Problems) != 1 || ce.Problems[0].Path != tt.path || !strings.Contains(ce.Problems[0].Msg, tt.want) {
			t.Errorf("%s:\n got %v\nwant %s: %s", tt.doc, err, tt.path, tt.want)
		}
	}
	// Keys that hosts and other tools write in server entries.
	for _, key := range []string{"alwaysAllow", "autoApprove", "disabledTools", "timeout", "watchPaths", "envFile", "name", "description", "trust", "serverUrl", "transportType", "note"} {
		cfg, err := Parse([]byte(server(`, "`+key+`": 1`)), env(nil))
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		if want := "toolboxes.dev.mcpServers.s." + key + ": unknown server key, ignored"; len(cfg.Warnings) != 1 || cfg.Warnings[0] != want {
			t.Errorf("%s: warnings %q, want %q", key, cfg.Warnings, want)
		}
	}
}

// TestEmptyNames checks that an empty name is reported at its own JSON
// path, every time (the schema library's own report of it moves around).
func TestEmptyNames(t *testing.T) {
	doc := []byte(`{"toolboxes": {"": {"description": "d", "mcpServers": {"a": {"command": "x"}}},
		"dev": {"description": "d", "mcpServers": {"": {"command": "x"},
			"b": {"url": "http://x", "headers": {"": "v"}},
			"c": {"command": "x", "env": {"": "v"}}}}}}`)
	want := []string{
		`toolboxes[""]: a name must not be empty`,
		`toolboxes.dev.mcpServers[""]: a name must not be empty`,
		`toolboxes.dev.mcpServers.b.headers[""]: a name must not be empty`,
		`toolboxes.dev.mcpServers.c.env[""]: a name must not be empty`,
	}
	for range 20 {
		_, err := Parse(doc, env(nil))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v", err)
		}
		var got []string
		for _, p := range ce.Problems {
			got = append(got, p.String())
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("problems\n%q\nwant\n%q", got, want)
		}
	}
}

// TestHostConfigGivenAsConfig checks that a host's own file, given where
// the workbench's belongs, is recognized and the import suggested.
func TestHostConfigGivenAsConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "claude desktop.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"memory": {"command": "npx"}}, "globalShortcut": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadWith(path, env(nil))
	want := `invalid configuration ` + path + `: this is an MCP host's configuration ("mcpServers" at the top, no "toolboxes"); ` +
		`to make a workbench configuration of its servers, run: mcp-workbench import ` + ShellQuote(path)
	if err == nil || err.Error() != want {
		t.Errorf("err =\n%v\nwant\n%s", err, want)
	}
	// Claude Code's ~/.claude.json may hold servers per project only.
	if err := os.WriteFile(path, []byte(`{"projects": {"/src/app": {"mcpServers": {"memory": {"command": "npx"}}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadWith(path, env(nil)); err == nil || !strings.Contains(err.Error(), `("projects" at the top, no "toolboxes"); to make a workbench configuration of its servers, run: mcp-workbench import`) {
		t.Errorf("a file with projects only: %v", err)
	}
}

// TestTODODescriptionWarns checks that a description left as import's
// placeholder is pointed out, without stopping the workbench.
func TestTODODescriptionWarns(t *testing.T) {
	cfg, err := Parse([]byte(`{"toolboxes": {"a": {"description": "TODO: say what the a tools are for", "mcpServers": {"s": {"command": "x"}}},
		"b": {"description": "Files", "mcpServers": {"s": {"command": "x"}}},
		"c": {"description": "Draft: tools read_graph, search_nodes", "mcpServers": {"s": {"command": "x"}}}}}`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	msg := `still a TODO or a draft: say what the toolbox is for, then remove "TODO" or "Draft:"; the model reads it to choose a toolbox`
	want := []string{"toolboxes.a.description: " + msg, "toolboxes.c.description: " + msg}
	if !reflect.DeepEqual(cfg.Warnings, want) {
		t.Errorf("warnings %q, want %q", cfg.Warnings, want)
	}
}

// TestByteOrderMark: a file an editor saved with a UTF-8 byte order mark
// loads (a configuration, and a host's file for import).
func TestByteOrderMark(t *testing.T) {
	doc := "\xEF\xBB\xBF" + `{"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": {"command": "x"}}}}}`
	if _, err := Parse([]byte(doc), env(nil)); err != nil {
		t.Errorf("configuration with a BOM: %v", err)
	}
	if _, err := ReadDocument([]byte("\xEF\xBB\xBF" + `{"mcpServers": {}}`)); err != nil {
		t.Errorf("host file with a BOM: %v", err)
	}
}

// TestDeepNesting: a file nesting values deeper than the workbench reads
// is refused at once, where the nesting goes too deep, instead of costing
// memory that grows with the square of the depth.
func TestDeepNesting(t *testing.T) {
	const n = 200000
	doc := "{\"toolboxes\": {},\n \"x\": " + strings.Repeat("[", n) + strings.Repeat("]", n) + "}"
	_, err := Parse([]byte(doc), env(nil))
	if err == nil || !strings.Contains(err.Error(), "line 2, column 1006: invalid JSON: objects and arrays nested deeper than 1000 levels") {
		t.Errorf("deeply nested file: %v", err)
	}
	if _, err := ReadDocument([]byte(`{"mcpServers": ` + strings.Repeat("{\"a\":", n) + "1" + strings.Repeat("}", n) + "}")); err == nil || !strings.Contains(err.Error(), "deeper than 1000") {
		t.Errorf("deeply nested host file: %v", err)
	}
}

// TestUnsetAsWarnings: validate's reading makes an unset ${VAR} a warning
// at its path (with any problem the empty value causes there); other
// problems stay errors. Load keeps it an error.
func TestUnsetAsWarnings(t *testing.T) {
	dir := t.TempDir()
	write := func(doc string) string {
		p := filepath.Join(dir, "wb.json")
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	path := write(`{"toolboxes": {"dev": {"description": "d", "mcpServers": {
		"a": {"command": "${WB_TEST_CMD}", "env": {"TOKEN": "${WB_TEST_TOKEN}"}},
		"b": {"url": "https://${WB_TEST_HOST}/mcp"}}}}}`)
	cfg, err := LoadUnsetAsWarnings(path, env(nil))
	if err != nil {
		t.Fatalf("LoadUnsetAsWarnings: %v", err)
	}
	want := []string{
		"toolboxes.dev.mcpServers.a.command: environment variable WB_TEST_CMD is not set here",
		"toolboxes.dev.mcpServers.a.env.TOKEN: environment variable WB_TEST_TOKEN is not set here",
		"toolboxes.dev.mcpServers.b.url: environment variable WB_TEST_HOST is not set here",
	}
	if len(cfg.Warnings) != len(want) {
		t.Fatalf("warnings %q", cfg.Warnings)
	}
	for i, w := range want {
		if !strings.HasPrefix(cfg.Warnings[i], w) {
			t.Errorf("warning %d = %q, want it to start with %q", i, cfg.Warnings[i], w)
		}
	}
	if _, err := LoadWith(path, env(nil)); err == nil || !strings.Contains(err.Error(), "WB_TEST_CMD is not set") {
		t.Errorf("LoadWith: %v", err)
	}
	// A state key from a variable not set here is a placeholder: only the
	// warning, not a key too short (docs/http.md writes it so); one that
	// is set and short is still refused.
	path = write(`{"http": {"stateKey": "${WB_TEST_KEY}"}, "toolboxes": {"dev": {"description": "d", "mcpServers": {"a": {"command": "x"}}}}}`)
	if cfg, err := LoadUnsetAsWarnings(path, env(nil)); err != nil || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "WB_TEST_KEY is not set here") {
		t.Errorf("LoadUnsetAsWarnings of an unset state key: %v, %v", err, cfg)
	}
	if _, err := LoadUnsetAsWarnings(path, env(map[string]string{"WB_TEST_KEY": "short"})); err == nil || !strings.Contains(err.Error(), "the key is 5 characters") {
		t.Errorf("LoadUnsetAsWarnings of a short state key: %v", err)
	}
	// A value that is wrong whatever the variable holds stays an error.
	path = write(`{"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": {"command": "x", "connectionTimeoutMs": "${WB_TEST_T}"}}}}}`)
	if _, err := LoadUnsetAsWarnings(path, env(nil)); err == nil || !strings.Contains(err.Error(), "connectionTimeoutMs") {
		t.Errorf("LoadUnsetAsWarnings of a number given as a string: %v", err)
	}
	path = write(`{"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": {"command": "${WB_TEST_CMD}", "connectionTimeoutMs": "x"}}}}}`)
	if _, err := LoadUnsetAsWarnings(path, env(nil)); err == nil || !strings.Contains(err.Error(), "connectionTimeoutMs") || strings.Contains(err.Error(), "WB_TEST_CMD") {
		t.Errorf("LoadUnsetAsWarnings with another problem: %v", err)
	}
}

// TestKeyNamesShownAsWritten: a key written with a ${VAR} (a toolbox,
// server, env or header name) is named in problems and warnings as the
// file writes it, as values are: never what the variable holds, which may
// be a secret (an env or header name chosen by a variable), and which the
// user cannot find in the file.
func TestKeyNamesShownAsWritten(t *testing.T) {
	vars := env(map[string]string{"WB_TB": "tb-1f0a", "WB_SV": "sv-2b1c", "WB_K": "key-3c2d", "WB_H": "hdr-4d3e", "WB_D": "dup"})
	_, err := Parse([]byte(`{"toolboxes": {"${WB_TB}": {"description": 5, "mcpServers": {
		"${WB_SV}": {"command": "x", "env": {"${WB_K}": 5, "dup": "a", "${WB_D}": "b"}, "toolFilter": ["a"]},
		"h": {"url": "ftp://h/", "headers": {"${WB_H}": true}}}}}}`), vars)
	wantProblems(t, err, map[string]string{
		"toolboxes.${WB_TB}.description":                     "must be a string",
		"toolboxes.${WB_TB}.mcpServers.${WB_SV}.env.${WB_K}": "must be a string",
		"toolboxes.${WB_TB}.mcpServers.${WB_SV}.env.${WB_D}": "duplicate key after expanding variables",
		"toolboxes.${WB_TB}.mcpServers.${WB_SV}.toolFilter":  `did you mean "toolFilters"`,
		"toolboxes.${WB_TB}.mcpServers.h.url":                "must be an http:// or https:// URL",
		"toolboxes.${WB_TB}.mcpServers.h.headers.${WB_H}":    "must be a string",
	})
	for _, v := range []string{"tb-1f0a", "sv-2b1c", "key-3c2d", "hdr-4d3e"} {
		if strings.Contains(err.Error(), v) {
			t.Errorf("a key's expanded name %q appears in the error:\n%v", v, err)
		}
	}

	// Warnings too: an unknown key, and an unset variable read as a warning.
	cfg, err := parse([]byte(`{"toolboxes": {"${WB_TB}": {"description": "d", "mcpServers": {
		"${WB_SV}": {"command": "x", "env": {"${WB_K}": "${WB_UNSET}"}, "color": "red"}}}}}`), vars, "", unsetWarns)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"toolboxes.${WB_TB}.mcpServers.${WB_SV}.env.${WB_K}: environment variable WB_UNSET is not set here",
		"toolboxes.${WB_TB}.mcpServers.${WB_SV}.color: unknown server key, ignored",
	}
	if len(cfg.Warnings) != len(want) {
		t.Fatalf("warnings %q, want %q", cfg.Warnings, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(cfg.Warnings[i], w) {
			t.Errorf("warning %d = %q, want it to start with %q", i, cfg.Warnings[i], w)
		}
	}
	// The names themselves are what the variables hold.
	if tb := cfg.Toolbox("tb-1f0a"); tb == nil || tb.Server("sv-2b1c") == nil || tb.Server("sv-2b1c").Env["key-3c2d"] != "WB_UNSET" {
		t.Errorf("the expanded names: %+v", cfg.Toolboxes)
	}
}

// A host's TOML file given as the configuration is named as such, with the
// command that makes a configuration of its servers; a JSON file with a
// syntax error, or another format, is not taken for TOML.
func TestTOMLGivenAsConfiguration(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, doc := range []string{
		"# Codex\nmodel = \"o3\"\n\n[mcp_servers.memory]\ncommand = \"npx\"\n",
		"[mcp_servers.memory]\ncommand = \"npx\"\nargs = [\n  \"-y\",\n]\n",
		"\n[[hooks.PreToolUse]]\nmatcher = \"mcp__.*\"\n",
	} {
		p := write("config.toml", doc)
		_, err := LoadWith(p, env(nil))
		var se *SyntaxError
		// The path is quoted for the user's shell where it needs quotes
		// (on Windows, always: it holds a drive letter and backslashes).
		if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), "looks like TOML") ||
			!strings.Contains(err.Error(), "run: mcp-workbench import ") || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: %v, want it named TOML with the import command", doc, err)
		}
	}
	for _, doc := range []string{
		`{"toolboxes": x}`,
		`[{"toolboxes": 1}`,
		"toolboxes:\n  dev: {}\n",
		"[1, 2]x",
	} {
		_, err := LoadWith(write("c.json", doc), env(nil))
		if err == nil || strings.Contains(err.Error(), "looks like TOML") {
			t.Errorf("%q: %v, want an error that does not say TOML", doc, err)
		}
	}
}
