// Package pins keeps what each downstream server's tools said when the
// user started trusting them, so that a server cannot change what the
// model is told behind the user's back.
//
// A tool's definition is the part of its object that instructs the model:
// name, title, description, inputSchema, outputSchema and annotations
// (never _meta, which servers fill with per-start values). It is pinned
// as its canonical form (RFC 8785, JSON Canonicalization Scheme: keys
// sorted by UTF-16 code units, no insignificant space, strings with the
// fewest escapes) and that form's SHA-256.
//
// The store is a folder (by default os.UserConfigDir()/mcp-workbench/pins)
// with one file per server identity, named by the tool catalog's key of
// the server. Files are private (0600 in a 0700 folder), written to a
// temporary file, synced and renamed, and changed under a lock file, so
// that several workbench processes may share the folder.
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
	"unicode/utf16"
	"unicode/utf8"
)

// Fields are the members of a tool object that make its definition.
var Fields = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// maxDepth bounds the nesting of a definition that Canonical reads: the
// workbench's frame reader has already refused anything deeper than
// 10000 levels, and encoding/json's own limit is 10000 too.
const maxDepth = 10000

// Def is one tool's definition in canonical form.
type Def struct {
	Name  string
	Canon []byte // RFC 8785 form of the definition's members
	Hash  string // hex SHA-256 of Canon
}

// Canonical returns the definition of a tool object as the server sent it.
//
// Numbers: RFC 8785 writes numbers as ECMAScript does. Tool schemas hold
// small integers (minimum, maxLength, …) and sometimes decimals; an
// integer of at most 2^53 in magnitude is written as its digits, any other
// number as strconv's shortest 'g'-form of its float64 value with
// ECMAScript's exponent rules. That matches ECMAScript for every number a
// float64 holds exactly; very large or very long numbers are first
// rounded to float64, as every JSON parser of ECMAScript would.
func Canonical(tool json.RawMessage) (Def, error) {
	dec := json.NewDecoder(bytes.NewReader(tool))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return Def{}, fmt.Errorf("not a JSON object: %v", err)
	}
	name, _ := obj["name"].(string)
	if name == "" {
		return Def{}, errors.New(`the tool has no "name"`)
	}
	def := make(map[string]any, len(Fields))
	for _, f := range Fields {
		if v, ok := obj[f]; ok && v != nil {
			def[f] = v
		}
	}
	var buf bytes.Buffer
	if err := encode(&buf, def, 0); err != nil {
		return Def{}, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return Def{Name: name, Canon: buf.Bytes(), Hash: hex.EncodeToString(sum[:])}, nil
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
		// RFC 8785 3.2.3: by UTF-16 code units.
		slices.SortFunc(keys, func(a, b string) int { return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b))) })
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
