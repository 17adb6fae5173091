package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth/oauthtest"
	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// envMain makes the re-executed test binary run main itself: the real
// program, as a host starts it.
const envMain = "WB_TEST_MAIN"

func TestMain(m *testing.M) {
	proctree.MaybeRun()
	fakeserver.MaybeRun()
	oauthtest.MaybeBrowse()
	if os.Getenv(envMain) == "1" {
		os.Exit(profiled(mainExit))
	}
	if os.Getenv(envRelay) == "1" {
		os.Exit(relay())
	}
	if os.Getenv(envConformanceClient) == "1" {
		os.Exit(conformanceClient())
	}
	fakeserver.TestMain(m)
}

// profiled runs main under the profilers that WB_CPUPROFILE and
// WB_MEMPROFILE ask for: how benchmarks look inside the workbench process.
func profiled(main func() int) int {
	if path := os.Getenv("WB_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			_ = pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	if path := os.Getenv("WB_MEMPROFILE"); path != "" {
		defer func() {
			if f, err := os.Create(path); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	return main()
}

// envRelay makes the re-executed test binary a byte relay to a fake
// server: the floor under any proxy's cost, for benchmarks.
const envRelay = "WB_TEST_RELAY"

// relay starts a fake server, or the workbench with our arguments if we
// have any, and copies bytes between it and our stdio: a proxy that does
// nothing but add a process hop.
func relay() int {
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fakeserver.EnvServer+"=1", fakeserver.EnvName+"=s", envRelay+"=0")
	if len(os.Args) > 1 {
		cmd = exec.Command(exe, os.Args[1:]...)
		cmd.Env = append(os.Environ(), envMain+"=1", envRelay+"=0")
	}
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return 1
	}
	go func() {
		_, _ = io.Copy(in, os.Stdin)
		in.Close()
	}()
	_, _ = io.Copy(os.Stdout, out)
	_ = cmd.Wait()
	return 0
}

func writeConfig(t testing.TB, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "workbench-config.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// runInProcess runs run() on pipes and returns a client connected to it.
func runInProcess(t *testing.T, args ...string) (*mcp.ClientSession, *fakeserver.Buffer) {
	t.Helper()
	return runInProcessWith(t, nil, args...)
}

// runInProcessWith is runInProcess with a client of the given options.
func runInProcessWith(t *testing.T, opts *mcp.ClientOptions, args ...string) (*mcp.ClientSession, *fakeserver.Buffer) {
	t.Helper()
	return runInProcessAt(t, "", opts, args...)
}

// runInProcessAt is runInProcessWith for a host that asks for protocol
// ("": the SDK's latest).
func runInProcessAt(t *testing.T, protocol string, opts *mcp.ClientOptions, args ...string) (*mcp.ClientSession, *fakeserver.Buffer) {
	t.Helper()
	return runInProcessAtWithRoots(t, protocol, opts, nil, args...)
}

// runInProcessAtWithRoots is runInProcessAt for a host with roots.
//
//lint:ignore SA1019 the host's roots are relayed to servers of the 2025 protocols
func runInProcessAtWithRoots(t *testing.T, protocol string, opts *mcp.ClientOptions, roots []*mcp.Root, args ...string) (*mcp.ClientSession, *fakeserver.Buffer) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &fakeserver.Buffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), args, inR, outW, stderr)
		outW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, opts)
	//lint:ignore SA1019 the host's roots are relayed to servers of the 2025 protocols
	client.AddRoots(roots...)
	cs, err := client.Connect(ctxT(t), &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr)
	}
	t.Cleanup(func() {
		cs.Close() // closes stdin: the workbench must end and stop its servers
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run returned %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("run did not return after stdin closed")
		}
		if t.Failed() {
			t.Logf("stderr:\n%s", stderr)
		}
	})
	return cs, stderr
}

// callTool calls a tool and returns its result's text and isError.
var callTool = fakeserver.CallTool

func use(toolbox, server, tool string, args any) map[string]any {
	return map[string]any{"tool": map[string]string{"toolbox": toolbox, "server": server, "tool": tool}, "arguments": args}
}

