package config

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestShared checks "shared": off by default, on for every server when the
// top level says so, off for a toolbox or a server that says false, and a
// true below a false (which cannot turn sharing back on) warned about.
func TestShared(t *testing.T) {
	servers := `"toolboxes": {
		"a": {"description": "d", "mcpServers": {
			"s": {"command": "x"},
			"own": {"command": "x", "shared": false},
			"yes": {"command": "x", "shared": true},
			"r": {"url": "http://127.0.0.1:1/mcp"}}},
		"b": {"description": "d", "shared": false, "mcpServers": {
			"s": {"command": "x"},
			"yes": {"command": "x", "shared": true}}}}`
	tests := []struct {
		name, top string
		shared    bool
		want      map[string]bool // toolbox/server → Shared
		warnings  []string
	}{
		{name: "default", shared: false,
			want: map[string]bool{"a/s": false, "a/own": false, "a/yes": false, "a/r": false, "b/s": false, "b/yes": false},
			warnings: []string{
				`toolboxes.a.mcpServers.yes.shared: true has no effect: the top-level "shared" is not true, and a server is shared only when everything above it is`,
				`toolboxes.b.mcpServers.yes.shared: true has no effect: the top-level "shared" is not true, and a server is shared only when everything above it is`,
			}},
		{name: "on", top: `"shared": true, `, shared: true,
			want: map[string]bool{"a/s": true, "a/own": false, "a/yes": true, "a/r": true, "b/s": false, "b/yes": false},
			warnings: []string{
				`toolboxes.b.mcpServers.yes.shared: true has no effect: its toolbox says "shared": false, and a server is shared only when everything above it is`,
			}},
		{name: "off", top: `"shared": false, `, shared: false,
			want: map[string]bool{"a/s": false, "a/own": false, "a/yes": false, "a/r": false, "b/s": false, "b/yes": false},
			warnings: []string{
				`toolboxes.a.mcpServers.yes.shared: true has no effect: the top-level "shared" is not true, and a server is shared only when everything above it is`,
				`toolboxes.b.mcpServers.yes.shared: true has no effect: the top-level "shared" is not true, and a server is shared only when everything above it is`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(`{`+tt.top+servers+`}`), env(nil))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Shared != tt.shared {
				t.Errorf("Config.Shared = %v, want %v", cfg.Shared, tt.shared)
			}
			for id, want := range tt.want {
				tb, srv, _ := strings.Cut(id, "/")
				if got := cfg.Toolbox(tb).Server(srv).Shared; got != want {
					t.Errorf("%s: Shared = %v, want %v", id, got, want)
				}
			}
			if !slices.Equal(cfg.Warnings, tt.warnings) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(cfg.Warnings, "\n"), strings.Join(tt.warnings, "\n"))
			}
		})
	}
}

// TestSharedErrors: a "shared" that is not a boolean is reported at its
// JSON path, at each of the three levels, with the value as written.
func TestSharedErrors(t *testing.T) {
	doc := `{
  "shared": "yes",
  "toolboxes": {"dev": {"description": "d", "shared": 0, "mcpServers": {
    "a": {"command": "x", "shared": "${NOPE:-false}"},
    "b": {"command": "x", "sharde": false},
    "c": {"command": "x", "shared": "true"}
  }}}
}`
	_, err := Parse([]byte(doc), env(nil))
	wantProblems(t, err, map[string]string{
		"shared":                            "must be a boolean, not a string",
		"toolboxes.dev.shared":              "must be a boolean, not a number",
		"toolboxes.dev.mcpServers.a.shared": `not the string "${NOPE:-false}": a ${VAR} makes a string`,
		"toolboxes.dev.mcpServers.b.sharde": `did you mean "shared"?`,
		"toolboxes.dev.mcpServers.c.shared": `must be a boolean, not the string "true" (write it without quotes)`,
	})
}

