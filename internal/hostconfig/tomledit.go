package hostconfig

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// decodeTOML decodes a whole TOML document.
func decodeTOML(data []byte) (map[string]any, toml.MetaData, error) {
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
// holds entry (every key of entry with its value). The table is edited as
// text: every other line of the file, comments included, stays byte for
// byte. A table that is there is replaced whole, with its sub-tables
// ([mcp_servers.workbench.env]) and without the comments that follow it
// (they belong to what comes next); a new one goes at the end.
func SetTOMLTable(data []byte, path []string, entry Entry) ([]byte, bool, error) {
	before, _, err := decodeTOML(data)
	if err != nil {
		return nil, false, err
	}
	have, there := lookupTOML(before, path)
	if m, ok := have.(map[string]any); ok && holds(m, tomlPlain(entry)) {
		return data, false, nil
	}
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
		if len(bytes.TrimSpace(out)) > 0 {
			out = append(out, crlf(data, "\n")...)
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
		if first < 0 {
			return nil, false, fmt.Errorf("%s is not written as a [%s] table (a dotted key or an inline table): edit it by hand, or remove it and install again", strings.Join(path, "."), strings.Join(path, "."))
		}
		last := first + 1
		for last < len(lines) && (lines[last].header == nil || hasPrefix(lines[last].header, path)) {
			last++
		}
		// Comments and blank lines at the end belong to what follows.
		for last-1 > first {
			t := strings.TrimSpace(string(data[lines[last-1].start:lines[last-1].end]))
			if t != "" && !strings.HasPrefix(t, "#") {
				break
			}
			last--
		}
		from, to := lines[first].start, lines[last-1].end
		out = append(out, data[:from]...)
		out = append(out, text...)
		out = append(out, data[to:]...)
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
