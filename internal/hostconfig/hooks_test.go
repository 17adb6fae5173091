package hostconfig

import (
	"regexp"
	"strings"
	"testing"
)

// The hook's matcher is the host's own name of the workbench's use_tool
// for --name, and nothing else; a name the host would rename or cut is
// refused (cmd/mcp-workbench's TestInstallCodexHookName and
// TestInstallGeminiHookName run the hooks so written).
func TestHookNames(t *testing.T) {
	for _, tc := range []struct {
		host  string
		hook  func(exe, cfg, name string) (Hook, error)
		names map[string]string
		// longest is the longest name taken; one more is refused.
		longest int
		refused string
	}{
		{"codex", CodexHook, map[string]string{"workbench": "mcp__workbench__use_tool", "wb-ops": "mcp__wb_ops__use_tool", "my.bench": "mcp__my_bench__use_tool", "wb ops·2": "mcp__wb_ops_2__use_tool"}, 49, "too long for Codex"},
		{"gemini-cli", GeminiHook, map[string]string{"workbench": "mcp_workbench_use_tool", "wb-ops": "mcp_wb-ops_use_tool", "my.bench": "mcp_my.bench_use_tool", "wb ops": "mcp_wb_ops_use_tool", "mcp_bench": "mcp_bench_use_tool"}, 50, "too long for Gemini CLI"},
	} {
		for name, tool := range tc.names {
			h, err := tc.hook("/opt/wb/mcp-workbench", "/home/ann/wb.json", name)
			if err != nil {
				t.Errorf("%s --name %q: %v", tc.host, name, err)
				continue
			}
			re := regexp.MustCompile(h.Matcher)
			if !re.MatchString(tool) || re.MatchString("x"+tool) || re.MatchString(tool+"x") || (name != "workbench" && re.MatchString(tc.names["workbench"])) {
				t.Errorf("%s --name %q: the matcher %q does not match %s alone", tc.host, name, h.Matcher, tool)
			}
			if want := "hook " + tc.host + " --config"; !strings.Contains(h.Command, want) {
				t.Errorf("%s: the command %q lacks %q", tc.host, h.Command, want)
			}
		}
		long := strings.Repeat("w", tc.longest)
		if _, err := tc.hook("/opt/wb/mcp-workbench", "/home/ann/wb.json", long); err != nil {
			t.Errorf("%s --name of %d characters: %v", tc.host, len(long), err)
		}
		if _, err := tc.hook("/opt/wb/mcp-workbench", "/home/ann/wb.json", long+"w"); err == nil || !strings.Contains(err.Error(), tc.refused) {
			t.Errorf("%s --name of %d characters: %v, want %q", tc.host, len(long)+1, err, tc.refused)
		}
	}
}
