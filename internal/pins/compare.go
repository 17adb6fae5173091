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
		case p.Matches(d):
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

// What returns the members of two definitions that differ: [Fields] in
// their order, then the others by name.
func What(old, cur []byte) []string {
	var a, b map[string]json.RawMessage
	_ = json.Unmarshal(old, &a)
	_ = json.Unmarshal(cur, &b)
	var out []string
	for _, f := range members(a, b) {
		if !bytes.Equal(a[f], b[f]) {
			out = append(out, Line(f)) // a server's member name: shown on a line of its own
		}
	}
	return out
}

// members returns the keys of the definitions, [Fields] first in their
// order, then the others sorted.
func members(defs ...map[string]json.RawMessage) []string {
	var rest []string
	for _, d := range defs {
		for k := range d {
			if !slices.Contains(Fields, k) && !slices.Contains(rest, k) {
				rest = append(rest, k)
			}
		}
	}
	slices.Sort(rest)
	return append(slices.Clone(Fields), rest...)
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

// maxDiffWork bounds the matching of lines Diff leaves to difflib, whose
// time grows with the product of the two line counts: past it (about a
// thousand differing lines on each side), the differing lines are shown
// as one block removed and one added.
const maxDiffWork = 1_000_000

// Diff shows the change from old to cur (either may be nil) as a unified
// diff of their readable forms, hidden characters made visible. Its time
// is bounded: lines common to both ends are set aside first, and a long
// middle is shown as one block (see maxDiffWork).
func Diff(name string, old, cur []byte) string {
	a, b := difflib.SplitLines(Readable(old)), difflib.SplitLines(Readable(cur))
	// Readable's texts end in a newline, after which SplitLines adds a
	// line of its own: drop it.
	a, b = dropLastEmpty(a), dropLastEmpty(b)
	from, to := Line(name)+" (pinned)", Line(name)+" (now)"
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	if n, m := len(a)-pre-suf, len(b)-pre-suf; n*m <= maxDiffWork {
		d := difflib.UnifiedDiff{A: a, B: b, FromFile: from, ToFile: to, Context: 3}
		s, err := difflib.GetUnifiedDiffString(d)
		if err != nil {
			return err.Error()
		}
		return s
	}
	return blockDiff(a, b, pre, suf, from, to)
}

func dropLastEmpty(l []string) []string {
	if len(l) > 0 && l[len(l)-1] == "\n" {
		return l[:len(l)-1]
	}
	return l
}

// blockDiff writes a unified diff of one hunk: a[pre:len(a)-suf] removed
// and b[pre:len(b)-suf] added, with three lines of context.
func blockDiff(a, b []string, pre, suf int, from, to string) string {
	const context = 3
	start := max(pre-context, 0)
	endA, endB := len(a)-suf+min(suf, context), len(b)-suf+min(suf, context)
	var w strings.Builder
	fmt.Fprintf(&w, "(%d lines changed: shown as one block, without matching the lines inside it)\n", max(len(a), len(b))-pre-suf)
	fmt.Fprintf(&w, "--- %s\n+++ %s\n@@ -%s +%s @@\n", from, to, hunkRange(start, endA), hunkRange(start, endB))
	line := func(prefix, l string) {
		w.WriteString(prefix + l)
		if !strings.HasSuffix(l, "\n") {
			w.WriteString("\n")
		}
	}
	for _, l := range a[start:pre] {
		line(" ", l)
	}
	for _, l := range a[pre : len(a)-suf] {
		line("-", l)
	}
	for _, l := range b[pre : len(b)-suf] {
		line("+", l)
	}
	for _, l := range a[len(a)-suf : endA] {
		line(" ", l)
	}
	return w.String()
}

// hunkRange is a unified diff's range of lines [start, end), as difflib
// writes it.
func hunkRange(start, end int) string {
	switch n := end - start; {
	case n == 1:
		return fmt.Sprint(start + 1)
	case n == 0:
		return fmt.Sprintf("%d,0", start)
	default:
		return fmt.Sprintf("%d,%d", start+1, n)
	}
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
	for _, f := range members(m) {
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
		fmt.Fprintf(&b, "%s:\n    %s\n", Line(f), Visible(ind.String()))
	}
	return b.String()
}

// Visible returns s with hidden characters (format characters such as
// bidi controls and zero-width ones, Unicode tags, controls other than
// newline and tab, carriage return included, private code points)
// written as \uXXXX or \U000XXXXX.
func Visible(s string) string { return visible(s, hidden) }

// Line is [Visible] for a text printed within one line (a tool's name, a
// key): newlines and tabs are written as \u000a and \u0009 too, so that
// a server's string cannot start a line of its own.
func Line(s string) string {
	return visible(s, func(r rune) bool { return r == '\n' || r == '\t' || hidden(r) })
}

func visible(s string, hidden func(rune) bool) string {
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
