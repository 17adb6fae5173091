package hostconfig

import (
	"slices"
	"strings"
	"testing"
)

// Adding the workbench's hook to Codex's and Gemini CLI's files: once,
// after what is there, naming the workbench's hook of another
// configuration under the same matcher; a second add changes nothing.
func TestAddHook(t *testing.T) {
	other := "/opt/wb/mcp-workbench hook %s --config /home/ann/old.json"
	for _, tc := range []struct {
		host   string
		add    func([]byte, Hook) ([]byte, bool, []string, error)
		have   string
		inline string // hooks the workbench's cannot be added to
	}{
		{"codex", AddCodexHook,
			"model = \"o3\"\n\n[[hooks.PreToolUse]]\nmatcher = \"^m$\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"" + strings.ReplaceAll(other, "%s", "codex") + "\"\n",
			"[hooks]\nPreToolUse = [{ matcher = \"^Bash$\", hooks = [{ type = \"command\", command = \"audit.sh\" }] }]\n"},
		{"gemini-cli", AddGeminiHook,
			`{"hooks": {"BeforeTool": [{"matcher": "^m$", "hooks": [{"type": "command", "command": "` + strings.ReplaceAll(other, "%s", "gemini-cli") + `"}]}]}}`,
			`{"hooks": {"BeforeTool": {"matcher": "x"}}}`},
	} {
		hook := Hook{Matcher: "^m$", Command: "/opt/wb/mcp-workbench hook " + tc.host + " --config /home/ann/wb.json"}
		out, changed, others, err := tc.add([]byte(tc.have), hook)
		if err != nil || !changed || !strings.HasPrefix(string(out), strings.TrimSuffix(tc.have, "]}}")) || !strings.Contains(string(out), "wb.json") {
			t.Fatalf("%s: %v, changed %v:\n%s", tc.host, err, changed, out)
		}
		if want := []string{strings.ReplaceAll(other, "%s", tc.host)}; !slices.Equal(others, want) {
			t.Errorf("%s: others %q, want %q", tc.host, others, want)
		}
		again, changed, _, err := tc.add(out, hook)
		if err != nil || changed || string(again) != string(out) {
			t.Errorf("%s: a second add: %v, changed %v", tc.host, err, changed)
		}
		if _, _, _, err := tc.add([]byte(tc.inline), hook); err == nil || !strings.Contains(err.Error(), "add the hook by hand") {
			t.Errorf("%s: hooks that cannot take it: %v", tc.host, err)
		}
	}
}
