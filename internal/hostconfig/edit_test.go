package hostconfig

import (
	"path/filepath"
	"strings"
	"testing"
)

var testEntry = Entry{{Key: "command", Value: "/usr/bin/mcp-workbench"}, {Key: "args", Value: []string{"--config", "/c.json"}}}

// TestSetTOMLTable checks the one-table edit of Codex's file: comments
// and other tables byte for byte, a [header]-like line inside a
// multi-line string left alone, an existing table keeping what the user
// added (sub-tables, keys, comments, a multi-line value) with only
// command and args written again.
func TestSetTOMLTable(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"new file", "", "[mcp_servers.workbench]\ncommand = \"/usr/bin/mcp-workbench\"\nargs = [\"--config\", \"/c.json\"]\n"},
		{"no final newline", "model = \"o3\" # mine", "model = \"o3\" # mine\n\n[mcp_servers.workbench]\ncommand = \"/usr/bin/mcp-workbench\"\nargs = [\"--config\", \"/c.json\"]\n"},
		{"the user's keys and sub-tables kept",
			"# top\n[mcp_servers.workbench]\ncommand = \"old\" # old one\n# mine\ntool_timeout_sec = 120\n\n[mcp_servers.workbench.env]\nA = \"1\"\n\n# the next one\n[mcp_servers.x]\ncommand = \"x\"\n",
			"# top\n[mcp_servers.workbench]\ncommand = \"/usr/bin/mcp-workbench\"\n# mine\ntool_timeout_sec = 120\nargs = [\"--config\", \"/c.json\"]\n\n[mcp_servers.workbench.env]\nA = \"1\"\n\n# the next one\n[mcp_servers.x]\ncommand = \"x\"\n"},
		{"another configuration: args on several lines replaced",
			"[mcp_servers.workbench]\nargs = [\n  \"--config\", # old\n  \"/old.json\",\n]\ncommand = \"/usr/bin/mcp-workbench\"\ndefault_tools_approval_mode = \"approve\"\nenv = { T = \"x\" }\n",
			"[mcp_servers.workbench]\nargs = [\"--config\", \"/c.json\"]\ncommand = \"/usr/bin/mcp-workbench\"\ndefault_tools_approval_mode = \"approve\"\nenv = { T = \"x\" }\n"},
		{"a byte order mark", "\ufeff[mcp_servers.a]\ncommand = \"a\"\n",
			"\ufeff[mcp_servers.a]\ncommand = \"a\"\n\n[mcp_servers.workbench]\ncommand = \"/usr/bin/mcp-workbench\"\nargs = [\"--config\", \"/c.json\"]\n"},
		{"a header inside a multi-line string",
			"notes = \"\"\"\n[mcp_servers.workbench]\n\"\"\"\n",
			"notes = \"\"\"\n[mcp_servers.workbench]\n\"\"\"\n\n[mcp_servers.workbench]\ncommand = \"/usr/bin/mcp-workbench\"\nargs = [\"--config\", \"/c.json\"]\n"},
		{"quoted header", "[mcp_servers.\"workbench\"]\ncommand = \"old\"\n", "[mcp_servers.\"workbench\"]\ncommand = \"/usr/bin/mcp-workbench\"\nargs = [\"--config\", \"/c.json\"]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := SetTOMLTable([]byte(tc.in), []string{"mcp_servers", "workbench"}, testEntry)
			if err != nil || !changed || string(got) != tc.want {
				t.Fatalf("changed %v, err %v, got\n%s\nwant\n%s", changed, err, got, tc.want)
			}
			again, changed, err := SetTOMLTable(got, []string{"mcp_servers", "workbench"}, testEntry)
			if err != nil || changed || string(again) != string(got) {
				t.Errorf("second edit: changed %v, err %v", changed, err)
			}
		})
	}
}

