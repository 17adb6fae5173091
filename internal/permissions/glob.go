package permissions

import (
	"path"
	"strings"
	"unicode/utf8"
)

// Globs of tool names. The syntax is path.Match's (*, ?, [a-z], [^a-z],
// \ escapes), but a tool name is not a file path: "/" is a character like
// any other, so * matches any run of characters and ? any one, "/"
// included. A tool named "admin/drop_db" is matched by "*" and "admin/*":
// a deny-all denies it. (path.Match's * stops at "/", and a rule "*" let
// such a tool through.)

// Valid reports whether pattern is a well-formed glob.
func Valid(pattern string) bool {
	_, err := path.Match(pattern, "")
	return err == nil
}

// Match reports whether the glob pattern matches all of name; a bad
// pattern matches nothing (the configuration's validation reports it).
func Match(pattern, name string) bool {
	if !strings.ContainsAny(pattern, `*?[\`) {
		return pattern == name
	}
	return Valid(pattern) && match(pattern, name)
}

// match is Match of a valid pattern: one pass over name, going back only
// to the last star (the star takes one more character each time).
func match(pattern, name string) bool {
	px, nx := 0, 0
	starPx, starNx := -1, 0
	for px < len(pattern) || nx < len(name) {
		if px < len(pattern) {
			if pattern[px] == '*' {
				for px < len(pattern) && pattern[px] == '*' {
					px++
				}
				starPx, starNx = px, nx
				continue
			}
			if nx < len(name) {
				c, n := utf8.DecodeRuneInString(name[nx:])
				if w, ok := matchOne(pattern[px:], c); ok {
					px += w
					nx += n
					continue
				}
			}
		}
		if starPx < 0 || starNx >= len(name) {
			return false
		}
		_, n := utf8.DecodeRuneInString(name[starNx:])
		starNx += n
		px, nx = starPx, starNx
	}
	return true
}

// matchOne matches the pattern's first step (not a star) against the
// character c, and returns the step's width.
func matchOne(pattern string, c rune) (int, bool) {
	switch pattern[0] {
	case '?':
		return 1, true
	case '\\':
		r, n := utf8.DecodeRuneInString(pattern[1:])
		return 1 + n, r == c
	case '[':
		i := 1
		negated := i < len(pattern) && pattern[i] == '^'
		if negated {
			i++
		}
		in := false
		for first := true; i < len(pattern) && (first || pattern[i] != ']'); first = false {
			lo, n := classChar(pattern[i:])
			i += n
			hi := lo
			if i < len(pattern) && pattern[i] == '-' {
				hi, n = classChar(pattern[i+1:])
				i += 1 + n
			}
			in = in || (lo <= c && c <= hi)
		}
		return i + 1, in != negated
	}
	r, n := utf8.DecodeRuneInString(pattern)
	return n, r == c
}

// classChar reads one character of a class, escaped or not.
func classChar(s string) (rune, int) {
	if s[0] == '\\' {
		r, n := utf8.DecodeRuneInString(s[1:])
		return r, 1 + n
	}
	return utf8.DecodeRuneInString(s)
}
