package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
)

// blankJSONC returns data with the comments and trailing commas that
// VS Code, Zed, OpenCode and Gemini CLI accept in their JSON files (JSONC)
// replaced by spaces, so that a strict JSON reader takes it and every
// offset still points at the same place in data. Newlines in block
// comments are kept, so lines and columns agree too.
func blankJSONC(data []byte) []byte {
	out := bytes.Clone(data)
	outsideStrings(out, func(i int) int {
		switch {
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			stop := len(out)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if out[i] != '\n' && out[i] != '\r' {
					out[i] = ' '
				}
			}
			i--
		}
		return i
	})
	// Trailing commas, once comments are gone: a comma whose next
	// non-space byte closes.
	outsideStrings(out, func(i int) int {
		if out[i] == ',' {
			j := i + 1
			for j < len(out) && isSpace(out[j]) {
				j++
			}
			if j < len(out) && (out[j] == '}' || out[j] == ']') {
				out[i] = ' '
			}
		}
		return i
	})
	return out
}

// outsideStrings calls at with each offset of b that is not inside a JSON
// string (nor its opening quote); at returns the offset it went on to.
func outsideStrings(b []byte, at func(i int) int) {
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		default:
			i = at(i)
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// jsonMember is one member of an object in a JSON text: offsets of its
// key's opening quote and of its value.
type jsonMember struct {
	key                        string
	keyStart, valStart, valEnd int
}

// jsonObject is an object in a JSON text: the offsets of its braces and
// its members.
type jsonObject struct {
	open, close int
	members     []jsonMember
}

// scanner walks a JSON text known to be valid (blanked of comments).
type scanner struct{ b []byte }

func (s scanner) skipSpace(i int) int {
	for i < len(s.b) && isSpace(s.b[i]) {
		i++
	}
	return i
}

// value returns the end of the value starting at i (after spaces).
func (s scanner) value(i int) int {
	i = s.skipSpace(i)
	switch s.b[i] {
	case '"':
		return s.str(i)
	case '{', '[':
		depth := 0
		for ; i < len(s.b); i++ {
			switch s.b[i] {
			case '"':
				i = s.str(i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(s.b)
	default:
		for i < len(s.b) && !isSpace(s.b[i]) && s.b[i] != ',' && s.b[i] != '}' && s.b[i] != ']' {
			i++
		}
		return i
	}
}

// str returns the end of the string whose opening quote is at i.
func (s scanner) str(i int) int {
	for i++; i < len(s.b); i++ {
		switch s.b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(s.b)
}

// object reads the object whose opening brace is at i.
func (s scanner) object(i int) jsonObject {
	o := jsonObject{open: i}
	i = s.skipSpace(i + 1)
	for i < len(s.b) && s.b[i] != '}' {
		if s.b[i] == ',' {
			i = s.skipSpace(i + 1)
			continue
		}
		m := jsonMember{keyStart: i}
		end := s.str(i)
		_ = json.Unmarshal(s.b[i:end], &m.key)
		i = s.skipSpace(end)
		i = s.skipSpace(i + 1) // the colon
		m.valStart = i
		m.valEnd = s.value(i)
		o.members = append(o.members, m)
		i = s.skipSpace(m.valEnd)
	}
	o.close = i
	return o
}

func (o jsonObject) get(key string) (jsonMember, bool) {
	var found jsonMember
	ok := false
	for _, m := range o.members {
		if m.key == key {
			found, ok = m, true // the last one wins in JavaScript hosts
		}
	}
	return found, ok
}

// lineIndent returns the spaces and tabs that start the line holding
// offset i.
func lineIndent(b []byte, i int) string {
	start := bytes.LastIndexByte(b[:i], '\n') + 1
	end := start
	for end < len(b) && (b[end] == ' ' || b[end] == '\t') {
		end++
	}
	return string(b[start:end])
}

// indentUnit guesses the file's indentation step from the root object's
// first member: two spaces when it cannot tell.
func indentUnit(b []byte, root jsonObject) string {
	if len(root.members) > 0 {
		k := root.members[0].keyStart
		if bytes.IndexByte(b[root.open:k], '\n') >= 0 {
			ind, outer := lineIndent(b, k), lineIndent(b, root.open)
			if unit := strings.TrimPrefix(ind, outer); unit != "" && len(ind) > len(outer) {
				return unit
			}
		}
	}
	return "  "
}

// ErrUnparsable is a host file that install cannot read: it is left as it
// is.
var ErrUnparsable = errors.New("cannot be read")

// SetJSONMember returns data with the member name of the object at
// container (keys from the root) set to entry, or data itself and false
// when it already holds entry. An entry that is there keeps what the user
// added: only install's own keys (type, command, args) are written again,
// and the entry's others only where it lacks them ([Entry.updates]).
// Everything else in data stays byte for byte: comments, order,
// formatting. Missing objects on the way are made. An empty data is a new
// file.
func SetJSONMember(data []byte, container []string, name string, entry Entry) ([]byte, bool, error) {
	never := func(any) bool { return false }
	if len(bytes.TrimSpace(data)) == 0 {
		return setJSONMember(data, container, name, entry, never)
	}
	doc, err := decodeJSON(blankJSONC(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	if err != nil {
		return nil, false, err
	}
	path := append(append([]string{}, container...), name)
	have, ok := valueAt(doc, path).(map[string]any)
	if !ok {
		return setJSONMember(data, container, name, entry, never)
	}
	set := entry.updates(have, entry.plain())
	if len(set) == 0 {
		return data, false, nil
	}
	out := data
	for _, f := range set {
		if out, _, err = setJSONMember(out, path, f.Key, f.Value, never); err != nil {
			return nil, false, err
		}
	}
	return out, true, nil
}

// setJSONMember is [SetJSONMember] of any value writeJSON writes; present
// tells, from the member's decoded value (nil if none), that it need not
// change.
func setJSONMember(data []byte, container []string, name string, value any, present func(cur any) bool) ([]byte, bool, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		var b strings.Builder
		b.WriteString("{\n")
		nested := Entry{{Key: name, Value: value}}
		for i := len(container) - 1; i >= 0; i-- {
			nested = Entry{{Key: container[i], Value: nested}}
		}
		b.WriteString("  " + strings.TrimSuffix(strings.TrimPrefix(nested.JSON("", "  "), "{\n  "), "\n}"))
		b.WriteString("\n}\n")
		return []byte(b.String()), true, nil
	}
	bom := bytes.HasPrefix(data, []byte("\xef\xbb\xbf"))
	body := data
	if bom {
		body = data[3:]
	}
	blank := blankJSONC(body)
	before, err := decodeJSON(blank)
	if err != nil {
		return nil, false, err
	}
	root, ok := before.(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("%w: it holds a JSON %s, not an object", ErrUnparsable, kindOf(before))
	}
	// Already there?
	if present(valueAt(root, append(append([]string{}, container...), name))) {
		return data, false, nil
	}

	s := scanner{b: blank}
	obj := s.object(s.skipSpace(0))
	unit := indentUnit(blank, obj)
	path := "the file"
	var edit func() (int, int, string)
	for depth := 0; ; depth++ {
		if depth == len(container) {
			if m, ok := obj.get(name); ok {
				ind := lineIndent(blank, m.keyStart)
				edit = func() (int, int, string) { return m.valStart, m.valEnd, jsonText(value, ind, unit) }
			} else {
				edit = insertMember(body, blank, obj, unit, name, value)
			}
			break
		}
		m, ok := obj.get(container[depth])
		if !ok {
			rest := Entry{{Key: name, Value: value}}
			for i := len(container) - 1; i > depth; i-- {
				rest = Entry{{Key: container[i], Value: rest}}
			}
			edit = insertMember(body, blank, obj, unit, container[depth], rest)
			break
		}
		path = config.JoinPath(strings.Join(container[:depth], "."), container[depth])
		if blank[m.valStart] != '{' {
			return nil, false, fmt.Errorf("%w: %s is not an object", ErrUnparsable, path)
		}
		obj = s.object(m.valStart)
	}
	from, to, text := edit()
	text = crlf(body, text)
	out := make([]byte, 0, len(data)+len(text))
	if bom {
		out = append(out, data[:3]...)
	}
	out = append(out, body[:from]...)
	out = append(out, text...)
	out = append(out, body[to:]...)

	// The edit must have changed our entry and nothing else.
	outBody := out
	if bom {
		outBody = out[3:]
	}
	after, err := decodeJSON(blankJSONC(outBody))
	if err != nil {
		return nil, false, fmt.Errorf("editing the file would break it (%v): nothing written", err)
	}
	if !reflect.DeepEqual(without(after, container, name), without(before, container, name)) {
		return nil, false, errors.New("editing the file would change more than the workbench's entry: nothing written")
	}
	return out, true, nil
}

// AddJSONArrayItem returns data with item appended to the array at path
// (keys from the root, the last one the array's), or data itself and
// false when the array already has an element for which has is true. A
// missing array, and objects on the way, are made. Everything else in data
// stays byte for byte, the array's own elements too.
func AddJSONArrayItem(data []byte, path []string, item Entry, has func(elem any) bool) ([]byte, bool, error) {
	container, name := path[:len(path)-1], path[len(path)-1]
	missing := func(any) bool { return false }
	if len(bytes.TrimSpace(data)) == 0 {
		return setJSONMember(data, container, name, []Entry{item}, missing)
	}
	body := bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	blank := blankJSONC(body)
	before, err := decodeJSON(blank)
	if err != nil {
		return nil, false, err
	}
	cur := valueAt(before, path)
	if cur == nil {
		return setJSONMember(data, container, name, []Entry{item}, missing)
	}
	arr, ok := cur.([]any)
	if !ok {
		return nil, false, fmt.Errorf("%w: %s is a JSON %s, not an array", ErrUnparsable, strings.Join(path, "."), kindOf(cur))
	}
	for _, e := range arr {
		if has(e) {
			return data, false, nil
		}
	}

	s := scanner{b: blank}
	root := s.object(s.skipSpace(0))
	unit := indentUnit(blank, root)
	obj := root
	var m jsonMember
	for i, k := range path {
		m, _ = obj.get(k)
		if i < len(path)-1 {
			obj = s.object(m.valStart)
		}
	}
	type span struct{ start, end int }
	var elems []span
	for i := s.skipSpace(m.valStart + 1); i < len(blank) && blank[i] != ']'; {
		if blank[i] == ',' {
			i = s.skipSpace(i + 1)
			continue
		}
		end := s.value(i)
		elems = append(elems, span{i, end})
		i = s.skipSpace(end)
	}
	var from, to int
	var text string
	if len(elems) == 0 {
		outer := lineIndent(blank, m.keyStart)
		ind := outer + unit
		from, to = afterComments(body, m.valStart+1, m.valEnd-1), m.valEnd-1
		text = "\n" + ind + item.JSON(ind, unit) + "\n" + outer
	} else {
		last := elems[len(elems)-1]
		ind := lineIndent(blank, last.start)
		if !strings.HasSuffix(strings.TrimRight(string(blank[:last.start]), " \t"), "\n") {
			ind = lineIndent(blank, m.keyStart) + unit
		}
		from, to = last.end, last.end
		text = ",\n" + ind + item.JSON(ind, unit)
	}
	text = crlf(body, text)
	out := append([]byte{}, data[:len(data)-len(body)]...)
	out = append(out, body[:from]...)
	out = append(out, text...)
	out = append(out, body[to:]...)

	// The edit must have added item to the array and changed nothing else.
	after, err := decodeJSON(blankJSONC(out[len(data)-len(body):]))
	if err != nil {
		return nil, false, fmt.Errorf("editing the file would break it (%v): nothing written", err)
	}
	got, _ := valueAt(after, path).([]any)
	if len(got) != len(arr)+1 || !reflect.DeepEqual(got[:len(arr)], arr) || !reflect.DeepEqual(got[len(arr)], item.plain()) ||
		!reflect.DeepEqual(without(after, container, name), without(before, container, name)) {
		return nil, false, errors.New("editing the file would change more than the workbench's entry: nothing written")
	}
	return out, true, nil
}

// valueAt returns the value at path (keys from the root) in v, a decoded
// document, or nil.
func valueAt(v any, path []string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// jsonText is v as writeJSON writes it.
func jsonText(v any, indent, unit string) string {
	var b strings.Builder
	writeJSON(&b, v, indent, unit)
	return b.String()
}

// insertMember returns the edit that adds name: v as the last member of
// obj, indented as its members are. body is the text, b the same blanked
// of comments.
func insertMember(body, b []byte, obj jsonObject, unit, name string, v any) func() (int, int, string) {
	return func() (int, int, string) {
		if len(obj.members) == 0 {
			outer := lineIndent(b, obj.open)
			ind := outer + unit
			from := afterComments(body, obj.open+1, obj.close)
			return from, obj.close, "\n" + ind + memberText(name, v, ind, unit) + "\n" + outer
		}
		last := obj.members[len(obj.members)-1]
		ind := lineIndent(b, last.keyStart)
		if !strings.HasSuffix(strings.TrimRight(string(b[:last.keyStart]), " \t"), "\n") {
			// Members on one line: the new one goes on its own line,
			// one step in from the object's line.
			ind = lineIndent(b, obj.open) + unit
		}
		return last.valEnd, last.valEnd, ",\n" + ind + memberText(name, v, ind, unit)
	}
}

// afterComments returns the offset in body after the last comment
// between from and to, an empty object's or array's inside, or from if
// there is none: what the user commented out there stays.
func afterComments(body []byte, from, to int) int {
	return from + len(bytes.TrimRight(body[from:to], " \t\r\n"))
}

func memberText(name string, v any, ind, unit string) string {
	var b strings.Builder
	b.WriteString(frame.Quote(name) + ": ")
	writeJSON(&b, v, ind, unit)
	return b.String()
}

// without returns v, a decoded document, with the member name of the
// object at container taken out, so that two documents can be compared
// but for our entry.
func without(v any, container []string, name string) any {
	root, _ := deepCopy(v).(map[string]any)
	m := root
	for _, k := range container {
		next, ok := m[k].(map[string]any)
		if !ok {
			return root
		}
		m = next
	}
	delete(m, name)
	// An object made on the way counts as not there.
	for i := len(container) - 1; i >= 0; i-- {
		m := root
		for _, k := range container[:i] {
			m, _ = m[k].(map[string]any)
		}
		if c, ok := m[container[i]].(map[string]any); ok && len(c) == 0 {
			delete(m, container[i])
		} else {
			break
		}
	}
	return root
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// decodeJSON decodes a whole JSON text (blanked of comments).
func decodeJSON(b []byte) (any, error) {
	if _, err := config.ReadDocument(b); err != nil {
		var se *config.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w: line %d, column %d: invalid JSON: %s", ErrUnparsable, se.Line, se.Column, se.Msg)
		}
		return nil, fmt.Errorf("%w: %v", ErrUnparsable, err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnparsable, err)
	}
	return v, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "object"
}
