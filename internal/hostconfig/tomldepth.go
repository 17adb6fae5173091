package hostconfig

import (
	"fmt"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"
)

// CheckTOMLDepth refuses TOML text nested deeper than frame.MaxDepth
// levels, naming the line, before any decoder recurses into it: every
// reader of a host's TOML (import, install codex and its hook) calls it
// first, through decodeTOML or directly.
func CheckTOMLDepth(data []byte) error {
	if line := tomlTooDeepAt(data); line > 0 {
		return fmt.Errorf("%w: line %d: tables, arrays or dotted keys nested deeper than %d levels", ErrUnparsable, line, frame.MaxDepth)
	}
	return nil
}

// tomlTooDeepAt returns the line (from 1) where the TOML text data nests
// deeper than frame.MaxDepth levels, or 0 if it does not. The TOML decoder
// recurses once per level — of arrays, of inline tables, and of the parts
// of a dotted key or a table header alike — and a few megabytes of "[[[["
// or "a.a.a." overflow its stack, which ends the process. So a file is
// checked with this one linear pass before it is parsed, as JSON is
// (frame.TooDeepAt): a cloned repository's .codex/config.toml is read by
// import with no PATH.
//
// Strings and comments are skipped; the depth of a value is its table
// header's parts, plus its dotted key's, plus the arrays and inline tables
// around it. It need not know TOML fully: the decoder reports what is
// invalid.
func tomlTooDeepAt(data []byte) int {
	const max = frame.MaxDepth
	type level struct {
		depth int
		table bool // an inline table, whose members have keys; else an array
	}
	line := 1
	header := 0      // the parts of the current table's header
	var open []level // the arrays and inline tables open here
	inKey := true    // reading a key (before its '='), not a value
	dots := 0        // the dots of the key being read
	lineStart := true
	depth := func() int {
		if len(open) == 0 {
			return header
		}
		return open[len(open)-1].depth
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch c {
		case '\n':
			line++
			if len(open) == 0 {
				inKey, dots, lineStart = true, 0, true
			}
			continue
		case ' ', '\t', '\r':
			continue
		case '#':
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			i = skipTOMLString(data, i, &line)
		case '[':
			if lineStart && len(open) == 0 {
				// A table header: [a.b.c] or [[a.b.c]].
				parts := 1
				for i++; i < len(data) && data[i] != ']' && data[i] != '\n'; i++ {
					switch data[i] {
					case '.':
						parts++
					case '"', '\'':
						i = skipTOMLString(data, i, &line)
					}
				}
				if parts > max {
					return line
				}
				header, inKey, dots = parts, true, 0
				for i+1 < len(data) && data[i+1] == ']' {
					i++
				}
				break
			}
			open = append(open, level{depth: depth() + dots + 1})
			inKey, dots = false, 0
		case '{':
			open = append(open, level{depth: depth() + dots + 1, table: true})
			inKey, dots = true, 0
		case ']', '}':
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
			inKey, dots = false, 0
		case ',':
			inKey = len(open) > 0 && open[len(open)-1].table
			dots = 0
		case '.':
			if inKey {
				dots++
			}
		case '=':
			inKey = false
		}
		if depth()+dots > max {
			return line
		}
		lineStart = false
	}
	return 0
}

// skipTOMLString returns the index of the last byte of the string that
// starts at data[i] (a quote): basic "…" and literal '…', each also
// multi-line ("""…""", ”'…”'), counting the newlines it holds into
// line. An unterminated string ends at the end of its line (one-line) or
// of the text.
func skipTOMLString(data []byte, i int, line *int) int {
	q := data[i]
	multi := i+2 < len(data) && data[i+1] == q && data[i+2] == q
	if multi {
		i += 2
	}
	for i++; i < len(data); i++ {
		switch c := data[i]; {
		case c == '\\' && q == '"':
			if i+1 < len(data) && data[i+1] == '\n' {
				*line++
			}
			i++
		case c == '\n':
			if !multi {
				return i - 1
			}
			*line++
		case c == q:
			if !multi {
				return i
			}
			if i+2 < len(data) && data[i+1] == q && data[i+2] == q {
				// Up to two more quotes may end the string's content.
				i += 2
				for i+1 < len(data) && data[i+1] == q {
					i++
				}
				return i
			}
		}
	}
	return len(data) - 1
}
