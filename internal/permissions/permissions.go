// Package permissions decides, for each call of a tool behind the
// workbench, whether it is allowed, asked of the user, or denied. Rules
// come from three levels of the configuration — the top level, a toolbox,
// a server — each a "permissions" object:
//
//	"permissions": {
//	  "tools": {"delete_*": "deny", "github/create_*": "ask"},
//	  "annotations": {"destructiveHint": "ask", "readOnlyHint": "allow"},
//	  "default": "allow",
//	  "askIn": "page"
//	}
//
// The most specific answer wins, in this order: a rule of the server's
// "tools" that matches the tool's name; one of the toolbox's; one of the
// top level's (rules name a tool, "server/tool" at the toolbox and top
// levels); then the tool's annotations, by the decisions the nearest level
// gives each hint; then the nearest "default"; then allow. Within one
// level, a rule whose pattern another one's covers (get_* under *) is the
// more specific; two rules that overlap without one covering the other
// and decide differently are a configuration error ([Conflicts]).
// "askIn" says where the questions of "ask" are asked (the host's form, or
// the web UI's page): the nearest level's ([Policy.AskIn]).
//
// The package knows nothing of the configuration file or of MCP sessions:
// internal/config reads the rules, the workbench and the Claude Code hook
// apply them.
package permissions

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Decision is what a call of a tool gets.
type Decision uint8

// The decisions, from the most lenient to the strictest; Unset is none.
const (
	Unset Decision = iota
	Allow
	Ask
	Deny
)

// Names are the decisions as the configuration writes them.
var Names = []string{"allow", "ask", "deny"}

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return "unset"
}

// Parse reads a decision as the configuration writes it.
func Parse(s string) (Decision, bool) {
	switch s {
	case "allow":
		return Allow, true
	case "ask":
		return Ask, true
	case "deny":
		return Deny, true
	}
	return Unset, false
}

// Hint names, as MCP's ToolAnnotations spell them.
const (
	ReadOnlyHint    = "readOnlyHint"
	DestructiveHint = "destructiveHint"
	IdempotentHint  = "idempotentHint"
	OpenWorldHint   = "openWorldHint"
)

// HintNames are the annotation hints a decision can be given for.
var HintNames = []string{ReadOnlyHint, DestructiveHint, IdempotentHint, OpenWorldHint}

// Rule is one entry of a "tools" object: a glob (see [Match]) and its
// decision.
type Rule struct {
	Pattern  string
	Decision Decision
	// Path is the rule's JSON path in the configuration, for messages.
	Path string
}

// Rules are one level's "permissions" object.
type Rules struct {
	// Tools in file order.
	Tools []Rule
	// Annotations maps hint names to decisions; AnnotationPaths to where
	// the configuration gives them.
	Annotations     map[string]Decision
	AnnotationPaths map[string]string
	Default         Decision
	DefaultPath     string
	// AskIn is where the questions about the level's tools are asked
	// (AskInHost or AskInPage; "" when the level does not say), and
	// AskInPath where the configuration says so.
	AskIn     string
	AskInPath string
}

// Where a question is asked: through the host (its form, elicitation;
// the web UI's page when the host cannot ask and the page runs), or in
// the web UI's Questions page, whatever the host can do.
const (
	AskInHost = "host"
	AskInPage = "page"
)

// AskInNames are the values of "askIn".
var AskInNames = []string{AskInHost, AskInPage}

// Hints are a tool's annotations as MCP defines their meaning: a hint a
// tool does not give takes the protocol's default (destructiveHint and
// openWorldHint true, the others false), and destructiveHint and
// idempotentHint mean something only for a tool that is not read-only.
type Hints struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
}

// HintsOf reads the hints of a tool object as a server lists it.
func HintsOf(tool json.RawMessage) Hints {
	var t struct {
		Annotations struct {
			ReadOnly    *bool `json:"readOnlyHint"`
			Destructive *bool `json:"destructiveHint"`
			Idempotent  *bool `json:"idempotentHint"`
			OpenWorld   *bool `json:"openWorldHint"`
		} `json:"annotations"`
	}
	_ = json.Unmarshal(tool, &t)
	a := t.Annotations
	val := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	h := Hints{ReadOnly: val(a.ReadOnly, false), OpenWorld: val(a.OpenWorld, true)}
	if !h.ReadOnly {
		h.Destructive = val(a.Destructive, true)
		h.Idempotent = val(a.Idempotent, false)
	}
	return h
}

func (h Hints) has(name string) bool {
	switch name {
	case ReadOnlyHint:
		return h.ReadOnly
	case DestructiveHint:
		return h.Destructive
	case IdempotentHint:
		return h.Idempotent
	case OpenWorldHint:
		return h.OpenWorld
	}
	return false
}

// Policy is the rules that apply to the tools of one server: those of
// the top level, of its toolbox and its own. Any of them may be nil.
type Policy struct {
	Top, Toolbox, Server *Rules
}

// Empty reports whether no level has a rule: every call is allowed, as
// without permissions.
func (p Policy) Empty() bool {
	return p.Top == nil && p.Toolbox == nil && p.Server == nil
}

// Verdict is a decision and what made it.
type Verdict struct {
	Decision Decision
	// By says which part of the configuration decided, for messages and
	// logs: a rule's JSON path and pattern, a hint, a default.
	By string
}

// ByName returns the decision of the rules that name the tool (the
// server's, the toolbox's, the top level's), and whether one does.
func (p Policy) ByName(server, tool string) (Verdict, bool) {
	if p.Server != nil {
		if r := pick(p.Server.Tools, func(pat string) bool { return Match(pat, tool) }, false); r != nil {
			return ruleVerdict(r), true
		}
	}
	for _, rs := range []*Rules{p.Toolbox, p.Top} {
		if rs == nil {
			continue
		}
		if r := pick(rs.Tools, func(pat string) bool { return MatchQualified(pat, server, tool) }, true); r != nil {
			return ruleVerdict(r), true
		}
	}
	return Verdict{}, false
}