// TestSharedEnv keeps only the listed variables (LC_* and XDG_* by
// prefix, proxies in both cases), the last of a name, sorted.
func TestSharedEnv(t *testing.T) {
	in := []string{
		"PROJECT=/src/x", "PATH=/bin", "HOME=/home/u", "LC_ALL=C", "LC_=odd", "XDG_CONFIG_HOME=/home/u/.config",
		"https_proxy=http://p:1", "HTTPS_PROXY=http://p:2", "GITHUB_TOKEN=secret", "TERM=xterm", "SSL_CERT_FILE=/c.pem",
		"PATH=/usr/bin:/bin", "=C:=C:\\", "NOEQUALS", "LANG=en_US.UTF-8", "TZ=UTC", "SHELLX=no",
	}
	want := []string{
		"HOME=/home/u", "HTTPS_PROXY=http://p:2", "LANG=en_US.UTF-8", "LC_ALL=C", "PATH=/usr/bin:/bin",
		"SSL_CERT_FILE=/c.pem", "TZ=UTC", "XDG_CONFIG_HOME=/home/u/.config", "https_proxy=http://p:1",
	}
	if got := SharedEnv(in); !slices.Equal(got, want) {
		t.Errorf("SharedEnv:\n got %q\nwant %q", got, want)
	}
	if got := SharedEnv(nil); got == nil || len(got) != 0 {
		t.Errorf("SharedEnv(nil) = %#v, want empty, not nil (nil is the workbench's own environment)", got)
	}
	a := SharedEnv([]string{"HOME=/h", "PATH=/p", "SECRET=1"})
	b := SharedEnv([]string{"SECRET=2", "PATH=/p", "HOME=/h", "OTHER=x"})
	if !slices.Equal(a, b) {
		t.Errorf("the same shared variables in another order differ: %q, %q", a, b)
	}
	if runtime.GOOS == "windows" {
		if got := SharedEnv([]string{"Path=C:\\bin", "SystemRoot=C:\\Windows"}); len(got) != 2 {
			t.Errorf("Windows names in another case: %q", got)
		}
	}
}

// TestForSession: stdio servers without a cwd get the session's folder;
// shared ones start from SharedEnv of the session's environment, the others
// from the whole of it; remote servers are left alone; the result keys
// the pool alike for two sessions whose launches are the same.
func TestForSession(t *testing.T) {
	doc := `{"shared": true, "toolboxes": {"dev": {"description": "d", "mcpServers": {
		"shared": {"command": "x", "args": ["${PROJECT:-none}"]},
		"fixed": {"command": "x", "cwd": "/srv"},
		"own": {"command": "x", "shared": false},
		"remote": {"url": "http://127.0.0.1:1/mcp"}}}}}`
	sessionEnv := []string{"HOME=/home/u", "PATH=/bin", "PROJECT=/src/p", "TOKEN=t"}
	cfg, err := Parse([]byte(doc), env(map[string]string{"PROJECT": "/src/p"}))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ForSession(sessionEnv, "/src/p")
	tb := cfg.Toolbox("dev")
	sh, fixed, own, remote := tb.Server("shared"), tb.Server("fixed"), tb.Server("own"), tb.Server("remote")
	if sh.Cwd != "/src/p" || fixed.Cwd != "/srv" || own.Cwd != "/src/p" || remote.Cwd != "" {
		t.Errorf("cwd: shared %q, fixed %q, own %q, remote %q", sh.Cwd, fixed.Cwd, own.Cwd, remote.Cwd)
	}
	if !sh.SessionCwd || fixed.SessionCwd || !own.SessionCwd || remote.SessionCwd {
		t.Errorf("SessionCwd: shared %v, fixed %v, own %v, remote %v", sh.SessionCwd, fixed.SessionCwd, own.SessionCwd, remote.SessionCwd)
	}
	if want := []string{"HOME=/home/u", "PATH=/bin"}; !slices.Equal(sh.BaseEnv, want) || !slices.Equal(fixed.BaseEnv, want) {
		t.Errorf("shared servers' BaseEnv: %q, %q; want %q", sh.BaseEnv, fixed.BaseEnv, want)
	}
	if !slices.Equal(own.BaseEnv, sessionEnv) {
		t.Errorf("own server's BaseEnv = %q, want the session's whole environment", own.BaseEnv)
	}
	if remote.BaseEnv != nil {
		t.Errorf("remote server's BaseEnv = %q", remote.BaseEnv)
	}

	// A second session with the same launch, its environment in another
	// order and with other variables of its own, defines the same server.
	cfg2, err := Parse([]byte(doc), env(map[string]string{"PROJECT": "/src/p"}))
	if err != nil {
		t.Fatal(err)
	}
	cfg2.ForSession([]string{"TOKEN=other", "PATH=/bin", "HOME=/home/u"}, "/src/p")
	if !SameServer(sh, cfg2.Toolbox("dev").Server("shared")) {
		t.Error("two sessions with the same launch define different servers")
	}
	// Another folder is another server, when the server has no cwd.
	cfg3, _ := Parse([]byte(doc), env(map[string]string{"PROJECT": "/src/p"}))
	cfg3.ForSession(sessionEnv, "/src/q")
	if SameServer(sh, cfg3.Toolbox("dev").Server("shared")) || !SameServer(fixed, cfg3.Toolbox("dev").Server("fixed")) {
		t.Error("the session's folder: a server without cwd must differ, one with a cwd must not")
	}
	// A change of "shared" alone is a change of the server on reload.
	on, _ := Parse([]byte(doc), env(map[string]string{"PROJECT": "/src/p"}))
	off, _ := Parse([]byte(strings.Replace(doc, `"shared": true`, `"shared": false`, 1)), env(map[string]string{"PROJECT": "/src/p"}))
	ch := Diff(on, off)
	want := []ServerID{{"dev", "shared"}, {"dev", "fixed"}, {"dev", "remote"}}
	if !slices.Equal(ch.ServersChanged, want) || !slices.Equal(ch.ServersUnchanged, []ServerID{{"dev", "own"}}) {
		t.Errorf("turning sharing off: changed %v, unchanged %v; want %v changed", ch.ServersChanged, ch.ServersUnchanged, want)
	}
}

