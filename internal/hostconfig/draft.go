package hostconfig

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
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
// package, image, program or URL it runs.
func Draft(boxes []Toolbox, known func(toolbox string, s Imported) []ToolInfo) {
	for i := range boxes {
		var parts []string
		for _, s := range boxes[i].Servers {
			var tools []ToolInfo
			if known != nil {
				tools = known(boxes[i].Name, s)
			}
			part := draftServer(s, tools)
			if len(boxes[i].Servers) > 1 {
				part = s.As + ": " + part
			}
			parts = append(parts, part)
		}
		boxes[i].Description = clip(DraftPrefix+strings.Join(parts, "; "), maxDraft)
	}
}

func draftServer(s Imported, tools []ToolInfo) string {
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
				b.WriteString(" (" + first + ")")
			}
		}
		return "tools " + b.String()
	}
	if s.Description != "" {
		return s.Description
	}
	return "the tools of " + whatRuns(s)
}

// whatRuns says in words what a server entry runs: the npm or Python
// package, the container image, the program, or the URL.
func whatRuns(s Imported) string {
	if u, ok := s.entry.Get("url"); ok {
		if text, ok := u.Text(); ok {
			return "the server at " + text
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