// TestSetJSONMember checks the one-member splice: indentation (tabs,
// four spaces) as the file has it, comments and trailing commas kept, a
// missing servers object made, a byte order mark kept.
func TestSetJSONMember(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"tabs and comments", "{\n\t// mine\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"x\"}, // a\n\t},\n}\n",
			"{\n\t// mine\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"x\"},\n\t\t\"workbench\": {\n\t\t\t\"command\": \"/usr/bin/mcp-workbench\",\n\t\t\t\"args\": [\"--config\", \"/c.json\"]\n\t\t}, // a\n\t},\n}\n"},
		{"no servers object", "{\n    \"theme\": \"dark\"\n}\n",
			"{\n    \"theme\": \"dark\",\n    \"mcpServers\": {\n        \"workbench\": {\n            \"command\": \"/usr/bin/mcp-workbench\",\n            \"args\": [\"--config\", \"/c.json\"]\n        }\n    }\n}\n"},
		{"empty servers object", "\xef\xbb\xbf{\"mcpServers\": {}}",
			"\xef\xbb\xbf{\"mcpServers\": {\n  \"workbench\": {\n    \"command\": \"/usr/bin/mcp-workbench\",\n    \"args\": [\"--config\", \"/c.json\"]\n  }\n}}"},
		{"command and args written again, the user's keys kept", "{\"mcpServers\": {\"workbench\": {\"command\": \"old\", \"env\": {\"T\": \"x\"}}, \"b\": {\"url\": \"http://x\"}}}",
			"{\"mcpServers\": {\"workbench\": {\"command\": \"/usr/bin/mcp-workbench\", \"env\": {\"T\": \"x\"},\n  \"args\": [\"--config\", \"/c.json\"]}, \"b\": {\"url\": \"http://x\"}}}"},
		{"another configuration", "{\n  \"mcpServers\": {\n    \"workbench\": {\n      // mine\n      \"autoApprove\": [\"open_toolbox\"],\n      \"args\": [\"--config\", \"/old.json\"],\n      \"command\": \"/usr/bin/mcp-workbench\"\n    }\n  }\n}\n",
			"{\n  \"mcpServers\": {\n    \"workbench\": {\n      // mine\n      \"autoApprove\": [\"open_toolbox\"],\n      \"args\": [\"--config\", \"/c.json\"],\n      \"command\": \"/usr/bin/mcp-workbench\"\n    }\n  }\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := SetJSONMember([]byte(tc.in), []string{"mcpServers"}, "workbench", testEntry)
			if err != nil || !changed || string(got) != tc.want {
				t.Fatalf("changed %v, err %v, got\n%s\nwant\n%s", changed, err, got, tc.want)
			}
			if _, changed, err := SetJSONMember(got, []string{"mcpServers"}, "workbench", testEntry); err != nil || changed {
				t.Errorf("second edit: changed %v, err %v", changed, err)
			}
		})
	}
	// A file with Windows line endings keeps them.
	if got, _, err := SetJSONMember([]byte("{\r\n  \"mcpServers\": {}\r\n}\r\n"), []string{"mcpServers"}, "workbench", testEntry); err != nil || strings.Count(string(got), "\n") != strings.Count(string(got), "\r\n") {
		t.Errorf("CRLF JSON: %v\n%q", err, got)
	}
	if got, _, err := SetTOMLTable([]byte("model = \"o3\"\r\n"), []string{"mcp_servers", "workbench"}, testEntry); err != nil || strings.Count(string(got), "\n") != strings.Count(string(got), "\r\n") {
		t.Errorf("CRLF TOML: %v\n%q", err, got)
	}
	// The user's own keys in our entry (a timeout) keep it as it is.
	in := "{\"mcpServers\": {\"workbench\": {\"command\": \"/usr/bin/mcp-workbench\", \"args\": [\"--config\", \"/c.json\"], \"timeout\": 5}}}"
	if got, changed, err := SetJSONMember([]byte(in), []string{"mcpServers"}, "workbench", testEntry); err != nil || changed || string(got) != in {
		t.Errorf("an entry with the user's extra key: changed %v, err %v", changed, err)
	}
}

