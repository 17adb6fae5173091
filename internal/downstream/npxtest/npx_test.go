// Package npxtest starts the official memory server with the real npx and
// a cold npm cache in a temporary home: the first start of a package
// runner, stopped and broken as users meet it. It is a package of its
// own because each npx install takes a minute or more.
package npxtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// syncBuffer is a log the servers' goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// npxSetup is a temporary home with its own npm cache, and the memory
// server's package pinned in testdata/npm.
type npxSetup struct {
	t     *testing.T
	npx   string
	home  string
	cache string
	pkg   string // name@version
	logs  *syncBuffer
}

func newNPXSetup(t *testing.T) *npxSetup {
	npx, err := exec.LookPath("npx")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("npx is not in PATH")
		}
		t.Skip("npx is not in PATH: install Node.js to run this test")
	}
	root := fakeserver.RepoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "testdata", "npm", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pj struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pj); err != nil {
		t.Fatal(err)
	}
	const name = "@modelcontextprotocol/server-memory"
	home := t.TempDir()
	return &npxSetup{t: t, npx: npx, home: home, cache: filepath.Join(home, "npm-cache"), pkg: name + "@" + pj.Dependencies[name], logs: &syncBuffer{}}
}

// config is the memory server through npx, with npm's home and cache in
// the temporary home: nothing reads or writes the user's own.
func (n *npxSetup) config() *config.Server {
	return &config.Server{
		Name:      "memory",
		Transport: config.Stdio,
		Command:   n.npx,
		Args:      []string{"-y", n.pkg},
		Env: map[string]string{
			"HOME": n.home, "USERPROFILE": n.home, "npm_config_cache": n.cache,
			"npm_config_userconfig":      filepath.Join(n.home, ".npmrc"),
			"npm_config_update_notifier": "false", "npm_config_fund": "false", "npm_config_audit": "false",
			"MEMORY_FILE_PATH": filepath.Join(n.home, "memory.jsonl"),
		},
		ConnectionTimeout: config.DefaultConnectionTimeout,
		RequestTimeout:    config.DefaultConnectionTimeout,
	}
}

func (n *npxSetup) server(cfg *config.Server, opts downstream.Options) *downstream.Server {
	opts.Logger = slog.New(slog.NewTextHandler(n.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.Stderr = n.logs
	s := downstream.NewServer("tb", cfg, &opts)
	n.t.Cleanup(s.Close)
	return s
}

// entries returns npx's cache entries: _npx/<hash> folders.
func (n *npxSetup) entries() []string {
	m, _ := filepath.Glob(filepath.Join(n.cache, "_npx", "*"))
	return m
}

// forgetInstalls removes npx's installs, keeping npm's download cache:
// the next start installs the package again, as after a new version.
func (n *npxSetup) forgetInstalls() {
	if err := os.RemoveAll(filepath.Join(n.cache, "_npx")); err != nil {
		n.t.Fatal(err)
	}
}

// start connects s and fails the test unless it lists the memory server's
// tools.
func (n *npxSetup) start(s *downstream.Server, what string) {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ts, err := s.Connect(ctx)
	if err != nil {
		n.t.Fatalf("%s: %v\nlogs:\n%s", what, err, n.logs)
	}
	if ts.Lookup("create_entities") == nil {
		n.t.Fatalf("%s: no create_entities among %d tools", what, len(ts.Tools))
	}
}

// window is when, from the start, npx began unpacking the package's
// dependencies (its node_modules appeared) and when it had installed them
// (its child, the server, appeared: the start left "installing").
type window struct{ unpack, installed time.Duration }

// measure starts s and watches its install.
func (n *npxSetup) measure(s *downstream.Server) window {
	n.t.Helper()
	var w window
	done := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if w.unpack == 0 {
				if m, _ := filepath.Glob(filepath.Join(n.cache, "_npx", "*", "node_modules")); len(m) > 0 {
					w.unpack = time.Since(start)
				}
			}
			if w.unpack != 0 && w.installed == 0 && s.State().Status == downstream.StatusStarting {
				w.installed = time.Since(start)
			}
		}
	})
	n.start(s, "a start of npx")
	ready := time.Since(start)
	close(done)
	wg.Wait()
	if w.installed == 0 { // no /proc to see the child: the end of the start
		w.installed = ready
	}
	if w.unpack == 0 {
		w.unpack = w.installed
	}
	n.t.Logf("npx: unpacking from %v, installed at %v, ready at %v", w.unpack, w.installed, ready)
	return w
}

