// Package pins keeps what each downstream server's tools said when the
// user started trusting them, so that a server cannot change what the
// model is told behind the user's back.
//
// A tool's definition is what the model reads of it: every member of its
// object but _meta (which servers fill with per-start values, and which
// the workbench does not forward). It is pinned as its canonical form
// (RFC 8785, JSON Canonicalization Scheme: keys sorted by UTF-16 code
// units, no insignificant space, strings with the fewest escapes) and
// that form's SHA-256; what the workbench forwards is that form's members
// ([Def.JSON]), so that every byte the model reads is pinned and screened.
//
// The store is a folder (by default os.UserConfigDir()/mcp-workbench/pins)
// with one file per server identity (the caller's key: no secret is in
// it). Files are private (0600 in a 0700 folder), written to a temporary
// file, synced and renamed, and changed under a lock file, so that
// several workbench processes may share the folder.
package pins

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Fields are the members of a tool object MCP defines for the model, in
// the order the workbench shows them. A definition is every member of the
// tool object but _meta (see [Canonical]); these come first.
var Fields = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// Meta is the one member a definition leaves out: servers fill it with
// per-start values, and the workbench does not forward it.
const Meta = "_meta"

// maxDepth bounds the nesting of a definition that Canonical reads: the
// workbench's frame reader has already refused anything deeper than
// 10000 levels, and encoding/json's own limit is 10000 too.
const maxDepth = 10000

// Def is one tool's definition in canonical form.
type Def struct {
	Name  string
	Canon []byte // RFC 8785 form of the definition
	Hash  string // hex SHA-256 of Canon
	// Legacy is the hash of the definition as older workbenches pinned
	// it (the six [Fields] only): a pin of that kind matches it (see
	// [Pin.Matches]). Equal to Hash when the tool has no other member.
	Legacy string
	// JSON is the definition as the workbench forwards it to the model:
	// the members of Canon, each byte for byte as there, [Fields] first
	// in their order (name first), then the others as in Canon. Nothing
	// of the tool object outside the definition (_meta) is in it.
	JSON []byte
	// Dups are the duplicate keys of the tool object, as JSON pointers
	// ("/inputSchema/properties/a"): JSON leaves their meaning open, and
	// readers differ on which one counts. The definition keeps the last
	// one of each (as encoding/json does); screening flags them.
	Dups []string
}

