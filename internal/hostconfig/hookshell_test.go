package hostconfig

import (
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/shellquote"
)

// The hook command install writes is quoted for the shell its host runs it
// with: on Windows cmd.exe for Codex, PowerShell for Gemini CLI, Git Bash
// for Claude Code; sh elsewhere. (The POSIX quoting that was written for
// every host makes cmd.exe answer 9009, "not recognized".)
func TestHookShell(t *testing.T) {
	for _, tc := range []struct {
		goos, host string
		want       shellquote.Shell
	}{
		{"windows", "codex", shellquote.Cmd},
		{"windows", "gemini-cli", shellquote.PowerShell},
		{"windows", "claude-code", shellquote.POSIX},
		{"linux", "codex", shellquote.POSIX},
		{"linux", "gemini-cli", shellquote.POSIX},
		{"darwin", "codex", shellquote.POSIX},
		{"darwin", "gemini-cli", shellquote.POSIX},
	} {
		if got := hookShell(tc.goos, tc.host); got != tc.want {
			t.Errorf("hookShell(%s, %s) = %v, want %v", tc.goos, tc.host, got, tc.want)
		}
	}
	exe, cfg := `C:\Users\Ann Lee\AppData\Local\Programs\mcp-workbench\mcp-workbench.exe`, `C:\Users\Ann Lee\wb.json`
	for host, want := range map[string]string{
		"codex":       `"C:\Users\Ann Lee\AppData\Local\Programs\mcp-workbench\mcp-workbench.exe" hook codex --config "C:\Users\Ann Lee\wb.json"`,
		"gemini-cli":  `& 'C:\Users\Ann Lee\AppData\Local\Programs\mcp-workbench\mcp-workbench.exe' hook gemini-cli --config 'C:\Users\Ann Lee\wb.json'`,
		"claude-code": `'C:\Users\Ann Lee\AppData\Local\Programs\mcp-workbench\mcp-workbench.exe' hook claude-code --config 'C:\Users\Ann Lee\wb.json'`,
	} {
		if got := hookShell("windows", host).Command(exe, "hook", host, "--config", cfg); got != want {
			t.Errorf("the %s hook on Windows:\n got %s\nwant %s", host, got, want)
		}
	}
}

// TestUnquotedPath: a path that needs quotes in cmd.exe is given in its
// short form when that needs none (Codex escapes the quotes of its hook
// command, which cmd.exe does not read); else it stays as it is.
func TestUnquotedPath(t *testing.T) {
	short := map[string]string{
		`C:\Program Files\MCP Workbench\mcp-workbench.exe`: `C:\PROGRA~1\MCPWOR~1\MCP-WO~1.EXE`,
		`C:\Users\Ann Lee\wb.json`:                         `C:\Users\Ann Lee\wb.json`, // no short names on this drive
	}
	asked := 0
	lookup := func(p string) string {
		asked++
		if s, ok := short[p]; ok {
			return s
		}
		return p
	}
	for p, want := range map[string]string{
		`C:\Program Files\MCP Workbench\mcp-workbench.exe`: `C:\PROGRA~1\MCPWOR~1\MCP-WO~1.EXE`,
		`C:\Users\Ann Lee\wb.json`:                         `C:\Users\Ann Lee\wb.json`,
		`C:\tools\mcp-workbench.exe`:                       `C:\tools\mcp-workbench.exe`,
	} {
		if got := unquotedPath(shellquote.Cmd, p, lookup); got != want {
			t.Errorf("unquotedPath(%s) = %s, want %s", p, got, want)
		}
	}
	if asked != 2 {
		t.Errorf("the short form was looked up %d times, want 2 (never for a path that needs no quotes)", asked)
	}
}