// TestVSCodeEnvFile checks a workspace's .vscode/mcp.json: its
// ${workspaceFolder} is the workspace, and its envFile's variables are
// named in env as ${NAME}, with a warning naming each and the file.
func TestVSCodeEnvFile(t *testing.T) {
	src, data := fixture(t, filepath.Join("vscode-workspace", ".vscode", "mcp.json"))
	found, err := ReadHost(src, data, "")
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "import", "vscode-workspace"))
	if found.Host == nil || found.Host.Name != "vscode" || len(found.Servers) != 1 {
		t.Fatalf("found %+v", found)
	}
	got := string(found.Servers[0].Entry)
	for _, want := range []string{`"command": ` + quoteJSON(ws+"/bin/db-mcp"), `"MODE": "ro"`, `"DB_URL": "${DB_URL}"`, `"DB_PASSWORD": "${DB_PASSWORD}"`} {
		if !strings.Contains(got, want) {
			t.Errorf("entry lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "secret") || strings.Contains(strings.Join(found.Warnings, "\n"), "secret") {
		t.Error("a value of the env file was copied")
	}
	if w := strings.Join(found.Warnings, "\n"); !strings.Contains(w, `server "db": envFile: VS Code read DB_URL, DB_PASSWORD from `+ws+"/.env") {
		t.Errorf("warnings:\n%s", w)
	}
}

func quoteJSON(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

// TestDetect checks that a file is read as its host's: by the key that
// holds its servers, the keys only one host's entries have, its name.
func TestDetect(t *testing.T) {
	for _, tc := range []struct{ src, doc, want string }{
		{"settings.json", `{"mcp": {"allowed": ["a"]}, "mcpServers": {"a": {"httpUrl": "http://x"}}}`, "gemini-cli"},
		{"/home/me/.gemini/settings.json", `{"mcpServers": {"a": {"command": "x"}}}`, "gemini-cli"},
		{"opencode.json", `{"mcp": {"a": {"type": "local", "command": ["x"]}}}`, "opencode"},
		{"mcp.json", `{"servers": {"a": {"command": "x"}}}`, "vscode"},
		{"settings.json", `{"context_servers": {"a": {"command": "x"}}}`, "zed"},
		{"x.json", `{"mcpServers": {"a": {"serverUrl": "http://x"}}}`, "windsurf"},
		{"x.json", `{"mcpServers": {"a": {"type": "local", "command": "x"}}}`, "copilot-cli"},
		{"x.json", `{"mcpServers": {"a": {"command": "x", "autoApprove": []}}}`, "cline"},
		{"claude_desktop_config.json", `{"mcpServers": {"a": {"command": "x"}}}`, ""},
		{"settings.json", `{"mcp": {"servers": {"a": {"command": "x"}}}}`, ""},
	} {
		found, err := ReadHost(tc.src, []byte(tc.doc), "")
		got := ""
		if found.Host != nil {
			got = found.Host.Name
		}
		if got != tc.want && !(tc.want == "" && err != nil) {
			t.Errorf("%s %s: read as %q (err %v), want %q", tc.src, tc.doc, got, err, tc.want)
		}
	}
}

// TestAddJSONArrayItem: an element appended to an array of a JSONC file
// (Gemini CLI's hooks), the array and the objects on the way made if
// missing, the user's elements and comments kept byte for byte; a second
// edit changes nothing; a value that is not an array is refused.
func TestAddJSONArrayItem(t *testing.T) {
	item := Entry{{Key: "matcher", Value: "^mcp_workbench_use_tool$"}, {Key: "hooks", Value: []Entry{{{Key: "type", Value: "command"}, {Key: "command", Value: "wb hook"}}}}}
	has := func(e any) bool { m, _ := e.(map[string]any); return m["matcher"] == "^mcp_workbench_use_tool$" }
	path := []string{"hooks", "BeforeTool"}
	const ours = "{\n        \"matcher\": \"^mcp_workbench_use_tool$\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"wb hook\"\n          }\n        ]\n      }"
	for _, tc := range []struct{ name, in, want string }{
		{"no hooks", "{\n  \"theme\": \"dark\"\n}\n",
			"{\n  \"theme\": \"dark\",\n  \"hooks\": {\n    \"BeforeTool\": [\n      " + ours + "\n    ]\n  }\n}\n"},
		{"the user's hook, a comment", "{\n  \"hooks\": {\n    \"BeforeTool\": [\n      {\"matcher\": \"run_shell_command\", \"hooks\": [{\"type\": \"command\", \"command\": \"audit.sh\"}]} // mine\n    ]\n  }\n}\n",
			"{\n  \"hooks\": {\n    \"BeforeTool\": [\n      {\"matcher\": \"run_shell_command\", \"hooks\": [{\"type\": \"command\", \"command\": \"audit.sh\"}]},\n      " + ours + " // mine\n    ]\n  }\n}\n"},
		{"an empty array", "{\n  \"hooks\": {\n    \"BeforeTool\": []\n  }\n}\n",
			"{\n  \"hooks\": {\n    \"BeforeTool\": [\n      " + ours + "\n    ]\n  }\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := AddJSONArrayItem([]byte(tc.in), path, item, has)
			if err != nil || !changed {
				t.Fatalf("changed %v, err %v", changed, err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			v, err := decodeJSON(blankJSONC(got))
			if err != nil {
				t.Fatalf("the result does not parse: %v\n%s", err, got)
			}
			arr, _ := v.(map[string]any)["hooks"].(map[string]any)["BeforeTool"].([]any)
			if len(arr) == 0 || !has(arr[len(arr)-1]) {
				t.Errorf("our hook is not the array's last element:\n%s", got)
			}
			if again, changed, err := AddJSONArrayItem(got, path, item, has); err != nil || changed || string(again) != string(got) {
				t.Errorf("second edit: changed %v, err %v", changed, err)
			}
		})
	}
	if got, _, err := AddJSONArrayItem([]byte("{\r\n  \"hooks\": {\"BeforeTool\": []}\r\n}\r\n"), path, item, has); err != nil || strings.Count(string(got), "\n") != strings.Count(string(got), "\r\n") {
		t.Errorf("CRLF: %v\n%q", err, got)
	}
	if _, _, err := AddJSONArrayItem([]byte(`{"hooks": {"BeforeTool": {"matcher": "x"}}}`), path, item, has); err == nil || !strings.Contains(err.Error(), "hooks.BeforeTool is a JSON object, not an array") {
		t.Errorf("BeforeTool as an object: %v", err)
	}
	if got, changed, err := AddJSONArrayItem(nil, path, item, has); err != nil || !changed || !strings.Contains(string(got), `"BeforeTool": [`) {
		t.Errorf("a new file: changed %v, err %v\n%s", changed, err, got)
	}
}

// TestEditsKeepComments: what the user commented out inside a servers
// object or a hooks.BeforeTool array with no live member stays when
// install adds to it, and removing the first server (--remove-moved)
// keeps the comment above the next one.
func TestEditsKeepComments(t *testing.T) {
	db := `// "db": {"command": "pg", "env": {"URL": "postgres://u:pw@h/db"}}`
	in := "{\n  \"mcpServers\": {\n    " + db + "\n  }\n}\n"
	got, _, err := SetJSONMember([]byte(in), []string{"mcpServers"}, "workbench", testEntry)
	if err != nil || !strings.Contains(string(got), "    "+db+"\n    \"workbench\": {") {
		t.Errorf("a commented-out server: %v\n%s", err, got)
	}
	hook := `/* {"matcher": "^x$", "hooks": [{"type": "command", "command": "audit.sh"}]} */`
	in = "{\n  \"hooks\": {\n    \"BeforeTool\": [\n      " + hook + "\n    ]\n  }\n}\n"
	got, _, err = AddJSONArrayItem([]byte(in), []string{"hooks", "BeforeTool"}, Entry{{Key: "matcher", Value: "m"}}, func(any) bool { return false })
	if err != nil || !strings.Contains(string(got), "      "+hook+"\n      {") {
		t.Errorf("a commented-out hook: %v\n%s", err, got)
	}
	in = "{\n  \"mcpServers\": {\n    \"memory\": {\"command\": \"npx\"},\n    // the database, kept\n    \"db\": {\"command\": \"pg\"}\n  }\n}\n"
	got, removed, err := RemoveJSONMembers([]byte(in), []string{"mcpServers"}, []string{"memory"})
	want := "{\n  \"mcpServers\": {\n    // the database, kept\n    \"db\": {\"command\": \"pg\"}\n  }\n}\n"
	if err != nil || len(removed) != 1 || string(got) != want {
		t.Errorf("removing the first server: %v %q\n%s\nwant\n%s", err, removed, got, want)
	}
	in = "{\"mcpServers\": {\"a\": {}, // about a\n \"b\": {} // about b\n}}"
	got, _, err = RemoveJSONMembers([]byte(in), []string{"mcpServers"}, []string{"b"})
	if want := "{\"mcpServers\": {\"a\": {} // about a\n  // about b\n}}"; err != nil || string(got) != want {
		t.Errorf("removing the last server: %v\n%q\nwant\n%q", err, got, want)
	}
}
