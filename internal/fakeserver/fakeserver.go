// Package fakeserver is a downstream MCP server for tests that can
// misbehave on demand: exit at start, fail its first starts, hang, crash
// mid-call, print junk, flood stderr, report progress, change its tools,
// and count the calls and cancellations it received.
//
// It runs as a real process: a test binary whose TestMain calls [MaybeRun]
// re-executes itself with FAKE_SERVER=1 in the environment (a server's
// "env" in a workbench config does that), so no separate build is needed.
// Behaviour is chosen by FAKE_* environment variables; see [Env].
package fakeserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The environment variables that steer the fake server.
const (
	EnvServer      = "FAKE_SERVER"        // "1": run as the fake server
	EnvName        = "FAKE_NAME"          // name reported in serverInfo and in every result
	EnvStateDir    = "FAKE_STATE_DIR"     // folder for counters that outlive one process
	EnvExitAtStart = "FAKE_EXIT_AT_START" // exit at once with this status
	EnvFailFirst   = "FAKE_FAIL_FIRST"    // exit with status 1 on the first N starts (needs FAKE_STATE_DIR)
	EnvHangInit    = "FAKE_HANG_INIT"     // "1": never answer initialize
	EnvJunk        = "FAKE_JUNK_STDOUT"   // "1": print a non-JSON line on stdout before every message
	EnvFlood       = "FAKE_FLOOD_STDERR"  // write this many stderr lines at start
	EnvTools       = "FAKE_TOOLS"         // add this many generated tools, tool_000…
	EnvPageSize    = "FAKE_PAGE_SIZE"     // tools/list page size
	EnvStartDelay  = "FAKE_START_DELAY_MS"
	EnvExtraField  = "FAKE_EXTRA_FIELD"  // "1": add what the SDK does not know to tool objects and call results
	EnvRefFile     = "FAKE_REF_FILE"     // a schema file that the tool "ref" points its $ref at
	EnvChangeEarly = "FAKE_CHANGE_EARLY" // "1": add a tool (announcing list_changed) as soon as the client is initialized; "same": have it from the start and add it again then (list_changed, nothing changed)
	EnvWriteAtEOF  = "FAKE_WRITE_AT_EOF" // "1": when stdin ends, write one more message on stdout, as servers on their way out do
	EnvStrayIDs    = "FAKE_STRAY_IDS"    // "1": before each response, answer ids nobody asked for
	EnvBadList     = "FAKE_BAD_LIST"     // "1": answer tools/list with "tools" an object, not an array
	EnvBadInit     = "FAKE_BAD_INIT"     // "1": answer initialize with a protocolVersion that is a number
	// Hostile answers, each written by hand, not by the SDK.
	EnvDeepResult  = "FAKE_DEEP_RESULT"  // N: add tool "deep", answered with a result holding N nested arrays
	EnvEndless     = "FAKE_ENDLESS"      // N: add tool "endless", answered with a line of N bytes that never ends
	EnvEndlessPad  = "FAKE_ENDLESS_PAD"  // N: the endless line holds N bytes before its id
	EnvEndlessEnds = "FAKE_ENDLESS_ENDS" // "1": the endless line ends after its N bytes, and the server goes on
	EnvHugeList    = "FAKE_HUGE_LIST"    // N: answer tools/list with N tools of about 250 bytes each, in one page
	EnvStopReading = "FAKE_STOP_READING" // "1": add tool "stop_reading": once called, the server reads no more of its stdin
	EnvAsk         = "FAKE_ASK"          // "1": add tools "ask" and "client_caps" (ask.go)
	// EnvTermFile names a file the server writes "sigterm" to when it gets
	// SIGTERM, before it exits; with FAKE_HANG_INIT it also ignores the end
	// of stdin, as a command busy installing a package (npx) does.
	EnvTermFile = "FAKE_TERM_FILE"
	// EnvDetach "1": at start, start a sleep in a session of its own (as a
	// server starting a helper with setsid or Node's detached: true does)
	// and a daemon: a child that starts a sleep in a session of its own
	// and exits at once, leaving the sleep an orphan.
	EnvDetach = "FAKE_DETACH"
	// envDaemonize makes the fake server that daemonizer instead.
	envDaemonize = "FAKE_DAEMONIZE"
	// EnvStartGate names a file: the server waits at start until it
	// exists, then exits with status 1 if it holds "exit". Unlike the
	// other variables, what it does can change between runs without
	// changing the server's definition (its catalog key).
	EnvStartGate = "FAKE_START_GATE"
	// EnvInstallGate names a file: the process acts as a package runner
	// (npx) installing a package, without a child, until the file exists,
	// then runs the fake server as its child, stdio passed on, and exits
	// as it does.
	EnvInstallGate = "FAKE_INSTALL_GATE"
	// EnvNPXEntry names a folder, with FAKE_INSTALL_GATE: the runner's
	// cache entry for the package, as npx's _npx/<hash>. Missing, it is
	// "installed" (package.json and node_modules/dep); present without
	// node_modules/dep, the server dies as Node does of a module missing
	// from it.
	EnvNPXEntry = "FAKE_NPX_ENTRY"
	// EnvNPXBroken "1": the package itself lacks dep: every install of it
	// leaves the entry without node_modules/dep.
	EnvNPXBroken = "FAKE_NPX_BROKEN"
	// EnvSleepGate names a file: the tool "sleep" answers only once it
	// exists (and its ms have passed), so a test decides when a call ends.
	EnvSleepGate = "FAKE_SLEEP_GATE"
	// EnvToolsFile names a captured tool list ({"tools": [...]}, as in
	// testdata/search/tools): the server offers exactly those tools, each
	// answering a call with its name and arguments.
	EnvToolsFile = "FAKE_TOOLS_FILE"
	// EnvDefsFile names a file holding a JSON object of tool definitions
	// by name ({"name": {"description", "inputSchema", "annotations", …}}):
	// at start each one replaces the fake's tool of that name (or adds
	// it), and the tool "redefine" reads the file again and does the same,
	// announcing list_changed: a server that changes what its tools say,
	// while running and between runs.
	EnvDefsFile = "FAKE_DEFS_FILE"
	// EnvRawTools names a file whose bytes are the "tools" array of the
	// server's tools/list result, written byte for byte (duplicate keys,
	// escapes, members no SDK keeps): the server speaks JSON-RPC itself,
	// reads the file again for every tools/list, and answers a call with
	// the tool's name. Nothing else of FAKE_* applies but FAKE_STATE_DIR.
	EnvRawTools = "FAKE_RAW_TOOLS"
)

