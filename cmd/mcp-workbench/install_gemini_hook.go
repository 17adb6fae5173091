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
	matcher = "^mcp_" + regexp.QuoteMeta(name) + "_use_tool$"
	return matcher, hookCommand(exe, cfg, "gemini-cli")
}

// installGeminiHook is the edit that appends the hook to the file's
// hooks.BeforeTool array: the user's own hooks, and everything else in
// the file, stay as they are. A file that already has the hook is left as
// it is.
func installGeminiHook(opts installOptions) (func([]byte) ([]byte, bool, error), func(hostconfig.Installed, io.Writer)) {
	matcher, command := geminiHook(opts.exe, opts.cfg, opts.name)
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
