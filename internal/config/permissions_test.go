package config

import (
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/permissions"
)

// permDoc is a configuration with "permissions" at each level: top, the
// toolbox "dev" and its server "gh".
func permDoc(top, toolbox, server string) string {
	opt := func(s string) string {
		if s == "" {
			return ""
		}
		return `, "permissions": ` + s
	}
	return `{"toolboxes": {"dev": {"description": "Development", "mcpServers": {"gh": {"command": "gh"` + opt(server) + `}}` + opt(toolbox) + `}}` + opt(top) + `}`
}

func TestPermissionsAreRead(t *testing.T) {
	cfg, err := Parse([]byte(permDoc(
		`{"tools": {"gh/delete_*": "deny"}, "annotations": {"destructiveHint": "ask", "readOnlyHint": "allow"}, "default": "allow"}`,
		`{"tools": {"create_*": "ask"}}`,
		`{"tools": {"get_*": "allow", "*": "ask"}, "default": "deny"}`)), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.AnyPermissions {
		t.Error("AnyPermissions not set")
	}
	top := cfg.Permissions
	if len(top.Tools) != 1 || top.Tools[0] != (permissions.Rule{Pattern: "gh/delete_*", Decision: permissions.Deny, Path: `permissions.tools.gh/delete_*`}) {
		t.Errorf("top rules: %+v", top.Tools)
	}
	if top.Annotations[permissions.DestructiveHint] != permissions.Ask || top.Annotations[permissions.ReadOnlyHint] != permissions.Allow ||
		top.AnnotationPaths[permissions.DestructiveHint] != "permissions.annotations.destructiveHint" || top.Default != permissions.Allow {
		t.Errorf("top annotations/default: %+v", top)
	}
	tb := cfg.Toolbox("dev")
	if tb.Permissions == nil || tb.Permissions.Tools[0].Path != `toolboxes.dev.permissions.tools.create_*` {
		t.Errorf("toolbox rules: %+v", tb.Permissions)
	}
	s := tb.Server("gh")
	if s.Permissions == nil || len(s.Permissions.Tools) != 2 || s.Permissions.Default != permissions.Deny || s.Permissions.DefaultPath != "toolboxes.dev.mcpServers.gh.permissions.default" {
		t.Errorf("server rules: %+v", s.Permissions)
	}

	plain, err := Parse([]byte(permDoc("", "", "")), env(nil))
	if err != nil || plain.AnyPermissions || plain.Permissions != nil {
		t.Errorf("no permissions: %+v, %v", plain, err)
	}
}

// TestPermissionsAskIn: "askIn" is read at each level, with its path;
// the nearest level that sets it wins; one in a level without "ask"
// rules is no error.
func TestPermissionsAskIn(t *testing.T) {
	cfg, err := Parse([]byte(permDoc(`{"askIn": "page", "annotations": {"destructiveHint": "ask"}}`, `{"askIn": "host"}`, `{"askIn": "page"}`)), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	tb := cfg.Toolbox("dev")
	sc := tb.Server("gh")
	if cfg.Permissions.AskIn != permissions.AskInPage || cfg.Permissions.AskInPath != "permissions.askIn" ||
		tb.Permissions.AskIn != permissions.AskInHost || sc.Permissions.AskInPath != "toolboxes.dev.mcpServers.gh.permissions.askIn" {
		t.Errorf("askIn: top %+v, toolbox %+v, server %+v", cfg.Permissions, tb.Permissions, sc.Permissions)
	}
	for _, tt := range []struct {
		name      string
		pol       permissions.Policy
		where, by string
	}{
		{"server's", permissions.Policy{Top: cfg.Permissions, Toolbox: tb.Permissions, Server: sc.Permissions}, "page", `"page" at toolboxes.dev.mcpServers.gh.permissions.askIn`},
		{"toolbox's", permissions.Policy{Top: cfg.Permissions, Toolbox: tb.Permissions}, "host", `"host" at toolboxes.dev.permissions.askIn`},
		{"top level's", permissions.Policy{Top: cfg.Permissions}, "page", `"page" at permissions.askIn`},
		{"none", permissions.Policy{}, "host", ""},
	} {
		if where, by := tt.pol.AskIn(); where != tt.where || by != tt.by {
			t.Errorf("%s: %q by %q, want %q by %q", tt.name, where, by, tt.where, tt.by)
		}
	}
}

// TestPermissionsBadInput: each mistake is an error naming where it is.
func TestPermissionsBadInput(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      []string
	}{
		{"unknown decision", permDoc(`{"tools": {"gh/x": "prompt"}}`, "", ""),
			[]string{`permissions.tools.gh/x`, "allow", "ask", "deny"}},
		{"unknown decision of a hint", permDoc("", `{"annotations": {"destructiveHint": "maybe"}}`, ""),
			[]string{"toolboxes.dev.permissions.annotations.destructiveHint", "allow"}},
		{"unknown default", permDoc("", "", `{"default": "yes"}`),
			[]string{"toolboxes.dev.mcpServers.gh.permissions.default"}},
		{"near miss of a hint", permDoc(`{"annotations": {"destructivehint": "ask"}}`, "", ""),
			[]string{"permissions.annotations.destructivehint", `did you mean "destructiveHint"`}},
		{"unknown hint", permDoc(`{"annotations": {"dangerous": "ask"}}`, "", ""),
			[]string{"permissions.annotations.dangerous", "readOnlyHint, destructiveHint, idempotentHint, openWorldHint"}},
		{"near miss of a key", permDoc(`{"tool": {"x": "ask"}}`, "", ""),
			[]string{"permissions.tool", `did you mean "tools"`}},
		{"bad glob", permDoc("", `{"tools": {"[a-": "deny"}}`, ""),
			[]string{`toolboxes.dev.permissions.tools["[a-"]`, "bad glob pattern"}},
		{"server rule naming a server", permDoc("", "", `{"tools": {"gh/x": "deny"}}`),
			[]string{`toolboxes.dev.mcpServers.gh.permissions.tools.gh/x`, "without the server"}},
		{"a slashed tool at the server", permDoc("", "", `{"tools": {"admin/*": "deny"}}`),
			[]string{`toolboxes.dev.mcpServers.gh.permissions.tools.admin/*`, `"raw/admin/*"`}},
		{"conflict", permDoc("", "", `{"tools": {"create_*": "allow", "*_issue": "deny"}}`),
			[]string{`toolboxes.dev.mcpServers.gh.permissions.tools.*_issue`, `"create_*" (allow) and "*_issue" (deny) both match "create_issue"`}},
		{"conflict across the slash", permDoc(`{"tools": {"gh/*": "allow", "*/delete_*": "deny"}}`, "", ""),
			[]string{`permissions.tools.*/delete_*`, `both match "gh/delete_"`}},
		{"not an object", permDoc(`["deny"]`, "", ""), []string{"permissions"}},
		{"unknown askIn", permDoc("", "", `{"askIn": "browser"}`),
			[]string{"toolboxes.dev.mcpServers.gh.permissions.askIn", `"host"`, `"page"`}},
		{"askIn not a string", permDoc(`{"askIn": true}`, "", ""),
			[]string{"permissions.askIn"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), env(nil))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

// TestPermissionsNoConflict: rules of one level where one covers the
// other, or that agree, or that never match the same name, are fine.
func TestPermissionsNoConflict(t *testing.T) {
	for _, rules := range []string{
		`{"*": "ask", "get_*": "allow", "get_secret": "deny"}`,
		`{"create_*": "ask", "*_issue": "ask"}`,
		`{"read_*": "allow", "write_*": "deny"}`,
		`{"a?": "allow", "b*": "deny"}`,
	} {
		if _, err := Parse([]byte(permDoc("", "", `{"tools": `+rules+`}`)), env(nil)); err != nil {
			t.Errorf("%s: %v", rules, err)
		}
	}
	// Tool names may contain "/": a toolbox's or the top level's rule names
	// the server before the first slash, the tool after it.
	if _, err := Parse([]byte(permDoc(`{"tools": {"gh/admin/*": "deny", "gh/*": "allow"}}`, `{"tools": {"r*/x": "allow", "raw/y/x": "deny"}}`, "")), env(nil)); err != nil {
		t.Errorf("tools with slashes: %v", err)
	}
	if _, err := Parse([]byte(permDoc(`{"tools": {"*": "ask", "gh/*": "allow", "delete_*": "deny"}}`, "", "")), env(nil)); err == nil {
		t.Error(`"gh/*" allow and "delete_*" deny overlap at gh/delete_x: want a conflict`)
	}
}
