package hostconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"
)

// Entry is a host's entry for one server, with its keys in the order they
// are written: a host's file is the user's, and what install adds should
// read as if the user had typed it.
type Entry []Field

// Field is one key of an [Entry]. Value is a string, a []string, a bool,
// an int64, a json.RawMessage (copied as it is) or an Entry.
type Field struct {
	Key   string
	Value any
}

// JSON renders e as a JSON object whose members are indented by indent
// plus unit, its closing brace by indent; string arrays stay on one line.
func (e Entry) JSON(indent, unit string) string {
	var b strings.Builder
	writeJSON(&b, e, indent, unit)
	return b.String()
}

// Compact renders e as JSON on one line, without spaces.
func (e Entry) Compact() string {
	var b strings.Builder
	writeCompact(&b, e)
	return b.String()
}

func writeCompact(b *strings.Builder, v any) {
	switch v := v.(type) {
	case []string:
		writeStrings(b, v, ",")
	case Entry:
		b.WriteByte('{')
		for i, f := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(frame.Quote(f.Key) + ":")
			writeCompact(b, f.Value)
		}
		b.WriteByte('}')
	case json.RawMessage:
		var out bytes.Buffer
		if json.Compact(&out, v) == nil {
			b.Write(out.Bytes())
		} else {
			b.Write(v)
		}
	default:
		writeJSON(b, v, "", "")
	}
}

// writeStrings writes v as a JSON array on one line, its items apart by sep.
func writeStrings(b *strings.Builder, v []string, sep string) {
	b.WriteByte('[')
	for i, s := range v {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(frame.Quote(s))
	}
	b.WriteByte(']')
}

func writeJSON(b *strings.Builder, v any, indent, unit string) {
	switch v := v.(type) {
	case string:
		b.WriteString(frame.Quote(v))
	case bool, int64:
		fmt.Fprint(b, v)
	case json.RawMessage:
		var out bytes.Buffer
		if json.Indent(&out, v, indent, unit) == nil {
			b.Write(out.Bytes())
		} else {
			b.Write(v)
		}
	case []string:
		writeStrings(b, v, ", ")
	case []Entry:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range v {
			b.WriteString(indent + unit)
			writeJSON(b, e, indent+unit, unit)
			if i < len(v)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	case Entry:
		if len(v) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, f := range v {
			b.WriteString(indent + unit + frame.Quote(f.Key) + ": ")
			writeJSON(b, f.Value, indent+unit, unit)
			if i < len(v)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	}
}

// TOMLTable renders e as the TOML table named by path: a header line, then
// one "key = value" line per field, nested entries as inline tables.
func (e Entry) TOMLTable(path ...string) string {
	var b strings.Builder
	keys := make([]string, len(path))
	for i, k := range path {
		keys[i] = tomlKey(k)
	}
	b.WriteString("[" + strings.Join(keys, ".") + "]\n")
	for _, f := range e {
		b.WriteString(tomlKey(f.Key) + " = " + tomlValue(f.Value) + "\n")
	}
	return b.String()
}

func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return TOMLString(v)
	case bool:
		return fmt.Sprint(v)
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = TOMLString(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case Entry:
		parts := make([]string, len(v))
		for i, f := range v {
			parts[i] = tomlKey(f.Key) + " = " + tomlValue(f.Value)
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return `""`
}

// tomlKey is k bare if TOML allows it, else quoted.
func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return TOMLString(k)
		}
	}
	return k
}

// TOMLString is s as a TOML basic string. TOML has no \x escape, so Go's
// quoting does not do.
func TOMLString(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// plain returns e as the values a JSON or TOML decoder gives, to compare
// an entry with what a file holds.
func (e Entry) plain() map[string]any {
	m := make(map[string]any, len(e))
	for _, f := range e {
		m[f.Key] = plainValue(f.Value)
	}
	return m
}

func plainValue(v any) any {
	switch v := v.(type) {
	case []string:
		out := make([]any, len(v))
		for i, s := range v {
			out[i] = s
		}
		return out
	case Entry:
		return v.plain()
	case []Entry:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = e.plain()
		}
		return out
	}
	return v
}

// installOwns are the keys of a host's entry that install owns: written
// again on every run (another --config changes args). The entry's other
// keys (alwaysLoad, tools, enabled, …) are written only where the entry
// lacks them: the value the user gave one is kept, as is every key the
// user added (env, a timeout, autoApprove, …).
var installOwns = map[string]bool{"type": true, "command": true, "args": true}

// updates returns the fields of e to write into the entry a file already
// holds, have: install's own keys whose value differs, and the keys have
// lacks. want is e as the file's decoder gives it back.
func (e Entry) updates(have, want map[string]any) Entry {
	var set Entry
	for _, f := range e {
		v, ok := have[f.Key]
		if !ok || installOwns[f.Key] && !reflect.DeepEqual(v, want[f.Key]) {
			set = append(set, f)
		}
	}
	return set
}
