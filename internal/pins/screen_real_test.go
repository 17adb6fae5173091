package pins

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// realFlags screens every captured tool list in testdata/search/tools as
// if all of those servers were configured together (the strictest case for
// cross-server mentions), and returns the flags per "server/tool".
func realFlags(t *testing.T) (map[string][]string, int) {
	t.Helper()
	files, err := filepath.Glob("../../testdata/search/tools/*.json")
	if err != nil || len(files) < 16 {
		t.Fatalf("captured tool lists: %v (%d)", err, len(files))
	}
	type server struct {
		name string
		defs []Def
	}
	var servers []server
	tools := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		s := server{name: strings.TrimSuffix(filepath.Base(f), ".json")}
		for _, raw := range doc.Tools {
			d, err := Canonical(raw)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			s.defs = append(s.defs, d)
		}
		tools += len(s.defs)
		servers = append(servers, s)
	}
	out := map[string][]string{}
	for i, s := range servers {
		others, own := Others{}, map[string]bool{}
		for j, o := range servers {
			for _, d := range o.defs {
				if j == i {
					own[d.Name] = true
				} else {
					others[d.Name] = "t/" + o.name
				}
			}
		}
		for _, d := range s.defs {
			if f := Screen(d.Canon, others, own); len(f) > 0 {
				out[s.name+"/"+d.Name] = f
			}
		}
	}
	return out, tools
}

// TestScreenRealServers is the false-positive count docs/pinning.md gives:
// screening the captured tool lists of 16 real servers flags no tool of
// the reference servers and only the tools listed here.
func TestScreenRealServers(t *testing.T) {
	flags, tools := realFlags(t)
	var got []string
	for k, f := range flags {
		got = append(got, k+": "+strings.Join(f, "; "))
	}
	slices.Sort(got)
	t.Logf("screened %d tools of 16 real servers: %d flagged", tools, len(got))
	for _, g := range got {
		t.Log(g)
	}
	for _, ref := range []string{"everything", "filesystem", "memory", "sequential-thinking"} {
		for k := range flags {
			if strings.HasPrefix(k, ref+"/") {
				t.Errorf("reference server flagged: %s %q", k, flags[k])
			}
		}
	}
	if len(got) != realFalsePositives {
		t.Errorf("%d tools flagged, docs/pinning.md says %d: update both if screening changed", len(got), realFalsePositives)
	}
}
