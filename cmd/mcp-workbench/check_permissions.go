package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/permissions"
)

// permissionLines prints what the permission rules decide for each tool
// of a server that started: one line per decision and reason, naming its
// tools, and for asked tools whose questions go to the web UI's page
// ("askIn": "page"), that they are asked there.
func permissionLines(stdout io.Writer, cfg *config.Config, toolbox string, s *downstream.Server, ts *downstream.ToolSet) {
	if !cfg.AnyPermissions || ts == nil {
		return
	}
	tc := cfg.Toolbox(toolbox)
	pol := permissions.Policy{Top: cfg.Permissions, Toolbox: tc.Permissions, Server: s.Config().Permissions}
	type group struct {
		v     permissions.Verdict
		tools []string
	}
	var groups []*group
	for _, t := range ts.Tools {
		h := permissions.HintsOf(t.JSON)
		v := pol.Decide(s.Name, t.Name, &h)
		var g *group
		for _, x := range groups {
			if x.v == v {
				g = x
			}
		}
		if g == nil {
			g = &group{v: v}
			groups = append(groups, g)
		}
		g.tools = append(g.tools, t.Name)
	}
	where, whereBy := pol.AskIn()
	for _, g := range groups {
		by := g.v.By
		if g.v.Decision == permissions.Ask && where == permissions.AskInPage {
			by += "; asked in the web UI's page, by \"askIn\": " + whereBy
		}
		fmt.Fprintf(stdout, "  %-20s %-5s %s (%s)\n", "", g.v.Decision, strings.Join(g.tools, ", "), by)
	}
}

// unmatchedRules warns of the permission rules that match no tool of the
// servers they apply to, once every one of those servers listed its tools.
// listed maps each toolbox and server that started to its tools.
func unmatchedRules(stdout io.Writer, cfg *config.Config, listed map[config.ServerID]*downstream.ToolSet) {
	if !cfg.AnyPermissions {
		return
	}
	var warnings []string
	check := func(rs *permissions.Rules, scope []config.ServerID, match func(pattern, server, tool string) bool) {
		if rs == nil {
			return
		}
		for _, id := range scope {
			if listed[id] == nil {
				return // not known: a server failed, is disabled or was not checked
			}
		}
		for _, r := range rs.Tools {
			found := false
			for _, id := range scope {
				for _, t := range listed[id].Tools {
					found = found || match(r.Pattern, id.Server, t.Name)
				}
			}
			if !found {
				warnings = append(warnings, fmt.Sprintf("the rule %q at %s matches no tool", r.Pattern, r.Path))
			}
		}
	}
	qualified := permissions.MatchQualified
	plain := func(pattern, _, tool string) bool { return permissions.Match(pattern, tool) }
	var all []config.ServerID
	for _, tc := range cfg.Toolboxes {
		var box []config.ServerID
		for _, sc := range tc.Servers {
			id := config.ServerID{Toolbox: tc.Name, Server: sc.Name}
			box = append(box, id)
			check(sc.Permissions, []config.ServerID{id}, plain)
		}
		check(tc.Permissions, box, qualified)
		all = append(all, box...)
	}
	check(cfg.Permissions, all, qualified)
	if len(warnings) > 0 {
		fmt.Fprintln(stdout)
		for _, w := range warnings {
			fmt.Fprintln(stdout, "warning: permissions: "+w)
		}
	}
}
