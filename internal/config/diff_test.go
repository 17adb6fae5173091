package config

import (
	"reflect"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/permissions"
)

// diffBase is the configuration the Diff tests change.
const diffBase = `{
  "toolboxes": {
    "dev": {"description": "Development", "mcpServers": {
      "fs":  {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}},
      "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}}
    }},
    "prod": {"description": "Production", "mcpServers": {
      "db": {"command": "db"}
    }}
  }
}`

func mustParse(t *testing.T, doc string) *Config {
	t.Helper()
	cfg, err := Parse([]byte(doc), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestDiff(t *testing.T) {
	type ids = []ServerID
	tests := []struct {
		name string
		new  string
		want Changes
	}{
		{name: "same", new: diffBase, want: Changes{
			ServersUnchanged: ids{{"dev", "fs"}, {"dev", "web"}, {"prod", "db"}},
		}},
		{name: "whitespace, key order and unknown keys do not count", new: `{"host": 1, "toolboxes": {
			"dev": {"mcpServers": {"fs": {"env": {"K": "v"}, "args": ["/tmp"], "command": "fs"}, "web": {"headers": {"A": "b"}, "url": "http://127.0.0.1:1/mcp"}}, "description": "Development"},
			"prod": {"description": "Production", "mcpServers": {"db": {"command": "db", "env": {}, "connectionTimeoutMs": 30000}}}}}`,
			want: Changes{ServersUnchanged: ids{{"dev", "fs"}, {"dev", "web"}, {"prod", "db"}}}},
		{name: "toolbox added", new: `{"toolboxes": {
			"dev": {"description": "Development", "mcpServers": {"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}}, "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}}}},
			"prod": {"description": "Production", "mcpServers": {"db": {"command": "db"}}},
			"ops": {"description": "Ops", "mcpServers": {"k8s": {"command": "k"}, "off": {"command": "o", "disabled": true}}}}}`,
			want: Changes{
				ToolboxesAdded:   []string{"ops"},
				ServersAdded:     ids{{"ops", "k8s"}, {"ops", "off"}},
				ServersUnchanged: ids{{"dev", "fs"}, {"dev", "web"}, {"prod", "db"}},
			}},
		{name: "toolbox removed", new: `{"toolboxes": {
			"dev": {"description": "Development", "mcpServers": {"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}}, "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}}}}}}`,
			want: Changes{
				ToolboxesRemoved: []string{"prod"},
				ServersRemoved:   ids{{"prod", "db"}},
				ServersUnchanged: ids{{"dev", "fs"}, {"dev", "web"}},
			}},
		{name: "toolboxes reordered", new: `{"toolboxes": {
			"prod": {"description": "Production", "mcpServers": {"db": {"command": "db"}}},
			"dev": {"description": "Development", "mcpServers": {"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}}, "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}}}}}}`,
			want: Changes{
				ToolboxesReordered: true,
				ServersUnchanged:   ids{{"prod", "db"}, {"dev", "fs"}, {"dev", "web"}},
			}},
		{name: "description changed", new: `{"toolboxes": {
			"dev": {"description": "Dev tools", "mcpServers": {"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}}, "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}}}},
			"prod": {"description": "Production", "mcpServers": {"db": {"command": "db"}}}}}`,
			want: Changes{
				ToolboxesChanged: []string{"dev"},
				ServersUnchanged: ids{{"dev", "fs"}, {"dev", "web"}, {"prod", "db"}},
			}},
		{name: "server added, removed, reordered", new: `{"toolboxes": {
			"dev": {"description": "Development", "mcpServers": {"web": {"url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}}, "git": {"command": "git"}}},
			"prod": {"description": "Production", "mcpServers": {"db": {"command": "db"}}}}}`,
			want: Changes{
				ToolboxesChanged: []string{"dev"},
				ServersAdded:     ids{{"dev", "git"}},
				ServersRemoved:   ids{{"dev", "fs"}},
				ServersUnchanged: ids{{"dev", "web"}, {"prod", "db"}},
			}},
		{name: "servers reordered", new: `{"toolboxes": {
			"dev": {"description": "Development", "mcpServers": {"web": {"url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}}, "fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}}}},
			"prod": {"description": "Production", "mcpServers": {"db": {"command": "db"}}}}}`,
			want: Changes{
				ToolboxesChanged: []string{"dev"},
				ServersUnchanged: ids{{"dev", "web"}, {"dev", "fs"}, {"prod", "db"}},
			}},
		{name: "a server moved to another toolbox", new: `{"toolboxes": {
			"dev": {"description": "Development", "mcpServers": {"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}}, "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}}, "db": {"command": "db"}}},
			"prod": {"description": "Production", "mcpServers": {"db2": {"command": "db"}}}}}`,
			want: Changes{
				ToolboxesChanged: []string{"dev", "prod"},
				ServersAdded:     ids{{"dev", "db"}, {"prod", "db2"}},
				ServersRemoved:   ids{{"prod", "db"}},
				ServersUnchanged: ids{{"dev", "fs"}, {"dev", "web"}},
			}},
	}
	// Each field that defines a server: changing it changes the server.
	serverChanges := map[string]string{
		"env value":     `"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "w"}}`,
		"args":          `"fs": {"command": "fs", "args": ["/tmp", "/x"], "env": {"K": "v"}}`,
		"command":       `"fs": {"command": "fs2", "args": ["/tmp"], "env": {"K": "v"}}`,
		"cwd":           `"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}, "cwd": "/"}`,
		"filters":       `"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}, "toolFilters": ["read_*"]}`,
		"disabled":      `"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}, "disabled": true}`,
		"timeout":       `"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}, "requestTimeoutMs": 5}`,
		"retries":       `"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}, "maxRetries": 0}`,
		"catalog":       `"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}, "catalog": false}`,
		"idleTimeoutMs": `"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}, "idleTimeoutMs": 60000}`,
	}
	for name, fs := range serverChanges {
		tests = append(tests, struct {
			name string
			new  string
			want Changes
		}{name: "server changed: " + name, new: `{"toolboxes": {
			"dev": {"description": "Development", "mcpServers": {` + fs + `, "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}}}},
			"prod": {"description": "Production", "mcpServers": {"db": {"command": "db"}}}}}`,
			want: Changes{
				ToolboxesChanged: []string{"dev"},
				ServersChanged:   ids{{"dev", "fs"}},
				ServersUnchanged: ids{{"dev", "web"}, {"prod", "db"}},
			}})
	}
	// A top-level default that changes every server's value.
	tests = append(tests, struct {
		name string
		new  string
		want Changes
	}{name: "top-level idleTimeoutMs", new: `{"idleTimeoutMs": 1000, "toolboxes": {
			"dev": {"description": "Development", "mcpServers": {"fs": {"command": "fs", "args": ["/tmp"], "env": {"K": "v"}, "idleTimeoutMs": 0}, "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}}}},
			"prod": {"description": "Production", "mcpServers": {"db": {"command": "db"}}}}}`,
		want: Changes{
			ToolboxesChanged: []string{"dev", "prod"},
			ServersChanged:   ids{{"dev", "web"}, {"prod", "db"}},
			ServersUnchanged: ids{{"dev", "fs"}},
		}})

	old := mustParse(t, diffBase)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diff(old, mustParse(t, tt.new))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Diff =\n%+v\nwant\n%+v", got, tt.want)
			}
			wantEmpty := tt.name == "same" || tt.name == "whitespace, key order and unknown keys do not count"
			if got.Empty() != wantEmpty {
				t.Errorf("Empty() = %v", got.Empty())
			}
			if got.ToolboxListChanged() == wantEmpty {
				t.Errorf("ToolboxListChanged() = %v", got.ToolboxListChanged())
			}
		})
	}
}

