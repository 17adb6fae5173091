// Package hostconfig reads the MCP servers of a host's configuration —
// Claude Desktop's claude_desktop_config.json, Claude Code's .mcp.json and
// ~/.claude.json, Cursor's mcp.json — and turns them into a workbench
// configuration, entries unchanged: what mcp-workbench import does.
//
// Host files are read with the configuration's own JSON reader
// ([config.ReadDocument]), so that keys keep their order, positions are
// reported as the configuration's are, and every entry is copied exactly
// as the host file has it.
package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
)

// schemaURL is written as "$schema" so that editors complete and check the
// file the user is about to edit.
const schemaURL = "https://raw.githubusercontent.com/mcpworkbench/mcp-workbench/main/workbench-config.schema.json"

// Server is one server entry as found in a host configuration.
type Server struct {
	Name    string          // its name in the host configuration
	Project string          // the Claude Code project it belongs to; "" at the top level
	Entry   json.RawMessage // the entry: as the host file has it, or made the workbench's
	entry   config.Value
	// Description is what the host's entry says the server is for, if
	// it says (Gemini CLI's "description").
	Description string
}

// Where says in words where a server was found, for messages.
func (s Server) Where() string {
	if s.Project == "" {
		return "at the top level"
	}
	return "in project " + s.Project
}

// ClaudeCode reports whether the host configuration src, holding found,
// is Claude Code's: a .mcp.json, or ~/.claude.json (any name ending so) (whose servers may sit
// in per-project sections, which no other host has).
func ClaudeCode(src string, found []Server) bool {
	if base := filepath.Base(src); strings.HasSuffix(base, ".mcp.json") || strings.HasSuffix(base, ".claude.json") || base == ".mcp.json" || base == ".claude.json" {
		return true
	}
	for _, s := range found {
		if s.Project != "" {
			return true
		}
	}
	return false
}

// Read returns the server entries of the host configuration src, whose
// content is data, in file order: the top-level "mcpServers" object (every
// host) and, for Claude Code's ~/.claude.json, each project's.
func Read(src string, data []byte) ([]Server, error) {
	// Windows editors may start the file with a byte order mark, which
	// JSON readers reject but hosts accept.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	doc, err := config.ReadDocument(data)
	var se *config.SyntaxError
	switch {
	case errors.Is(err, config.ErrEmpty):
		return nil, fmt.Errorf("%s is empty: it must hold a JSON object with \"mcpServers\"", src)
	case errors.As(err, &se):
		return nil, fmt.Errorf("%s: line %d, column %d: invalid JSON: %s", src, se.Line, se.Column, se.Msg)
	case err != nil:
		return nil, fmt.Errorf("%s: %v", src, err)
	}
	if len(doc.Duplicates) > 0 {
		d := doc.Duplicates[0]
		return nil, fmt.Errorf("%s: %s appears twice in its object (the host uses one of them; keep only that one)", src, d.Path)
	}
	top := doc.Root()
	if top.Kind() != "object" {
		return nil, fmt.Errorf("%s is not a host configuration: it holds a JSON %s, not an object with \"mcpServers\"", src, top.Kind())
	}
	var found []Server
	for _, m := range top.Members() {
		switch m.Key {
		case "mcpServers":
			s, err := entries(src, m.Value, "")
			if err != nil {
				return nil, err
			}
			found = append(found, s...)
		case "projects":
			// Claude Code keeps each project's local servers here. Other
			// hosts have no "projects" key, and a value of another shape
			// is none of our business.
			for _, p := range m.Value.Members() {
				servers, ok := p.Value.Get("mcpServers")
				if !ok {
					continue
				}
				s, err := entries(src, servers, p.Key)
				if err != nil {
					return nil, err
				}
				found = append(found, s...)
			}
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("no MCP servers found in %s: it has no non-empty \"mcpServers\" object, at the top level or under \"projects\"", src)
	}
	return found, nil
}

// entries reads one "mcpServers" object.
func entries(src string, servers config.Value, project string) ([]Server, error) {
	if servers.Kind() != "object" {
		return nil, fmt.Errorf("%s: %s must be an object mapping server names to servers, not a JSON %s", src, servers.Path, servers.Kind())
	}
	members := servers.Members()
	out := make([]Server, len(members))
	for i, m := range members {
		out[i] = Server{Name: m.Key, Project: project, Entry: m.Value.Raw(), entry: m.Value}
	}
	return out, nil
}

// Imported is a host server with the name it gets in the workbench.
type Imported struct {
	Server
	As string
}

// Name gives each server a unique name. A server that appears twice with
// the same content (a Claude Code server listed at the top level and in a
// project) is imported once; two different servers of the same name are
// both kept, the later renamed name-2 (name-3, …), since dropping either
// would lose a server the user has. Each rename comes with a note.
func Name(found []Server) ([]Imported, []string) {
	var out []Imported
	var notes []string
	taken := map[string]bool{}
next:
	for _, s := range found {
		if !taken[s.Name] {
			taken[s.Name] = true
			out = append(out, Imported{Server: s, As: s.Name})
			continue
		}
		var first *Imported
		for i := range out {
			if out[i].Name != s.Name {
				continue
			}
			if first == nil {
				first = &out[i]
			}
			if sameJSON(out[i].Entry, s.Entry) {
				continue next
			}
		}
		as := s.Name
		for n := 2; taken[as]; n++ {
			as = fmt.Sprintf("%s-%d", s.Name, n)
		}
		taken[as] = true
		if first != nil {
			notes = append(notes, fmt.Sprintf("two different servers are named %q (%s and %s): the later one is imported as %q", s.Name, first.Where(), s.Where(), as))
		} else {
			notes = append(notes, fmt.Sprintf("server %q %s is imported as %q: its name is taken by a renamed server", s.Name, s.Where(), as))
		}
		out = append(out, Imported{Server: s, As: as})
	}
	return out, notes
}

// sameJSON reports whether two JSON values are equal whatever their
// formatting and key order.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// Toolbox is one toolbox of the configuration being written.
type Toolbox struct {
	Name        string
	Description string
	Servers     []Imported
}

// Plan groups the servers: one toolbox per server by default, so that the
// model opens only what it needs, or all in the toolbox named one.
// Descriptions are TODO placeholders: only the user knows what a server is
// for, and a missing description must stand out rather than look done.
func Plan(servers []Imported, one string) []Toolbox {
	if one != "" {
		names := make([]string, len(servers))
		for i, s := range servers {
			names[i] = s.As
		}
		return []Toolbox{{Name: one, Description: todoDescription(names), Servers: servers}}
	}
	boxes := make([]Toolbox, len(servers))
	for i, s := range servers {
		boxes[i] = Toolbox{Name: s.As, Description: todoDescription([]string{s.As}), Servers: []Imported{s}}
	}
	return boxes
}

func todoDescription(servers []string) string {
	list := servers[len(servers)-1]
	if len(servers) > 1 {
		list = strings.Join(servers[:len(servers)-1], ", ") + " and " + list
	}
	return "TODO: say what the " + list + " tools are for; the model reads this to choose a toolbox"
}

// Render writes the configuration text by hand: a map would sort the keys,
// and the user expects "$schema" first and the servers in the order of the
// host file. Entries are re-indented with json.Indent, which changes only
// whitespace, so every key and value stays as it was.
func Render(boxes []Toolbox) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"$schema\": %s,\n  \"toolboxes\": {\n", frame.Quote(schemaURL))
	for i, tb := range boxes {
		fmt.Fprintf(&b, "    %s: {\n      \"description\": %s,\n      \"mcpServers\": {\n", quoteName(tb.Name), quoteName(tb.Description))
		for j, s := range tb.Servers {
			fmt.Fprintf(&b, "        %s: ", quoteName(s.As))
			if err := json.Indent(&b, s.Entry, "        ", "  "); err != nil {
				b.Write(s.Entry) // cannot happen: the whole file was valid JSON
			}
			b.WriteString(comma(j, len(tb.Servers)) + "\n")
		}
		b.WriteString("      }\n    }" + comma(i, len(boxes)) + "\n")
	}
	b.WriteString("  }\n}\n")
	return b.Bytes()
}