// TestMemoryServer drives the official memory server end to end: create an
// entity, then find it.
func TestMemoryServer(t *testing.T) {
	bin := fakeserver.NPMServer(t, "mcp-server-memory")
	dir := t.TempDir()
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"knowledge": map[string]any{"description": "memory", "mcpServers": map[string]any{
			"memory": map[string]any{"command": bin, "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
		}},
	}})
	cs, _ := runInProcess(t, "--config", cfg)

	text, isErr := callTool(t, cs, "open_toolbox", map[string]any{"toolbox_name": "knowledge"})
	if isErr || !strings.Contains(text, `"name":"create_entities"`) || !strings.Contains(text, `"source_server":"memory"`) {
		t.Fatalf("open: %v %s", isErr, text)
	}
	text, isErr = callTool(t, cs, "use_tool", use("knowledge", "memory", "create_entities", map[string]any{
		"entities": []any{map[string]any{"name": "Ada Lovelace", "entityType": "person", "observations": []string{"wrote the first program"}}},
	}))
	if isErr {
		t.Fatalf("create_entities: %s", text)
	}
	text, isErr = callTool(t, cs, "use_tool", use("knowledge", "memory", "search_nodes", map[string]any{"query": "first program"}))
	if isErr || !strings.Contains(text, "Ada Lovelace") {
		t.Errorf("search_nodes did not find the entity: %v %s", isErr, text)
	}
	text, isErr = callTool(t, cs, "use_tool", use("knowledge", "memory", "search_nodes", map[string]any{"query": 42}))
	if !isErr || !strings.Contains(text, "/query: got number, want string") {
		t.Errorf("invalid arguments were not refused with their path: %v %s", isErr, text)
	}
}

// TestEverythingServerThroughTheRelay drives the official everything
// server through use_tool's relay: content kinds beside text (an image, resource
// links) reach the host unchanged, progress comes under the host's token,
// a call the host cancels ends at once and the session goes on.
func TestEverythingServerThroughTheRelay(t *testing.T) {
	bin := fakeserver.NPMServer(t, "mcp-server-everything")
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"demo": map[string]any{"description": "everything", "mcpServers": map[string]any{"everything": map[string]any{"command": bin, "requestTimeoutMs": 10000}}},
	}})
	var mu sync.Mutex
	var progress []string
	cs, _ := runInProcessWith(t, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, fmt.Sprintf("%v:%v/%v", req.Params.ProgressToken, req.Params.Progress, req.Params.Total))
			mu.Unlock()
		},
	}, "--config", cfg)
	if text, isErr := callTool(t, cs, "open_toolbox", map[string]any{"toolbox_name": "demo"}); isErr || !strings.Contains(text, `"name":"trigger-long-running-operation"`) {
		t.Fatalf("open: %v %s", isErr, text)
	}

	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "use_tool", Arguments: use("demo", "everything", "get-tiny-image", map[string]any{})})
	if err != nil || res.IsError {
		t.Fatalf("get-tiny-image: %v %+v", err, res)
	}
	var image *mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			image = ic
		}
	}
	if image == nil || image.MIMEType != "image/png" || len(image.Data) == 0 {
		t.Errorf("get-tiny-image's image did not come through: %+v", res.Content)
	}
	res, err = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "use_tool", Arguments: use("demo", "everything", "get-resource-links", map[string]any{"count": 2})})
	if err != nil || res.IsError {
		t.Fatalf("get-resource-links: %v %+v", err, res)
	}
	links := 0
	for _, c := range res.Content {
		if _, ok := c.(*mcp.ResourceLink); ok {
			links++
		}
	}
	if links != 2 {
		t.Errorf("%d resource links came through, want 2: %+v", links, res.Content)
	}

	params := &mcp.CallToolParams{Name: "use_tool", Arguments: use("demo", "everything", "trigger-long-running-operation", map[string]any{"duration": 0.4, "steps": 4})}
	params.SetProgressToken("op-1")
	res, err = cs.CallTool(ctxT(t), params)
	if err != nil || res.IsError {
		t.Fatalf("trigger-long-running-operation: %v %+v", err, res)
	}
	fakeserver.Eventually(t, "the progress notifications", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(progress) == 4
	})
	mu.Lock()
	if got := strings.Join(progress, " "); got != "op-1:1/4 op-1:2/4 op-1:3/4 op-1:4/4" {
		t.Errorf("progress = %s", got)
	}
	mu.Unlock()

	ctx, cancel := context.WithCancel(ctxT(t))
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "use_tool", Arguments: use("demo", "everything", "trigger-long-running-operation", map[string]any{"duration": 30, "steps": 3})})
	if err == nil || time.Since(start) > 25*time.Second { // a ceiling under the operation's 30s, not a speed
		t.Errorf("the cancelled call: err %v after %v", err, time.Since(start))
	}
	if text, isErr := callTool(t, cs, "use_tool", use("demo", "everything", "echo", map[string]any{"message": "still here"})); isErr || !strings.Contains(text, "still here") {
		t.Errorf("a call after the cancelled one: %v %s", isErr, text)
	}

	// The call command with arguments typed over several lines: the
	// server, which reads lines, gets them as one.
	code, out, errOut := runCmd(t, "{\n  \"message\": \"typed\"\n}\n", "call", "--config", cfg, "demo", "everything", "echo", "-")
	if code != 0 || !strings.Contains(out, "typed") {
		t.Errorf("call with arguments over several lines (%d):\n%s\n%s", code, out, errOut)
	}
}

