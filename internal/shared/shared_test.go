package shared

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// The runtime folder is $XDG_RUNTIME_DIR/mcp-workbench when that is set,
// else in the cache folder; made private either way, and never through a
// link.
func TestDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("LocalAppData", filepath.Join(home, "cache"))

	rt := filepath.Join(home, "run")
	if err := os.MkdirAll(filepath.Join(rt, "mcp-workbench"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", rt)
	dir, err := Dir()
	if err != nil || dir != filepath.Join(rt, "mcp-workbench") {
		t.Fatalf("Dir() with XDG_RUNTIME_DIR = %q, %v; want %q", dir, err, filepath.Join(rt, "mcp-workbench"))
	}
	checkPrivate(t, dir)

	t.Setenv("XDG_RUNTIME_DIR", "")
	dir, err = Dir()
	cache, _ := os.UserCacheDir()
	if want := filepath.Join(cache, "mcp-workbench", "run"); err != nil || dir != want || !strings.HasPrefix(dir, home) {
		t.Fatalf("Dir() without XDG_RUNTIME_DIR = %q, %v; want %q", dir, err, want)
	}
	checkPrivate(t, dir)

	t.Setenv("XDG_RUNTIME_DIR", "relative")
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), "XDG_RUNTIME_DIR") {
		t.Errorf("Dir() with a relative XDG_RUNTIME_DIR: %v, want an error naming it", err)
	}

	// A link planted where the folder goes is refused, and the folder it
	// points to keeps its mode.
	elsewhere := filepath.Join(home, "elsewhere")
	if err := os.Mkdir(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	rt2 := filepath.Join(home, "run2")
	if err := os.Mkdir(rt2, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(rt2, "mcp-workbench")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	t.Setenv("XDG_RUNTIME_DIR", rt2)
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("Dir() through a symbolic link: %v, want a refusal naming the link", err)
	}
	if fi, _ := os.Stat(elsewhere); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o755 {
		t.Errorf("the link's target's mode became %v", fi.Mode().Perm())
	}
}

func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700 {
		t.Errorf("%s has mode %v, want 0700", dir, fi.Mode().Perm())
	}
}

func TestSocketPath(t *testing.T) {
	dir := "/run/user/1000/mcp-workbench"
	a, err := SocketPath(dir, "/home/u/wb.json", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(a) != dir || !strings.HasPrefix(filepath.Base(a), "wb-") || !strings.HasSuffix(a, ".sock") || len(filepath.Base(a)) != len("wb-")+16+len(".sock") {
		t.Errorf("SocketPath = %q, want %s/wb-<16 hex>.sock", a, dir)
	}
	if again, _ := SocketPath(dir, "/home/u/wb.json", "1.0.0"); again != a {
		t.Errorf("SocketPath changed between calls: %q, %q", a, again)
	}
	for _, other := range [][2]string{{"/home/u/wb.json", "1.0.1"}, {"/home/u/other.json", "1.0.0"}, {"/home/u/wb.json1.0.0", ""}} {
		if b, err := SocketPath(dir, other[0], other[1]); err != nil || b == a {
			t.Errorf("SocketPath(%q, %q) = %q, %v; want another path than %q", other[0], other[1], b, err, a)
		}
	}
	if _, err := SocketPath(dir, "wb.json", "1.0.0"); err == nil {
		t.Error("SocketPath took a relative configuration path")
	}
	long := "/" + strings.Repeat("d", 100-len("/wb-0123456789abcdef.sock")-1)
	if p, err := SocketPath(long, "/wb.json", "1"); err != nil || len(p) != 100 {
		t.Errorf("a 100-byte socket path: %q (%d), %v; want it taken", p, len(p), err)
	}
	if p, err := SocketPath(long+"d", "/wb.json", "1"); err == nil || !strings.Contains(err.Error(), "101 bytes") || !strings.Contains(err.Error(), "XDG_RUNTIME_DIR") {
		t.Errorf("a 101-byte socket path: %q, %v; want an error giving its length and the way out", p, err)
	}
}

func TestSockets(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"wb-b.sock", "wb-a.sock", "wb-a.sock.lock", "wb-a.sock.listen.lock", "daemon.log", "x.sock"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Sockets(dir)
	want := []string{filepath.Join(dir, "wb-a.sock"), filepath.Join(dir, "wb-b.sock")}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Sockets = %q, %v; want %q", got, err, want)
	}
}

