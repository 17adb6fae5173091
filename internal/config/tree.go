package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"
)

// A node is one JSON value decoded with object keys kept in file order,
// which encoding/json's maps would lose. Exactly one of the fields that
// match kind is meaningful.
type node struct {
	kind kind
	str  string // kString
	// written is a kString made by expanding ${VAR} references: the
	// string as the file writes it. Messages quote it (see [node.shown]),
	// never str, which may hold a secret.
	written string
	num     json.Number // kNumber
	b       bool        // kBool
	keys    []string    // kObject, in file order
	vals    []*node     // kObject (parallel to keys), kArray

	// start and end are the value's byte offsets in the document it was
	// decoded from; 0, 0 for values made by expansion.
	start, end int64
}

type kind int

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

func (k kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// get returns the value of key in an object node, or nil.
func (n *node) get(key string) *node {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// decodeTree reads exactly one JSON value from data. Duplicate keys in an
// object are reported (the last one would silently win otherwise).
func decodeTree(data []byte) (*node, []Problem, error) {
	// Editors on Windows (Notepad among them) may start a UTF-8 file with
	// a byte order mark, which is not JSON.
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	if at := frame.TooDeepAt(data); at >= 0 {
		line, col := lineCol(data, int64(at))
		return nil, nil, &SyntaxError{Line: line, Column: col, Msg: fmt.Sprintf("objects and arrays nested deeper than %d levels", frame.MaxDepth)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var dups []Problem
	root, err := decodeValue(dec, "", &dups)
	if err != nil {
		return nil, nil, syntaxError(data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		line, col := lineCol(data, dec.InputOffset())
		return nil, nil, &SyntaxError{Line: line, Column: col, Msg: "unexpected data after the top-level value"}
	}
	return root, dups, nil
}

func decodeValue(dec *json.Decoder, path string, dups *[]Problem) (*node, error) {
	start := dec.InputOffset() // before the separator and spaces that precede the value
	n, err := decodeToken(dec, path, dups)
	if err != nil {
		return nil, err
	}
	n.start, n.end = start, dec.InputOffset()
	return n, nil
}

func decodeToken(dec *json.Decoder, path string, dups *[]Problem) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: kObject}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string) // the decoder guarantees a string key here
				child := JoinPath(path, key)
				v, err := decodeValue(dec, child, dups)
				if err != nil {
					return nil, err
				}
				if seen[key] {
					*dups = append(*dups, Problem{Path: child, Msg: "duplicate key (each name may appear once)"})
					continue
				}
				seen[key] = true
				n.keys = append(n.keys, key)
				n.vals = append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			return n, nil
		case '[':
			n := &node{kind: kArray}
			for dec.More() {
				v, err := decodeValue(dec, indexPath(path, len(n.vals)), dups)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return n, nil
		}
		return nil, fmt.Errorf("unexpected %q", t)
	case string:
		return &node{kind: kString, str: t}, nil
	case json.Number:
		return &node{kind: kNumber, num: t}, nil
	case bool:
		return &node{kind: kBool, b: t}, nil
	case nil:
		return &node{kind: kNull}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// SyntaxError is a document that is not JSON, located by line and column.
type SyntaxError struct {
	Line, Column int    // from 1, as editors count
	Msg          string // what is wrong, without the place
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: invalid JSON: %s", e.Line, e.Column, e.Msg)
}

// ErrEmpty is the error for a document that holds nothing but spaces.
var ErrEmpty = errors.New("the file is empty")

// syntaxError turns a decoding error into one that names the line and column.
func syntaxError(data []byte, dec *json.Decoder, err error) error {
	off := dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		if len(bytes.TrimSpace(data)) == 0 {
			return ErrEmpty
		}
		off = int64(len(data))
		err = errors.New("unexpected end of file (a bracket or quote is not closed)")
	}
	line, col := lineCol(data, off)
	return &SyntaxError{Line: line, Column: col, Msg: err.Error()}
}

// lineCol turns the offset of a byte into its line and column, both from
// 1, as editors count them.
func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// JoinPath appends object keys to a JSON path in the dotted form used in
// every message: toolboxes.dev.mcpServers.remote.headers.Authorization. Keys
// that would be ambiguous in that form are quoted: toolboxes["my.box"].
func JoinPath(path string, keys ...string) string {
	for _, key := range keys {
		switch {
		case !isPlainKey(key):
			path += "[" + frame.Quote(key) + "]"
		case path == "":
			path = key
		default:
			path += "." + key
		}
	}
	return path
}

func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

func isPlainKey(key string) bool {
	if key == "" {
		return false
	}
	return !strings.ContainsAny(key, ".[]\"' \t\n\\")
}