// Counter files in FAKE_STATE_DIR.
const (
	AtEOFFile   = "at-eof"  // FAKE_WRITE_AT_EOF: "written", or the write's error
	StartsFile  = "starts"  // one line per start
	CallsFile   = "calls"   // one line per tool call: the tool's name
	CancelsFile = "cancels" // one line per cancelled call: the tool's name
	ListsFile   = "lists"   // one line per tools/list request
	// RootsChangedFile: one line per notifications/roots/list_changed (FAKE_ASK)
	RootsChangedFile = "roots-changed"
)

// envSleep makes the re-executed test binary sleep for this many seconds
// and exit: [sleeper] on systems without a sleep command.
const envSleep = "FAKE_SLEEP"

// sleeper returns a command that sleeps ten minutes: sleep where there is
// one, else (Windows) this test binary re-executed with FAKE_SLEEP.
func sleeper() *exec.Cmd {
	if runtime.GOOS != "windows" {
		return exec.Command("sleep", "600")
	}
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), EnvServer+"=", envSleep+"=600")
	return cmd
}

// MaybeRun runs the fake server and exits if this process was started as
// one. Call it first thing in TestMain.
func MaybeRun() {
	if s := envInt(envSleep); s > 0 {
		time.Sleep(time.Duration(s) * time.Second)
		os.Exit(0)
	}
	if os.Getenv(EnvServer) != "1" {
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fake server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Env returns the environment that makes a re-executed test binary the
// fake server, plus extra variables (alternating names and values).
func Env(extra ...string) map[string]string {
	env := map[string]string{EnvServer: "1"}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return env
}

type fake struct {
	name     string
	stateDir string
	server   *mcp.Server
	added    atomic.Int32
}

func run() error {
	if os.Getenv(envDaemonize) == "1" {
		return startDetached()
	}
	if os.Getenv(EnvDetach) == "1" {
		if err := startDetached(); err != nil {
			return err
		}
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		d := exec.Command(exe)
		d.Env = append(os.Environ(), envDaemonize+"=1")
		d.Stderr = os.Stderr
		if err := d.Run(); err != nil {
			return fmt.Errorf("daemonizing: %w", err)
		}
	}
	if gate := os.Getenv(EnvInstallGate); gate != "" {
		return runAsRunner(gate)
	}
	f := &fake{name: os.Getenv(EnvName), stateDir: os.Getenv(EnvStateDir)}
	if f.name == "" {
		f.name = "fake"
	}
	starts := f.record(StartsFile, "start")
	if tf := os.Getenv(EnvTermFile); tf != "" {
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		go func() {
			<-term
			_ = os.WriteFile(tf, []byte("sigterm\n"), 0o644)
			os.Exit(0)
		}()
	}
	if n := envInt(EnvFlood); n > 0 {
		for i := range n {
			fmt.Fprintf(os.Stderr, "flood line %d of %d: the quick brown fox jumps over the lazy dog\n", i+1, n)
		}
	}
	if v := os.Getenv(EnvExitAtStart); v != "" {
		code, _ := strconv.Atoi(v)
		fmt.Fprintf(os.Stderr, "fake server %s: exiting at start as asked (status %d)\n", f.name, code)
		os.Exit(code)
	}
	if n := envInt(EnvFailFirst); n > 0 && starts <= n {
		fmt.Fprintf(os.Stderr, "fake server %s: failing start %d of %d\n", f.name, starts, n)
		os.Exit(1)
	}
	if gate := os.Getenv(EnvStartGate); gate != "" {
		for {
			if b, err := os.ReadFile(gate); err == nil {
				if strings.TrimSpace(string(b)) == "exit" {
					fmt.Fprintf(os.Stderr, "fake server %s: the start gate says exit\n", f.name)
					os.Exit(1)
				}
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if d := envInt(EnvStartDelay); d > 0 {
		time.Sleep(time.Duration(d) * time.Millisecond)
	}
	if os.Getenv(EnvHangInit) == "1" {
		if os.Getenv(EnvJunk) == "1" { // a server that speaks only junk
			go func() {
				for {
					fmt.Println("junk, not JSON-RPC")
					time.Sleep(10 * time.Millisecond)
				}
			}()
		}
		_, _ = io.Copy(io.Discard, os.Stdin) // read, never answer
		if os.Getenv(EnvTermFile) != "" {
			for { // until a signal
				time.Sleep(time.Hour)
			}
		}
		return nil
	}

	if file := os.Getenv(EnvRawTools); file != "" {
		return f.serveRaw(file)
	}

	opts := &mcp.ServerOptions{PageSize: envInt(EnvPageSize)}
	addEarly := func() {
		f.server.AddTool(&mcp.Tool{Name: "early", Description: "Added as soon as the client was initialized.", InputSchema: schema(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("early"), nil
			})
	}
	if early := os.Getenv(EnvChangeEarly); early == "1" || early == "same" {
		opts.InitializedHandler = func(context.Context, *mcp.InitializedRequest) { addEarly() }
	}
	if os.Getenv(EnvAsk) == "1" {
		//lint:ignore SA1019 the host's roots are relayed to servers of the 2025 protocols
		opts.RootsListChangedHandler = func(context.Context, *mcp.RootsListChangedRequest) { f.record(RootsChangedFile, "roots") }
	}
	f.server = mcp.NewServer(&mcp.Implementation{Name: f.name, Version: "1.0.0"}, opts)
	if os.Getenv(EnvChangeEarly) == "same" {
		addEarly() // no session yet: nothing announced
	}
	// Calls in flight when the session ends are cancelled by the SDK; wait
	// for their handlers, so that what they record is not lost to the exit.
	var inFlight sync.WaitGroup
	f.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/call":
				inFlight.Add(1)
				defer inFlight.Done()
			case "tools/list":
				f.record(ListsFile, "list")
			}
			return next(ctx, method, req)
		}
	})
	defer waitTimeout(&inFlight, 5*time.Second)
	if file := os.Getenv(EnvToolsFile); file != "" {
		if err := f.addToolsFrom(file); err != nil {
			return err
		}
	} else {
		f.addTools()
	}
	if file := os.Getenv(EnvDefsFile); file != "" {
		if err := f.redefine(file); err != nil {
			return err
		}
		f.server.AddTool(&mcp.Tool{Name: "redefine", Description: "Reads FAKE_DEFS_FILE again and changes the tools it defines.", InputSchema: schema(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if err := f.redefine(file); err != nil {
					return nil, err
				}
				return text("redefined"), nil
			})
	}
	var t mcp.Transport = &mcp.StdioTransport{}
	if os.Getenv(EnvStopReading) == "1" {
		t = &mcp.IOTransport{Reader: &stoppableReader{r: os.Stdin}, Writer: os.Stdout}
	}
	hostile := envInt(EnvDeepResult) > 0 || envInt(EnvEndless) > 0 || envInt(EnvHugeList) > 0
	if hostile || os.Getenv(EnvJunk) == "1" || os.Getenv(EnvExtraField) == "1" || os.Getenv(EnvStrayIDs) == "1" || os.Getenv(EnvBadList) == "1" || os.Getenv(EnvBadInit) == "1" {
		t = &mangler{Transport: t, junk: os.Getenv(EnvJunk) == "1", extra: os.Getenv(EnvExtraField) == "1", stray: os.Getenv(EnvStrayIDs) == "1",
			badList: os.Getenv(EnvBadList) == "1", badInit: os.Getenv(EnvBadInit) == "1",
			deep: envInt(EnvDeepResult), endless: envInt(EnvEndless), hugeList: envInt(EnvHugeList)}
	}
	err := f.server.Run(context.Background(), t)
	if os.Getenv(EnvWriteAtEOF) == "1" {
		// A broken pipe must come back as an error here, not kill us.
		signal.Ignore(syscall.SIGPIPE)
		time.Sleep(20 * time.Millisecond)
		_, werr := fmt.Fprintln(os.Stdout, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"bye"}}`)
		if werr != nil {
			f.record(AtEOFFile, werr.Error())
		} else {
			f.record(AtEOFFile, "written")
		}
	}
	if err != nil && strings.Contains(err.Error(), "EOF") {
		return nil
	}
	return err
}

// runAsRunner is FAKE_INSTALL_GATE: a package runner that installs until
// gate exists, then runs the server as its child.
func runAsRunner(gate string) error {
	for {
		if _, err := os.Stat(gate); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if entry := os.Getenv(EnvNPXEntry); entry != "" {
		dep := filepath.Join(entry, "node_modules", "dep")
		if _, err := os.Stat(entry); err != nil {
			installed := dep
			if os.Getenv(EnvNPXBroken) == "1" {
				installed = filepath.Dir(dep)
			}
			if err := os.MkdirAll(installed, 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(entry, "package.json"), []byte(`{"dependencies":{"dep":"1.0.0"}}`), 0o600); err != nil {
				return err
			}
		}
		if _, err := os.Stat(dep); err != nil {
			fmt.Fprintf(os.Stderr, "node:internal/modules/esm/resolve:873\n  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);\n        ^\n\n"+
				"Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'dep' imported from %s\n"+
				"    at packageResolve (node:internal/modules/esm/resolve:873:9)\n    at moduleResolve (node:internal/modules/esm/resolve:946:18)\n\nNode.js v22.0.0\n",
				filepath.Join(entry, "node_modules", "server", "index.js"))
			os.Exit(1)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvInstallGate+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			os.Exit(ee.ExitCode())
		}
		return err
	}
	return nil
}

// startDetached starts a long sleep in a session of its own.
func startDetached() error {
	cmd := sleeper()
	newSession(cmd)
	return cmd.Start()
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// record appends a line to a counter file and returns how many lines it
// holds now. Without FAKE_STATE_DIR it does nothing.
func (f *fake) record(file, line string) int {
	if f.stateDir == "" {
		return 0
	}
	recordMu.Lock()
	defer recordMu.Unlock()
	p := filepath.Join(f.stateDir, file)
	if runtime.GOOS == "windows" {
		// Servers of one test append to one file, and under wine two
		// processes' appends lost a line (workbench's TestLoad counted
		// 2999 of 3000 calls that all answered): they take turns, a
		// folder made being the turn, bounded in time.
		lock := p + ".lock"
		for i := 0; i < 2000 && os.Mkdir(lock, 0o700) != nil; i++ {
			time.Sleep(time.Millisecond)
		}
		defer os.Remove(lock)
	}
	fh, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 0
	}
	fmt.Fprintln(fh, line)
	fh.Close()
	return len(ReadLines(f.stateDir, file))
}

var recordMu sync.Mutex

// ReadLines returns the lines of a counter file in dir.
func ReadLines(dir, file string) []string {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return nil
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func envInt(name string) int {
	n, _ := strconv.Atoi(os.Getenv(name))
	return n
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

// redefine reads file (see EnvDefsFile) and (re)adds each tool it defines;
// a call answers with the tool's name and its arguments.
func (f *fake) redefine(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var defs map[string]json.RawMessage
	if err := json.Unmarshal(data, &defs); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for name, raw := range defs {
		t := &mcp.Tool{}
		if err := json.Unmarshal(raw, t); err != nil {
			return fmt.Errorf("%s: %s: %w", file, name, err)
		}
		t.Name = name
		if t.InputSchema == nil {
			t.InputSchema = schema(`{"type":"object"}`)
		}
		f.server.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.record(CallsFile, name)
			return text(name + " " + string(req.Params.Arguments)), nil
		})
	}
	return nil
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// addToolsFrom offers the tools of a captured list, as they are.
func (f *fake) addToolsFrom(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var list struct {
		Tools []*mcp.Tool `json:"tools"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for _, t := range list.Tools {
		name := t.Name
		f.server.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.record(CallsFile, name)
			return text(name + " " + string(req.Params.Arguments)), nil
		})
	}
	return nil
}

func (f *fake) addTools() {
	if os.Getenv(EnvAsk) == "1" {
		f.addAskTools()
	}
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	f.server.AddTool(&mcp.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns its arguments and the server's name.",
		InputSchema: schema(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Annotations: ro,
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "echo")
		out := map[string]any{"server": f.name, "args": json.RawMessage(req.Params.Arguments)}
		b, _ := json.Marshal(out)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: out}, nil
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "add",
		Description: "Adds two numbers.",
		InputSchema: schema(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "add")
		var in struct{ A, B float64 }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return text(strconv.FormatFloat(in.A+in.B, 'g', -1, 64)), nil
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "sleep",
		Description: "Sleeps for ms milliseconds, or until cancelled.",
		InputSchema: schema(`{"type":"object","properties":{"ms":{"type":"integer"}},"required":["ms"]}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "sleep")
		var in struct{ MS int }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		wake := time.After(time.Duration(in.MS) * time.Millisecond)
		gate := os.Getenv(EnvSleepGate)
		for {
			select {
			case <-wake:
				if gate == "" {
					return text(fmt.Sprintf("slept %dms", in.MS)), nil
				}
				if _, err := os.Stat(gate); err == nil {
					return text(fmt.Sprintf("slept %dms", in.MS)), nil
				}
				wake = time.After(10 * time.Millisecond)
			case <-ctx.Done():
				f.record(CancelsFile, "sleep")
				return nil, ctx.Err()
			}
		}
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "progress",
		Description: "Reports progress steps times, delayMs apart, then answers.",
		InputSchema: schema(`{"type":"object","properties":{"steps":{"type":"integer"},"delayMs":{"type":"integer"}}}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "progress")
		var in struct{ Steps, DelayMS int }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		tok := req.Params.GetProgressToken()
		for i := 1; i <= in.Steps; i++ {
			select {
			case <-time.After(time.Duration(in.DelayMS) * time.Millisecond):
			case <-ctx.Done():
				f.record(CancelsFile, "progress")
				return nil, ctx.Err()
			}
			if tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i),
				})
			}
		}
		return text(fmt.Sprintf("done after %d steps", in.Steps)), nil
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "big",
		Description: "Returns a text of the given number of bytes.",
		InputSchema: schema(`{"type":"object","properties":{"bytes":{"type":"integer"}},"required":["bytes"]}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "big")
		var in struct{ Bytes int }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return text(strings.Repeat("x", in.Bytes)), nil
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "crash",
		Description: "Exits the server process in the middle of the call.",
		InputSchema: schema(`{"type":"object"}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "crash")
		fmt.Fprintln(os.Stderr, "fake server: crashing as asked")
		os.Exit(3)
		return nil, nil
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "crash_once",
		Description: "Read-only; crashes the server on the first call of the test (after progress 1 and 2 of 3), answers afterwards (after progress 1, 2 and 3).",
		InputSchema: schema(`{"type":"object"}`),
		Annotations: ro,
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		first := f.record(CallsFile, "crash_once") == 1
		if tok := req.Params.GetProgressToken(); tok != nil {
			steps := 3
			if first {
				steps = 2
			}
			for i := 1; i <= steps; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3})
			}
		}
		if first {
			os.Exit(3)
		}
		return text("survived"), nil
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "fail",
		Description: "Returns a tool error.",
		InputSchema: schema(`{"type":"object"}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "fail")
		res := text("fail: something went wrong downstream")
		res.IsError = true
		return res, nil
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "rpc_error",
		Description: "Answers with a JSON-RPC error instead of a result.",
		InputSchema: schema(`{"type":"object"}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "rpc_error")
		return nil, &jsonrpc.Error{Code: -32001, Message: "the fake server refuses"}
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "rich",
		Description: "Returns every kind of content, structured content and _meta.",
		InputSchema: schema(`{"type":"object"}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "rich")
		return &mcp.CallToolResult{
			Meta: mcp.Meta{"fake/trace": "abc"},
			Content: []mcp.Content{
				&mcp.TextContent{Text: "hello", Annotations: &mcp.Annotations{Priority: 0.5}},
				&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
				&mcp.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
				&mcp.ResourceLink{URI: "file:///tmp/x.txt", Name: "x.txt"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://a", MIMEType: "text/plain", Text: "embedded"}},
			},
			StructuredContent: map[string]any{"n": 1.5, "list": []any{"a", "b"}},
		}, nil
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "change_tools",
		Description: "Adds a tool named added_N, so the server announces a changed tool list.",
		InputSchema: schema(`{"type":"object"}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "change_tools")
		name := fmt.Sprintf("added_%d", f.added.Add(1))
		f.server.AddTool(&mcp.Tool{Name: name, Description: "Added at run time.", InputSchema: schema(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text(name), nil
			})
		return text("added " + name), nil
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "whoami",
		Description: "Returns the process id, working directory and the named environment variable.",
		InputSchema: schema(`{"type":"object","properties":{"env":{"type":"string"}}}`),
		Annotations: ro,
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "whoami")
		var in struct{ Env string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		wd, _ := os.Getwd()
		out := map[string]any{"server": f.name, "pid": os.Getpid(), "cwd": wd, "env": os.Getenv(in.Env)}
		b, _ := json.Marshal(out)
		return text(string(b)), nil
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "spawn",
		Description: "Starts a long sleep as a child process of the server and returns its pid.",
		InputSchema: schema(`{"type":"object"}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		cmd := sleeper()
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return text(strconv.Itoa(cmd.Process.Pid)), nil
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "tuple",
		Description: "A draft-07 schema with tuple items.",
		InputSchema: schema(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"point":{"type":"array","items":[{"type":"number"},{"type":"number"}]},"when":{"type":"string","format":"date-time"}},"required":["point"]}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "tuple")
		return text(string(req.Params.Arguments)), nil
	})
	f.server.AddTool(&mcp.Tool{
		Name:        "bad_schema",
		Description: "Its inputSchema cannot compile, and refers to a file that must never be read.",
		InputSchema: schema(`{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"},"y":{"type":"nonsense"}}}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record(CallsFile, "bad_schema")
		return text("bad_schema ran"), nil
	})
	if ref := os.Getenv(EnvRefFile); ref != "" {
		// A file URL of the path, as JSON: file:///C:/… on Windows.
		p := filepath.ToSlash(ref)
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		u, _ := json.Marshal("file://" + p)
		f.server.AddTool(&mcp.Tool{
			Name:        "ref",
			Description: "Its inputSchema refers to a schema file, which the workbench must not read.",
			InputSchema: schema(`{"type":"object","properties":{"x":{"$ref":` + string(u) + `}}}`),
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.record(CallsFile, "ref")
			return text("ref ran"), nil
		})
	}
	if envInt(EnvDeepResult) > 0 {
		f.server.AddTool(&mcp.Tool{Name: "deep", Description: "Answers with a result nested FAKE_DEEP_RESULT levels deep.", InputSchema: schema(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				f.record(CallsFile, "deep")
				return text("replaced by the deep result"), nil
			})
	}
	if envInt(EnvEndless) > 0 {
		f.server.AddTool(&mcp.Tool{Name: "endless", Description: "Answers with a line that never ends.", InputSchema: schema(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				f.record(CallsFile, "endless")
				return text("replaced by the endless line"), nil
			})
	}
	if os.Getenv(EnvStopReading) == "1" {
		f.server.AddTool(&mcp.Tool{Name: "stop_reading", Description: "Answers, then reads no more of stdin.", InputSchema: schema(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				f.record(CallsFile, "stop_reading")
				stopReading.Store(true)
				return text("stopped reading"), nil
			})
	}
	for i := range envInt(EnvTools) {
		name := fmt.Sprintf("tool_%03d", i)
		f.server.AddTool(&mcp.Tool{Name: name, Description: "Generated tool number " + strconv.Itoa(i) + ".", InputSchema: schema(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text(name), nil
			})
	}
}

// mangler wraps the server's transport to print junk on stdout before
// every message, and to add what the SDK does not know to each tool of a
// tools/list result and to each tools/call result: fields, and a content
// block of a type of its own.
type mangler struct {
	mcp.Transport
	junk, extra, stray, badList, badInit bool
	deep, endless, hugeList              int
}

func (m *mangler) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := m.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &mangledConn{Connection: c, m: m}, nil
}

type mangledConn struct {
	mcp.Connection
	m  *mangler
	mu sync.Mutex

	callsMu sync.Mutex
	calls   map[any]string // tools/call requests read, by id: the tool's name
}

func (c *mangledConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" && req.ID.IsValid() {
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(req.Params, &p)
		c.callsMu.Lock()
		if c.calls == nil {
			c.calls = map[any]string{}
		}
		c.calls[req.ID.Raw()] = p.Name
		c.callsMu.Unlock()
	}
	return msg, err
}

// hostile writes the hand-made answer that replaces resp, if there is
// one, and reports whether it did.
func (c *mangledConn) hostile(resp *jsonrpc.Response) bool {
	c.callsMu.Lock()
	tool := c.calls[resp.ID.Raw()]
	delete(c.calls, resp.ID.Raw())
	c.callsMu.Unlock()
	id, _ := json.Marshal(resp.ID.Raw())
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	switch {
	case tool == "deep" && c.m.deep > 0:
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[],"deep":`, id)
		writeRepeat(out, "[", c.m.deep)
		writeRepeat(out, "]", c.m.deep)
		out.WriteString("}}\n")
	case tool == "endless" && c.m.endless > 0:
		if pad := envInt(EnvEndlessPad); pad > 0 {
			fmt.Fprintf(out, `{"jsonrpc":"2.0","_meta":{"pad":"%s"},"id":%s,"result":{"content":[{"type":"text","text":"`, strings.Repeat("p", pad), id)
		} else {
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
		}
		writeRepeat(out, "x", c.m.endless)
		if os.Getenv(EnvEndlessEnds) == "1" {
			out.WriteString(`"}]}}` + "\n")
			break
		}
		_ = out.Flush()
		for { // the line never ends, and the server says nothing more
			time.Sleep(time.Hour)
		}
	case c.m.hugeList > 0 && isToolList(resp.Result):
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`, id)
		pad := strings.Repeat("p", 160)
		for i := range c.m.hugeList {
			if i > 0 {
				out.WriteByte(',')
			}
			fmt.Fprintf(out, `{"name":"huge_%06d","description":"Generated tool %d: %s","inputSchema":{"type":"object"}}`, i, i, pad)
		}
		out.WriteString("]}}\n")
	default:
		return false
	}
	_ = out.Flush()
	return true
}

func isToolList(result json.RawMessage) bool {
	var page map[string]json.RawMessage
	return json.Unmarshal(result, &page) == nil && bytes.HasPrefix(page["tools"], []byte("["))
}

func writeRepeat(w *bufio.Writer, s string, n int) {
	chunk := strings.Repeat(s, 64<<10)
	for n > 0 {
		k := min(n, 64<<10)
		w.WriteString(chunk[:k*len(s)])
		n -= k
	}
}

// stopReading is set by the tool stop_reading: the server's stdin reader
// then blocks for good.
var stopReading atomic.Bool

type stoppableReader struct{ r io.ReadCloser }

func (s *stoppableReader) Read(p []byte) (int, error) {
	for stopReading.Load() {
		time.Sleep(time.Hour)
	}
	return s.r.Read(p)
}

func (s *stoppableReader) Close() error { return s.r.Close() }

func (c *mangledConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if resp, ok := msg.(*jsonrpc.Response); ok && c.hostile(resp) {
		return nil
	}
	if c.m.junk {
		fmt.Fprintln(os.Stdout, "this line is not JSON-RPC: a server printing a banner on stdout")
		fmt.Fprintln(os.Stdout, `{"level":"info","msg":"a JSON log line on stdout, not JSON-RPC either"}`)
	}
	if _, ok := msg.(*jsonrpc.Response); ok && c.m.stray {
		// Answers to requests never made: one with an id of the
		// workbench's own form, one with a number.
		fmt.Fprintln(os.Stdout, `{"jsonrpc":"2.0","id":"wb-stray","result":{"content":[{"type":"text","text":"stray"}]}}`)
		fmt.Fprintln(os.Stdout, `{"jsonrpc":"2.0","id":987654,"result":{"content":[]}}`)
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && (c.m.badList || c.m.badInit) {
		var page map[string]json.RawMessage
		if json.Unmarshal(resp.Result, &page) == nil && page["tools"] != nil && c.m.badList {
			resp.Result = json.RawMessage(`{"tools":{}}`)
		}
		if page["protocolVersion"] != nil && c.m.badInit {
			resp.Result = json.RawMessage(`{"protocolVersion":20251125,"capabilities":{},"serverInfo":{"name":"bad","version":"1"}}`)
		}
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && c.m.extra && len(resp.Result) > 0 {
		var page map[string]json.RawMessage
		if json.Unmarshal(resp.Result, &page) == nil && page["tools"] != nil {
			var tools []map[string]json.RawMessage
			if json.Unmarshal(page["tools"], &tools) == nil {
				for _, t := range tools {
					t["x-vendor"] = json.RawMessage(`{"cost":"low","tags":["a","b"]}`)
					t["execution"] = json.RawMessage(`{"taskSupport":"optional"}`)
				}
				page["tools"], _ = json.Marshal(tools)
				resp.Result, _ = json.Marshal(page)
			}
		}
		if json.Unmarshal(resp.Result, &page) == nil && page["content"] != nil {
			var content []json.RawMessage
			if json.Unmarshal(page["content"], &content) == nil {
				content = append(content, json.RawMessage(`{"type":"x-chart","spec":{"bars":[3,1,2]}}`))
				page["content"], _ = json.Marshal(content)
				page["x-cost"] = json.RawMessage(`{"ms":3}`)
				resp.Result, _ = json.Marshal(page)
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

// serveRaw is the server of EnvRawTools: JSON-RPC over stdio, written by
// hand, so that the tool list reaches the client as the file has it.
func (f *fake) serveRaw(file string) error {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name            string `json:"name"`
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &msg); err != nil || msg.ID == nil {
			continue // a notification, or not for this server
		}
		var result string
		switch msg.Method {
		case "initialize":
			v, _ := json.Marshal(msg.Params.ProtocolVersion)
			result = `{"protocolVersion":` + string(v) + `,"capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1.0.0"}}`
		case "tools/list":
			f.record(ListsFile, "list")
			tools, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			result = `{"tools":` + strings.TrimSpace(string(tools)) + `}`
		case "tools/call":
			f.record(CallsFile, msg.Params.Name)
			t, _ := json.Marshal("called " + msg.Params.Name)
			result = `{"content":[{"type":"text","text":` + string(t) + `}]}`
		default:
			result = `{}`
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", msg.ID, result)
		if err := out.Flush(); err != nil {
			return err
		}
	}
	return in.Err()
}