func TestDiffNil(t *testing.T) {
	cfg := mustParse(t, diffBase)
	all := []ServerID{{"dev", "fs"}, {"dev", "web"}, {"prod", "db"}}
	if got := Diff(nil, cfg); !reflect.DeepEqual(got, Changes{ToolboxesAdded: []string{"dev", "prod"}, ServersAdded: all}) {
		t.Errorf("Diff(nil, cfg) = %+v", got)
	}
	if got := Diff(cfg, nil); !reflect.DeepEqual(got, Changes{ToolboxesRemoved: []string{"dev", "prod"}, ServersRemoved: all}) {
		t.Errorf("Diff(cfg, nil) = %+v", got)
	}
	if got := Diff(nil, nil); !got.Empty() {
		t.Errorf("Diff(nil, nil) = %+v", got)
	}
}

// TestSameServerEveryField changes each field of Server in turn, by
// reflection, so that a field added to Server later is covered too.
func TestSameServerEveryField(t *testing.T) {
	base := func() *Server {
		return &Server{
			Name: "s", Transport: Stdio, Command: "c", Args: []string{"a"}, Env: map[string]string{"K": "v"},
			Cwd: "/", URL: "http://x", Headers: map[string]string{"H": "v"}, ToolFilters: []string{"*"},
			ConnectionTimeout: time.Second, RequestTimeout: time.Second, MaxRetries: 1, Catalog: true, IdleTimeout: time.Second,
		}
	}
	if !SameServer(base(), base()) {
		t.Fatal("equal servers differ")
	}
	typ := reflect.TypeFor[Server]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		b := base()
		v := reflect.ValueOf(b).Elem().Field(i)
		if !v.CanSet() {
			continue // unexported: DeepEqual compares it all the same
		}
		if f.Name == "Shown" || f.Name == "ShownFilters" {
			continue // how the file writes a value, for messages: below
		}
		if f.Name == "Permissions" {
			continue // applied per call, no part of the server: below
		}
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.Int, reflect.Int64:
			v.SetInt(v.Int() + 1)
		case reflect.Slice:
			v.Set(reflect.Append(v, reflect.ValueOf("x")))
		case reflect.Map:
			v.SetMapIndex(reflect.ValueOf("X"), reflect.ValueOf("y"))
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
		default:
			t.Errorf("field %s of kind %s: teach this test to change it", f.Name, v.Kind())
			continue
		}
		if SameServer(base(), b) {
			t.Errorf("a change of %s is not a change", f.Name)
		}
	}
	a, b := base(), base()
	a.Shown, a.ShownFilters = "${HOME}/bin/server", []string{"${FILTER}"}
	if !SameServer(a, b) {
		t.Error("the same server written with variables differs")
	}
	a, b = base(), base()
	a.Env, b.Env = nil, map[string]string{}
	a.Headers, b.Headers = map[string]string{}, nil
	if !SameServer(a, b) {
		t.Error("no env and an empty env differ")
	}
	a, b = base(), base()
	a.ToolFilters, b.ToolFilters = nil, []string{}
	if SameServer(a, b) {
		t.Error("toolFilters [] (no tool) is the same as none (every tool)")
	}
	a, b = base(), base()
	a.Permissions = &permissions.Rules{Default: permissions.Deny}
	if !SameServer(a, b) {
		t.Error("servers that differ only in their permissions differ: a change of rules would restart the server")
	}
	if !SameServer(nil, nil) || SameServer(base(), nil) || SameServer(nil, base()) {
		t.Error("nil servers")
	}
}
