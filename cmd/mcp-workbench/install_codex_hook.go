package main

import (
	"fmt"
	"io"

	"github.com/mcpworkbench/mcp-workbench/internal/hostconfig"
)

// install codex also puts the workbench's PreToolUse hook (mcp-workbench
// hook codex) into Codex's config.toml, in the same write as the entry, so
// that Codex blocks a call the workbench's rules deny before it reaches the
// workbench.
func init() {
	installEdits["codex"] = append(installEdits["codex"], installCodexHook)
}

// installCodexHook is the edit that appends the hook to Codex's
// config.toml as one [[hooks.PreToolUse]] table at the end of the file:
// nothing else in the file changes, comments included. A file that already
// has the hook is left as it is.
func installCodexHook(opts installOptions) (func([]byte) ([]byte, bool, error), func(hostconfig.Installed, io.Writer)) {
	hook, err := hostconfig.CodexHook(opts.exe, opts.cfg, opts.name)
	if err != nil {
		return func([]byte) ([]byte, bool, error) { return nil, false, err }, func(hostconfig.Installed, io.Writer) {}
	}
	var added bool
	var others []string // the workbench's hooks for other configurations
	edit := func(data []byte) ([]byte, bool, error) {
		out, changed, found, err := hostconfig.AddCodexHook(data, hook)
		added, others = changed, found
		return out, changed, err
	}
	report := func(res hostconfig.Installed, stdout io.Writer) {
		hookReport(stdout, res, "Codex", "codex", added, others)
		if added {
			fmt.Fprintln(stdout, "Codex runs a new hook only once you trust it: start codex, open /hooks and trust it.")
		}
		if hook.Warning != "" {
			fmt.Fprintln(stdout, hook.Warning)
		}
	}
	return edit, report
}
