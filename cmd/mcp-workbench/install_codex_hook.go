package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/BurntSushi/toml"
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
	matcher, command := hook.Matcher, hook.Command
	var added bool
	var others []string // the workbench's hooks for other configurations
	edit := func(data []byte) ([]byte, bool, error) {
		added, others = false, nil
		have, err := codexHooks(data)
		if err != nil {
			return nil, false, err
		}
		for _, h := range have {
			if h.matcher == matcher && h.command == command {
				return data, false, nil
			}
			if h.matcher == matcher && strings.Contains(h.command, " hook codex") {
				others = append(others, h.command)
			}
		}
		out := append([]byte{}, data...)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		if len(out) > 0 {
			out = append(out, '\n')
		}
		out = append(out, fmt.Sprintf(`# The workbench's permission rules, applied by Codex before it calls use_tool
# (mcp-workbench install codex).
[[hooks.PreToolUse]]
matcher = %s

[[hooks.PreToolUse.hooks]]
type = "command"
command = %s
timeout = 30
`, hostconfig.TOMLString(matcher), hostconfig.TOMLString(command))...)
		// The file may define hooks.PreToolUse in a way a table cannot
		// be appended to (an inline array): then it is the user's to edit.
		after, err := codexHooks(out)
		found := false
		for _, h := range after {
			found = found || (h.matcher == matcher && h.command == command)
		}
		if err != nil || !found {
			return nil, false, errors.New("its hooks cannot take the workbench's hook as a [[hooks.PreToolUse]] table (hooks.PreToolUse is written inline); add the hook by hand: mcp-workbench help hook")
		}
		added = true
		return out, true, nil
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

// codexHookEntry is one command of a [[hooks.PreToolUse]] matcher group.
type codexHookEntry struct{ matcher, command string }

// codexHooks returns the PreToolUse command hooks of a Codex config.toml,
// or an error if it does not parse or its hooks are not in Codex's shape.
func codexHooks(data []byte) ([]codexHookEntry, error) {
	var doc struct {
		Hooks struct {
			PreToolUse []struct {
				Matcher string `toml:"matcher"`
				Hooks   []struct {
					Type    string `toml:"type"`
					Command string `toml:"command"`
				} `toml:"hooks"`
			} `toml:"PreToolUse"`
		} `toml:"hooks"`
	}
	if err := hostconfig.CheckTOMLDepth(data); err != nil {
		return nil, err
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%w: line %d: invalid TOML: %s", hostconfig.ErrUnparsable, pe.Position.Line, pe.Message)
		}
		return nil, fmt.Errorf("%w: hooks.PreToolUse: %v", hostconfig.ErrUnparsable, err)
	}
	var out []codexHookEntry
	for _, g := range doc.Hooks.PreToolUse {
		for _, h := range g.Hooks {
			if h.Type == "command" {
				out = append(out, codexHookEntry{g.Matcher, h.Command})
			}
		}
	}
	return out, nil
}
