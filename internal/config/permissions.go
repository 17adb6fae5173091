package config

import (
	"path"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/permissions"
)

// permissions reads a "permissions" object at p: the schema checked the
// decisions; this checks the patterns, names the rules by their paths and
// reports rules of the level that conflict. qualified says the rules may
// name "server/tool" (the top level and toolboxes).
func (v *validator) permissions(n *node, p string, qualified bool, info *schemaInfo) *permissions.Rules {
	if n == nil || n.kind != kObject {
		return nil
	}
	v.checkUnknown(n, p, info.permissions, "permissions")
	rs := &permissions.Rules{}
	if tools := n.get("tools"); tools != nil && tools.kind == kObject {
		tp := JoinPath(p, "tools")
		for i, pattern := range tools.keys {
			rp := JoinPath(tp, pattern)
			val := tools.vals[i]
			d, ok := permissions.Parse(str(val))
			if !ok {
				continue // the schema said so
			}
			if _, err := path.Match(pattern, ""); err != nil {
				v.problem(rp, "bad glob pattern %q: %v", pattern, err)
				continue
			}
			if !qualified && strings.Contains(pattern, "/") {
				v.problem(rp, "a server's rules name its tools, without the server: write the tool's name or glob, or move the rule to the toolbox's or the top level's \"permissions\" (there, a tool whose name has a \"/\" is named \"server/tool\": \"raw/admin/*\")")
				continue
			}
			rs.Tools = append(rs.Tools, permissions.Rule{Pattern: pattern, Decision: d, Path: rp})
		}
		for _, c := range permissions.Conflicts(rs.Tools, qualified) {
			v.problem(c.B.Path, "conflicts with %s: %s", c.A.Path, c)
		}
	}
	if a := n.get("annotations"); a != nil && a.kind == kObject {
		ap := JoinPath(p, "annotations")
		for i, hint := range a.keys {
			d, ok := permissions.Parse(str(a.vals[i]))
			known := false
			for _, h := range permissions.HintNames {
				known = known || h == hint
			}
			if !known {
				hints := map[string]string{}
				for _, h := range permissions.HintNames {
					hints[h] = ""
				}
				if m := nearMiss(hint, hints); m != "" {
					v.problem(JoinPath(ap, hint), "unknown annotation hint: did you mean %q?", m)
				} else {
					v.problem(JoinPath(ap, hint), "unknown annotation hint; the hints are %s", strings.Join(permissions.HintNames, ", "))
				}
				continue
			}
			if !ok {
				continue
			}
			if rs.Annotations == nil {
				rs.Annotations = map[string]permissions.Decision{}
				rs.AnnotationPaths = map[string]string{}
			}
			rs.Annotations[hint] = d
			rs.AnnotationPaths[hint] = JoinPath(ap, hint)
		}
	}
	if d, ok := permissions.Parse(str(n.get("default"))); ok {
		rs.Default, rs.DefaultPath = d, JoinPath(p, "default")
	}
	switch where := str(n.get("askIn")); where {
	case permissions.AskInHost, permissions.AskInPage:
		rs.AskIn, rs.AskInPath = where, JoinPath(p, "askIn")
	} // another value: the schema said so
	v.anyPermissions = true
	return rs
}
