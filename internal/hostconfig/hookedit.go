package hostconfig

import (
	"errors"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// AddCodexHook appends hook to Codex's config.toml data as one
// [[hooks.PreToolUse]] table at the end of the file: nothing else in the
// file changes, comments included. A file that already has the hook is
// returned as it is, changed false. others are the commands of the
// workbench's hooks (hook codex) for other configurations found under the
// same matcher.
func AddCodexHook(data []byte, hook Hook) (out []byte, changed bool, others []string, err error) {
	have, err := CodexHooks(data)
	if err != nil {
		return nil, false, others, err
	}
	for _, h := range have {
		if h.Matcher == hook.Matcher && h.Command == hook.Command {
			return data, false, others, nil
		}
		if h.Matcher == hook.Matcher && strings.Contains(h.Command, " hook codex") {
			others = append(others, h.Command)
		}
	}
	out = append([]byte{}, data...)
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
`, TOMLString(hook.Matcher), TOMLString(hook.Command))...)
	// The file may define hooks.PreToolUse in a way a table cannot be
	// appended to (an inline array): then it is the user's to edit.
	after, err := CodexHooks(out)
	found := false
	for _, h := range after {
		found = found || (h.Matcher == hook.Matcher && h.Command == hook.Command)
	}
	if err != nil || !found {
		return nil, false, others, errors.New("its hooks cannot take the workbench's hook as a [[hooks.PreToolUse]] table (hooks.PreToolUse is written inline); add the hook by hand: mcp-workbench help hook")
	}
	return out, true, others, nil
}

// CodexHookEntry is one command of a [[hooks.PreToolUse]] matcher group
// of Codex's config.toml.
type CodexHookEntry struct{ Matcher, Command string }

// CodexHooks returns the PreToolUse command hooks of a Codex config.toml,
// or an error if it does not parse or its hooks are not in Codex's shape.
func CodexHooks(data []byte) ([]CodexHookEntry, error) {
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
	if err := CheckTOMLDepth(data); err != nil {
		return nil, err
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%w: line %d: invalid TOML: %s", ErrUnparsable, pe.Position.Line, pe.Message)
		}
		return nil, fmt.Errorf("%w: hooks.PreToolUse: %v", ErrUnparsable, err)
	}
	var out []CodexHookEntry
	for _, g := range doc.Hooks.PreToolUse {
		for _, h := range g.Hooks {
			if h.Type == "command" {
				out = append(out, CodexHookEntry{g.Matcher, h.Command})
			}
		}
	}
	return out, nil
}

// AddGeminiHook appends hook to the hooks.BeforeTool array of Gemini
// CLI's settings.json data: the user's own hooks, and everything else in
// the file, stay as they are. A file that already has the hook is
// returned as it is, changed false. others are the commands of the
// workbench's hooks (hook gemini-cli) for other configurations found
// under the same matcher.
func AddGeminiHook(data []byte, hook Hook) (out []byte, changed bool, others []string, err error) {
	item := Entry{
		{Key: "matcher", Value: hook.Matcher},
		{Key: "hooks", Value: []Entry{{{Key: "type", Value: "command"}, {Key: "command", Value: hook.Command}}}},
	}
	has := func(elem any) bool {
		g, _ := elem.(map[string]any)
		hooks, _ := g["hooks"].([]any)
		for _, h := range hooks {
			h, _ := h.(map[string]any)
			c, _ := h["command"].(string)
			if g["matcher"] == hook.Matcher && c == hook.Command {
				return true
			}
			if g["matcher"] == hook.Matcher && strings.Contains(c, " hook gemini-cli") {
				others = append(others, c)
			}
		}
		return false
	}
	out, changed, err = AddJSONArrayItem(data, []string{"hooks", "BeforeTool"}, item, has)
	if err != nil {
		return nil, false, others, fmt.Errorf("%w; add the hook by hand: mcp-workbench help hook", err)
	}
	return out, changed, others, nil
}