// Canonical returns the definition of a tool object as the server sent it:
// every member but _meta (null members left out), in RFC 8785's form.
//
// Numbers: RFC 8785 writes numbers as ECMAScript does. Tool schemas hold
// small integers (minimum, maxLength, …) and sometimes decimals; an
// integer of at most 2^53 in magnitude is written as its digits, any other
// number as strconv's shortest 'g'-form of its float64 value with
// ECMAScript's exponent rules. That matches ECMAScript for every number a
// float64 holds exactly; very large or very long numbers are first
// rounded to float64, as every JSON parser of ECMAScript would.
func Canonical(tool json.RawMessage) (Def, error) {
	d := reader{dec: json.NewDecoder(bytes.NewReader(tool))}
	d.dec.UseNumber()
	v, err := d.value(0)
	if err != nil {
		return Def{}, fmt.Errorf("not a JSON object: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return Def{}, errors.New("not a JSON object")
	}
	name, _ := obj["name"].(string)
	if name == "" {
		return Def{}, errors.New(`the tool has no "name"`)
	}
	// Each member is encoded once; the canonical form, the forwarded one
	// and the legacy one are the same members in other orders or subsets.
	type member struct {
		key   string
		field bool // one of Fields
		enc   []byte
	}
	keys := make([]string, 0, len(obj))
	for k, v := range obj {
		if k != Meta && v != nil {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareUTF16)
	members := make([]member, 0, len(keys))
	var buf bytes.Buffer
	extra := false
	for _, k := range keys {
		buf.Reset()
		encodeString(&buf, k)
		buf.WriteByte(':')
		if err := encode(&buf, obj[k], 1); err != nil {
			return Def{}, err
		}
		f := slices.Contains(Fields, k)
		extra = extra || !f
		members = append(members, member{k, f, bytes.Clone(buf.Bytes())})
	}
	join := func(keep func(member) bool, out []byte) []byte {
		out = append(out, '{')
		for _, m := range members {
			if keep(m) {
				if len(out) > 1 {
					out = append(out, ',')
				}
				out = append(out, m.enc...)
			}
		}
		return append(out, '}')
	}
	all := func(member) bool { return true }
	canon := join(all, nil)
	def := Def{Name: name, Canon: canon, Hash: hashOf(canon), Dups: d.dups}
	def.Legacy = def.Hash
	if extra {
		def.Legacy = hashOf(join(func(m member) bool { return m.field }, nil))
	}
	// Forwarded: Fields in their order, then the rest.
	js := make([]byte, 0, len(canon))
	js = append(js, '{')
	for _, f := range Fields {
		for _, m := range members {
			if m.key == f {
				if len(js) > 1 {
					js = append(js, ',')
				}
				js = append(js, m.enc...)
			}
		}
	}
	for _, m := range members {
		if !m.field {
			if len(js) > 1 {
				js = append(js, ',')
			}
			js = append(js, m.enc...)
		}
	}
	def.JSON = append(js, '}')
	return def, nil
}

// compareUTF16 orders keys as RFC 8785 3.2.3 does: by UTF-16 code units.
func compareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// reader decodes a tool object as encoding/json would into any (numbers
// as json.Number, the last of duplicate keys kept), noting the duplicates.
type reader struct {
	dec  *json.Decoder
	dups []string
	path []string // the keys and indexes down to the value being read
}

// pointer is the JSON pointer of the value being read, and then of k.
func (r *reader) pointer(k string) string {
	var b strings.Builder
	for _, p := range append(r.path, k) {
		b.WriteString("/" + pointerToken(p))
	}
	return b.String()
}

func (r *reader) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("the definition is nested too deeply")
	}
	tok, err := r.dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	switch d {
	case '{':
		m := map[string]any{}
		for r.dec.More() {
			kt, err := r.dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			r.path = append(r.path, k)
			v, err := r.value(depth + 1)
			r.path = r.path[:len(r.path)-1]
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; dup {
				if p := r.pointer(k); !slices.Contains(r.dups, p) {
					r.dups = append(r.dups, p)
				}
			}
			m[k] = v
		}
		_, err := r.dec.Token() // '}'
		return m, err
	case '[':
		a := []any{}
		for i := 0; r.dec.More(); i++ {
			r.path = append(r.path, strconv.Itoa(i))
			v, err := r.value(depth + 1)
			r.path = r.path[:len(r.path)-1]
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := r.dec.Token() // ']'
		return a, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// pointerToken escapes a key for a JSON pointer (RFC 6901).
func pointerToken(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

// hashOf is the hash of a canonical form.
func hashOf(canon []byte) string {
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

func encode(buf *bytes.Buffer, v any, depth int) error {
	if depth > maxDepth {
		return errors.New("the definition is nested too deeply")
	}
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case string:
		encodeString(buf, v)
	case json.Number:
		s, err := number(v)
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encode(buf, e, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			encodeString(buf, k)
			buf.WriteByte(':')
			if err := encode(buf, v[k], depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		return fmt.Errorf("unexpected JSON value %T", v)
	}
	return nil
}

// number writes a JSON number as RFC 8785 does (see [Canonical] for the
// limits).
func number(n json.Number) (string, error) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil && i >= -(1<<53) && i <= 1<<53 {
		return strconv.FormatInt(i, 10), nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("number %s is out of range", n)
	}
	if f == 0 {
		return "0", nil // -0 too
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := bytes.Cut([]byte(s), []byte("e"))
	e, _ := strconv.Atoi(string(exp))
	sign := "+"
	if e < 0 {
		sign = "-"
		e = -e
	}
	return string(mant) + "e" + sign + strconv.Itoa(e), nil
}

// encodeString writes s as RFC 8785 does: only '"', '\\' and control
// characters escaped, the short escapes where JSON has them, everything
// else as UTF-8. Invalid UTF-8 becomes U+FFFD (as encoding/json decoded it).
func encodeString(buf *bytes.Buffer, s string) {
	const hexd = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			buf.WriteString(`\"`)
		case r == '\\':
			buf.WriteString(`\\`)
		case r == '\b':
			buf.WriteString(`\b`)
		case r == '\f':
			buf.WriteString(`\f`)
		case r == '\n':
			buf.WriteString(`\n`)
		case r == '\r':
			buf.WriteString(`\r`)
		case r == '\t':
			buf.WriteString(`\t`)
		case r < 0x20:
			buf.WriteString(`\u00`)
			buf.WriteByte(hexd[r>>4])
			buf.WriteByte(hexd[r&0xf])
		default:
			buf.WriteRune(r)
		}
	}
	buf.WriteByte('"')
}