func ruleVerdict(r *Rule) Verdict {
	return Verdict{Decision: r.Decision, By: fmt.Sprintf("the rule %q at %s", r.Pattern, r.Path)}
}

// NeedsHints reports whether the tool's decision may depend on its
// annotations: no rule names it and some level gives hints decisions.
func (p Policy) NeedsHints(server, tool string) bool {
	if _, ok := p.ByName(server, tool); ok {
		return false
	}
	return len(p.hintDecisions()) > 0
}

// Decide returns the decision for a call of tool of server. hints nil
// means the tool's annotations are not known: of what they could lead to,
// the strictest applies.
func (p Policy) Decide(server, tool string, hints *Hints) Verdict {
	if v, ok := p.ByName(server, tool); ok {
		return v
	}
	hd := p.hintDecisions()
	def := p.defaultVerdict()
	var best Verdict
	for _, name := range HintNames {
		e, ok := hd[name]
		if !ok {
			continue
		}
		if hints != nil && !hints.has(name) {
			continue
		}
		if e.d > best.Decision {
			best = Verdict{Decision: e.d, By: fmt.Sprintf("the tool's %s, given %q at %s", name, e.d, e.path)}
			if hints == nil {
				best.By = fmt.Sprintf("the tool's annotations, not known yet (%s gives %q at %s)", name, e.d, e.path)
			}
		}
	}
	if best.Decision == Unset || (hints == nil && def.Decision > best.Decision) {
		return def
	}
	return best
}

type hintEntry struct {
	d    Decision
	path string
}

// hintDecisions merges the levels' annotation decisions: the nearest
// level's for each hint.
func (p Policy) hintDecisions() map[string]hintEntry {
	var out map[string]hintEntry
	for _, rs := range []*Rules{p.Top, p.Toolbox, p.Server} {
		if rs == nil {
			continue
		}
		for name, d := range rs.Annotations {
			if out == nil {
				out = map[string]hintEntry{}
			}
			out[name] = hintEntry{d, rs.AnnotationPaths[name]}
		}
	}
	return out
}

// AskIn returns where the questions about the policy's tools are asked:
// the nearest level's "askIn" (the server's, the toolbox's, the top
// level's), else AskInHost; and by, where the configuration says so ("" for
// the default), for messages.
func (p Policy) AskIn() (where, by string) {
	for _, rs := range []*Rules{p.Server, p.Toolbox, p.Top} {
		if rs != nil && rs.AskIn != "" {
			return rs.AskIn, fmt.Sprintf("%q at %s", rs.AskIn, rs.AskInPath)
		}
	}
	return AskInHost, ""
}

func (p Policy) defaultVerdict() Verdict {
	for _, rs := range []*Rules{p.Server, p.Toolbox, p.Top} {
		if rs != nil && rs.Default != Unset {
			return Verdict{Decision: rs.Default, By: fmt.Sprintf("the default %q at %s", rs.Default, rs.DefaultPath)}
		}
	}
	return Verdict{Decision: Allow, By: "no rule (allowed by default)"}
}

// pick returns the most specific of the rules that match, nil if none
// does. qualified says the patterns may name "server/tool" (a pattern
// without a slash names a tool of any server).
func pick(rules []Rule, match func(string) bool, qualified bool) *Rule {
	var cands []*Rule
	for i := range rules {
		if match(rules[i].Pattern) {
			cands = append(cands, &rules[i])
		}
	}
	if len(cands) <= 1 {
		if len(cands) == 1 {
			return cands[0]
		}
		return nil
	}
	// The winner is a rule that every other one covers; with no such rule
	// (a conflict the configuration's validation reports), the strictest.
	for _, c := range cands {
		ok := true
		for _, o := range cands {
			if o != c && o.Decision != c.Decision && !coversRule(o.Pattern, c.Pattern, qualified) {
				ok = false
				break
			}
		}
		if ok {
			return c
		}
	}
	best := cands[0]
	for _, c := range cands[1:] {
		if c.Decision > best.Decision {
			best = c
		}
	}
	return best
}

// MatchQualified matches a rule of the toolbox or top level: a pattern
// with a slash against "server/tool" — the server's name before its first
// slash, the tool's after it, slashes and all ("raw/*" matches the tool
// "x/y" of the server raw) — one without against the tool's name.
func MatchQualified(pattern, server, tool string) bool {
	srv, t, ok := strings.Cut(pattern, "/")
	if !ok {
		return Match(pattern, tool)
	}
	return Match(srv, server) && Match(t, tool)
}

// splitRule reads a toolbox- or top-level pattern as its server and tool
// parts: one without a slash names a tool of any server.
func splitRule(pattern string) (server, tool string) {
	if srv, t, ok := strings.Cut(pattern, "/"); ok {
		return srv, t
	}
	return "*", pattern
}

// coversRule is Covers for the patterns of one level: qualified ones part
// by part.
func coversRule(general, specific string, qualified bool) bool {
	if !qualified {
		return Covers(general, specific)
	}
	gs, gt := splitRule(general)
	ss, st := splitRule(specific)
	return Covers(gs, ss) && Covers(gt, st)
}

// Covers reports whether every name that specific matches, general
// matches too, as far as general matches specific as written (get_* is
// covered by * and by get_*; read_file by read_*).
func Covers(general, specific string) bool {
	return general == specific || Match(general, specific)
}
