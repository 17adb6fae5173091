package fakeserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TagVar is set in a test's servers' environment; every process they start
// inherits it, so [Tagged] can find a whole process tree, grandchildren
// included, whatever happened to its parents.
const TagVar = "WB_TEST_TAG"

// Config returns the configuration of a fake server named name: this test
// binary, re-executed with env (see [Env]). Its limits are short, for tests.
func Config(name string, env map[string]string) *config.Server {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return &config.Server{
		Name:              name,
		Transport:         config.Stdio,
		Command:           exe,
		Env:               env,
		ConnectionTimeout: 20 * time.Second,
		RequestTimeout:    20 * time.Second,
		MaxRetries:        0,
	}
}

// Tagged returns the ids of live processes (zombies excluded) whose
// environment holds TagVar=tag. It works on Linux only; elsewhere it
// returns nil, false.
func Tagged(tag string) (pids []int, ok bool) {
	if runtime.GOOS != "linux" {
		return nil, false
	}
	want := []byte(TagVar + "=" + tag + "\x00")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append(env, 0), want) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		pids = append(pids, pid)
	}
	return pids, true
}

// WaitUntagged waits up to d for every process tagged tag to end and
// returns those still alive.
func WaitUntagged(tag string, d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		pids, _ := Tagged(tag)
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMain is the TestMain of every package whose tests start servers:
// the test binary, re-executed, is the fake server or the process
// watchdog; otherwise it runs the tests.
//
// No test may touch the real user's files: the user's home, cache, config
// and data folders point into a temporary folder for the whole run, and
// every process a test starts (the workbench re-executed, servers)
// inherits that.
func TestMain(m *testing.M) {
	proctree.MaybeRun()
	MaybeRun()
	// The race detector makes every instrumented process sleep a second
	// at exit; fake servers and watchdogs are such processes.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	home, err := os.MkdirTemp("", "wb-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, v := range HomeVars {
		os.Setenv(v, filepath.Join(home, strings.ToLower(v)))
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// HomeVars are the environment variables that locate the user's folders
// (os.UserHomeDir, UserCacheDir, UserConfigDir on each system).
var HomeVars = []string{"HOME", "USERPROFILE", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "LOCALAPPDATA", "APPDATA"}

// RepoRoot returns the repository's top folder (where go.mod is).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's folder")
		}
		dir = parent
	}
}

