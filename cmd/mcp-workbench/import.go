package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
)

const importUsage = `Usage: mcp-workbench import PATH [--out FILE] [--force] [--toolbox NAME]

Reads the MCP servers of a host configuration (Claude Desktop's
claude_desktop_config.json, Claude Code's .mcp.json or ~/.claude.json, Cursor's
mcp.json) and writes a workbench configuration holding them, entries unchanged.
Each toolbox gets a TODO description to replace; ${VAR}s that are not set here
are pointed out.

Flags:
  --out FILE      the file to write (default workbench-config.json)
  --force         overwrite FILE if it exists
  --toolbox NAME  put every server in one toolbox NAME (default: one toolbox per server)
  --log-level LEVEL
                  warn shows the notes and warnings (the default), error hides them
`

// schemaURL is written as "$schema" so that editors complete and check the
// file the user is about to edit.
const schemaURL = "https://raw.githubusercontent.com/mcpworkbench/mcp-workbench/main/workbench-config.schema.json"

// importOptions is the parsed command line of mcp-workbench import.
type importOptions struct {
	globalOptions
	src     string // the host configuration
	out     string // the workbench configuration to write
	force   bool   // overwrite out if it exists
	toolbox string // one toolbox of this name for every server; "" for one per server
}

// runImport implements mcp-workbench import: it turns the servers of a
// host configuration into a workbench configuration, so that moving to the
// workbench never means retyping an entry.
func runImport(_ context.Context, e *env, args []string) error {
	opts, err := parseImportArgs(e, args)
	if err != nil {
		return e.usageError("import", err)
	}
	if err := doImport(opts, e.stdout, e.stderr); err != nil {
		fmt.Fprintln(e.stderr, "mcp-workbench:", err)
		return &exitError{code: 1}
	}
	return nil
}

// parseImportArgs reads the flags and the one PATH.
func parseImportArgs(e *env, args []string) (importOptions, error) {
	var opts importOptions
	fset := e.flagSet("import", &opts.globalOptions)
	fset.StringVar(&opts.out, "out", config.DefaultPath, "")
	fset.BoolVar(&opts.force, "force", false, "")
	fset.StringVar(&opts.toolbox, "toolbox", "", "")
	positional, err := parse(fset, args)
	if err != nil {
		return opts, err
	}
	switch {
	case len(positional) == 0:
		return opts, errors.New("missing PATH, the host configuration to import")
	case len(positional) > 1:
		return opts, fmt.Errorf("unexpected argument %q (import reads one host configuration)", positional[1])
	case opts.configPath != "":
		// import writes a configuration; --config names one to read.
		return opts, errors.New("import writes the file that --out names (--config is for the commands that read a configuration)")
	}
	if _, err := parseLevel(opts.logLevel); err != nil {
		return opts, err
	}
	opts.src = positional[0]
	fset.Visit(func(f *flag.Flag) {
		switch {
		case f.Name == "out" && strings.TrimSpace(opts.out) == "":
			err = errors.New("--out needs a file name")
		case f.Name == "toolbox" && strings.TrimSpace(opts.toolbox) == "":
			err = errors.New("--toolbox needs a toolbox name")
		}
	})
	return opts, err
}

// doImport does the work of runImport once the command line is known.
// Nothing is written unless the result loads in the workbench, so that a
// failed import never leaves a half-usable file behind.
func doImport(opts importOptions, stdout, stderr io.Writer) error {
	data, err := os.ReadFile(opts.src)
	if err != nil {
		return fmt.Errorf("cannot read the host configuration: %w", err)
	}
	found, err := hostServers(opts.src, data)
	if err != nil {
		return err
	}
	servers, notes := nameServers(found)
	for _, n := range notes {
		fmt.Fprintln(stderr, "mcp-workbench:", n)
	}
	boxes := planToolboxes(servers, opts.toolbox)
	out := renderWorkbench(boxes)

	warnings, err := checkWorkbench(out, boxes)
	if err != nil {
		return fmt.Errorf("nothing written: the servers of %s do not make a valid workbench configuration: %w", opts.src, err)
	}
	if err := writeNew(opts, out); err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "mcp-workbench: warning: %s: %s\n", opts.out, w)
	}
	printNextSteps(stdout, opts, found, boxes)
	return nil
}

