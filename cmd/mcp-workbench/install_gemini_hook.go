package main

import (
	"fmt"
	"io"
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

// installGeminiHook is the edit that appends the hook to the file's
// hooks.BeforeTool array: the user's own hooks, and everything else in
// the file, stay as they are. A file that already has the hook is left as
// it is.
func installGeminiHook(opts installOptions) (func([]byte) ([]byte, bool, error), func(hostconfig.Installed, io.Writer)) {
	hook, err := hostconfig.GeminiHook(opts.exe, opts.cfg, opts.name)
	if err != nil {
		return func([]byte) ([]byte, bool, error) { return nil, false, err }, func(hostconfig.Installed, io.Writer) {}
	}
	matcher, command := hook.Matcher, hook.Command
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
