package permissions

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Conflict is two rules of one level that decide differently for the
// tools both match, neither covering the other.
type Conflict struct {
	A, B Rule
	// Example is a name both match.
	Example string
}

func (c Conflict) String() string {
	return fmt.Sprintf("the rules %q (%s) and %q (%s) both match %q and neither is more specific than the other: make one narrower, or give them the same decision",
		c.A.Pattern, c.A.Decision, c.B.Pattern, c.B.Decision, c.Example)
}

// Conflicts returns the pairs of rules of one level that conflict.
// qualified says the patterns may name "server/tool" (the toolbox and top
// levels).
func Conflicts(rules []Rule, qualified bool) []Conflict {
	var out []Conflict
	for i := range rules {
		for j := i + 1; j < len(rules); j++ {
			a, b := rules[i], rules[j]
			if a.Decision == b.Decision {
				continue
			}
			if coversRule(a.Pattern, b.Pattern, qualified) || coversRule(b.Pattern, a.Pattern, qualified) {
				continue
			}
			if ex, ok := overlapRule(a.Pattern, b.Pattern, qualified); ok {
				out = append(out, Conflict{A: a, B: b, Example: ex})
			}
		}
	}
	return out
}

// overlapRule is Overlap for the patterns of one level: qualified ones
// part by part, the example written "server/tool".
func overlapRule(a, b string, qualified bool) (string, bool) {
	if !qualified || !strings.Contains(a+b, "/") {
		return Overlap(a, b)
	}
	as, at := splitRule(a)
	bs, bt := splitRule(b)
	srv, ok := Overlap(as, bs)
	if !ok {
		return "", false
	}
	tool, ok := Overlap(at, bt)
	if !ok {
		return "", false
	}
	if srv == "" {
		return tool, true
	}
	return srv + "/" + tool, true
}

// token is one step of a glob: "*", or a pattern of one character (a
// literal, "?", a class, an escape) that matches one character.
type token string

func tokens(pattern string) ([]token, bool) {
	if !Valid(pattern) {
		return nil, false
	}
	var out []token
	for i := 0; i < len(pattern); {
		switch c := pattern[i]; c {
		case '*':
			if len(out) == 0 || out[len(out)-1] != "*" {
				out = append(out, "*")
			}
			i++
		case '\\':
			end := min(i+2, len(pattern))
			out = append(out, token(pattern[i:end]))
			i = end
		case '[':
			j := i + 1
			if j < len(pattern) && pattern[j] == '^' {
				j++
			}
			for j < len(pattern) && pattern[j] != ']' {
				if pattern[j] == '\\' {
					j++
				}
				j++
			}
			end := min(j+1, len(pattern))
			out = append(out, token(pattern[i:end]))
			i = end
		default:
			_, size := utf8.DecodeRuneInString(pattern[i:])
			out = append(out, token(pattern[i:i+size]))
			i += size
		}
	}
	return out, true
}

func (t token) matches(c rune) bool {
	if t == "*" {
		return true
	}
	return Match(string(t), string(c))
}

// Overlap reports whether some name matches both patterns, and gives one.
// It searches the product of the two patterns' steps over the characters
// that can tell them apart: those the patterns name, and a few others.
func Overlap(a, b string) (string, bool) {
	ta, ok1 := tokens(a)
	tb, ok2 := tokens(b)
	if !ok1 || !ok2 {
		return "", false
	}
	// Characters in order, so that the example is always the same.
	alphabet := []rune("az0_-.Qé/")
	for _, r := range a + b {
		// Class ranges: their ends are named; the next ones tell a
		// negated class apart.
		alphabet = append(alphabet, r, r+1)
	}
	slices.Sort(alphabet)
	alphabet = slices.Compact(alphabet)
	type state struct{ i, j int }
	type step struct {
		from state
		c    rune // 0: no character (a star skipped)
	}
	prev := map[state]step{}
	start := state{}
	seen := map[state]bool{start: true}
	queue := []state{start}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s.i == len(ta) && s.j == len(tb) {
			var b strings.Builder
			var rs []rune
			for cur := s; cur != start; cur = prev[cur].from {
				if c := prev[cur].c; c != 0 {
					rs = append(rs, c)
				}
			}
			for k := len(rs) - 1; k >= 0; k-- {
				b.WriteRune(rs[k])
			}
			return b.String(), true
		}
		visit := func(n state, c rune) {
			if !seen[n] {
				seen[n] = true
				prev[n] = step{s, c}
				queue = append(queue, n)
			}
		}
		if s.i < len(ta) && ta[s.i] == "*" {
			visit(state{s.i + 1, s.j}, 0)
		}
		if s.j < len(tb) && tb[s.j] == "*" {
			visit(state{s.i, s.j + 1}, 0)
		}
		if s.i == len(ta) || s.j == len(tb) {
			continue
		}
		for _, c := range alphabet {
			if !ta[s.i].matches(c) || !tb[s.j].matches(c) {
				continue
			}
			n := s
			if ta[s.i] != "*" {
				n.i++
			}
			if tb[s.j] != "*" {
				n.j++
			}
			if n != s {
				visit(n, c)
			}
		}
	}
	return "", false
}
