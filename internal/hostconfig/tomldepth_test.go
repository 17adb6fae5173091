package hostconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// TestTOMLTooDeepAt checks the nesting bound's one pass: what strings and
// comments hold never counts, floats and dates are not dotted keys, and
// each way of nesting (arrays, inline tables, dotted keys, headers, and
// them together) counts up to 1,000 levels and is refused past them, at
// the line where it goes past.
func TestTOMLTooDeepAt(t *testing.T) {
	n := func(s string, k int) string { return strings.Repeat(s, k) }
	for _, tc := range []struct {
		name, doc string
		line      int
	}{
		{"strings", "a = \"[[[[{{{{\\\"[[[\"\nb = '[[[['\nc = \"\"\"\n[[[[\n\\\"\"\"[[\n\"\"\"\nd = '''\n{{{{\n'''\n", 0},
		{"comment", "# [[[[ {{{{ a.b.c.d\na = 1 # [[[[\n", 0},
		{"floats and dates", "a = [" + n("1.5, ", 5000) + "1.5]\nb = 1979-05-27T07:32:00.999\n", 0},
		{"quoted header", "[\"" + n("a.", 2000) + "\"]\nx = 1\n", 0},
		{"arrays at the bound", "x = " + n("[", 1000) + n("]", 1000) + "\n", 0},
		{"arrays past it", "\n\nx = " + n("[", 1001) + n("]", 1001) + "\n", 3},
		{"inline tables past it", "x = " + n("{a = ", 1001) + "1" + n("}", 1001) + "\n", 1},
		{"dotted key past it", "\n" + n("a.", 1001) + "a = 1\n", 2},
		{"header past it", "[" + n("a.", 1000) + "a]\n", 1},
		{"header and key together", "[" + n("a.", 599) + "a]\n" + n("b.", 401) + "b = 1\n", 2},
		{"header and arrays together", "[" + n("a.", 499) + "a]\nx = " + n("[", 500) + n("]", 500) + "\n", 0},
		{"header and arrays past it", "[" + n("a.", 499) + "a]\nx = " + n("[", 501) + n("]", 501) + "\n", 2},
		{"arrays over lines", "x = [\n" + n("[\n", 1001) + n("]\n", 1001) + "]\n", 1001},
		{"unterminated string", "a = \"[[[\nb = [[1]]\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tomlTooDeepAt([]byte(tc.doc)); got != tc.line {
				t.Errorf("line %d, want %d", got, tc.line)
			}
		})
	}
	// Real files are read.
	for _, name := range []string{"codex-config.toml"} {
		_, data := fixture(t, name)
		if line := tomlTooDeepAt(data); line != 0 {
			t.Errorf("%s: refused at line %d", name, line)
		}
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "import", "install", "*.toml"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if _, err := toml.Decode(string(data), &m); err == nil && tomlTooDeepAt(data) != 0 {
			t.Errorf("%s: refused", f)
		}
	}
}
