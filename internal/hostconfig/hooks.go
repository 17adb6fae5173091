package hostconfig

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/shellquote"
)

// Hook is the workbench's pre-tool hook as install writes it into a
// host's file.
type Hook struct {
	// Matcher is the regular expression the host matches its name of
	// the workbench's use_tool against.
	Matcher string
	// Command runs mcp-workbench hook HOST, quoted for the shell the
	// host runs it with ([HookCommand]).
	Command string
	// Warning, if not "", is what the user must be told of the hook:
	// that it will not run, and why.
	Warning string
}

// codexMaxToolName is the longest tool name Codex gives the model as it
// is; a longer one ends in a digest instead.
const codexMaxToolName = 64

// CodexHook is the hook that install codex writes for the workbench named
// name in Codex, started as exe with the configuration cfg: Codex matches
// its name of the tool against the matcher as a regular expression, and
// runs the command with cmd.exe on Windows, sh elsewhere. It fails when
// Codex would give the workbench's tool another name (name is too long),
// which the hook cannot match.
func CodexHook(exe, cfg, name string) (Hook, error) {
	if n := codexToolName(name, "use_tool"); len(n) > codexMaxToolName {
		return Hook{}, fmt.Errorf("--name %q is too long for Codex: its tool %s is longer than %d characters, and Codex gives it another name, which the workbench's hook cannot match; use a name of at most %d characters", name, n, codexMaxToolName, codexMaxToolName-len(codexToolName("", "use_tool")))
	}
	h := Hook{
		Matcher: "^" + regexp.QuoteMeta(codexToolName(name, "use_tool")) + "$",
		Command: HookCommand(exe, cfg, "codex"),
	}
	if runtime.GOOS == "windows" && strings.Contains(h.Command, `"`) {
		h.Warning = "Warning: the hook's command needs quotes (a space in the path of mcp-workbench.exe or of the configuration, on a drive without short names), and Codex on Windows passes quotes to cmd.exe escaped, so the hook will not run: move them to folders whose paths have no spaces, then run install codex again."
	}
	return h, nil
}

// codexToolName is Codex's name of the tool of the MCP server named
// server: mcp__SERVER__TOOL with every character but ASCII letters,
// digits and _ made _ (the model's API takes no other), so that the
// workbench named wb-ops or my.bench offers mcp__wb_ops__use_tool.
func codexToolName(server, tool string) string {
	var b strings.Builder
	for _, r := range "mcp__" + server + "__" + tool {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// geminiMaxToolName is the longest tool name Gemini CLI keeps whole; a
// longer one is cut in the middle.
const geminiMaxToolName = 63

// GeminiHook is the hook that install gemini-cli writes for the workbench
// named name in Gemini CLI, started as exe with the configuration cfg:
// Gemini CLI matches its name of the tool, mcp_<server>_<tool>, against
// the matcher as a regular expression, and runs the command with
// PowerShell on Windows, sh elsewhere. It fails when Gemini CLI would cut
// the workbench's tool's name (name is too long), which the hook cannot
// match.
func GeminiHook(exe, cfg, name string) (Hook, error) {
	if n := geminiToolName(name, "use_tool"); len(n) > geminiMaxToolName {
		return Hook{}, fmt.Errorf("--name %q is too long for Gemini CLI: its tool %s is longer than %d characters, and Gemini CLI cuts it, which the workbench's hook cannot match; use a shorter name", name, n, geminiMaxToolName)
	}
	return Hook{
		Matcher: "^" + regexp.QuoteMeta(geminiToolName(name, "use_tool")) + "$",
		Command: HookCommand(exe, cfg, "gemini-cli"),
	}, nil
}

// geminiToolName is Gemini CLI's name of the tool of the MCP server named
// server: SERVER_TOOL, with mcp_ before it unless it starts so, and every
// character but ASCII letters, digits, _, -, . and : made _ (JavaScript's
// replace, one _ per UTF-16 unit). Gemini CLI 0.61's generateValidName.
func geminiToolName(server, tool string) string {
	n := server + "_" + tool
	if !strings.HasPrefix(n, "mcp_") {
		n = "mcp_" + n
	}
	var b strings.Builder
	for _, r := range n {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:", r):
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("__")
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// HookCommand is the shell command of the workbench's hook for host
// (mcp-workbench hook HOST) with the configuration cfg, as install writes
// it, quoted for the shell that host runs it with here ([hookShell]). For
// Codex on Windows a path that needs quotes is given in its 8.3 short
// form where that needs none ([unquotedPath]).
func HookCommand(exe, cfg, host string) string {
	sh := hookShell(runtime.GOOS, host)
	if runtime.GOOS == "windows" && host == "codex" {
		exe, cfg = unquotedPath(sh, exe, shortPath), unquotedPath(sh, cfg, shortPath)
	}
	return sh.Command(exe, "hook", host, "--config", cfg)
}

// unquotedPath is p, or its 8.3 short form (short) when p needs quotes in sh
// and the short form does not. Codex hands its hook command to cmd.exe /C as
// one argument of a Windows command line, whose quotes it escapes as \" —
// which cmd.exe does not read — so a quoted path (C:\Program Files\…, a
// user name with a space) never runs there; a short path needs no quotes.
func unquotedPath(sh shellquote.Shell, p string, short func(string) string) string {
	if sh.Quote(p) == p {
		return p
	}
	if s := short(p); sh.Quote(s) == s {
		return s
	}
	return p
}

// hookShell is the shell that host runs its hook commands with on the
// system goos. Elsewhere than on Windows every host runs them with sh. On
// Windows Codex runs "%ComSpec% /C command" (cmd.exe; codex-rs/hooks'
// command runner), Gemini CLI "powershell.exe -NoProfile -Command command"
// (its hook runner takes the shell of its shell tool, PowerShell on
// Windows), and Claude Code runs them with Git Bash, which it needs there.
// cmd.exe ignores single quotes, and PowerShell takes a quoted first word
// for a string, so the POSIX quoting fails in both.
func hookShell(goos, host string) shellquote.Shell {
	if goos != "windows" {
		return shellquote.POSIX
	}
	switch host {
	case "codex":
		return shellquote.Cmd
	case "gemini-cli":
		return shellquote.PowerShell
	}
	return shellquote.POSIX
}
