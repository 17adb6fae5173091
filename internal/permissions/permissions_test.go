package permissions

import (
	"encoding/json"
	"path"
	"testing"
)

func rules(pairs ...string) []Rule {
	var out []Rule
	for i := 0; i+1 < len(pairs); i += 2 {
		d, ok := Parse(pairs[i+1])
		if !ok {
			panic(pairs[i+1])
		}
		out = append(out, Rule{Pattern: pairs[i], Decision: d, Path: "p." + pairs[i]})
	}
	return out
}

// TestDecideOrder: the most specific answer wins — the server's rules,
// the toolbox's, the top level's, annotations, the nearest default, allow.
func TestDecideOrder(t *testing.T) {
	destructive := &Hints{Destructive: true, OpenWorld: true}
	readOnly := &Hints{ReadOnly: true, OpenWorld: true}
	pol := Policy{
		Top: &Rules{
			Tools:           rules("gh/delete_*", "deny", "*/get_*", "allow"),
			Annotations:     map[string]Decision{DestructiveHint: Ask, ReadOnlyHint: Allow},
			AnnotationPaths: map[string]string{DestructiveHint: "top.d", ReadOnlyHint: "top.r"},
			Default:         Deny, DefaultPath: "top.default",
		},
		Toolbox: &Rules{Tools: rules("gh/delete_branch", "ask", "create_*", "allow")},
		Server: &Rules{
			Tools:           rules("get_secret", "deny", "*", "allow", "create_*", "ask"),
			Annotations:     map[string]Decision{DestructiveHint: Allow},
			AnnotationPaths: map[string]string{DestructiveHint: "srv.d"},
		},
	}
	for _, tt := range []struct {
		server, tool string
		hints        *Hints
		want         Decision
	}{
		{"gh", "get_secret", readOnly, Deny},      // the server's exact rule over its "*" and the top's */get_*
		{"gh", "create_x", destructive, Ask},      // the server's create_* over its "*"
		{"gh", "delete_repo", destructive, Allow}, // the server's "*" names every tool: it wins over the top
	} {
		if got := pol.Decide(tt.server, tt.tool, tt.hints); got.Decision != tt.want {
			t.Errorf("%s/%s: %v (%s), want %v", tt.server, tt.tool, got.Decision, got.By, tt.want)
		}
	}
	pol.Server.Tools = rules("get_secret", "deny")
	for _, tt := range []struct {
		server, tool string
		hints        *Hints
		want         Decision
		by           string
	}{
		{"gh", "delete_branch", destructive, Ask, `the rule "gh/delete_branch" at p.gh/delete_branch`}, // toolbox over top
		{"gh", "delete_repo", destructive, Deny, `the rule "gh/delete_*" at p.gh/delete_*`},
		{"gh", "create_x", destructive, Allow, `the rule "create_*" at p.create_*`},
		{"other", "get_x", destructive, Allow, `the rule "*/get_*" at p.*/get_*`},
		{"gh", "merge", destructive, Allow, `the tool's destructiveHint, given "allow" at srv.d`}, // the server's hint decision
		{"gh", "list", readOnly, Allow, `the tool's readOnlyHint, given "allow" at top.r`},
		{"gh", "idem", &Hints{Idempotent: true}, Deny, `the default "deny" at top.default`},
		{"gh", "unknown", nil, Deny, `the default "deny" at top.default`}, // not known: the strictest possible
	} {
		got := pol.Decide(tt.server, tt.tool, tt.hints)
		if got.Decision != tt.want || got.By != tt.by {
			t.Errorf("%s/%s: %v (%s), want %v (%s)", tt.server, tt.tool, got.Decision, got.By, tt.want, tt.by)
		}
	}
	if (Policy{}).Decide("a", "b", nil).Decision != Allow || !(Policy{}).Empty() {
		t.Error("no rules must allow")
	}
	// Several hints: the strictest of their decisions.
	p := Policy{Top: &Rules{Annotations: map[string]Decision{OpenWorldHint: Ask, ReadOnlyHint: Allow}}}
	if got := p.Decide("s", "t", readOnly); got.Decision != Ask {
		t.Errorf("read-only and open-world: %v, want ask", got.Decision)
	}
	// Unknown annotations: the strictest they could give.
	if got := p.Decide("s", "t", nil); got.Decision != Ask {
		t.Errorf("unknown hints: %v, want ask", got.Decision)
	}
}

func TestHintsOf(t *testing.T) {
	for _, tt := range []struct {
		tool string
		want Hints
	}{
		{`{"name":"x"}`, Hints{Destructive: true, OpenWorld: true}},
		{`{"annotations":{"readOnlyHint":true}}`, Hints{ReadOnly: true, OpenWorld: true}},
		{`{"annotations":{"readOnlyHint":true,"destructiveHint":true}}`, Hints{ReadOnly: true, OpenWorld: true}},
		{`{"annotations":{"destructiveHint":false,"openWorldHint":false,"idempotentHint":true}}`, Hints{Idempotent: true}},
		{`not json`, Hints{Destructive: true, OpenWorld: true}},
	} {
		if got := HintsOf(json.RawMessage(tt.tool)); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.tool, got, tt.want)
		}
	}
}