// hostServer is one server entry as found in a host configuration.
type hostServer struct {
	name    string          // its name in the host configuration
	project string          // the Claude Code project it belongs to; "" at the top level
	entry   json.RawMessage // the entry exactly as the host file has it
}

// where says in words where a server was found, for messages.
func (s hostServer) where() string {
	if s.project == "" {
		return "at the top level"
	}
	return "in project " + s.project
}

// hostServers returns the server entries of a host configuration in file
// order: the top-level "mcpServers" object (every host) and, for Claude
// Code's ~/.claude.json, each project's. Entries are kept as raw JSON so
// that they are copied without a key lost or a value reformatted.
func hostServers(src string, data []byte) ([]hostServer, error) {
	// Windows editors may start the file with a byte order mark, which
	// encoding/json rejects but hosts accept.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s is empty: it must hold a JSON object with \"mcpServers\"", src)
	}
	// Checking the whole document first gives every syntax error an offset
	// from the start of the file, which the walk below could not.
	var probe json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			if se.Offset >= int64(len(data)) || strings.Contains(se.Error(), "unexpected end") {
				line, col := config.LineCol(data, int64(len(data)))
				return nil, fmt.Errorf("%s:%d:%d: invalid JSON: unexpected end of file (a bracket or quote is not closed)", src, line, col)
			}
			// Offset counts the offending byte itself.
			line, col := config.LineCol(data, se.Offset-1)
			return nil, fmt.Errorf("%s:%d:%d: invalid JSON: %v", src, line, col, err)
		}
		return nil, fmt.Errorf("%s: invalid JSON: %v", src, err)
	}
	top, ok, err := objectMembers(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", src, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s is not a host configuration: it holds a JSON %s, not an object with \"mcpServers\"", src, jsonKind(data))
	}
	var found []hostServer
	for _, m := range top {
		switch m.key {
		case "mcpServers":
			s, err := serverEntries(src, "mcpServers", "", m.value)
			if err != nil {
				return nil, err
			}
			found = append(found, s...)
		case "projects":
			// Claude Code keeps each project's local servers here. Other
			// hosts have no "projects" key, and a value of another shape
			// is none of our business.
			projects, _, err := objectMembers(m.value)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", src, err)
			}
			for _, p := range projects {
				keys, _, err := objectMembers(p.value)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", src, err)
				}
				for _, k := range keys {
					if k.key != "mcpServers" {
						continue
					}
					s, err := serverEntries(src, "projects["+strconv.Quote(p.key)+"].mcpServers", p.key, k.value)
					if err != nil {
						return nil, err
					}
					found = append(found, s...)
				}
			}
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("no MCP servers found in %s: it has no non-empty \"mcpServers\" object, at the top level or under \"projects\"", src)
	}
	return found, nil
}

// serverEntries reads one "mcpServers" object, found at jsonPath.
func serverEntries(src, jsonPath, project string, raw json.RawMessage) ([]hostServer, error) {
	members, ok, err := objectMembers(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", src, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: %s must be an object mapping server names to servers, not a JSON %s", src, jsonPath, jsonKind(raw))
	}
	out := make([]hostServer, len(members))
	for i, m := range members {
		out[i] = hostServer{name: m.key, project: project, entry: m.value}
	}
	return out, nil
}

// member is one key of a JSON object with its value as raw JSON.
type member struct {
	key   string
	value json.RawMessage
}

// objectMembers returns the members of the JSON object raw in file order
// (a Go map would lose it), or ok false if raw holds another kind of value.
func objectMembers(raw []byte) (members []member, ok bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, false, err
	}
	if d, isDelim := tok.(json.Delim); !isDelim || d != '{' {
		return nil, false, nil
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, false, err
		}
		key, _ := kt.(string) // the decoder allows only a string here
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false, err
		}
		members = append(members, member{key: key, value: json.RawMessage(bytes.TrimSpace(v))})
	}
	return members, true, nil
}

// jsonKind names the kind of the JSON value raw, for messages.
func jsonKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// importedServer is a host server with the name it gets in the workbench.
type importedServer struct {
	hostServer
	as string
}

