package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/hostconfig"
)

// install gemini-cli also puts the workbench's BeforeTool hook
// (mcp-workbench hook gemini-cli) into Gemini CLI's settings.json, in the
// same write as the entry, so that Gemini CLI blocks a call the
// workbench's rules deny before it reaches the workbench.
func init() {
	installEdits["gemini-cli"] = append(installEdits["gemini-cli"], installGeminiHook)
}

// geminiHook is the hook that install gemini-cli writes for the workbench
// named name: its matcher (Gemini CLI matches its name of the tool,
// mcp_<server>_<tool>, against it as a regular expression) and its command
// (run by a shell).
func geminiHook(exe, cfg, name string) (matcher, command string) {
	matcher = "^" + regexp.QuoteMeta(geminiToolName(name, "use_tool")) + "$"
	return matcher, hookCommand(exe, cfg, "gemini-cli")
}

// geminiMaxToolName is the longest tool name Gemini CLI keeps whole; a
// longer one is cut in the middle.
const geminiMaxToolName = 63

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

// installGeminiHook is the edit that appends the hook to the file's
// hooks.BeforeTool array: the user's own hooks, and everything else in
// the file, stay as they are. A file that already has the hook is left as
// it is.
func installGeminiHook(opts installOptions) (func([]byte) ([]byte, bool, error), func(hostconfig.Installed, io.Writer)) {
	matcher, command := geminiHook(opts.exe, opts.cfg, opts.name)
	if n := geminiToolName(opts.name, "use_tool"); len(n) > geminiMaxToolName {
		return func([]byte) ([]byte, bool, error) {
				return nil, false, fmt.Errorf("--name %q is too long for Gemini CLI: its tool %s is longer than %d characters, and Gemini CLI cuts it, which the workbench's hook cannot match; use a shorter name", opts.name, n, geminiMaxToolName)
			}, func(hostconfig.Installed, io.Writer) {
			}
	}
	item := hostconfig.Entry{
		{Key: "matcher", Value: matcher},
		{Key: "hooks", Value: []hostconfig.Entry{{{Key: "type", Value: "command"}, {Key: "command", Value: command}}}},
	}
	var added bool
	var others []string // the workbench's hooks for other configurations
	edit := func(data []byte) ([]byte, bool, error) {
		added, others = false, nil
		has := func(elem any) bool {
			g, _ := elem.(map[string]any)
			hooks, _ := g["hooks"].([]any)
			for _, h := range hooks {
				h, _ := h.(map[string]any)
				c, _ := h["command"].(string)
				if g["matcher"] == matcher && c == command {
					return true
				}
				if g["matcher"] == matcher && strings.Contains(c, " hook gemini-cli") {
					others = append(others, c)
				}
			}
			return false
		}
		out, changed, err := hostconfig.AddJSONArrayItem(data, []string{"hooks", "BeforeTool"}, item, has)
		if err != nil {
			return nil, false, fmt.Errorf("%w; add the hook by hand: mcp-workbench help hook", err)
		}
		added = changed
		return out, changed, nil
	}
	report := func(res hostconfig.Installed, stdout io.Writer) {
		hookReport(stdout, res, "Gemini CLI", "gemini-cli", added, others)
	}
	return edit, report
}