// sharedGraceMs sets how long a shared workbench outlives its last
// session; it defaults to 30 s, and is a non-negative integer.
func TestSharedGrace(t *testing.T) {
	cfg, err := Parse([]byte(`{"toolboxes": {}}`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SharedGrace != DefaultSharedGrace {
		t.Errorf("default grace %v, want %v", cfg.SharedGrace, DefaultSharedGrace)
	}
	cfg, err = Parse([]byte(`{"sharedGraceMs": 250, "toolboxes": {}}`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SharedGrace != 250*time.Millisecond {
		t.Errorf("grace %v, want 250ms", cfg.SharedGrace)
	}
	_, err = Parse([]byte(`{"sharedGraceMs": -1, "toolboxes": {}}`), env(nil))
	if err == nil || !strings.Contains(err.Error(), "sharedGraceMs") {
		t.Errorf("a negative grace: err = %v, want one naming sharedGraceMs", err)
	}
}

// ShareAll (serve's --shared on a file without "shared": true) shares
// every server but those whose toolbox or own entry says "shared": false.
func TestShareAll(t *testing.T) {
	cfg, err := Parse([]byte(`{"toolboxes": {
		"a": {"description": "d", "mcpServers": {"s": {"command": "x"}, "own": {"command": "x", "shared": false}}},
		"b": {"description": "d", "shared": false, "mcpServers": {"s": {"command": "x"}}}}}`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ShareAll()
	got := map[string]bool{}
	for _, tb := range cfg.Toolboxes {
		for _, s := range tb.Servers {
			got[tb.Name+"/"+s.Name] = s.Shared
		}
	}
	want := map[string]bool{"a/s": true, "a/own": false, "b/s": false}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: Shared = %v, want %v", k, got[k], v)
		}
	}
	if !cfg.Shared {
		t.Error("Config.Shared not set")
	}
}

// wantProblems checks that err is a configuration error whose problems are
// exactly those of want, by JSON path, each message holding its fragment.
func wantProblems(t *testing.T, err error, want map[string]string) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *config.Error", err)
	}
	got := map[string]string{}
	for _, p := range ce.Problems {
		got[p.Path] = p.Msg
	}
	for path, frag := range want {
		msg, ok := got[path]
		if !ok {
			t.Errorf("no problem at %s; got:\n%v", path, err)
		} else if !strings.Contains(msg, frag) {
			t.Errorf("%s: %q does not contain %q", path, msg, frag)
		}
	}
	if len(ce.Problems) != len(want) {
		t.Errorf("got %d problems, want %d:\n%v", len(ce.Problems), len(want), err)
	}
}