// A start stopped while npx installs never leaves npx's cache broken for
// the next start. A connectionTimeoutMs that falls in the install does
// not stop it at all (the install is not counted); a stop that does fall
// in it (the install allowance ending, here cut to the same moment) is
// repaired by the next start. Where the stop lands is measured, not
// assumed: nothing here depends on landing it.
func TestNPXStartStoppedMidInstall(t *testing.T) {
	t.Parallel() // each test has its own home: their downloads overlap
	n := newNPXSetup(t)
	// A cold cache: npm downloads the package and its dependencies.
	n.start(n.server(n.config(), downstream.Options{}), "the first start, with a cold cache")
	// Measured as the stops below meet it: npm's downloads are cached.
	n.forgetInstalls()
	w := n.measure(n.server(n.config(), downstream.Options{}))
	mid := w.unpack + (w.installed-w.unpack)/2

	// connectionTimeoutMs in the middle of the unpacking.
	n.forgetInstalls()
	short := n.config()
	short.ConnectionTimeout = mid
	s := n.server(short, downstream.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	_, err := s.Connect(ctx)
	cancel()
	if err != nil && strings.Contains(err.Error(), "installing") {
		t.Fatalf("connectionTimeoutMs %v stopped npx's install: %v", mid, err)
	}
	t.Logf("start with connectionTimeoutMs %v: error %v", mid, err)
	s.Close()
	before := strings.Count(n.logs.String(), "removed it; starting again")
	n.start(n.server(n.config(), downstream.Options{}), "the start after a short connectionTimeoutMs")
	if strings.Count(n.logs.String(), "removed it; starting again") != before {
		t.Errorf("the install was cut short: the next start had to repair it\n%s", n.logs)
	}

	// The install allowance ending in the middle of the unpacking.
	n.forgetInstalls()
	s = n.server(n.config(), downstream.Options{InstallTimeout: mid})
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Minute)
	_, err = s.Connect(ctx)
	cancel()
	t.Logf("start with an install allowance of %v: error %v; npx's entries: %v", mid, err, n.entries())
	s.Close()
	before = strings.Count(n.logs.String(), "removed it; starting again")
	n.start(n.server(n.config(), downstream.Options{}), "the start after an install stopped half-way")
	t.Logf("the next start repaired npx's cache entry: %v", strings.Count(n.logs.String(), "removed it; starting again") > before)
}

// A cache entry broken on purpose — one dependency's folder removed, as
// an install stopped half-way leaves it — is removed by the next start,
// which says so in the log and installs the package again.
func TestNPXBrokenCacheEntryIsRepaired(t *testing.T) {
	t.Parallel()
	n := newNPXSetup(t)
	n.start(n.server(n.config(), downstream.Options{}), "the first start, with a cold cache")
	entries := n.entries()
	if len(entries) != 1 {
		t.Fatalf("npx's cache entries: %v, want one", entries)
	}
	dep := filepath.Join(entries[0], "node_modules", "zod")
	if _, err := os.Stat(dep); err != nil {
		t.Fatalf("the memory server's install has no zod: %v", err)
	}
	if err := os.RemoveAll(dep); err != nil {
		t.Fatal(err)
	}
	// What npx does with it on its own: the server dies of the missing module.
	cmd := exec.Command(n.npx, "-y", n.pkg)
	for k, v := range n.config().Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "PATH="+os.Getenv("PATH"))
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "zod") {
		t.Fatalf("npx with zod removed from its cache entry says:\n%s", out)
	}

	n.start(n.server(n.config(), downstream.Options{}), "the start with a broken cache entry")
	logs := n.logs.String()
	if !strings.Contains(logs, "npx's cache entry of the server was broken") || !strings.Contains(logs, fmt.Sprintf("entry=%s", entries[0])) {
		t.Errorf("the repair is not in the log:\n%s", logs)
	}
	if _, err := os.Stat(dep); err != nil {
		t.Errorf("the new install has no zod: %v", err)
	}
	if got := n.entries(); len(got) != 1 || got[0] != entries[0] {
		t.Errorf("npx's cache entries after the repair: %v, want %v", got, entries)
	}
}