// nameServers gives each server a unique name. A server that appears twice
// with the same content (a Claude Code server listed at the top level and in
// a project) is imported once; two different servers of the same name are
// both kept, the later renamed name-2 (name-3, …), since dropping either
// would lose a server the user has. Each rename comes with a note.
func nameServers(found []hostServer) ([]importedServer, []string) {
	var out []importedServer
	var notes []string
	taken := map[string]bool{}
next:
	for _, s := range found {
		if !taken[s.name] {
			taken[s.name] = true
			out = append(out, importedServer{hostServer: s, as: s.name})
			continue
		}
		var first *importedServer
		for i := range out {
			if out[i].name != s.name {
				continue
			}
			if first == nil {
				first = &out[i]
			}
			if sameJSON(out[i].entry, s.entry) {
				continue next
			}
		}
		as := s.name
		for n := 2; taken[as]; n++ {
			as = fmt.Sprintf("%s-%d", s.name, n)
		}
		taken[as] = true
		if first != nil {
			notes = append(notes, fmt.Sprintf("two different servers are named %q (%s and %s): the later one is imported as %q", s.name, first.where(), s.where(), as))
		} else {
			notes = append(notes, fmt.Sprintf("server %q %s is imported as %q: its name is taken by a renamed server", s.name, s.where(), as))
		}
		out = append(out, importedServer{hostServer: s, as: as})
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

// toolboxPlan is one toolbox of the configuration being written.
type toolboxPlan struct {
	name        string
	description string
	servers     []importedServer
}

// planToolboxes groups the servers: one toolbox per server by default, so
// that the model opens only what it needs, or all in the toolbox named one.
// Descriptions are TODO placeholders: only the user knows what a server is
// for, and a missing description must stand out rather than look done.
func planToolboxes(servers []importedServer, one string) []toolboxPlan {
	if one != "" {
		names := make([]string, len(servers))
		for i, s := range servers {
			names[i] = s.as
		}
		return []toolboxPlan{{name: one, description: todoDescription(names), servers: servers}}
	}
	boxes := make([]toolboxPlan, len(servers))
	for i, s := range servers {
		boxes[i] = toolboxPlan{name: s.as, description: todoDescription([]string{s.as}), servers: []importedServer{s}}
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

// renderWorkbench writes the configuration text by hand: a map would sort
// the keys, and the user expects "$schema" first and the servers in the
// order of the host file. Entries are re-indented with json.Indent, which
// changes only whitespace, so every key and value stays as it was.
func renderWorkbench(boxes []toolboxPlan) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"$schema\": %s,\n  \"toolboxes\": {\n", quoteJSON(schemaURL))
	for i, tb := range boxes {
		fmt.Fprintf(&b, "    %s: {\n      \"description\": %s,\n      \"mcpServers\": {\n", quoteJSON(tb.name), quoteJSON(tb.description))
		for j, s := range tb.servers {
			fmt.Fprintf(&b, "        %s: ", quoteJSON(s.as))
			if err := json.Indent(&b, s.entry, "        ", "  "); err != nil {
				b.Write(s.entry) // cannot happen: the whole file was valid JSON
			}
			b.WriteString(comma(j, len(tb.servers)) + "\n")
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

// quoteJSON renders s as a JSON string. HTML characters are kept as they
// are: the file is read by people and the workbench, never by a browser.
func quoteJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// checkWorkbench loads the configuration about to be written, as the
// workbench will, and returns its warnings.
//
// Every ${VAR} counts as set, since the variables are the host's and may not
// be set here. A URL built from variables is not checked: a stand-in value
// cannot make "http://localhost:${PORT}/mcp" valid, and the workbench
// checks the real one when it loads the file.
func checkWorkbench(out []byte, boxes []toolboxPlan) ([]string, error) {
	cfg, err := config.Parse(out, func(string) (string, bool) { return "x", true })
	if err == nil {
		return cfg.Warnings, nil
	}
	var ce *config.Error
	if !errors.As(err, &ce) {
		return nil, err
	}
	skip := map[string]bool{}
	for _, tb := range boxes {
		for _, s := range tb.servers {
			var e struct {
				URL any `json:"url"`
			}
			if json.Unmarshal(s.entry, &e) == nil {
				if u, ok := e.URL.(string); ok && strings.Contains(u, "${") {
					skip[config.JoinPath("toolboxes", tb.name, "mcpServers", s.as, "url")] = true
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
	if len(kept) == 0 {
		return nil, nil
	}
	if len(kept) == 1 {
		return nil, errors.New(kept[0].String())
	}
	lines := make([]string, len(kept))
	for i, p := range kept {
		lines[i] = "\n  " + p.String()
	}
	return nil, fmt.Errorf("%d problems:%s", len(kept), strings.Join(lines, ""))
}

// writeNew writes the configuration to opts.out. Without --force the file
// is created exclusively, so that an existing file is never replaced, not
// even by a race. The host configuration itself is never overwritten, even
// with --force: it still lists the servers the user has.
func writeNew(opts importOptions, data []byte) error {
	if srcInfo, err := os.Stat(opts.src); err == nil {
		if outInfo, err := os.Stat(opts.out); err == nil && os.SameFile(srcInfo, outInfo) {
			return fmt.Errorf("%s is the host configuration being imported: give another --out", opts.out)
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if opts.force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(opts.out, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists: give --force to overwrite it, or --out FILE to write another file", opts.out)
	}
	if err != nil {
		return fmt.Errorf("cannot write the workbench configuration: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if !opts.force {
			_ = os.Remove(opts.out) // ours alone: it was created above
		}
		return fmt.Errorf("cannot write the workbench configuration %s: %w", opts.out, err)
	}
	return nil
}

// printNextSteps tells the user what was done and what is left: the TODO
// descriptions, and replacing the imported servers in the host with the
// workbench. Until they are removed the host starts them itself as well.
func printNextSteps(stdout io.Writer, opts importOptions, found []hostServer, boxes []toolboxPlan) {
	exe, err := os.Executable()
	if err != nil {
		exe = "mcp-workbench" // found on PATH, as the host would
	}
	outAbs, err := filepath.Abs(opts.out)
	if err != nil {
		outAbs = opts.out
	}
	srcAbs, err := filepath.Abs(opts.src)
	if err != nil {
		srcAbs = opts.src
	}
	n := 0
	for _, tb := range boxes {
		n += len(tb.servers)
	}
	fmt.Fprintf(stdout, "Wrote %s: %d server(s) from %s in %d toolbox(es):\n", outAbs, n, srcAbs, len(boxes))
	for _, tb := range boxes {
		names := make([]string, len(tb.servers))
		for i, s := range tb.servers {
			names[i] = s.as
			if s.as != s.name {
				names[i] += " (" + s.name + " " + s.where() + ")"
			}
		}
		fmt.Fprintf(stdout, "  toolbox %s: %s\n", tb.name, strings.Join(names, ", "))
	}

	var hostNames []string
	seen := map[string]bool{}
	for _, s := range found {
		if !seen[s.name] {
			seen[s.name] = true
			hostNames = append(hostNames, s.name)
		}
	}
	fmt.Fprintf(stdout, `
Next:
  1. Replace each "TODO" description in %s with what its tools are for:
     the model reads the descriptions to choose a toolbox. Then check the file:
       %s validate --config %s
  2. Remove the imported servers (%s) from the host configuration
       %s
     (or the host starts them itself as well), and add the workbench in their place:

`, outAbs, shellQuote(exe), shellQuote(outAbs), strings.Join(hostNames, ", "), srcAbs)
	fmt.Fprintf(stdout, "{\n  \"mcpServers\": {\n    \"workbench\": {\n      \"command\": %s,\n      \"args\": [\"--config\", %s]\n    }\n  }\n}\n",
		quoteJSON(exe), quoteJSON(outAbs))
	fmt.Fprintf(stdout, "\n     For Claude Code, run instead:\n       claude mcp add workbench -- %s --config %s\n",
		shellQuote(exe), shellQuote(outAbs))
}

// shellQuote quotes s for a POSIX shell when it needs it, so that the
// printed command lines can be pasted as they are.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
