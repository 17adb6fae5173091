//go:build hosts && unix

// Real hosts driven end to end: make hosts-e2e installs the hosts pinned in
// testdata/hosts (npm ci) and runs these tests with -tags hosts. Each host
// runs non-interactively under a temporary HOME against a scripted model
// API on 127.0.0.1 in this process; the model opens the workbench's
// toolbox with a search, calls a tool of the official memory server
// (testdata/npm) through use_tool, and the next model request must carry
// what the workbench answered. A missing host fails the test: these tests
// run only when asked for, so nothing here is skipped.

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// hostRunTimeout bounds one run of a host: its start, its MCP servers'
// start, and a three-step script. Generous: CI is a busy 2-core machine.
const hostRunTimeout = 4 * time.Minute

// hostBin returns the path of a host's program installed from
// testdata/hosts, or fails the test saying how to install it.
func hostBin(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(fakeserver.RepoRoot(t), "testdata", "hosts", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is not installed: run make hosts-e2e (npm ci in testdata/hosts): %v", name, err)
	}
	return p
}

// workbenchBin is the real mcp-workbench program, as a user installs it:
// the hosts start it, and run its hook, by its path. make hosts-e2e gives
// the one it built (WB_HOSTS_WORKBENCH); else it is built once, into bin/.
var workbenchBin = sync.OnceValues(func() (string, error) {
	if p := os.Getenv("WB_HOSTS_WORKBENCH"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("WB_HOSTS_WORKBENCH: %v", err)
		}
		return p, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	out := filepath.Join(wd, "..", "..", "bin", "hosts-e2e", "mcp-workbench")
	if b, err := exec.Command("go", "build", "-o", out, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, b)
	}
	return out, nil
})

// hostHome is a temporary user for one host run: HOME, the XDG folders,
// the workbench program and its configuration (a "knowledge" toolbox with
// the official memory server, whose graph is kept in memoryFile).
type hostHome struct {
	root, home, bin, config, memoryFile string
}

func newHostHome(t *testing.T, permissions map[string]any) *hostHome {
	t.Helper()
	root := t.TempDir()
	h := &hostHome{root: root, home: filepath.Join(root, "home"), memoryFile: filepath.Join(root, "memory.jsonl")}
	for _, d := range []string{h.home, filepath.Join(root, "work")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	bin, err := workbenchBin()
	if err != nil {
		t.Fatal(err)
	}
	h.bin = bin
	cfg := map[string]any{"toolboxes": map[string]any{
		"knowledge": map[string]any{
			"description": "A knowledge graph of people, projects and what is known about them",
			"mcpServers": map[string]any{"memory": map[string]any{
				"command": fakeserver.NPMServer(t, "mcp-server-memory"),
				"env":     map[string]string{"MEMORY_FILE_PATH": h.memoryFile},
			}},
		},
	}}
	if permissions != nil {
		cfg["permissions"] = permissions
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	h.config = filepath.Join(root, "workbench-config.json")
	if err := os.WriteFile(h.config, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// install runs mcp-workbench install host for the temporary user (env),
// with the run's configuration: how the test configures each host.
func (h *hostHome) install(t *testing.T, env []string, host string) {
	t.Helper()
	cmd := exec.Command(h.bin, "install", host, "--config", h.config)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcp-workbench install %s: %v\n%s", host, err, out)
	}
	t.Logf("mcp-workbench install %s:\n%s", host, out)
}

// env is the host's whole environment: nothing of the test's own user
// (no real HOME, keys or proxies) but PATH, for node. Its proxy is a closed
// port on 127.0.0.1, so that whatever a host would fetch beside the model
// API (updates, telemetry) fails at once, offline.
func (h *hostHome) env(extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + h.home,
		"XDG_CONFIG_HOME=" + filepath.Join(h.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(h.home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(h.home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(h.home, ".local", "state"),
		"NO_COLOR=1",
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "ALL_PROXY=http://127.0.0.1:9",
		"http_proxy=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9",
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}, extra...)
}

// runHost runs a host's program to its end (bounded by hostRunTimeout,
// the whole process group stopped then), with stdin from /dev/null, and
// returns its stdout and stderr. Afterwards no process of this run (one
// that names the run's folder in its arguments or environment: the
// workbench, the memory server) may be left.
func (h *hostHome) runHost(t *testing.T, env []string, name string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hostRunTimeout)
	defer cancel()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Dir = filepath.Join(h.root, "work")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { t.Logf("%s ran for %v", filepath.Base(name), time.Since(start).Round(time.Second)) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("%s did not finish within %v; stopped.\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), hostRunTimeout, clipLog(out.String()), clipLog(errb.String()))
	}
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), err, clipLog(out.String()), clipLog(errb.String()))
	}
	h.noProcessLeft(t)
	return out.String(), errb.String()
}

// noProcessLeft waits (generously) until no process names the run's folder
// in its arguments or environment, and fails, stopping them, if some stay.
func (h *hostHome) noProcessLeft(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := processesNaming(h.root)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for pid, cmdline := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("process %d was left running after the host ended: %s", pid, cmdline)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// processesNaming returns the processes (Linux: from /proc; elsewhere
// none) whose command line or environment holds s, with their command
// lines.
func processesNaming(s string) map[int]string {
	found := map[int]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(d), "%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		environ, _ := os.ReadFile(filepath.Join(d, "environ"))
		if bytes.Contains(cmdline, []byte(s)) || bytes.Contains(environ, []byte(s)) {
			found[pid] = strings.ReplaceAll(string(cmdline), "\x00", " ")
		}
	}
	return found
}

// modelAPI is a scripted model API on 127.0.0.1: request n (from 0) is
// answered by step n of the script, which writes an SSE stream; every
// request's body is kept for the test to read.
type modelAPI struct {
	*httptest.Server
	mu       sync.Mutex
	requests []map[string]any
	paths    []string
}

func startModelAPI(t *testing.T, script ...func(w io.Writer)) *modelAPI {
	t.Helper()
	return startModelAPIAside(t, nil, script...)
}

// startModelAPIAside is startModelAPI for a host that also makes requests
// of its own beside the script's (a session's title, say), at any moment:
// a request for which aside returns a step is answered by it, and neither
// kept nor counted.
func startModelAPIAside(t *testing.T, aside func(req map[string]any) func(w io.Writer), script ...func(w io.Writer)) *modelAPI {
	t.Helper()
	m := &modelAPI{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, "the scripted model API takes JSON", http.StatusBadRequest)
			return
		}
		if aside != nil {
			if step := aside(req); step != nil {
				w.Header().Set("Content-Type", "text/event-stream")
				step(w)
				return
			}
		}
		m.mu.Lock()
		n := len(m.requests)
		m.requests = append(m.requests, req)
		m.paths = append(m.paths, r.URL.Path)
		m.mu.Unlock()
		if n >= len(script) {
			http.Error(w, fmt.Sprintf("the script has %d steps; this is request %d", len(script), n+1), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		script[n](w)
	}))
	t.Cleanup(m.Close)
	return m
}