// A hello and its reply go as one line each; what follows the line on the
// connection (the MCP stream) stays in the reader.
func TestLineRoundTrip(t *testing.T) {
	hello := Hello{Protocol: Protocol, Version: "1.2.3", Config: "/c.json", Kind: KindSession, Cwd: "/w", Env: []string{"A=1", "B=x\ny"}, PID: 42}
	var buf bytes.Buffer
	if err := WriteLine(&buf, hello); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != 1 || !bytes.HasSuffix(buf.Bytes(), []byte("\n")) {
		t.Fatalf("WriteLine wrote %q: want one line", buf.Bytes())
	}
	if err := WriteLine(&buf, Reply{OK: true, Status: json.RawMessage(`{"sessions":2}`)}); err != nil {
		t.Fatal(err)
	}
	buf.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n")
	r := bufio.NewReaderSize(&buf, 16) // lines longer than the buffer
	var got Hello
	if err := ReadLine(r, &got); err != nil || !reflect.DeepEqual(got, hello) {
		t.Fatalf("ReadLine = %+v, %v; want %+v", got, err, hello)
	}
	var reply Reply
	if err := ReadLine(r, &reply); err != nil || !reply.OK || string(reply.Status) != `{"sessions":2}` {
		t.Fatalf("ReadLine = %+v, %v", reply, err)
	}
	rest, _ := io.ReadAll(r)
	if string(rest) != `{"jsonrpc":"2.0","id":1,"method":"initialize"}`+"\n" {
		t.Errorf("after the handshake the reader holds %q, want the MCP line", rest)
	}
	if err := ReadLine(r, &reply); err != io.EOF {
		t.Errorf("ReadLine at the end: %v, want io.EOF", err)
	}
}

func TestLineLimits(t *testing.T) {
	// A line just at the limit is read; one byte more is refused.
	empty, _ := json.Marshal(Hello{})
	pad := strings.Repeat("x", MaxLine-len(empty)-1)
	var buf bytes.Buffer
	if err := WriteLine(&buf, Hello{Version: pad}); err != nil || buf.Len() != MaxLine {
		t.Fatalf("WriteLine at the limit: %d bytes, %v", buf.Len(), err)
	}
	buf.WriteString("after\n")
	var h Hello
	r := bufio.NewReader(&buf)
	if err := ReadLine(r, &h); err != nil || h.Version != pad {
		t.Fatalf("ReadLine of a %d-byte line: %v", MaxLine, err)
	}
	if rest, _ := r.ReadString('\n'); rest != "after\n" {
		t.Errorf("after the line: %q", rest)
	}

	if err := WriteLine(io.Discard, Hello{Version: pad + "x"}); err == nil || !strings.Contains(err.Error(), "1 MiB") {
		t.Errorf("WriteLine past the limit: %v, want an error naming the limit", err)
	}
	long := `{"version":"` + strings.Repeat("x", MaxLine) + `"}` + "\n"
	if err := ReadLine(bufio.NewReader(strings.NewReader(long)), &h); err == nil || !strings.Contains(err.Error(), "1 MiB") {
		t.Errorf("ReadLine past the limit: %v, want an error naming the limit", err)
	}
	// A line without its end, bad JSON, and JSON of the wrong kind.
	if err := ReadLine(bufio.NewReader(strings.NewReader(`{"version":"1"`)), &h); err == nil || !strings.Contains(err.Error(), "closed in the middle") {
		t.Errorf("ReadLine of a cut line: %v", err)
	}
	if err := ReadLine(bufio.NewReader(strings.NewReader("{nope\n")), &h); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("ReadLine of bad JSON: %v", err)
	}
	err := ReadLine(bufio.NewReader(strings.NewReader(`{"mcpWorkbenchShared":"1"}`+"\n")), &h)
	if err == nil || !strings.Contains(err.Error(), `"mcpWorkbenchShared"`) || strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "int") {
		t.Errorf("ReadLine of a string where a number goes: %v, want it said in JSON terms", err)
	}
}

func TestHelloCheck(t *testing.T) {
	ok := Hello{Protocol: Protocol, Version: "1.0.0", Config: "/c.json", Kind: KindStatus}
	if err := ok.Check("1.0.0", "/c.json"); err != nil {
		t.Fatalf("Check of a matching hello: %v", err)
	}
	for _, tc := range []struct {
		change func(*Hello)
		want   string
	}{
		{func(h *Hello) { h.Protocol = 2 }, "protocol 2"},
		{func(h *Hello) { h.Version = "1.0.1" }, "1.0.1"},
		{func(h *Hello) { h.Config = "/d.json" }, "/d.json"},
		{func(h *Hello) { h.Kind = "exec" }, `"exec"`},
	} {
		h := ok
		tc.change(&h)
		if err := h.Check("1.0.0", "/c.json"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%+v) = %v, want an error naming %s", h, err, tc.want)
		}
	}
}