func TestOverlap(t *testing.T) {
	for _, tt := range []struct {
		a, b    string
		want    bool
		example string
	}{
		{"create_*", "*_issue", true, "create_issue"},
		{"read_*", "write_*", false, ""},
		{"a?", "b*", false, ""},
		{"*/delete_*", "gh/*", true, "gh/delete_"},
		{"[a-c]x", "bx", true, "bx"},
		{"[^a]x", "ax", false, ""},
		{"*", "", true, ""},
		{`\*`, "*", true, "*"},
	} {
		ex, ok := Overlap(tt.a, tt.b)
		if ok != tt.want || ex != tt.example {
			t.Errorf("Overlap(%q, %q) = %q, %v; want %q, %v", tt.a, tt.b, ex, ok, tt.example, tt.want)
		}
		if ok && (!Match(tt.a, ex) || !Match(tt.b, ex)) {
			t.Errorf("example %q of %q and %q does not match both", ex, tt.a, tt.b)
		}
	}
}

func TestConflicts(t *testing.T) {
	if c := Conflicts(rules("*", "ask", "get_*", "allow", "get_secret", "deny"), false); len(c) != 0 {
		t.Errorf("nested rules conflict: %v", c)
	}
	c := Conflicts(rules("create_*", "allow", "*_issue", "deny", "x", "deny"), false)
	if len(c) != 1 || c[0].Example != "create_issue" {
		t.Errorf("%v", c)
	}
	if c := Conflicts(rules("delete_*", "deny", "gh/*", "allow"), true); len(c) != 1 || c[0].Example != "gh/delete_" {
		t.Errorf("qualified: %v", c)
	}
	if c := Conflicts(rules("delete_*", "deny", "gh/*", "deny"), true); len(c) != 0 {
		t.Errorf("agreeing rules conflict: %v", c)
	}
}

// TestMatch: path.Match's syntax and answers, except that "/" is a
// character like any other (tool names may contain it).
func TestMatch(t *testing.T) {
	patterns := []string{"*", "a*", "*b", "a*b", "a?c", "[a-c]x", "[^a]x", `\*`, `a\?`, "[\\]]", "**a", "a*b*c", "", "abc", "[é-ü]", "*_issue", "get_*"}
	names := []string{"", "a", "ab", "abc", "axxb", "bx", "ax", "*", "a?", "]", "aaa", "aXbYc", "é", "ö", "create_issue", "get_x"}
	for _, p := range patterns {
		for _, n := range names {
			want, _ := path.Match(p, n)
			if got := Match(p, n); got != want {
				t.Errorf("Match(%q, %q) = %v, path.Match says %v", p, n, got, want)
			}
		}
	}
	for _, tt := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "admin/drop_db", true},
		{"admin/*", "admin/x/y", true},
		{"*/drop_*", "a/b/drop_db", true},
		{"?", "/", true},
		{"a?b", "a/b", true},
		{"[^a]", "/", true},
		{"admin/*", "other/x", false},
		{"a*", "b/a", false},
		{"[a-", "a", false}, // a bad pattern matches nothing
	} {
		if got := Match(tt.pattern, tt.name); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
	// A toolbox's rule: the server before the first slash, the tool after.
	if !MatchQualified("raw/*", "raw", "x/y") || !MatchQualified("raw/x/*", "raw", "x/y") || MatchQualified("raw/*", "x", "raw/y") || !MatchQualified("*", "s", "a/b") {
		t.Error("MatchQualified splits at the first slash")
	}
}

// TestConflictsWithSlashes: qualified patterns compare part by part, so a
// star of the server's part does not reach into the tool's.
func TestConflictsWithSlashes(t *testing.T) {
	if c := Conflicts(rules("r*/x", "allow", "raw/y/x", "deny"), true); len(c) != 0 {
		t.Errorf("server r*, tool x and server raw, tool y/x cannot both match: %v", c)
	}
	if c := Conflicts(rules("raw/*", "deny", "*/admin/*", "allow"), true); len(c) != 1 || c[0].Example != "raw/admin/" {
		t.Errorf("%v", c)
	}
	if c := Conflicts(rules("*", "deny", "raw/admin/*", "allow"), true); len(c) != 0 {
		t.Errorf("a rule under * conflicts: %v", c)
	}
	pol := Policy{Toolbox: &Rules{Tools: rules("*", "deny", "raw/admin/*", "allow")}}
	if v := pol.Decide("raw", "admin/x", nil); v.Decision != Allow {
		t.Errorf("raw/admin/x: %v (%s); the narrower rule wins", v.Decision, v.By)
	}
	if v := pol.Decide("raw", "other/x", nil); v.Decision != Deny {
		t.Errorf("raw/other/x: %v (%s)", v.Decision, v.By)
	}
}
