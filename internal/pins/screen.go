package pins

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Screening flags what a tool's definition should not hold. A flag is
// advice, shown in check, tools diff and open_toolbox's entry for the
// server; with "blockFlaggedTools" it withholds the tool until approved.

// Phrases are the texts, matched case-insensitively with spaces
// collapsed, that speak to the model rather than describe a tool: orders
// to drop its instructions, to keep things from the user, fake system or
// priority tags, and the secrets poisoned descriptions ask for. Kept
// short so that real tool descriptions do not trip them (see docs/pinning.md).
var Phrases = []string{
	"ignore previous instructions", "ignore all previous", "ignore the previous", "ignore any previous",
	"disregard previous", "disregard all previous", "disregard the previous", "forget your instructions",
	"forget previous instructions", "new instructions:", "you are now",
	"do not tell the user", "don't tell the user", "do not inform the user", "without telling the user",
	"without informing the user", "without the user knowing", "do not mention this", "don't mention this",
	"hide this from the user", "the user must not", "never tell the user",
	"<important>", "<system>", "</system>", "[system]", "<instructions>", "system prompt",
	"~/.ssh", "id_rsa", "mcp.json", "before using this tool, read", "before using any other tool",
}

// NameOK reports whether name keeps to MCP's recommended tool names: 1 to
// 128 characters of A-Z, a-z, 0-9, '_', '-' and '.'.
func NameOK(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// hidden reports whether r is not shown as itself: format characters (bidi
// controls, zero-width ones, Unicode tags), controls other than newline
// and tab (a carriage return too: a terminal draws what follows it over
// the start of its line), and private-use code points.
func hidden(r rune) bool {
	switch r {
	case '\n', '\t':
		return false
	case '\u200d': // zero-width joiner: inside emoji sequences it is how they are written
		return false
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Co, r)
}

// DupFlags are the flags of a definition's duplicate keys (see
// [Def.Dups]).
func DupFlags(d Def) []string {
	var out []string
	for _, p := range d.Dups {
		out = append(out, fmt.Sprintf("duplicate key at %s in the tool object: only the last one is kept, pinned and shown", Line(p)))
	}
	return out
}

// Others maps the tool names of other configured servers to the server
// that has them ("toolbox/server"), for cross-server shadowing.
type Others map[string]string

// Screen returns the flags of one canonical definition. others are the
// tools of the other configured servers (nil: none known); own are this
// server's tool names, never flagged as mentions.
func Screen(canon []byte, others Others, own map[string]bool) []string {
	var def map[string]any
	if err := json.Unmarshal(canon, &def); err != nil {
		return nil
	}
	var flags []string
	add := func(f string) {
		if !slices.Contains(flags, f) {
			flags = append(flags, f)
		}
	}
	// The definition's own vocabulary (enum and const values: a tool's
	// actions) is never a mention of another server's tool.
	vocab := map[string]bool{}
	walkStrings(def, "", func(key, s string) {
		if key == "enum" || key == "const" {
			vocab[s] = true
		}
	})
	name, _ := def["name"].(string)
	if !NameOK(name) {
		add(fmt.Sprintf("name %q is outside MCP's recommended 1 to 128 characters of A-Z a-z 0-9 _ - .", Visible(name)))
	}
	keys := make([]string, 0, len(def))
	for k := range def {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { // Fields first, as shown
		ia, ib := slices.Index(Fields, a), slices.Index(Fields, b)
		if ia < 0 {
			ia = len(Fields)
		}
		if ib < 0 {
			ib = len(Fields)
		}
		return cmp.Or(ia-ib, strings.Compare(a, b))
	})
	for _, k := range keys { // every member: each reaches the model
		f := Line(k)
		for _, r := range k {
			if hidden(r) {
				add(fmt.Sprintf("hidden character %s in the member name %s", Visible(string(r)), f))
			}
		}
		walkStrings(def[k], "", func(key, s string) {
			for _, r := range s {
				if hidden(r) {
					add(fmt.Sprintf("hidden character %s in %s", Visible(string(r)), f))
				}
			}
			if f == "name" {
				return
			}
			low := strings.Join(strings.Fields(strings.ToLower(strings.ReplaceAll(s, "\u2019", "'"))), " ")
			for _, p := range Phrases {
				if strings.Contains(low, p) {
					add(fmt.Sprintf("text addressed to the model in %s: %q", f, p))
				}
			}
			if f != "description" && f != "title" && key != "description" && key != "title" {
				return // enum values and property names name the server's own things
			}
			for _, w := range words(s) {
				if srv, ok := others[w]; ok && !own[w] && !vocab[w] && distinctive(w) {
					add(fmt.Sprintf("%s mentions tool '%s' of server '%s'", f, w, srv))
				}
			}
		})
	}
	return flags
}

// walkStrings calls fn with every string in v, object keys included, and
// the key of the member that holds it ("" for keys and top-level values).
func walkStrings(v any, key string, fn func(key, s string)) {
	switch v := v.(type) {
	case string:
		fn(key, v)
	case []any:
		for _, e := range v {
			walkStrings(e, key, fn)
		}
	case map[string]any:
		for k, e := range v {
			fn("", k)
			walkStrings(e, k, fn)
		}
	}
}

// words splits s into identifier-like words (letters, digits, '_', '-',
// '.'), trimming dots at either end (sentence ends).
func words(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.')
	})
	for i, w := range f {
		f[i] = strings.Trim(w, ".-")
	}
	return f
}

// distinctive reports whether a tool name is unlikely to be a plain word
// in a description: it joins words with '_', '-' or '.', or changes case
// inside (camelCase). "search" is not flagged; "read_file" is.
func distinctive(name string) bool {
	if strings.ContainsAny(name, "_-.") {
		return true
	}
	for i := 1; i < len(name); i++ {
		if unicode.IsLower(rune(name[i-1])) && unicode.IsUpper(rune(name[i])) {
			return true
		}
	}
	return false
}
