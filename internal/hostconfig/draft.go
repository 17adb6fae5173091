package hostconfig

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/pins"
)

// DraftPrefix starts every description import drafts: the user is to
// make it say when the model should open the toolbox, and validate
// points out each one left as it is.
const DraftPrefix = "Draft: "

// ToolInfo is a tool a server is known to offer (from the tool catalog).
type ToolInfo struct{ Name, Description string }

// maxDraft bounds a drafted description, in characters: the model reads
// every toolbox's description at each open_toolbox.
const maxDraft = 400

// Draft gives each toolbox a description drafted from what its servers
// offer: the tools known for a server (known returns them, nil if none
// are known), else what the host's entry says the server is for, else the
// package, image, program or URL it runs (a URL without its userinfo,
// path or query, which may hold keys). A description reaches the model
// at every open_toolbox, and nothing screens it there: text copied from a
// tool's or the host's description is screened as tools are
// ([pins.Screen]), and text it flags is not copied. The notes say what
// was left out and why.
func Draft(boxes []Toolbox, known func(toolbox string, s Imported) []ToolInfo) []string {
	var notes []string
	for i := range boxes {
		var parts []string
		for _, s := range boxes[i].Servers {
			var tools []ToolInfo
			if known != nil {
				tools = known(boxes[i].Name, s)
			}
			part, n := draftServer(s, tools)
			for _, note := range n {
				notes = append(notes, fmt.Sprintf("toolbox %s: server %s: %s", frame.Quote(boxes[i].Name), frame.Quote(s.As), note))
			}
			if len(boxes[i].Servers) > 1 {
				part = s.As + ": " + part
			}
			parts = append(parts, part)
		}
		// Names and packages come from the host's file too: what is
		// hidden in them is shown as \uXXXX.
		boxes[i].Description = pins.Line(clip(DraftPrefix+strings.Join(parts, "; "), maxDraft))
	}
	return notes
}

// flagged returns the screening's flags of a text to be copied into a
// description, screened as a tool's description. (The names copied are
// shown with what they hide escaped.)
func flagged(text string) []string {
	def, err := json.Marshal(map[string]string{"name": "tool", "description": text})
	if err != nil {
		return nil
	}
	return pins.Screen(def, nil, nil)
}

func draftServer(s Imported, tools []ToolInfo) (string, []string) {
	var notes []string
	if len(tools) > 0 {
		var b strings.Builder
		for i, t := range tools {
			if b.Len() > maxDraft {
				fmt.Fprintf(&b, " and %d more", len(tools)-i)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(t.Name)
			if first := firstSentence(t.Description); first != "" && i < 3 {
				if flags := flagged(t.Description); len(flags) > 0 {
					notes = append(notes, fmt.Sprintf("the description of tool %s is not copied into the draft: the screening flags it (%s)", frame.Quote(t.Name), strings.Join(flags, "; ")))
				} else {
					b.WriteString(" (" + first + ")")
				}
			}
		}
		return "tools " + b.String(), notes
	}
	if s.Description != "" {
		flags := flagged(s.Description)
		if len(flags) == 0 {
			return s.Description, nil
		}
		notes = append(notes, fmt.Sprintf("the host's description of the server is not copied into the draft: the screening flags it (%s)", strings.Join(flags, "; ")))
	}
	return "the tools of " + whatRuns(s), notes
}

// draftURL is a server's URL as a draft names it: its scheme and host.
// The userinfo is masked as everywhere ([config.MaskURL]) and the path,
// query and fragment are left out: a key is often a path segment or
// ?apiKey=, and the model reads the description.
func draftURL(u string) string {
	u = config.MaskURL(u)
	start := 0
	if i := strings.Index(u, "://"); i >= 0 {
		start = i + 3
	}
	if end := strings.IndexAny(u[start:], "/?#"); end >= 0 {
		return u[:start+end]
	}
	return u
}

// whatRuns says in words what a server entry runs: the npm or Python
// package, the container image, the program, or the URL.
func whatRuns(s Imported) string {
	if u, ok := s.entry.Get("url"); ok {
		if text, ok := u.Text(); ok {
			return "the server at " + draftURL(text)
		}
	}
	c, _ := s.entry.Get("command")
	command, _ := c.Text()
	var args []string
	if a, ok := s.entry.Get("args"); ok {
		args = a.EachStringList()
	}
	firstPlain := func(skip ...string) string {
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && !containsString(skip, a) {
				return a
			}
		}
		return ""
	}
	switch strings.TrimSuffix(path.Base(strings.ReplaceAll(command, `\`, "/")), ".exe") {
	case "npx", "bunx", "pnpx":
		if p := firstPlain(); p != "" {
			return "the npm package " + p
		}
	case "pnpm", "yarn", "bun":
		if p := firstPlain("dlx", "x"); p != "" {
			return "the npm package " + p
		}
	case "uvx", "pipx":
		if p := firstPlain("run"); p != "" {
			return "the Python package " + p
		}
	case "python", "python3", "py":
		for i, a := range args {
			if a == "-m" && i+1 < len(args) {
				return "the Python module " + args[i+1]
			}
		}
		if p := firstPlain(); p != "" {
			return "the script " + p + " (" + command + ")"
		}
	case "node", "deno", "tsx":
		if p := firstPlain("run"); p != "" {
			return "the script " + p + " (" + command + ")"
		}
	case "docker", "podman":
		// The image is the last argument before the container's own.
		for i := len(args) - 1; i >= 0; i-- {
			if a := args[i]; strings.Contains(a, "/") || strings.Contains(a, ":") {
				if !strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
					return "the container image " + a
				}
			}
		}
	}
	if command == "" {
		return s.As
	}
	return "the program " + command
}

// firstSentence is the start of a tool's description up to its first
// full stop or line, bounded.
func firstSentence(d string) string {
	d = strings.TrimSpace(d)
	if i := strings.IndexAny(d, "\n"); i >= 0 {
		d = d[:i]
	}
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i]
	}
	return clip(strings.TrimSuffix(d, "."), 80)
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