// TestFilesystemServersAreIsolated gives two toolboxes their own
// filesystem server, rooted in different folders: each reads its own
// folder and cannot read the other's.
func TestFilesystemServersAreIsolated(t *testing.T) {
	bin := fakeserver.NPMServer(t, "mcp-server-filesystem")
	dirA, dirB := t.TempDir(), t.TempDir()
	// The server resolves symlinks in its roots; compare real paths.
	dirA, _ = filepath.EvalSymlinks(dirA)
	dirB, _ = filepath.EvalSymlinks(dirB)
	os.WriteFile(filepath.Join(dirA, "a.txt"), []byte("alpha secret"), 0o644)
	os.WriteFile(filepath.Join(dirB, "b.txt"), []byte("beta secret"), 0o644)
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"alpha": map[string]any{"description": "a", "mcpServers": map[string]any{"filesystem": map[string]any{"command": bin, "args": []string{dirA}}}},
		"beta":  map[string]any{"description": "b", "mcpServers": map[string]any{"filesystem": map[string]any{"command": bin, "args": []string{dirB}}}},
	}})
	cs, _ := runInProcess(t, "--config", cfg)

	read := func(toolbox, path string) (string, bool) {
		return callTool(t, cs, "use_tool", use(toolbox, "filesystem", "read_text_file", map[string]any{"path": path}))
	}
	if text, isErr := read("alpha", filepath.Join(dirA, "a.txt")); isErr || text != "alpha secret" {
		t.Errorf("alpha reading its own file: %v %q", isErr, text)
	}
	if text, isErr := read("beta", filepath.Join(dirB, "b.txt")); isErr || text != "beta secret" {
		t.Errorf("beta reading its own file: %v %q", isErr, text)
	}
	if text, isErr := read("alpha", filepath.Join(dirB, "b.txt")); !isErr || strings.Contains(text, "beta secret") {
		t.Errorf("alpha read beta's file: %v %q", isErr, text)
	}
	if text, isErr := read("beta", filepath.Join(dirA, "a.txt")); !isErr || strings.Contains(text, "alpha secret") {
		t.Errorf("beta read alpha's file: %v %q", isErr, text)
	}
}

