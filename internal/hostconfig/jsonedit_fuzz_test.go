package hostconfig

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// jsoncComments returns the comments of a JSONC text, in order, as
// written.
func jsoncComments(b []byte) []string {
	var out []string
	outsideStrings(b, func(i int) int {
		if b[i] != '/' || i+1 >= len(b) {
			return i
		}
		switch b[i+1] {
		case '/':
			end := bytes.IndexByte(b[i:], '\n')
			if end < 0 {
				end = len(b) - i
			}
			out = append(out, string(b[i:i+end]))
			return i + end - 1
		case '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				out = append(out, string(b[i:]))
				return len(b)
			}
			out = append(out, string(b[i:i+2+end+2]))
			return i + 2 + end + 1
		}
		return i
	})
	return out
}

// spliceOnlyOverSpace reports whether out is in with one stretch of
// white space replaced: every byte of in outside that stretch kept, in
// place, comments and trailing commas included.
func spliceOnlyOverSpace(in, out []byte) bool {
	p := 0
	for p < len(in) && p < len(out) && in[p] == out[p] {
		p++
	}
	q := 0
	for q < len(in)-p && q < len(out)-p && in[len(in)-1-q] == out[len(out)-1-q] {
		q++
	}
	return len(bytes.TrimSpace(in[p:len(in)-q])) == 0
}

// FuzzJSONEdits checks install's JSONC edits on any file they accept:
// adding our entry (to a servers object) or our hook (to an array)
// replaces white space only, everything else byte for byte; removing a
// moved server keeps every comment, the ones above the next server too.
// The seed corpus is the hosts' realistic files of testdata/import and
// testdata/fuzz/FuzzJSONEdits. Run it longer with
// go test -run '^$' -fuzz FuzzJSONEdits ./internal/hostconfig.
func FuzzJSONEdits(f *testing.F) {
	fixtures, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "import", "*.json"))
	for _, p := range fixtures {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := decodeJSON(blankJSONC(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
		if err != nil {
			return
		}
		comments := jsoncComments(data)
		servers, _ := valueAt(doc, []string{"mcpServers"}).(map[string]any)
		if _, there := servers["workbench"]; !there {
			if out, changed, err := SetJSONMember(data, []string{"mcpServers"}, "workbench", testEntry); err == nil {
				if !changed || !spliceOnlyOverSpace(data, out) {
					t.Fatalf("adding the entry changed more than white space:\n%s\n---\n%s", data, out)
				}
			}
		}
		item := Entry{{Key: "matcher", Value: "^mcp_workbench_use_tool$"}}
		never := func(any) bool { return false }
		if out, changed, err := AddJSONArrayItem(data, []string{"hooks", "BeforeTool"}, item, never); err == nil {
			if !changed || !spliceOnlyOverSpace(data, out) {
				t.Fatalf("adding the hook changed more than white space:\n%s\n---\n%s", data, out)
			}
		}
		names := map[string]int{} // how many members have each name
		blank := blankJSONC(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
		sc := scanner{b: blank}
		if _, isObject := doc.(map[string]any); !isObject {
			// not a host's file: the edits refuse it (above)
		} else if m, ok := sc.object(sc.skipSpace(0)).get("mcpServers"); ok && blank[m.valStart] == '{' {
			for _, m := range sc.object(m.valStart).members {
				names[m.key]++
			}
		}
		for name := range servers {
			out, removed, err := RemoveJSONMembers(data, []string{"mcpServers"}, []string{name})
			if err != nil && names[name] > 1 {
				continue // a name twice: refused, nothing written
			}
			if err != nil {
				t.Fatalf("removing %q from a file that parses: %v\n%s", name, err, data)
			}
			if len(removed) != 1 {
				t.Fatalf("removing %q: removed %q", name, removed)
			}
			if got := jsoncComments(out); !reflect.DeepEqual(got, comments) && !(len(got) == 0 && len(comments) == 0) {
				t.Fatalf("removing %q lost comments: %q, had %q\n%s\n---\n%s", name, got, comments, data, out)
			}
		}
	})
}
