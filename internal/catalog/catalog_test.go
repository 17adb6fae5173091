package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
)

// envWriter makes the test binary a catalog writer in another process:
// its value is the catalog folder; envWriterKey, envWriterN and
// envWriterTag say what to write.
const (
	envWriter    = "CATALOG_TEST_WRITER_DIR"
	envWriterKey = "CATALOG_TEST_WRITER_KEY"
	envWriterN   = "CATALOG_TEST_WRITER_N"
	envWriterTag = "CATALOG_TEST_WRITER_TAG"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(envWriter); dir != "" {
		os.Exit(writerProcess(dir))
	}
	// No test may touch the real user's folders.
	home, err := os.MkdirTemp("", "catalog-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, v := range []string{"HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "LOCALAPPDATA", "APPDATA"} {
		os.Setenv(v, filepath.Join(home, strings.ToLower(v)))
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

func writerProcess(dir string) int {
	c, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	n, _ := strconv.Atoi(os.Getenv(envWriterN))
	key, tag := os.Getenv(envWriterKey), os.Getenv(envWriterTag)
	for i := range n {
		if err := c.Put(key, payload(tag, i), nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// payload is a tool list of a few hundred kilobytes that names its writer
// (tag) and version (i), so that a reader can tell a whole one from a mix.
func payload(tag string, i int) []json.RawMessage {
	var tools []json.RawMessage
	for j := range 40 {
		desc := strings.Repeat(fmt.Sprintf("%s-%d-%d ", tag, i, j), 400)
		tools = append(tools, json.RawMessage(fmt.Sprintf(
			`{"name":"t%d","description":%q,"inputSchema":{"type":"object"},"_meta":{"writer":%q,"version":%d}}`, j, desc, tag, i)))
	}
	return tools
}

// checkWhole fails unless tools is exactly one payload of one writer.
func checkWhole(tools []json.RawMessage) error {
	if len(tools) != 40 {
		return fmt.Errorf("%d tools, want 40", len(tools))
	}
	var first struct {
		Meta struct {
			Writer  string `json:"writer"`
			Version int    `json:"version"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(tools[0], &first); err != nil {
		return err
	}
	want := payload(first.Meta.Writer, first.Meta.Version)
	for j := range want {
		if !bytes.Equal(tools[j], want[j]) {
			return fmt.Errorf("tool %d is not from writer %s version %d", j, first.Meta.Writer, first.Meta.Version)
		}
	}
	return nil
}

func open(t *testing.T) *Catalog {
	t.Helper()
	c, err := Open(filepath.Join(t.TempDir(), "mcp-workbench", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// clock is a settable time for aging entries.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func withClock(c *Catalog) *clock {
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)}
	c.now = clk.now
	return clk
}

func testServer() *config.Server {
	return &config.Server{
		Name:              "fs",
		Transport:         config.Stdio,
		Command:           "npx",
		Args:              []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"},
		Env:               map[string]string{"API_KEY": "sekrit-env-value-4711", "MODE": "safe", "A": "1", "Z": "26"},
		Cwd:               "/tmp",
		URL:               "",
		Headers:           map[string]string{"Authorization": "Bearer sekrit-header-value-0815"},
		ToolFilters:       []string{"read_*"},
		ConnectionTimeout: time.Second,
		RequestTimeout:    time.Second,
		MaxRetries:        2,
		Catalog:           true,
	}
}

func TestKey(t *testing.T) {
	const proto = "2025-11-25"
	base := Key(testServer(), proto)
	if !validKey(base) {
		t.Fatalf("Key = %q, want 64 hex digits", base)
	}
	// Maps built in another order hash the same (Go randomises map
	// iteration, so repeating the call covers orders too).
	for range 20 {
		s := testServer()
		s.Env = map[string]string{"Z": "26", "A": "1", "MODE": "safe", "API_KEY": "sekrit-env-value-4711"}
		if k := Key(s, proto); k != base {
			t.Fatalf("the same definition hashed to %s and %s", base, k)
		}
	}

	changes := map[string]func(s *config.Server){
		"transport":         func(s *config.Server) { s.Transport = config.HTTP },
		"command":           func(s *config.Server) { s.Command = "uvx" },
		"args":              func(s *config.Server) { s.Args = append(s.Args, "/home") },
		"args split":        func(s *config.Server) { s.Args = []string{"-y @modelcontextprotocol/server-filesystem", "/tmp"} },
		"env value":         func(s *config.Server) { s.Env["API_KEY"] = "other" },
		"env name":          func(s *config.Server) { s.Env["API_KEY2"] = s.Env["API_KEY"]; delete(s.Env, "API_KEY") },
		"env added":         func(s *config.Server) { s.Env["NEW"] = "" },
		"cwd":               func(s *config.Server) { s.Cwd = "/" },
		"url":               func(s *config.Server) { s.URL = "http://127.0.0.1/mcp" },
		"header value":      func(s *config.Server) { s.Headers["Authorization"] = "Bearer other" },
		"filters":           func(s *config.Server) { s.ToolFilters = []string{"read_*", "write_*"} },
		"filters none":      func(s *config.Server) { s.ToolFilters = []string{} },
		"filters all (nil)": func(s *config.Server) { s.ToolFilters = nil },
		"oauth scopes":      func(s *config.Server) { s.OAuth = &config.OAuth{Scopes: "read write"} },
		"oauth client":      func(s *config.Server) { s.OAuth = &config.OAuth{ClientID: "wb-1"} },
	}
	seen := map[string]string{base: "base"}
	for name, change := range changes {
		s := testServer()
		change(s)
		k := Key(s, proto)
		if other, dup := seen[k]; dup {
			t.Errorf("%s: same key as %s", name, other)
		}
		seen[k] = name
	}
	if k := Key(testServer(), "2026-07-28"); k == base {
		t.Error("another protocol version made the same key")
	}

	same := map[string]func(s *config.Server){
		"name":     func(s *config.Server) { s.Name = "other" },
		"timeouts": func(s *config.Server) { s.ConnectionTimeout, s.RequestTimeout, s.MaxRetries = time.Hour, time.Hour, 9 },
		"disabled": func(s *config.Server) { s.Disabled = true },
		"catalog":  func(s *config.Server) { s.Catalog = false },
		"idle":     func(s *config.Server) { s.IdleTimeout = time.Minute },
		"shared":   func(s *config.Server) { s.Shared = true; s.BaseEnv = []string{"HOME=/h"} },
	}
	for name, change := range same {
		s := testServer()
		change(s)
		if k := Key(s, proto); k != base {
			t.Errorf("%s changed the key", name)
		}
	}
	// A shared workbench runs a server without cwd in the session's
	// folder: keyed as the server without cwd, as it was.
	a, b := testServer(), testServer()
	a.Cwd, b.Cwd, b.SessionCwd = "", "/src/project", true
	if Key(a, proto) != Key(b, proto) {
		t.Error("the session's folder as cwd changed the key")
	}
	a, b = testServer(), testServer()
	a.Env, b.Env = nil, map[string]string{}
	if Key(a, proto) != Key(b, proto) {
		t.Error("no env and an empty env made different keys")
	}
}

func TestPutGetHit(t *testing.T) {
	c := open(t)
	clk := withClock(c)
	key := Key(testServer(), "2025-11-25")
	// Bytes as a server may send them: spacing, escapes, characters
	// encoding/json would rewrite (<, >, &, U+2028), key order.
	tools := []json.RawMessage{
		json.RawMessage(`{ "name" : "read_file", "description": "a <b> & c\u2028", "inputSchema": {"type":"object", "properties": {}} }`),
		json.RawMessage("\n\t{\"name\":\"β\",\"title\":\"Grüße\",\"inputSchema\":{\"type\":\"object\"},\"x\":1.50}  \n"),
	}
	if err := c.Put(key, tools, nil); err != nil {
		t.Fatal(err)
	}
	clk.add(24 * 365 * time.Hour) // no hint: good until replaced
	e, ok, reason := c.Get(key)
	if !ok {
		t.Fatalf("miss: %s", reason)
	}
	if reason != "" {
		t.Errorf("hit with reason %q", reason)
	}
	if len(e.Tools) != 2 {
		t.Fatalf("%d tools", len(e.Tools))
	}
	for i := range tools {
		if want := bytes.TrimSpace(tools[i]); !bytes.Equal(e.Tools[i], want) {
			t.Errorf("tool %d =\n%s\nwant the bytes sent\n%s", i, e.Tools[i], want)
		}
	}
	if want := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC); !e.Stored.Equal(want) {
		t.Errorf("Stored = %v, want %v", e.Stored, want)
	}
	if e.Hint != nil || e.Key != key {
		t.Errorf("Hint = %v, Key = %q", e.Hint, e.Key)
	}
	if _, ok := e.expires(); ok {
		t.Error("an entry without a hint expires")
	}

	// A new Put replaces the entry.
	if err := c.Put(key, tools[:1], nil); err != nil {
		t.Fatal(err)
	}
	if e, ok, _ := c.Get(key); !ok || len(e.Tools) != 1 {
		t.Errorf("after a second Put: ok %v, entry %+v", ok, e)
	}
	// An empty list is an entry too: a server may have no tools.
	if err := c.Put(key, nil, nil); err != nil {
		t.Fatal(err)
	}
	if e, ok, reason := c.Get(key); !ok || len(e.Tools) != 0 {
		t.Errorf("empty list: ok %v (%s), entry %+v", ok, reason, e)
	}
}

func TestMiss(t *testing.T) {
	c := open(t)
	if _, ok, reason := c.Get(Key(testServer(), "2025-11-25")); ok || reason != reasonNone {
		t.Errorf("empty catalog: ok %v, reason %q", ok, reason)
	}
	for _, bad := range []string{"", "../../etc/passwd", strings.Repeat("A", 64), strings.Repeat("a", 63), strings.Repeat("g", 64)} {
		if _, ok, reason := c.Get(bad); ok || reason != "not a catalog key" {
			t.Errorf("Get(%q): ok %v, reason %q", bad, ok, reason)
		}
		if err := c.Put(bad, nil, nil); err == nil {
			t.Errorf("Put(%q) succeeded", bad)
		}
		if err := c.Delete(bad); err == nil {
			t.Errorf("Delete(%q) succeeded", bad)
		}
	}
}

func TestExpiry(t *testing.T) {
	c := open(t)
	clk := withClock(c)
	key := Key(testServer(), "2026-07-28")
	tools := []json.RawMessage{json.RawMessage(`{"name":"a"}`)}

	if err := c.Put(key, tools, &Hint{TTLMs: 1000, CacheScope: "private"}); err != nil {
		t.Fatal(err)
	}
	clk.add(999 * time.Millisecond)
	e, ok, reason := c.Get(key)
	if !ok {
		t.Fatalf("before its ttlMs: miss (%s)", reason)
	}
	if *e.Hint != (Hint{TTLMs: 1000, CacheScope: "private"}) {
		t.Errorf("Hint = %+v", e.Hint)
	}
	if exp, ok := e.expires(); !ok || !exp.Equal(e.Stored.Add(time.Second)) {
		t.Errorf("Expires = %v, %v", exp, ok)
	}
	clk.add(time.Millisecond)
	if _, ok, reason := c.Get(key); ok || reason != reasonExpired {
		t.Errorf("at its ttlMs: ok %v, reason %q", ok, reason)
	}

	// ttlMs 0: "the response SHOULD be considered immediately stale".
	if err := c.Put(key, tools, &Hint{TTLMs: 0, CacheScope: "public"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, reason := c.Get(key); ok || reason != reasonExpired {
		t.Errorf("ttlMs 0: ok %v, reason %q", ok, reason)
	}
	// An expired entry is replaced by the next Put.
	if err := c.Put(key, tools, &Hint{TTLMs: 60000}); err != nil {
		t.Fatal(err)
	}
	if _, ok, reason := c.Get(key); !ok {
		t.Errorf("after Put: miss (%s)", reason)
	}
	if err := c.Put(key, tools, &Hint{TTLMs: -1}); err == nil {
		t.Error("Put took a negative ttlMs")
	}
}

// TestCorruptIgnoredAndRewritten damages an entry in every way a file can
// be damaged and checks that it is a miss with a reason, and that the next
// Put makes it good again.
func TestCorruptIgnoredAndRewritten(t *testing.T) {
	c := open(t)
	withClock(c)
	key := Key(testServer(), "2025-11-25")
	otherKey := Key(testServer(), "2026-07-28")
	tools := []json.RawMessage{json.RawMessage(`{"name":"read_file","description":"reads a file"}`)}
	if err := c.Put(key, tools, nil); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(c.path(key))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Put(otherKey, tools, nil); err != nil {
		t.Fatal(err)
	}
	other, _ := os.ReadFile(c.path(otherKey))

	tests := []struct {
		name   string
		data   []byte
		reason string
	}{
		{"empty", nil, "corrupt"},
		{"garbage", []byte("\x00\x01not json"), "corrupt"},
		{"truncated", good[:len(good)/2], "corrupt"},
		{"truncated at the end", good[:len(good)-3], "corrupt"},
		{"not an object", []byte(`[1,2,3]`), "corrupt"},
		{"wrong version", bytes.Replace(good, []byte(`"version":1`), []byte(`"version":2`), 1), "format version 2"},
		{"no version", bytes.Replace(good, []byte(`"version":1,`), nil, 1), "format version 0"},
		{"wrong key", other, "another key"},
		{"damaged inside a string", bytes.Replace(good, []byte("reads a file"), []byte("reads a fild"), 1), "checksum"},
		{"no time", bytes.Replace(good, []byte(`"stored":`), []byte(`"other":`), 1), "no time"},
		{"no tools", bytes.Replace(good, []byte(`"tools":`), []byte(`"other":`), 1), "no tools"},
		{"negative ttl", bytes.Replace(good, []byte(`"sum":`), []byte(`"hint":{"ttlMs":-5},"sum":`), 1), "negative ttlMs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(c.path(key), tt.data, 0o600); err != nil {
				t.Fatal(err)
			}
			e, ok, reason := c.Get(key)
			if ok || e != nil {
				t.Fatalf("a damaged file was trusted: %+v", e)
			}
			if !strings.Contains(reason, tt.reason) {
				t.Errorf("reason %q, want it to contain %q", reason, tt.reason)
			}
			if err := c.Put(key, tools, nil); err != nil {
				t.Fatal(err)
			}
			if _, ok, reason := c.Get(key); !ok {
				t.Errorf("after Put: miss (%s)", reason)
			}
		})
	}

	// A tool that is not a tool object, with a checksum that matches.
	bad := []json.RawMessage{json.RawMessage(`{"description":"no name"}`)}
	data := fmt.Sprintf(`{"version":1,"key":%q,"stored":"2026-01-01T00:00:00Z","sum":%q,"tools":[{"description":"no name"}]}`, key, toolsSum(bad))
	if err := os.WriteFile(c.path(key), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, reason := c.Get(key); ok || !strings.Contains(reason, "tool 0 is not a tool object") {
		t.Errorf("nameless tool: ok %v, reason %q", ok, reason)
	}
	// A file too large to be an entry is not read whole.
	defer func(n int64) { maxFileSize = n }(maxFileSize)
	maxFileSize = int64(len(good))
	big := append(bytes.Repeat([]byte(" "), int(maxFileSize)+1-len(good)), good...) // an entry but for its size
	if err := os.WriteFile(c.path(key), big, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, reason := c.Get(key); ok || reason != "corrupt: too large" {
		t.Errorf("huge file: ok %v, reason %q", ok, reason)
	}
}

func TestPutRejectsNonTools(t *testing.T) {
	c := open(t)
	key := Key(testServer(), "2025-11-25")
	for _, tool := range []string{``, `   `, `[]`, `"name"`, `{"name":`, `{"name":"a"} {}`} {
		if err := c.Put(key, []json.RawMessage{json.RawMessage(tool)}, nil); err == nil {
			t.Errorf("Put took the tool %q", tool)
		}
	}
	if _, ok, reason := c.Get(key); ok || reason != reasonNone {
		t.Errorf("a refused Put left an entry: ok %v, reason %q", ok, reason)
	}
	assertNoTemps(t, c.Dir())
}

func TestDelete(t *testing.T) {
	c := open(t)
	key := Key(testServer(), "2025-11-25")
	if err := c.Delete(key); err != nil {
		t.Errorf("Delete of a missing entry: %v", err)
	}
	if err := c.Put(key, []json.RawMessage{json.RawMessage(`{"name":"a"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(key); err != nil {
		t.Fatal(err)
	}
	if _, ok, reason := c.Get(key); ok || reason != reasonNone {
		t.Errorf("after Delete: ok %v, reason %q", ok, reason)
	}
}

// TestNoSecretsWritten checks that env and header values appear in no
// file name and no file content of the catalog.
func TestNoSecretsWritten(t *testing.T) {
	c := open(t)
	s := testServer()
	s.URL = "https://example.com/mcp?key=sekrit-query-value-9999"
	key := Key(s, "2025-11-25")
	if err := c.Put(key, []json.RawMessage{json.RawMessage(`{"name":"read_file"}`)}, &Hint{TTLMs: 5000}); err != nil {
		t.Fatal(err)
	}
	secrets := []string{"sekrit-env-value-4711", "sekrit-header-value-0815", "sekrit-query-value-9999", "sekrit"}
	n := 0
	err := filepath.WalkDir(filepath.Dir(c.Dir()), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, sec := range secrets {
			if strings.Contains(p, sec) {
				t.Errorf("a secret in the file name %s", p)
			}
		}
		if d.IsDir() {
			return nil
		}
		n++
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, sec := range secrets {
			if bytes.Contains(data, []byte(sec)) {
				t.Errorf("%s holds the secret %q", p, sec)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d files in the catalog, want 1", n)
	}
}

func TestHintFrom(t *testing.T) {
	tests := []struct {
		name  string
		pages []string
		want  *Hint
	}{
		{"no pages", nil, nil},
		{"older protocol", []string{`{"tools":[]}`}, nil},
		{"one page", []string{`{"tools":[],"ttlMs":60000,"cacheScope":"public"}`}, &Hint{TTLMs: 60000, CacheScope: "public"}},
		{"no scope", []string{`{"tools":[],"ttlMs":5}`}, &Hint{TTLMs: 5}},
		{"zero", []string{`{"tools":[],"ttlMs":0,"cacheScope":"public"}`}, &Hint{TTLMs: 0, CacheScope: "public"}},
		{"negative is stale", []string{`{"ttlMs":-3}`}, &Hint{TTLMs: 0}},
		{"smallest ttl, private wins", []string{
			`{"ttlMs":60000,"cacheScope":"public","nextCursor":"2"}`,
			`{"ttlMs":1000,"cacheScope":"public","nextCursor":"3"}`,
			`{"ttlMs":90000,"cacheScope":"private"}`,
		}, &Hint{TTLMs: 1000, CacheScope: "private"}},
		{"pages without a hint are skipped", []string{`{"tools":[]}`, `{"ttlMs":7}`, `not json`}, &Hint{TTLMs: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pages []json.RawMessage
			for _, p := range tt.pages {
				pages = append(pages, json.RawMessage(p))
			}
			got := HintFrom(pages...)
			if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Errorf("HintFrom = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDefaultDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "xdg-cache"))
	t.Setenv("LOCALAPPDATA", filepath.Join(home, "localappdata"))
	var want string
	switch runtime.GOOS {
	case "windows":
		want = filepath.Join(home, "localappdata", "mcp-workbench", "catalog")
	case "darwin", "ios":
		want = filepath.Join(home, "Library", "Caches", "mcp-workbench", "catalog")
	default:
		want = filepath.Join(home, "xdg-cache", "mcp-workbench", "catalog")
	}
	got, err := DefaultDir()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("DefaultDir = %q, want %q", got, want)
	}
	if _, err := Open(got); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(want); err != nil || !fi.IsDir() {
		t.Errorf("Open did not make %s: %v", want, err)
	}
}

func TestOpenRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, tempPrefix+"old")
	fresh := filepath.Join(dir, tempPrefix+"fresh")
	entry := filepath.Join(dir, strings.Repeat("a", 64)+".json")
	for _, p := range []string{old, fresh, entry} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * staleTemp)
	for _, p := range []string{old, entry} {
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("an abandoned temporary file was kept: %v", err)
	}
	for _, p := range []string{fresh, entry} { // a writer may be using it; entries are not temps
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
}

// TestOpenRemovesUnusedEntries: an entry nobody read for 30 days (its
// server changed or left the configuration) is removed by the next Open;
// one still read is touched by Get and stays, and so do files that are not
// the catalog's.
func TestOpenRemovesUnusedEntries(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tools := []json.RawMessage{json.RawMessage(`{"name":"t","inputSchema":{"type":"object"}}`)}
	used, unused := Key(testServer(), "2025-11-25"), Key(testServer(), "2025-06-18")
	for _, k := range []string{used, unused} {
		if err := c.Put(k, tools, nil); err != nil {
			t.Fatal(err)
		}
	}
	foreign := filepath.Join(dir, "notes.json")
	if err := os.WriteFile(foreign, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-unusedEntry - time.Hour)
	for _, p := range []string{c.path(used), c.path(unused), foreign} {
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, reason := c.Get(used); !ok {
		t.Fatalf("miss: %s", reason)
	}
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.path(unused)); !os.IsNotExist(err) {
		t.Errorf("an entry unused for 30 days was kept: %v", err)
	}
	if _, ok, reason := c.Get(used); !ok {
		t.Errorf("the entry in use was removed: %s", reason)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("a file that is not an entry was removed: %v", err)
	}
}

func TestOpenNotAFolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(p); err == nil {
		t.Error("Open took a file as its folder")
	}
}

// TestConcurrentWriters has goroutines write and read one entry at once:
// every read is a whole entry of one writer, or no entry yet.
func TestConcurrentWriters(t *testing.T) {
	c := open(t)
	key := Key(testServer(), "2025-11-25")
	const writers, puts = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers+2)
	done := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range puts {
				if err := c.Put(key, payload("g"+strconv.Itoa(w), i), nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				e, ok, reason := c.Get(key)
				if !ok {
					if reason != reasonNone {
						errs <- fmt.Errorf("read a damaged entry: %s", reason)
						return
					}
					continue
				}
				if err := checkWhole(e.Tools); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	e, ok, reason := c.Get(key)
	if !ok {
		t.Fatalf("after the writers: miss (%s)", reason)
	}
	if err := checkWhole(e.Tools); err != nil {
		t.Error(err)
	}
	assertNoTemps(t, c.Dir())
}

// TestConcurrentProcesses has two other processes (this test binary
// re-executed) write one entry while this one writes and reads it.
func TestConcurrentProcesses(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := open(t)
	key := Key(testServer(), "2025-11-25")
	const puts = 15
	type result struct {
		tag string
		err error
		out []byte
	}
	results := make(chan result, 2)
	for _, tag := range []string{"p1", "p2"} {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envWriter+"="+c.Dir(), envWriterKey+"="+key, envWriterN+"="+strconv.Itoa(puts), envWriterTag+"="+tag)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		go func() {
			err := cmd.Wait()
			results <- result{tag, err, out.Bytes()}
		}()
	}
	deadline := time.After(2 * time.Minute)
	running, i := 2, 0
	for running > 0 || i < puts {
		select {
		case r := <-results:
			running--
			if r.err != nil {
				t.Errorf("writer %s: %v\n%s", r.tag, r.err, r.out)
			}
			continue
		case <-deadline:
			t.Fatal("the writer processes did not finish in 2 minutes")
		default:
		}
		if err := c.Put(key, payload("main", i%puts), nil); err != nil {
			t.Fatal(err)
		}
		i++
		e, ok, reason := c.Get(key)
		if !ok {
			t.Fatalf("read a damaged entry: %s", reason) // this process wrote one just now
		}
		if err := checkWhole(e.Tools); err != nil {
			t.Fatal(err)
		}
	}
	e, ok, reason := c.Get(key)
	if !ok {
		t.Fatalf("after the writers: miss (%s)", reason)
	}
	if err := checkWhole(e.Tools); err != nil {
		t.Error(err)
	}
	assertNoTemps(t, c.Dir())
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if strings.HasPrefix(de.Name(), tempPrefix) {
			t.Errorf("a temporary file was left: %s", de.Name())
		}
	}
}