func TestConfigErrorsStopBeforeAnyTraffic(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"mcpServers": map[string]any{"s": map[string]any{"args": "x"}}},
	}})
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"--config", cfg}, strings.NewReader(""), &stdout, &stderr)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("run = %v, want exit status 1", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout carried %q; it must carry only MCP", stdout.String())
	}
	for _, want := range []string{"(3 problems)", "toolboxes.dev.description: required", "toolboxes.dev.mcpServers.s.args: must be an array, not a string", `toolboxes.dev.mcpServers.s: needs "command"`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// process is the real program (this test binary re-executed as main)
// serving a host over pipes.
type process struct {
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	stdin  io.WriteCloser
	stderr *fakeserver.Buffer
	done   chan struct{}
}

func startProcess(t *testing.T, cfgPath, wbTag string) *process {
	t.Helper()
	return launchSession(t, []string{"--config", cfgPath}, wbTag, "", nil)
}

func (p *process) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(15 * time.Second):
		t.Fatal("the workbench did not exit within 15s")
		return -1
	}
}

// TestShutdownLeavesNoProcess checks every way the workbench ends: stdin
// closed, SIGINT, SIGTERM, and SIGKILL (where none of its own clean-up
// runs). Each time, every process it started — an sh -c wrapper, the
// server it execs, the wrapper's background sleep, a sleep the server
// spawned itself, a sleep started in a session of its own and a daemon's
// orphaned sleep — must be gone, and so must the watchdog.
func TestShutdownLeavesNoProcess(t *testing.T) {
	if _, ok := fakeserver.Tagged("probe"); !ok {
		t.Skip("process-tree checks read /proc: Linux only")
	}
	for _, how := range []string{"stdin EOF", "SIGINT", "SIGTERM", "SIGKILL"} {
		t.Run(strings.ReplaceAll(how, " ", "_"), func(t *testing.T) {
			tag := fmt.Sprintf("shutdown-%d", time.Now().UnixNano())
			wbTag := tag + "-wb"
			exe, _ := os.Executable()
			server := func(name string) map[string]any {
				return map[string]any{
					"command": "sh", "args": []string{"-c", `sleep 600 & exec "$0"`, exe},
					"env": map[string]string{fakeserver.EnvServer: "1", fakeserver.EnvName: name, fakeserver.TagVar: tag},
				}
			}
			detached := server("c")
			detached["env"].(map[string]string)[fakeserver.EnvDetach] = "1"
			cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
				"one": map[string]any{"description": "d", "mcpServers": map[string]any{"a": server("a"), "b": server("b"), "c": detached}},
				"two": map[string]any{"description": "d", "mcpServers": map[string]any{"a": server("a")}},
			}})
			p := startProcess(t, cfg, wbTag)
			for _, tb := range []string{"one", "two"} {
				if text, isErr := callTool(t, p.cs, "open_toolbox", map[string]any{"toolbox_name": tb}); isErr {
					t.Fatal(text)
				}
			}
			if text, isErr := callTool(t, p.cs, "use_tool", use("one", "a", "spawn", nil)); isErr {
				t.Fatal(text)
			}
			// 4 servers × (sh exec'd into the server + its sleep) + the spawned
			// sleep + c's sleep in a session of its own + c's daemon's
			// orphaned sleep. two/a has one/a's definition: the tool catalog
			// answers its open, and it may still be starting.
			fakeserver.Eventually(t, "11 downstream processes", func() bool {
				pids, _ := fakeserver.Tagged(tag)
				return len(pids) == 11
			})
			if pids, _ := fakeserver.Tagged(wbTag); len(pids) != 2 {
				t.Fatalf("expected the workbench and its watchdog, found %v", pids)
			}

			switch how {
			case "stdin EOF":
				p.stdin.Close()
			case "SIGINT":
				p.cmd.Process.Signal(os.Interrupt)
			case "SIGTERM":
				p.cmd.Process.Signal(syscall.SIGTERM)
			case "SIGKILL":
				p.cmd.Process.Kill()
			}
			code := p.wait(t)
			if how != "SIGKILL" && code != 0 {
				t.Errorf("exit status %d, want 0", code)
			}
			if left := fakeserver.WaitUntagged(tag, 30*time.Second); len(left) > 0 {
				t.Errorf("downstream processes left after %s: %v", how, left)
			}
			if left := fakeserver.WaitUntagged(wbTag, 30*time.Second); len(left) > 0 {
				t.Errorf("workbench or watchdog still running after %s: %v", how, left)
			}
		})
	}
}

