package hostconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
)

func fixture(t *testing.T, name string) (string, []byte) {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "import", name)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	return src, data
}

func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// TestReadKeepsEntriesAsWritten checks that entries come in file order,
// each with its text exactly as in the host file.
func TestReadKeepsEntriesAsWritten(t *testing.T) {
	src, data := fixture(t, "claude-code-user.claude.json")
	found, err := Read(src, data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range found {
		got = append(got, s.Name+" "+s.Where())
		if !strings.Contains(string(data), string(s.Entry)) {
			t.Errorf("%s: entry %s is not the host file's text", s.Name, s.Entry)
		}
	}
	want := []string{"db in project /home/me/app", "memory in project /home/me/app", "db in project /home/me/site", "memory in project /home/me/site", "docs at the top level"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("servers %q, want %q", got, want)
	}
}

func TestReadErrors(t *testing.T) {
	for doc, want := range map[string]string{
		"":                                   "h.json is empty",
		"{\n  \"mcpServers\": {,}\n}":        "h.json: line 2, column 18: invalid JSON: invalid character ','",
		`[1]`:                                `h.json is not a host configuration: it holds a JSON array`,
		`{"mcpServers": []}`:                 "h.json: mcpServers must be an object mapping server names to servers, not a JSON array",
		`{"mcpServers": {"a": {}, "a": {}}}`: `h.json: mcpServers.a appears twice`,
		`{"projects": {"/p": {"mcpServers": 1}}}`: `h.json: projects./p.mcpServers must be an object`,
		`{"other": 1}`: "no MCP servers found in h.json",
	} {
		_, err := Read("h.json", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", doc, err, want)
		}
	}
}

// TestCheckWarnsOfUnsetVariables checks the warnings of an import: each
// ${VAR} without a default that is not set here, at its path in the
// written file; no warning for the TODO descriptions import writes itself.
func TestCheckWarnsOfUnsetVariables(t *testing.T) {
	src, data := fixture(t, "claude-code-project.mcp.json")
	found, err := Read(src, data)
	if err != nil {
		t.Fatal(err)
	}
	servers, _ := Name(found)
	boxes := Plan(servers, "")
	warnings, err := Check(Render(boxes), boxes, env(map[string]string{"EVENTS_PORT": "9000"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"toolboxes.api.mcpServers.api.headers.Authorization: " + config.UnsetVarWarning("API_KEY"), // validate's words
	}
	if !reflect.DeepEqual(warnings, want) {
		t.Errorf("warnings\n%q\nwant\n%q", warnings, want)
	}
}
