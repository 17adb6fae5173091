package pins

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Kind is how a tool stands against its pin.
type Kind string

const (
	Same    Kind = "pinned"
	Changed Kind = "changed"
	New     Kind = "new"
	Removed Kind = "removed"
)

// Report is one tool compared with its pin.
type Report struct {
	Name string
	Kind Kind
	// What lists the members that changed ("description", "inputSchema",
	// …), for Changed.
	What []string
	Old  json.RawMessage // the pinned definition; nil for New
	New  json.RawMessage // the current one; nil for Removed
	Pin  Pin
}

// Compare compares current definitions (in the server's order) with pins.
// Removed tools come last, by name.
func Compare(pins map[string]Pin, current []Def) []Report {
	out := make([]Report, 0, len(current))
	seen := make(map[string]bool, len(current))
	for _, d := range current {
		seen[d.Name] = true
		p, ok := pins[d.Name]
		switch {
		case !ok:
			out = append(out, Report{Name: d.Name, Kind: New, New: d.Canon})
		case p.Hash == d.Hash:
			out = append(out, Report{Name: d.Name, Kind: Same, Old: p.Def, New: d.Canon, Pin: p})
		default:
			out = append(out, Report{Name: d.Name, Kind: Changed, What: What(p.Def, d.Canon), Old: p.Def, New: d.Canon, Pin: p})
		}
	}
	var gone []string
	for n := range pins {
		if !seen[n] {
			gone = append(gone, n)
		}
	}
	slices.Sort(gone)
	for _, n := range gone {
		out = append(out, Report{Name: n, Kind: Removed, Old: pins[n].Def, Pin: pins[n]})
	}
	return out
}

// What returns the members of two definitions that differ, in [Fields]'
// order.
func What(old, cur []byte) []string {
	var a, b map[string]json.RawMessage
	_ = json.Unmarshal(old, &a)
	_ = json.Unmarshal(cur, &b)
	var out []string
	for _, f := range Fields {
		if !bytes.Equal(a[f], b[f]) {
			out = append(out, f)
		}
	}
	return out
}

// Describe says what changed in words: "description and inputSchema".
func Describe(what []string) string {
	switch len(what) {
	case 0:
		return "its definition"
	case 1:
		return "its " + what[0]
	}
	return "its " + strings.Join(what[:len(what)-1], ", ") + " and " + what[len(what)-1]
}

// Diff shows the change from old to cur (either may be nil) as a unified
// diff of their readable forms, hidden characters made visible.
func Diff(name string, old, cur []byte) string {
	d := difflib.UnifiedDiff{
		A:        difflib.SplitLines(Readable(old)),
		B:        difflib.SplitLines(Readable(cur)),
		FromFile: name + " (pinned)",
		ToFile:   name + " (now)",
		Context:  3,
	}
	s, err := difflib.GetUnifiedDiffString(d)
	if err != nil {
		return err.Error()
	}
	return s
}

// Readable renders a canonical definition for reading: the description's
// lines first, as text, then every member as indented JSON; hidden and
// control characters are shown escaped (\u202e).
func Readable(canon []byte) string {
	if canon == nil {
		return ""
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(canon, &m); err != nil {
		return Visible(string(canon)) + "\n"
	}
	var b strings.Builder
	for _, f := range Fields {
		v, ok := m[f]
		if !ok {
			continue
		}
		if f == "description" || f == "title" || f == "name" {
			var s string
			if json.Unmarshal(v, &s) == nil {
				fmt.Fprintf(&b, "%s:\n", f)
				for _, line := range strings.Split(s, "\n") {
					b.WriteString("    " + Visible(line) + "\n")
				}
				continue
			}
		}
		var ind bytes.Buffer
		if json.Indent(&ind, v, "    ", "  ") != nil {
			ind.Reset()
			ind.Write(v)
		}
		fmt.Fprintf(&b, "%s:\n    %s\n", f, Visible(ind.String()))
	}
	return b.String()
}

// Visible returns s with hidden characters (format characters such as
// bidi controls and zero-width ones, Unicode tags, controls other than
// newline and tab, unassigned or private code points) written as \uXXXX
// or \U000XXXXX.
func Visible(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			if r > 0xffff {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
