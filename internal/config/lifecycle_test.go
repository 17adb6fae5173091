package config

import (
	"strings"
	"testing"
	"time"
)

// TestCatalogAndIdleTimeout checks that "catalog" and "idleTimeoutMs" are
// read at the top level as defaults and that a server's own value wins.
func TestCatalogAndIdleTimeout(t *testing.T) {
	tests := []struct {
		name        string
		top, server string // JSON members, without braces
		// s sets the server's values; other sets none and inherits.
		sCatalog, otherCatalog bool
		sIdle, otherIdle       time.Duration
	}{
		{name: "defaults", sCatalog: true, otherCatalog: true},
		{name: "top level", top: `"catalog": false, "idleTimeoutMs": 60000`,
			sCatalog: false, sIdle: time.Minute, otherCatalog: false, otherIdle: time.Minute},
		{name: "server only", server: `"catalog": false, "idleTimeoutMs": 1500`,
			sCatalog: false, sIdle: 1500 * time.Millisecond, otherCatalog: true},
		{name: "server wins", top: `"catalog": false, "idleTimeoutMs": 60000`, server: `"catalog": true, "idleTimeoutMs": 0`,
			sCatalog: true, sIdle: 0, otherCatalog: false, otherIdle: time.Minute},
		{name: "server wins the other way", top: `"catalog": true, "idleTimeoutMs": 0`, server: `"catalog": false, "idleTimeoutMs": 5`,
			sCatalog: false, sIdle: 5 * time.Millisecond, otherCatalog: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `{` + tt.top + comma(tt.top) + `"toolboxes": {"dev": {"description": "d", "mcpServers": {
				"s": {` + tt.server + comma(tt.server) + `"command": "x"},
				"other": {"url": "http://127.0.0.1:1/mcp"}}}}}`
			cfg, err := Parse([]byte(doc), env(nil))
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Warnings) != 0 {
				t.Errorf("warnings: %q", cfg.Warnings)
			}
			s := cfg.Toolbox("dev").Server("s")
			if s.Catalog != tt.sCatalog || s.IdleTimeout != tt.sIdle {
				t.Errorf("s: catalog %v, idle %v; want %v, %v", s.Catalog, s.IdleTimeout, tt.sCatalog, tt.sIdle)
			}
			o := cfg.Toolbox("dev").Server("other")
			if o.Catalog != tt.otherCatalog || o.IdleTimeout != tt.otherIdle {
				t.Errorf("other: catalog %v, idle %v; want %v, %v", o.Catalog, o.IdleTimeout, tt.otherCatalog, tt.otherIdle)
			}
		})
	}
}

func comma(members string) string {
	if members == "" {
		return ""
	}
	return ", "
}

// TestCatalogAndIdleTimeoutErrors checks that bad values are reported at
// their JSON path, at the top level and on a server.
func TestCatalogAndIdleTimeoutErrors(t *testing.T) {
	doc := `{
  "idleTimeoutMs": -1,
  "catalog": "no",
  "toolboxes": {"dev": {"description": "d", "mcpServers": {
    "a": {"command": "x", "idleTimeoutMs": 1.5, "catalog": 0},
    "b": {"command": "x", "idleTimeoutMs": "60000"},
    "c": {"command": "x", "idleTimeoutMs": 2147483648}
  }}}
}`
	_, err := Parse([]byte(doc), env(nil))
	wantProblems(t, err, map[string]string{
		"idleTimeoutMs": "must be at least 0 (milliseconds), got -1",
		"catalog":       "must be a boolean, not a string",
		"toolboxes.dev.mcpServers.a.idleTimeoutMs": "must be a whole number, not 1.5",
		"toolboxes.dev.mcpServers.a.catalog":       "must be a boolean, not a number",
		"toolboxes.dev.mcpServers.b.idleTimeoutMs": `not the string "60000" (write it without quotes)`,
		"toolboxes.dev.mcpServers.c.idleTimeoutMs": "must be at most 2147483647 (milliseconds)",
	})
}

// TestToolChangeSettings checks "toolChanges", "blockFlaggedTools" and
// "approveNewTools": top level, per server (the server wins), defaults,
// and a value outside the enum named by its path.
func TestToolChangeSettings(t *testing.T) {
	cfg, err := Parse([]byte(`{"toolChanges": "warn", "blockFlaggedTools": true, "toolboxes": {"t": {"description": "d", "mcpServers": {
		"a": {"command": "x"},
		"b": {"command": "x", "toolChanges": "off", "blockFlaggedTools": false, "approveNewTools": true}}}}}`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.Toolbox("t").Server("a"), cfg.Toolbox("t").Server("b")
	if a.ToolChanges != ToolChangesWarn || !a.BlockFlagged || a.ApproveNewTools {
		t.Errorf("a: %q %v %v", a.ToolChanges, a.BlockFlagged, a.ApproveNewTools)
	}
	if b.ToolChanges != ToolChangesOff || b.BlockFlagged || !b.ApproveNewTools {
		t.Errorf("b: %q %v %v", b.ToolChanges, b.BlockFlagged, b.ApproveNewTools)
	}
	cfg, err = Parse([]byte(`{"toolboxes": {"t": {"description": "d", "mcpServers": {"a": {"command": "x"}}}}}`), env(nil))
	if err != nil || cfg.Toolbox("t").Server("a").ToolChanges != ToolChangesBlock {
		t.Errorf("default: %v", err)
	}
	_, err = Parse([]byte(`{"toolboxes": {"t": {"description": "d", "mcpServers": {"a": {"command": "x", "toolChanges": "allow"}}}}}`), env(nil))
	if err == nil || !strings.Contains(err.Error(), "toolChanges") {
		t.Errorf("bad value: %v", err)
	}
}
