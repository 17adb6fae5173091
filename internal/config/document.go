package config

import (
	"bytes"
	"encoding/json"
)

// Document is a JSON document read the way the configuration is: object
// keys in file order, duplicate keys found, syntax errors located by line
// and column. mcp-workbench import reads hosts' files with it.
type Document struct {
	data []byte
	root *node
	// Duplicates are the keys that appear twice in an object, each at its
	// JSON path; the first of each is kept.
	Duplicates []Problem
}

// ReadDocument reads one JSON document. Its error is a [*SyntaxError], or
// [ErrEmpty].
func ReadDocument(data []byte) (*Document, error) {
	root, dups, err := decodeTree(data)
	if err != nil {
		return nil, err
	}
	return &Document{data: data, root: root, Duplicates: dups}, nil
}

// Root returns the document's top-level value.
func (d *Document) Root() Value { return Value{n: d.root, data: d.data} }

// Value is one value of a [Document], with its JSON path in the document.
// The zero Value (what [Value.Get] returns for a missing key) is no value:
// its Kind is "", it has no members and no text.
type Value struct {
	n    *node
	data []byte
	Path string
}

// Member is one key of an object with its value.
type Member struct {
	Key   string
	Value Value
}

// Kind names the kind of the value, for messages: object, array, string,
// number, boolean or null.
func (v Value) Kind() string {
	if v.n == nil {
		return ""
	}
	return v.n.kind.String()
}

// Members returns the members of an object in file order, or nil.
func (v Value) Members() []Member {
	if v.n == nil || v.n.kind != kObject {
		return nil
	}
	out := make([]Member, len(v.n.keys))
	for i, k := range v.n.keys {
		out[i] = Member{Key: k, Value: Value{n: v.n.vals[i], data: v.data, Path: JoinPath(v.Path, k)}}
	}
	return out
}

// Get returns the member key of an object.
func (v Value) Get(key string) (Value, bool) {
	for _, m := range v.Members() {
		if m.Key == key {
			return m.Value, true
		}
	}
	return Value{}, false
}

// Text returns the value of a string.
func (v Value) Text() (string, bool) {
	if v.n == nil {
		return "", false
	}
	return v.n.str, v.n.kind == kString
}

// Raw returns the value's text exactly as the document has it.
func (v Value) Raw() json.RawMessage {
	if v.n == nil {
		return nil
	}
	return json.RawMessage(bytes.TrimLeft(v.data[v.n.start:v.n.end], " \t\r\n:,"))
}

// EachString calls fn with every string under v, object keys included,
// and its JSON path with v's path replaced by path.
func (v Value) EachString(path string, fn func(path, s string)) {
	if v.n == nil {
		return
	}
	var walk func(n *node, p string)
	walk = func(n *node, p string) {
		switch n.kind {
		case kString:
			fn(p, n.str)
		case kArray:
			for i, c := range n.vals {
				walk(c, indexPath(p, i))
			}
		case kObject:
			for i, k := range n.keys {
				fn(JoinPath(p, k), k)
				walk(n.vals[i], JoinPath(p, k))
			}
		}
	}
	walk(v.n, path)
}

// EachStringList returns the strings of an array, leaving out its other
// values; nil for another kind.
func (v Value) EachStringList() []string {
	if v.n == nil || v.n.kind != kArray {
		return nil
	}
	var out []string
	for _, c := range v.n.vals {
		if c.kind == kString {
			out = append(out, c.str)
		}
	}
	return out
}