// request returns the body of request n (from 0), failing the test if the
// host made fewer.
func (m *modelAPI) request(t *testing.T, n int) map[string]any {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if n >= len(m.requests) {
		t.Fatalf("the host made %d model requests; want at least %d", len(m.requests), n+1)
	}
	return m.requests[n]
}

// requestPaths returns the URL paths of the host's requests, in order.
func (m *modelAPI) requestPaths() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.paths...)
}

// count returns how many requests the host made.
func (m *modelAPI) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// sse writes one server-sent event (an event name if given) and flushes.
func sse(w io.Writer, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// mustJSON marshals v to a JSON string.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// createAda is use_tool's input that creates an entity in the memory
// server, and the entity's marks the test looks for on its way back.
var createAda = map[string]any{
	"tool": map[string]string{"toolbox": "knowledge", "server": "memory", "tool": "create_entities"},
	"arguments": map[string]any{"entities": []any{map[string]any{
		"name": "Ada Lovelace", "entityType": "person", "observations": []string{"wrote the first program for the Analytical Engine"},
	}}},
}

// checkRoundTrip checks a run of the search → create script by the host
// titled title: the search's result as the host sent it back to the model
// (search) names the memory server's create_entities, use_tool's result
// (create) the entity; the memory server, reached only through the
// workbench, stored it; and the host printed the model's answer.
func (h *hostHome) checkRoundTrip(t *testing.T, title, search, create, stdout, stderr string) {
	t.Helper()
	if !strings.Contains(search, "create_entities") || !strings.Contains(search, "knowledge") {
		t.Errorf("open_toolbox's search did not come back with the memory server's create_entities: %s", clipLog(search))
	}
	if !strings.Contains(create, "Ada Lovelace") || !strings.Contains(create, "Analytical Engine") {
		t.Errorf("use_tool's result did not come back with the entity: %s", clipLog(create))
	}
	b, err := os.ReadFile(h.memoryFile)
	if err != nil || !bytes.Contains(b, []byte("Analytical Engine")) {
		t.Errorf("the memory server did not store the entity (%v): %s", err, b)
	}
	if !strings.Contains(stdout, "Ada Lovelace is in the knowledge graph.") {
		t.Errorf("%s did not print the model's answer: %s\nstderr:\n%s", title, clipLog(stdout), clipLog(stderr))
	}
}

// lines returns s's lines that hold sub, for messages.
func lines(s, sub string) string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if strings.Contains(sc.Text(), sub) {
			out = append(out, sc.Text())
		}
	}
	return strings.Join(out, "\n")
}
