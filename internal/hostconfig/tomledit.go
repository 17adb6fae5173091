package hostconfig

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// decodeTOML decodes a whole TOML document.
func decodeTOML(data []byte) (map[string]any, toml.MetaData, error) {
	if err := CheckTOMLDepth(data); err != nil {
		return nil, toml.MetaData{}, err
	}
	var m map[string]any
	md, err := toml.Decode(string(data), &m)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, md, fmt.Errorf("%w: line %d: invalid TOML: %s", ErrUnparsable, pe.Position.Line, pe.Message)
		}
		return nil, md, fmt.Errorf("%w: invalid TOML: %v", ErrUnparsable, err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, md, nil
}

// tomlLine is one line of a TOML text; header is the key path of a table
// header ([a.b] or [[a.b]]) on it, nil on other lines.
type tomlLine struct {
	start, end int // offsets, end after the newline
	header     []string
}

// tomlLines splits a TOML text (known to parse) into lines, telling table
// headers from lines that only look like them inside multi-line strings.
func tomlLines(data []byte) []tomlLine {
	var lines []tomlLine
	var inMulti string // `"""` or `'''` while inside a multi-line string
	for start := 0; start < len(data); {
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += start + 1
		}
		text := string(data[start:end])
		if start == 0 {
			text = strings.TrimPrefix(text, "\ufeff") // a byte order mark
		}
		l := tomlLine{start: start, end: end}
		if inMulti == "" {
			if t := strings.TrimSpace(text); strings.HasPrefix(t, "[") {
				l.header = headerKeys(t)
			}
		}
		inMulti = multiState(text, inMulti)
		lines = append(lines, l)
		start = end
	}
	return lines
}

// multiState returns whether a multi-line string is open after line,
// given the one open before it.
func multiState(line, open string) string {
	for i := 0; i < len(line); i++ {
		if open != "" {
			if open == `"""` && line[i] == '\\' {
				i++
				continue
			}
			if strings.HasPrefix(line[i:], open) {
				i += 2
				open = ""
			}
			continue
		}
		switch {
		case line[i] == '#':
			return ""
		case strings.HasPrefix(line[i:], `"""`), strings.HasPrefix(line[i:], `'''`):
			open = line[i : i+3]
			i += 2
		case line[i] == '"':
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' {
					i++
				}
			}
		case line[i] == '\'':
			for i++; i < len(line) && line[i] != '\''; i++ {
			}
		}
	}
	return open
}

// headerKeys returns the keys of a table header line ("[a.\"b c\"] #x").
func headerKeys(t string) []string {
	t = strings.TrimLeft(t, "[")
	var keys []string
	var cur strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for ; j < len(t) && t[j] != c; j++ {
				if c == '"' && t[j] == '\\' {
					j++
				}
			}
			if c == '"' {
				var s string
				if _, err := toml.Decode("k = "+t[i:min(j+1, len(t))], &struct {
					K *string `toml:"k"`
				}{K: &s}); err == nil {
					cur.WriteString(s)
				}
			} else {
				cur.WriteString(t[i+1 : min(j, len(t))])
			}
			i = j
		case c == '.':
			keys = append(keys, cur.String())
			cur.Reset()
		case c == ']':
			return append(keys, cur.String())
		case c == ' ' || c == '\t':
		default:
			cur.WriteByte(c)
		}
	}
	return append(keys, cur.String())
}

func hasPrefix(keys, prefix []string) bool {
	return len(keys) >= len(prefix) && reflect.DeepEqual(keys[:len(prefix)], prefix)
}

