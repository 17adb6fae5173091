package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// reloadResult is one call of Watch's onChange.
type reloadResult struct {
	cfg *Config
	err error
}

// wait is the bound on waiting for a callback: generous, since the
// machine may be busy; a passing test never waits that long.
const wait = 20 * time.Second

// testDebounce must outlast any pause a busy machine puts between the
// steps of one write (os.WriteFile truncates, then writes; an in-place
// save may write in pieces), or the watcher reloads a half-written file
// and the test fails: it was 50ms, which a loaded 2-core machine running
// the race detector can exceed. The burst test uses a longer one still,
// as its 20 writes must all fall within it.
const testDebounce = 400 * time.Millisecond

func doc(desc string) []byte {
	return fmt.Appendf(nil, `{"toolboxes": {"dev": {"description": %q, "mcpServers": {"s": {"command": "x"}}}}}`, desc)
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// watch starts watching path and returns the channel of its callbacks
// and that of its reloads (true: onChange was called).
func watch(t *testing.T, path string, debounce time.Duration) (<-chan reloadResult, <-chan bool) {
	t.Helper()
	ch := make(chan reloadResult, 100)
	reloads := make(chan bool, 100)
	opts := WatchOptions{Debounce: debounce, Lookup: env(nil), afterReload: func(called bool) { reloads <- called }}
	w, err := Watch(context.Background(), path, opts, func(c *Config, err error) {
		ch <- reloadResult{c, err}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return ch, reloads
}

// nextReload waits for the next reload and tells whether it called onChange.
func nextReload(t *testing.T, reloads <-chan bool) bool {
	t.Helper()
	select {
	case called := <-reloads:
		return called
	case <-time.After(wait):
		t.Fatalf("no reload within %v", wait)
		return false
	}
}

func next(t *testing.T, ch <-chan reloadResult) reloadResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(wait):
		t.Fatalf("no reload within %v", wait)
		return reloadResult{}
	}
}

// nextConfig waits for a callback with a configuration and returns its
// toolbox description.
func nextConfig(t *testing.T, ch <-chan reloadResult) string {
	t.Helper()
	r := next(t, ch)
	if r.err != nil {
		t.Fatalf("reload failed: %v", r.err)
	}
	return r.cfg.Toolboxes[0].Description
}

// sentinel writes a last, distinct configuration and checks that the next
// callback is for it: every callback the steps before it made has been
// received by then, since callbacks come one at a time in order.
func sentinel(t *testing.T, ch <-chan reloadResult, path string) {
	t.Helper()
	writeFile(t, path, doc("sentinel"))
	if got := nextConfig(t, ch); got != "sentinel" {
		t.Fatalf("a reload of %q came before the sentinel's", got)
	}
}

func TestWatchWriteInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "workbench-config.json")
	writeFile(t, path, doc("one"))
	ch, _ := watch(t, path, testDebounce)
	writeFile(t, path, doc("two"))
	r := next(t, ch)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := r.cfg.Toolboxes[0].Description; got != "two" {
		t.Errorf("description %q, want two", got)
	}
	if r.cfg.Path != path {
		t.Errorf("Path = %q, want %q", r.cfg.Path, path)
	}
	// Truncated, then written in two steps: still one reload.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := doc("three")
	f.Write(d[:10])
	f.Write(d[10:])
	f.Close()
	if got := nextConfig(t, ch); got != "three" {
		t.Errorf("description %q, want three", got)
	}
	sentinel(t, ch, path)
}