// NPMServer returns the path of an official MCP server installed from
// testdata/npm (make test-deps). Without it the test fails under CI and is
// skipped elsewhere, with the command that installs it.
func NPMServer(t testing.TB, bin string) string {
	t.Helper()
	root := RepoRoot(t)
	p := filepath.Join(root, "testdata", "npm", "node_modules", ".bin", bin)
	if runtime.GOOS == "windows" {
		// npm on Windows writes BIN.cmd beside BIN. Installed by npm on
		// another system (the wine rig installs on Linux), .bin holds
		// links no Windows program can start: a .cmd as npm writes it
		// starts the package's script with the node on PATH.
		if _, err := os.Stat(p + ".cmd"); err == nil {
			return p + ".cmd"
		}
		if script := npmBinScript(filepath.Join(root, "testdata", "npm", "node_modules"), bin); script != "" {
			return NPMShim(t, bin, script)
		}
	}
	if _, err := os.Stat(p); err != nil {
		msg := bin + " is not installed: run 'make test-deps' (npm ci in testdata/npm)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// npmBinScript returns the script of the installed package (scoped or
// not) under modules whose package.json names bin, or "".
func npmBinScript(modules, bin string) string {
	dirs, _ := filepath.Glob(filepath.Join(modules, "*", "package.json"))
	scoped, _ := filepath.Glob(filepath.Join(modules, "@*", "*", "package.json"))
	for _, pj := range append(dirs, scoped...) {
		data, err := os.ReadFile(pj)
		if err != nil {
			continue
		}
		var pkg struct {
			Name string          `json:"name"`
			Bin  json.RawMessage `json:"bin"`
		}
		if json.Unmarshal(data, &pkg) != nil {
			continue
		}
		var one string
		var many map[string]string
		switch {
		case json.Unmarshal(pkg.Bin, &many) == nil && many[bin] != "":
			return filepath.Join(filepath.Dir(pj), filepath.FromSlash(many[bin]))
		case json.Unmarshal(pkg.Bin, &one) == nil && one != "" && path.Base(pkg.Name) == bin:
			return filepath.Join(filepath.Dir(pj), filepath.FromSlash(one))
		}
	}
	return ""
}

// NPMShim writes, in a temporary folder with a space in its name, the .cmd
// file npm writes for an installed package's bin name, starting script
// with node (node.exe beside the .cmd, else the one on PATH), and returns
// its path. It is cmd-shim's older form, which wine's cmd.exe runs too
// (npm's current one stops in wine's cmd.exe at its "goto #_undefined_#").
func NPMShim(t testing.TB, name, script string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "npm global")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	shim := "@IF EXIST \"%~dp0\\node.exe\" (\r\n" +
		"  \"%~dp0\\node.exe\"  \"" + script + "\" %*\r\n" +
		") ELSE (\r\n" +
		"  @SETLOCAL\r\n" +
		"  @SET PATHEXT=%PATHEXT:;.JS;=;%\r\n" +
		"  node  \"" + script + "\" %*\r\n" +
		")\r\n"
	p := filepath.Join(dir, name+".cmd")
	if err := os.WriteFile(p, []byte(shim), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Everything runs the official "everything" server in mode
// ("streamableHttp" or "sse") on a free port until the test ends, and
// returns its port. Stop ends it early (to test disconnects); Restart
// starts it again on the same port.
type Everything struct {
	t    testing.TB
	argv []string
	mode string
	Port int
	cmd  *exec.Cmd
	done chan struct{}
}

// everythingListenWait bounds the wait for the server's port: Node under
// wine on a busy machine takes tens of seconds to start.
const everythingListenWait = 2 * time.Minute

// StartEverything starts the everything server; see [Everything].
func StartEverything(t testing.TB, mode string) *Everything {
	t.Helper()
	const bin = "mcp-server-everything"
	argv := []string{NPMServer(t, bin)}
	if runtime.GOOS == "windows" {
		// Through npm's .cmd the server is node under cmd.exe, and
		// Stop would end cmd.exe only: node would live on, holding
		// the port a restart needs. Start its script with node itself.
		if script := npmBinScript(filepath.Join(RepoRoot(t), "testdata", "npm", "node_modules"), bin); script != "" {
			argv = []string{"node", script}
		}
	}
	e := &Everything{t: t, argv: argv, mode: mode, Port: FreePort(t)}
	e.Restart()
	t.Cleanup(e.Stop)
	return e
}

// Restart starts the server (again) and waits until its port accepts.
func (e *Everything) Restart() {
	e.t.Helper()
	cmd := exec.Command(e.argv[0], append(e.argv[1:], e.mode)...)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(e.Port))
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.cmd, e.done = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(e.done)
	deadline := time.Now().Add(everythingListenWait)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(e.Port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-e.done:
			e.t.Fatalf("the everything server (%s) exited before listening on port %d", e.mode, e.Port)
		default:
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the everything server (%s) did not listen on port %d within %v", e.mode, e.Port, everythingListenWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server and waits for it.
func (e *Everything) Stop() {
	if e.cmd == nil {
		return
	}
	_ = e.cmd.Process.Kill()
	<-e.done
	e.cmd = nil
}

// URL returns the server's endpoint for path ("/mcp", "/sse").
func (e *Everything) URL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(e.Port) + path
}

// Buffer is a bytes.Buffer safe for concurrent writers: servers' stderr
// and logs land in one from many goroutines.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Eventually polls cond every 10ms for up to 30s and fails the test if it
// never holds: a bounded wait for something asynchronous, not a timing
// assertion. The ceiling is only reached by a failure, so it is generous:
// a busy machine running the race detector can take seconds for what
// takes milliseconds alone.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// CallTool calls a tool of the session's server and returns the text of
// its result and whether it is an error; a protocol error fails the test.
func CallTool(t testing.TB, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}