func fakeServerEntry(name string, extra ...string) map[string]any {
	exe, _ := os.Executable()
	env := map[string]string{fakeserver.EnvServer: "1", fakeserver.EnvName: name}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return map[string]any{"command": exe, "env": env, "maxRetries": 0}
}

func runCmd(t testing.TB, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.code
	default:
		t.Fatalf("run %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}

func TestCheck(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"good": map[string]any{"description": "All fine", "mcpServers": map[string]any{
			"a":   fakeServerEntry("a"),
			"off": map[string]any{"command": "nothing", "disabled": true},
		}},
		"bad": map[string]any{"description": "One fails", "mcpServers": map[string]any{
			"b":     fakeServerEntry("b"),
			"dying": fakeServerEntry("dying", fakeserver.EnvExitAtStart, "9"),
		}},
	}})

	code, out, errOut := runCmd(t, "", "check", "--config", cfg)
	if code != 1 {
		t.Errorf("check with a failing server: exit %d, want 1", code)
	}
	for _, want := range []string{
		"good — All fine", "open_toolbox returns", "tokens)",
		"  a                    connected   15 tools  started in",
		// The fake server's bad_schema tool: its arguments go unchecked.
		"                       warning: tool 'bad_schema': its inputSchema does not compile, so its arguments are passed unchecked: ",
		"  off                  disabled",
		"  dying                error      could not start (1 attempt): exited with exit status 9 during start-up",
		"a host sees the workbench's two tools:", "1 of 3 server(s) failed to start.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "starting 3 server(s) of 2 toolbox(es)") || !strings.Contains(errOut, "[3/3]") {
		t.Errorf("no progress on stderr:\n%s", errOut)
	}

	code, out, _ = runCmd(t, "", "check", "good", "--config", cfg)
	if code != 0 || !strings.Contains(out, "All 1 server(s) started.") || strings.Contains(out, "bad —") {
		t.Errorf("check good: exit %d\n%s", code, out)
	}
	code, _, errOut = runCmd(t, "", "check", "nope", "--config", cfg)
	if code != 2 || !strings.Contains(errOut, `no toolbox "nope"`) {
		t.Errorf("check nope: exit %d %s", code, errOut)
	}
}

// TestCheckNoLoginHintForOtherFailures: a remote server that fails for a
// reason other than a login (here a 404: a wrong path) is reported with
// that reason, and with no hint to log in.
func TestCheckNoLoginHintForOtherFailures(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "d", "mcpServers": map[string]any{"r": map[string]any{"type": "http", "url": ts.URL + "/wrongpath", "maxRetries": 0}}},
	}})
	code, out, errOut := runCmd(t, "", "check", "--config", cfg)
	if code != 1 || !strings.Contains(out, "error") || strings.Contains(out, "login:") {
		t.Errorf("check (%d):\n%s\n%s", code, out, errOut)
	}
}

// TestCheckAllDisabled: check of a configuration whose servers are all
// disabled says so, rather than that all 0 started.
func TestCheckAllDisabled(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "d", "mcpServers": map[string]any{"a": map[string]any{"command": "x", "disabled": true}}},
	}})
	code, out, errOut := runCmd(t, "", "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "No server to start: every server is disabled.") || strings.Contains(out, "All 0") {
		t.Errorf("check (%d):\n%s\n%s", code, out, errOut)
	}
}

// TestCheckToolboxNamedTwice checks it once.
func TestCheckToolboxNamedTwice(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "d", "mcpServers": map[string]any{"a": fakeServerEntry("a")}},
	}})
	code, out, errOut := runCmd(t, "", "check", "--config", cfg, "dev", "dev")
	if code != 0 || strings.Count(out, "dev — d") != 1 || !strings.Contains(out, "All 1 server(s) started.") || !strings.Contains(errOut, "starting 1 server(s)") {
		t.Errorf("check dev dev (%d):\n%s\n%s", code, out, errOut)
	}
}