// SetTOMLTable returns data with the table at path (["mcp_servers",
// "workbench"]) set to entry, or data itself and false when it already
// holds entry. The table is edited as text: every other line of the file,
// comments included, stays byte for byte. A table that is there keeps
// what the user added (its sub-tables such as [mcp_servers.workbench.env],
// a tool_timeout_sec, comments): only install's own keys are written
// again, each on its lines, and the entry's others only where the table
// lacks them ([Entry.updates]), after its last key. A new table goes at
// the end.
func SetTOMLTable(data []byte, path []string, entry Entry) ([]byte, bool, error) {
	before, _, err := decodeTOML(data)
	if err != nil {
		return nil, false, err
	}
	have, there := lookupTOML(before, path)
	want := tomlPlain(entry)
	haveTable, isTable := have.(map[string]any)
	var set Entry
	if isTable {
		if set = entry.updates(haveTable, want); len(set) == 0 {
			return data, false, nil
		}
	}
	bom := bytes.HasPrefix(data, []byte("\xef\xbb\xbf"))
	text := crlf(data, entry.TOMLTable(path...))
	var out []byte
	lines := tomlLines(data)
	if _, ok := before[path[0]]; ok && !there {
		// [mcp_servers.workbench] may only be added to a table that
		// headers make: TOML forbids extending an inline table
		// (mcp_servers = { … }) or dotted keys from a header, and Codex
		// refuses such a file, though some readers take it.
		headed := false
		for _, l := range lines {
			if l.header != nil && l.header[0] == path[0] {
				headed = true
			}
		}
		if !headed {
			return nil, false, fmt.Errorf("%s is written as an inline table or dotted keys, which a [%s] table cannot be added to: edit it by hand", path[0], strings.Join(path, "."))
		}
	}
	if !there {
		out = append(out, data...)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, crlf(data, "\n")...)
		}
		if len(bytes.TrimSpace(bytes.TrimPrefix(out, []byte("\xef\xbb\xbf")))) > 0 {
			out = append(out, crlf(data, "\n")...)
		} else if bom {
			out = out[:3]
		}
		out = append(out, text...)
	} else {
		first := -1
		for i, l := range lines {
			if l.header != nil && reflect.DeepEqual(l.header, path) {
				first = i
				break
			}
		}
		if first < 0 || !isTable {
			return nil, false, fmt.Errorf("%s is not written as a [%s] table (a dotted key or an inline table): edit it by hand, or remove it and install again", strings.Join(path, "."), strings.Join(path, "."))
		}
		if out, err = setTOMLKeys(data, lines, first, set); err != nil {
			return nil, false, err
		}
	}
	if there {
		// Only the keys set may have changed.
		expect := deepCopy(any(before)).(map[string]any)
		t, _ := lookupTOML(expect, path)
		for _, f := range set {
			t.(map[string]any)[f.Key] = want[f.Key]
		}
		after, _, err := decodeTOML(out)
		if err != nil || !reflect.DeepEqual(any(after), any(expect)) {
			return nil, false, fmt.Errorf("editing the [%s] table would change more than the workbench's keys: nothing written", strings.Join(path, "."))
		}
		return out, true, nil
	}
	after, _, err := decodeTOML(out)
	if err != nil {
		return nil, false, fmt.Errorf("adding the [%s] table would break the file (%v): nothing written", strings.Join(path, "."), err)
	}
	got, _ := lookupTOML(after, path)
	if !reflect.DeepEqual(got, tomlPlain(entry)) {
		return nil, false, fmt.Errorf("the file defines %s in a way a [%s] table cannot be added to: nothing written", path[0], strings.Join(path, "."))
	}
	if !reflect.DeepEqual(without(after, path[:len(path)-1], path[len(path)-1]), without(before, path[:len(path)-1], path[len(path)-1])) {
		return nil, false, errors.New("editing the file would change more than the workbench's entry: nothing written")
	}
	return out, true, nil
}

// setTOMLKeys returns data with the keys of set written into the table
// whose header is lines[first]: a key there is replaced, its lines whole
// (a value may span several); a key not there goes after the table's
// last key, before the comments and blank lines that end it.
func setTOMLKeys(data []byte, lines []tomlLine, first int, set Entry) ([]byte, error) {
	end := first + 1
	for end < len(lines) && lines[end].header == nil {
		end++
	}
	type span struct {
		key        string
		start, end int // offsets
	}
	var keys []span
	for i := first + 1; i < end; {
		// A key's lines are the fewest from i that decode as one key.
		j := i
		var kv map[string]any
		for ; j < end; j++ {
			kv = nil
			if _, err := toml.Decode(string(data[lines[i].start:lines[j].end]), &kv); err == nil {
				break
			}
		}
		if j == end || len(kv) != 1 {
			i++ // a comment, a blank line
			continue
		}
		for k := range kv {
			keys = append(keys, span{k, lines[i].start, lines[j].end})
		}
		i = j + 1
	}
	insertAt := lines[first].end
	if len(keys) > 0 {
		insertAt = keys[len(keys)-1].end
	}
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	for _, f := range set {
		line := crlf(data, tomlKey(f.Key)+" = "+tomlValue(f.Value)+"\n")
		found := false
		for _, k := range keys {
			if k.key == f.Key {
				edits = append(edits, edit{k.start, k.end, line})
				found = true
				break
			}
		}
		if !found {
			edits = append(edits, edit{insertAt, insertAt, line})
		}
	}
	sort.SliceStable(edits, func(a, b int) bool { return edits[a].from < edits[b].from })
	var out []byte
	at := 0
	for _, e := range edits {
		out = append(out, data[at:e.from]...)
		if e.from > 0 && e.from == len(data) && data[e.from-1] != '\n' {
			out = append(out, crlf(data, "\n")...)
		}
		out = append(out, e.text...)
		at = e.to
	}
	return append(out, data[at:]...), nil
}

func lookupTOML(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// tomlPlain is entry as the TOML decoder gives it back.
func tomlPlain(e Entry) map[string]any {
	m := make(map[string]any, len(e))
	for _, f := range e {
		switch v := f.Value.(type) {
		case []string:
			out := make([]any, len(v))
			for i, s := range v {
				out[i] = s
			}
			m[f.Key] = out
		case Entry:
			m[f.Key] = tomlPlain(v)
		default:
			m[f.Key] = v
		}
	}
	return m
}

// crlf is text with the line endings of data: a file written on Windows
// keeps its CRLF lines.
func crlf(data []byte, text string) string {
	if bytes.Contains(data, []byte("\r\n")) {
		return strings.ReplaceAll(text, "\n", "\r\n")
	}
	return text
}
