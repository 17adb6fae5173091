package main

import (
	"io"

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
	var added bool
	var others []string // the workbench's hooks for other configurations
	edit := func(data []byte) ([]byte, bool, error) {
		out, changed, found, err := hostconfig.AddGeminiHook(data, hook)
		added, others = changed, found
		return out, changed, err
	}
	report := func(res hostconfig.Installed, stdout io.Writer) {
		hookReport(stdout, res, "Gemini CLI", "gemini-cli", added, others)
	}
	return edit, report
}