func TestCall(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "d", "mcpServers": map[string]any{
			"a": fakeServerEntry("a"), "x": fakeServerEntry("x", fakeserver.EnvExtraField, "1"),
		}},
	}})
	code, out, _ := runCmd(t, "", "call", "--config", cfg, "dev", "a", "add", `{"a": 2, "b": 40}`)
	if code != 0 || out != "42\n" {
		t.Errorf("call add: exit %d, %q", code, out)
	}
	code, out, _ = runCmd(t, `{"text": "from stdin"}`, "call", "dev", "a", "echo", "-", "--config", cfg)
	if code != 0 || !strings.Contains(out, `"text":"from stdin"`) {
		t.Errorf("call echo -: exit %d, %q", code, out)
	}
	code, out, _ = runCmd(t, "", "call", "--json", "--config", cfg, "dev", "a", "rich")
	if code != 0 || !strings.Contains(out, `"mimeType": "image/png"`) || !strings.Contains(out, `"structuredContent"`) {
		t.Errorf("call --json rich: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "", "call", "--config", cfg, "dev", "a", "rich")
	if want := "hello\n[image image/png, 4 bytes]\n[audio audio/wav, 4 bytes]\n[resource link file:///tmp/x.txt]\nembedded\n"; code != 0 || out != want {
		t.Errorf("call rich: exit %d\n%s\nwant\n%s", code, out, want)
	}
	// Content of a type no SDK knows is shown by its type, and kept whole by --json.
	code, out, _ = runCmd(t, "", "call", "--config", cfg, "dev", "x", "add", `{"a": 1, "b": 1}`)
	if code != 0 || out != "2\n[x-chart content]\n" {
		t.Errorf("call of a result with an unknown content type: exit %d, %q", code, out)
	}
	code, out, _ = runCmd(t, "", "call", "--json", "--config", cfg, "dev", "x", "add", `{"a": 1, "b": 1}`)
	if code != 0 || !strings.Contains(out, `"bars": [`) || !strings.Contains(out, `"x-cost": {`) {
		t.Errorf("call --json of a result with an unknown content type: exit %d\n%s", code, out)
	}
	code, out, errOut := runCmd(t, "", "call", "--config", cfg, "dev", "a", "fail")
	if code != 1 || out != "" || !strings.Contains(errOut, "fail: something went wrong downstream") {
		t.Errorf("call fail: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = runCmd(t, "", "call", "--config", cfg, "dev", "a", "add", `{"a": "x"}`)
	if code != 1 || !strings.Contains(errOut, "/a: got string, want number") {
		t.Errorf("call with bad arguments: exit %d %s", code, errOut)
	}
	for args, want := range map[string]string{
		`[1]`:       `JSON-ARGS must be a JSON object, such as '{"path": "/tmp"}', not an array`,
		`"x"`:       "not a string",
		`{"a": 1`:   "not valid JSON at byte 7: unexpected end of JSON input",
		`{"a": 1}}`: "not valid JSON at byte 9: invalid character '}' after top-level value",
	} {
		code, _, errOut = runCmd(t, "", "call", "--config", cfg, "dev", "a", "add", args)
		if code != 2 || !strings.Contains(errOut, want) || strings.Contains(errOut, "Go value") {
			t.Errorf("call with %s: exit %d %s", args, code, errOut)
		}
	}
	code, _, errOut = runCmd(t, "", "call", "--config", cfg, "dev", "a")
	if code != 2 || !strings.Contains(errOut, "call: needs TOOLBOX SERVER TOOL") {
		t.Errorf("call with too few arguments: exit %d %s", code, errOut)
	}
}

// TestDropInEntries copies server entries as Claude Desktop, Claude Code
// (.mcp.json, with "type") and Cursor (mcp.json, url alone) write them,
// unchanged, into one toolbox: every one connects and answers.
func TestDropInEntries(t *testing.T) {
	streamable := fakeserver.StartEverything(t, "streamableHttp")
	legacy := fakeserver.StartEverything(t, "sse")
	exe, _ := os.Executable()
	env := func(name string) map[string]string {
		return map[string]string{fakeserver.EnvServer: "1", fakeserver.EnvName: name}
	}
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{"dropins": map[string]any{
		"description": "Entries as each host writes them",
		"mcpServers": map[string]any{
			"desktop":     map[string]any{"command": exe, "args": []string{}, "env": env("desktop")},
			"code-stdio":  map[string]any{"type": "stdio", "command": exe, "args": []string{}, "env": env("code-stdio")},
			"code-http":   map[string]any{"type": "http", "url": streamable.URL("/mcp"), "headers": map[string]string{"X-Api-Key": "k"}},
			"code-sse":    map[string]any{"type": "sse", "url": legacy.URL("/sse")},
			"cursor-http": map[string]any{"url": streamable.URL("/mcp"), "headers": map[string]string{"X-Api-Key": "k"}},
			"cursor-sse":  map[string]any{"url": legacy.URL("/sse")},
		},
	}}})
	cs, stderr := runInProcess(t, "--config", cfg)
	text, isErr := callTool(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dropins"})
	if isErr || !strings.Contains(text, `"servers_connected":6`) {
		t.Fatalf("open: %s", text)
	}
	for _, s := range []string{"desktop", "code-stdio"} {
		if text, isErr := callTool(t, cs, "use_tool", use("dropins", s, "echo", map[string]any{"text": s})); isErr || !strings.Contains(text, `"server":"`+s+`"`) {
			t.Errorf("%s: %v %s", s, isErr, text)
		}
	}
	for _, s := range []string{"code-http", "code-sse", "cursor-http", "cursor-sse"} {
		if text, isErr := callTool(t, cs, "use_tool", use("dropins", s, "echo", map[string]any{"message": s})); isErr || text != "Echo: "+s {
			t.Errorf("%s: %v %s", s, isErr, text)
		}
	}
	if strings.Contains(stderr.String(), "unknown") {
		t.Errorf("drop-in entries drew warnings:\n%s", stderr)
	}
}

// TestCheckStartsAFailingServerOnce checks that a server that cannot start
// goes through its retry cycle once: check reports the attempts it made,
// and then renders open_toolbox's result from them rather than opening the
// toolbox (which would start the server again). Its warning is logged once.
func TestCheckStartsAFailingServerOnce(t *testing.T) {
	state := t.TempDir()
	failing := fakeServerEntry("failing", fakeserver.EnvFailFirst, "100", fakeserver.EnvStateDir, state)
	failing["maxRetries"] = 1
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "d", "mcpServers": map[string]any{
			"a": fakeServerEntry("a"), "b": fakeServerEntry("b"), "failing": failing,
		}},
	}})
	code, out, errOut := runCmd(t, "", "check", "--config", cfg)
	if code != 1 {
		t.Errorf("exit %d, want 1\n%s", code, out)
	}
	if starts := fakeserver.ReadLines(state, fakeserver.StartsFile); len(starts) != 2 {
		t.Errorf("the failing server started %d times, want 2 (1 attempt + maxRetries 1)", len(starts))
	}
	if n := strings.Count(errOut, "could not start"); n != 2 { // the progress line and the log's warning
		t.Errorf("%q appears %d times on stderr, want 2:\n%s", "could not start", n, errOut)
	}
	if n := strings.Count(errOut, "start failed, retrying"); n != 1 {
		t.Errorf("the retry was logged %d times, want 1:\n%s", n, errOut)
	}
	if !strings.Contains(out, "failing              error      could not start (2 attempts)") {
		t.Errorf("check output does not report the 2 attempts:\n%s", out)
	}
}

// TestCheckManyServers runs check over servers that fail at once, while it
// is still starting the others: under -race, its count of servers must not
// be written while their reports read it.
func TestCheckManyServers(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	servers := map[string]any{}
	for i := range 200 {
		servers[fmt.Sprintf("s%03d", i)] = map[string]any{"command": missing, "maxRetries": 0}
	}
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"many": map[string]any{"description": "d", "mcpServers": servers},
	}})
	code, out, errOut := runCmd(t, "", "check", "--config", cfg)
	if code != 1 || !strings.Contains(out, "200 of 200 server(s) failed to start.") {
		t.Errorf("exit %d\n%s", code, out)
	}
	if !strings.Contains(errOut, "[200/200] many/s") {
		t.Errorf("no progress line for the last server:\n%s", errOut)
	}
}