// TestWatchReplaced replaces the file as editors do.
func TestWatchReplaced(t *testing.T) {
	tests := []struct {
		name    string
		replace func(t *testing.T, path string, data []byte)
	}{
		{"rename over", func(t *testing.T, path string, data []byte) {
			tmp := path + ".tmp"
			writeFile(t, tmp, data)
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"vim (backup by rename, write new, delete backup)", func(t *testing.T, path string, data []byte) {
			if err := os.Rename(path, path+"~"); err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, data)
			if err := os.Remove(path + "~"); err != nil {
				t.Fatal(err)
			}
		}},
		{"delete and create", func(t *testing.T, path string, data []byte) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, data)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "workbench-config.json")
			writeFile(t, path, doc("old"))
			ch, _ := watch(t, path, testDebounce)
			for _, desc := range []string{"new", "newer"} { // and again: the new file is watched too
				tt.replace(t, path, doc(desc))
				for {
					r := next(t, ch)
					// A busy machine may split the steps: the file was
					// missing for a moment. Nothing else may come.
					if r.err != nil && strings.Contains(r.err.Error(), "not found") {
						continue
					}
					if r.err != nil {
						t.Fatal(r.err)
					}
					if got := r.cfg.Toolboxes[0].Description; got != desc {
						t.Fatalf("description %q, want %q", got, desc)
					}
					break
				}
			}
			sentinel(t, ch, path)
		})
	}
}

// TestWatchBurst writes the file 20 times in a row: one reload, of the
// last content.
func TestWatchBurst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "workbench-config.json")
	writeFile(t, path, doc("start"))
	ch, reloads := watch(t, path, 3*time.Second)
	for i := range 20 {
		writeFile(t, path, doc(fmt.Sprintf("burst %d", i)))
	}
	if got := nextConfig(t, ch); got != "burst 19" {
		t.Errorf("description %q, want the last write's", got)
	}
	// Reloads come in order: the first one made that call (no earlier
	// one, not even one that found the bytes unchanged) …
	if !nextReload(t, reloads) {
		t.Error("the burst made more than one reload")
	}
	sentinel(t, ch, path)
	// … and the next one is the sentinel's (no late one of the burst).
	if !nextReload(t, reloads) {
		t.Error("the burst made more than one reload")
	}
}

func TestWatchInvalidThenValid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "workbench-config.json")
	writeFile(t, path, doc("good"))
	ch, _ := watch(t, path, testDebounce)

	writeFile(t, path, []byte(`{"toolboxes": {"dev": {"description": "", "mcpServers": {"s": {"command": "x", "idleTimeoutMs": -1}}}}}`))
	r := next(t, ch)
	if r.cfg != nil {
		t.Fatal("an invalid file gave a configuration")
	}
	var ce *Error
	if !errors.As(r.err, &ce) {
		t.Fatalf("err = %v, want a *config.Error", r.err)
	}
	paths := map[string]bool{}
	for _, p := range ce.Problems {
		paths[p.Path] = true
	}
	for _, want := range []string{"toolboxes.dev.description", "toolboxes.dev.mcpServers.s.idleTimeoutMs"} {
		if !paths[want] {
			t.Errorf("no problem at %s: %v", want, r.err)
		}
	}
	if ce.File != path {
		t.Errorf("the error names %q, want %q", ce.File, path)
	}

	writeFile(t, path, []byte(`{"toolboxes": `)) // half written
	if r := next(t, ch); r.err == nil || !strings.Contains(r.err.Error(), "unexpected end") {
		t.Errorf("truncated file: %v", r.err)
	}
	writeFile(t, path, doc("fixed"))
	if got := nextConfig(t, ch); got != "fixed" {
		t.Errorf("description %q, want fixed", got)
	}
}

// TestWatchUnchanged checks that a save of the same bytes makes no call.
func TestWatchUnchanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "workbench-config.json")
	writeFile(t, path, doc("one"))
	ch, reloads := watch(t, path, testDebounce)
	writeFile(t, path, doc("two"))
	if got := nextConfig(t, ch); got != "two" {
		t.Fatalf("description %q", got)
	}
	if !nextReload(t, reloads) {
		t.Fatal("the first reload made no call")
	}
	writeFile(t, path, doc("two")) // saved unchanged
	if nextReload(t, reloads) {
		t.Error("an unchanged file made a call")
	}
	sentinel(t, ch, path)
}