func comma(i, n int) string {
	if i < n-1 {
		return ","
	}
	return ""
}

// quoteName is a toolbox or server name (or a description that names
// them) as JSON. The workbench expands ${VAR} in keys and values: a "${"
// of the name's own is written "$${", its escape.
func quoteName(name string) string {
	return frame.Quote(strings.ReplaceAll(name, "${", "$${"))
}

// Check loads the configuration about to be written, as the workbench
// will, and returns its warnings: the loader's, except the TODO
// descriptions that Plan writes on purpose, and each ${VAR} that is not
// set in lookup's environment, which is the one the workbench starts in
// when it is started from here.
//
// Every ${VAR} counts as set when loading, since the variables are the
// host's and may be set where it starts the workbench. A URL built from
// variables is not checked: a stand-in value cannot make
// "http://localhost:${PORT}/mcp" valid, and the workbench checks the real
// one when it loads the file.
func Check(out []byte, boxes []Toolbox, lookup config.LookupFunc) ([]string, error) {
	cfg, err := config.Parse(out, func(string) (string, bool) { return "x", true })
	if err != nil {
		if err := problemsLeft(err, boxes); err != nil {
			return nil, err
		}
	}
	placeholders := map[string]bool{}
	for _, tb := range boxes {
		placeholders[config.JoinPath("toolboxes", tb.Name, "description")] = true
	}
	var warnings []string
	if cfg != nil {
		for _, w := range cfg.Warnings {
			if path, _, _ := strings.Cut(w, ": "); !placeholders[path] {
				warnings = append(warnings, w)
			}
		}
	}
	for _, tb := range boxes {
		for _, s := range tb.Servers {
			s.entry.EachString(config.JoinPath("toolboxes", tb.Name, "mcpServers", s.As), func(path, str string) {
				for _, name := range config.UnsetVars(str, lookup) {
					warnings = append(warnings, config.Problem{Path: path, Msg: config.UnsetVarWarning(name)}.String())
				}
			})
		}
	}
	return warnings, nil
}

// problemsLeft returns the configuration error err without the problems of
// URLs built from variables, or nil if none is left.
func problemsLeft(err error, boxes []Toolbox) error {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return err
	}
	skip := map[string]bool{}
	for _, tb := range boxes {
		for _, s := range tb.Servers {
			if u, ok := s.entry.Get("url"); ok {
				if text, ok := u.Text(); ok && strings.Contains(text, "${") {
					skip[config.JoinPath("toolboxes", tb.Name, "mcpServers", s.As, "url")] = true
				}
			}
		}
	}
	var kept []config.Problem
	for _, p := range ce.Problems {
		if !skip[p.Path] {
			kept = append(kept, p)
		}
	}
	switch len(kept) {
	case 0:
		return nil
	case 1:
		return errors.New(kept[0].String())
	}
	lines := make([]string, len(kept))
	for i, p := range kept {
		lines[i] = "\n  " + p.String()
	}
	return fmt.Errorf("%d problems:%s", len(kept), strings.Join(lines, ""))
}