func TestRelevant(t *testing.T) {
	names := map[string]bool{"/etc/wb/config.json": true, "/home/u/dots/wb.json": true}
	tests := []struct {
		name string
		op   fsnotify.Op
		want bool
	}{
		{"/etc/wb/config.json", fsnotify.Write, true},
		{"/etc/wb/config.json", fsnotify.Create, true},
		{"/etc/wb/config.json", fsnotify.Remove, true},
		{"/etc/wb/config.json", fsnotify.Rename, true},
		{"/etc/wb/config.json", fsnotify.Write | fsnotify.Chmod, true},
		{"/etc/wb/config.json", fsnotify.Chmod, false},
		{"/etc/wb/./config.json", fsnotify.Write, true},
		{"/home/u/dots/wb.json", fsnotify.Write, true},
		{"/etc/wb/config.json~", fsnotify.Create, false},
		{"/etc/wb/config.json.tmp", fsnotify.Write, false},
		{"/etc/wb/4913", fsnotify.Create, false},
		{"/etc/wb", fsnotify.Remove, false},
	}
	// The names as the system writes them ("\etc\wb\config.json" on Windows).
	native := map[string]bool{}
	for name := range names {
		native[filepath.FromSlash(name)] = true
	}
	names = native
	for _, tt := range tests {
		tt.name = filepath.FromSlash(tt.name)
		if got := relevant(fsnotify.Event{Name: tt.name, Op: tt.op}, names); got != tt.want {
			t.Errorf("relevant(%s %s) = %v, want %v", tt.op, tt.name, got, tt.want)
		}
	}
}

// TestWatchSymlink edits the file a symbolic link points to, in another
// folder, as dotfile managers arrange it.
func TestWatchSymlink(t *testing.T) {
	real := filepath.Join(t.TempDir(), "real.json")
	writeFile(t, real, doc("one"))
	link := filepath.Join(t.TempDir(), "workbench-config.json")
	if err := os.Symlink(real, link); err != nil {
		if runtime.GOOS == "windows" {
			t.Skipf("Windows makes symbolic links only with a privilege or developer mode: %v", err)
		}
		t.Fatal(err)
	}
	ch, _ := watch(t, link, testDebounce)
	writeFile(t, real, doc("two"))
	r := next(t, ch)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := r.cfg.Toolboxes[0].Description; got != "two" || r.cfg.Path != link {
		t.Errorf("description %q, path %q", got, r.cfg.Path)
	}
}

func TestWatchMissingFolder(t *testing.T) {
	_, err := Watch(context.Background(), filepath.Join(t.TempDir(), "no", "config.json"), WatchOptions{}, func(*Config, error) {
		t.Error("called")
	})
	if err == nil {
		t.Fatal("Watch of a missing folder succeeded")
	}
}

// TestWatchStops checks that ending the context ends the watch, and that
// Close waits for it and may be called again.
func TestWatchStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "workbench-config.json")
	writeFile(t, path, doc("one"))
	ctx, cancel := context.WithCancel(context.Background())
	w, err := Watch(ctx, path, WatchOptions{Debounce: testDebounce}, func(*Config, error) {})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-w.done:
	case <-time.After(wait):
		t.Fatal("the watch did not stop when its context ended")
	}
	w.Close()
	w.Close()
}

// An edit made after the configuration was read but before the watch
// began is applied as soon as the watch begins; an unchanged file calls
// nothing.
func TestWatchSeesAnEditBeforeItBegan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "workbench-config.json")
	writeFile(t, path, doc("first"))
	loaded, err := LoadWith(path, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	start := func() (<-chan reloadResult, <-chan bool) {
		ch := make(chan reloadResult, 10)
		reloads := make(chan bool, 10)
		opts := WatchOptions{Debounce: testDebounce, Lookup: env(nil), Loaded: loaded, afterReload: func(called bool) { reloads <- called }}
		w, err := Watch(context.Background(), path, opts, func(c *Config, err error) { ch <- reloadResult{c, err} })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Close)
		return ch, reloads
	}

	_, reloads := start()
	if nextReload(t, reloads) {
		t.Error("the watch of an unchanged file reloaded it")
	}

	writeFile(t, path, doc("second"))
	ch, reloads := start()
	if !nextReload(t, reloads) {
		t.Fatal("an edit made before the watch began was not reloaded")
	}
	if r := next(t, ch); r.err != nil || r.cfg.Toolboxes[0].Description != "second" {
		t.Errorf("reload = %+v, %v", r.cfg, r.err)
	}
}
