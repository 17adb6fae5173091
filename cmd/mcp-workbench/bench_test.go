package main

// Benchmarks of the workbench against the same downstream server called
// directly, both as real processes over stdio pipes, the way a host runs
// them. make bench runs them and prints a table (cmd/benchtable); make test
// runs them briefly so that they never rot.
//
// Benchmark names pair up: .../direct is the host talking to the server
// itself, .../workbench the host talking to the workbench that proxies to
// a server of its own.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchClient connects a host session to cmd, a stdio MCP server process.
func benchClient(b *testing.B, cmd *exec.Cmd) *mcp.ClientSession {
	b.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-host", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	pids.Store(cs, cmd.Process.Pid)
	b.Cleanup(func() { cs.Close() })
	return cs
}

func fakeCmd(name string) *exec.Cmd {
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fakeserver.EnvServer+"=1", fakeserver.EnvName+"="+name)
	return cmd
}

// workbenchCmd starts the workbench (this test binary as main) on a
// configuration of toolboxes, each a list of fake servers with extra env.
func workbenchCmd(b testing.TB, cfg map[string]any) *exec.Cmd {
	path := filepath.Join(b.TempDir(), "config.json")
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "--config", path, "--log-level", "error")
	cmd.Env = append(os.Environ(), envMain+"=1")
	// WB_BENCH_ENV adds variables to the workbench process only (GOGC=…),
	// to compare runtime settings.
	cmd.Env = append(cmd.Env, strings.Fields(os.Getenv("WB_BENCH_ENV"))...)
	return cmd
}

func fakeEntry(name string, env ...string) map[string]any {
	exe, _ := os.Executable()
	e := map[string]string{fakeserver.EnvServer: "1", fakeserver.EnvName: name}
	for i := 0; i+1 < len(env); i += 2 {
		e[env[i]] = env[i+1]
	}
	return map[string]any{"command": exe, "env": e}
}

func oneToolbox(servers map[string]any) map[string]any {
	return map[string]any{"toolboxes": map[string]any{"bench": map[string]any{"description": "benchmark", "mcpServers": servers}}}
}

// caller makes the same echo call either directly or through use_tool.
type caller struct {
	cs      *mcp.ClientSession
	viaWB   bool
	payload map[string]any
}

func (c *caller) call() error {
	var params *mcp.CallToolParams
	if c.viaWB {
		params = &mcp.CallToolParams{Name: "use_tool", Arguments: map[string]any{
			"tool":      map[string]string{"toolbox": "bench", "server": "s", "tool": "echo"},
			"arguments": c.payload,
		}}
	} else {
		params = &mcp.CallToolParams{Name: "echo", Arguments: c.payload}
	}
	res, err := c.cs.CallTool(context.Background(), params)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool error: %v", res.Content)
	}
	return nil
}

func newCaller(b *testing.B, mode string, size int) *caller {
	payload := map[string]any{"text": strings.Repeat("x", size)}
	switch mode {
	case "direct":
		return &caller{cs: benchClient(b, fakeCmd("s")), payload: payload}
	case "relay":
		exe, _ := os.Executable()
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), envRelay+"=1")
		return &caller{cs: benchClient(b, cmd), payload: payload}
	}
	cs := benchClient(b, workbenchCmd(b, oneToolbox(map[string]any{"s": fakeEntry("s")})))
	c := &caller{cs: cs, viaWB: true, payload: payload}
	if err := c.call(); err != nil { // opens the toolbox
		b.Fatal(err)
	}
	return c
}

// BenchmarkCall is one call at a time: the latency a host sees. It
// reports the median and 99th percentile besides the mean.
func BenchmarkCall(b *testing.B) {
	for _, mode := range []string{"direct", "relay", "workbench"} {
		b.Run(mode, func(b *testing.B) { benchCalls(b, newCaller(b, mode, 64)) })
	}
}

// BenchmarkCallLarge is BenchmarkCall with 64 KiB of text each way, the
// size of a file a model reads: what a call costs where there is more to
// decode than the envelope.
func BenchmarkCallLarge(b *testing.B) {
	for _, mode := range []string{"direct", "relay", "workbench"} {
		b.Run(mode, func(b *testing.B) { benchCalls(b, newCaller(b, mode, 64<<10)) })
	}
}

func benchCalls(b *testing.B, c *caller) {
	for range 20 { // warm up both processes
		if err := c.call(); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	cpu0 := procCPU(c.cs)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if err := c.call(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
	if cpu := procCPU(c.cs) - cpu0; cpu > 0 {
		// CPU time of the process the host talks to, per call.
		b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "server-cpu-µs/call")
	}
}

// BenchmarkThroughput keeps n calls in flight; it reports calls a second
// and, for the workbench, its peak resident memory.
func BenchmarkThroughput(b *testing.B) {
	for _, n := range []int{1, 16, 64} {
		for _, mode := range []string{"direct", "relay", "workbench"} {
			b.Run(fmt.Sprintf("inflight=%d/%s", n, mode), func(b *testing.B) {
				c := newCaller(b, mode, 64)
				var next atomic.Int64
				var wg sync.WaitGroup
				var rssEarly float64
				start := time.Now()
				b.ResetTimer()
				for range n {
					wg.Go(func() {
						for {
							i := next.Add(1)
							if i > int64(b.N) {
								return
							}
							if i == int64(b.N)/4 && mode == "workbench" {
								rssEarly = procStatus(c.cs, "VmRSS:")
							}
							if err := c.call(); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
				if mode == "workbench" {
					// Memory stays flat: the resident set after a quarter of
					// the calls and at the end, and the peak.
					if rss := procStatus(c.cs, "VmHWM:"); rss > 0 {
						b.ReportMetric(rss, "peak-RSS-MiB")
						b.ReportMetric(rssEarly, "RSS-at-25%-MiB")
						b.ReportMetric(procStatus(c.cs, "VmRSS:"), "RSS-at-end-MiB")
					}
				}
			})
		}
	}
}

// procCPU is the user+system CPU time the process behind cs has used
// (Linux only; 0 elsewhere). /proc counts in clock ticks of 10ms.
func procCPU(cs *mcp.ClientSession) time.Duration {
	return pidCPU(serverPID(cs))
}

// pidCPU is the user+system CPU time process pid has used (Linux only; 0
// elsewhere).
func pidCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if pid == 0 || err != nil {
		return 0
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// procStatus reads a memory figure (VmRSS:, VmHWM:) of the server process
// behind cs, in MiB (Linux only; 0 elsewhere).
func procStatus(cs *mcp.ClientSession, field string) float64 {
	return pidStatus(serverPID(cs), field)
}

// pidStatus reads a memory figure of process pid, in MiB (Linux only; 0
// elsewhere).
func pidStatus(pid int, field string) float64 {
	return procFile(pid, "status", field)
}

// procFile reads a figure in kB of /proc/PID/file, in MiB.
func procFile(pid int, file, field string) float64 {
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.Atoi(f[1])
			return float64(kb) / 1024
		}
	}
	return 0
}

var pids sync.Map // *mcp.ClientSession → pid, recorded by benchClient's callers

func serverPID(cs *mcp.ClientSession) int {
	v, _ := pids.Load(cs)
	pid, _ := v.(int)
	return pid
}

// BenchmarkStartup is the time from starting the workbench process to its
// initialize result, on a configuration of three toolboxes.
func BenchmarkStartup(b *testing.B) {
	cfg := map[string]any{"toolboxes": map[string]any{}}
	for i := range 3 {
		cfg["toolboxes"].(map[string]any)[fmt.Sprintf("tb%d", i)] = map[string]any{
			"description": "toolbox", "mcpServers": map[string]any{"s": fakeEntry("s")},
		}
	}
	path := workbenchCmd(b, cfg).Args[2]
	exe, _ := os.Executable()
	env := append(os.Environ(), envMain+"=1")
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-host", Version: "1"}, nil)
	for b.Loop() {
		cmd := exec.Command(exe, "--config", path)
		cmd.Env = env
		cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cs.Close()
		b.StartTimer()
	}
}

// BenchmarkOpen opens a toolbox of n servers, each taking 50ms to start
// but one that takes 200ms: parallel starts make the open about as long as
// the slowest server, not the sum. The tool catalog is off (see
// BenchmarkOpenCatalog).
func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			servers := map[string]any{}
			for i := range n {
				delay := "50"
				if i == 0 {
					delay = "200"
				}
				servers[fmt.Sprintf("s%02d", i)] = fakeEntry("s", fakeserver.EnvStartDelay, delay)
			}
			cfg := oneToolbox(servers)
			cfg["catalog"] = false // the opens wait for the starts: what this measures
			for b.Loop() {
				b.StopTimer()
				cmd := workbenchCmd(b, cfg)
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-host", Version: "1"}, nil).
					Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox_name": "bench"}})
				b.StopTimer()
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
				cs.Close()
				b.StartTimer()
			}
			b.ReportMetric(200, "slowest-server-ms")
		})
	}
}

// BenchmarkOpenCatalog opens a toolbox of three servers in a fresh
// workbench process each time: cold with an empty tool catalog (the open
// waits for the servers), warm with the catalog a first open filled (the
// open answers from it and the servers start in the background). The
// servers are fakes that each take 300ms to start (as an npx-started
// server does on a warm npm cache), and the three official servers started
// with npx (offline, from testdata/npm).
func BenchmarkOpenCatalog(b *testing.B) {
	const delay = 300
	servers := map[string]any{}
	for i := range 3 {
		name := fmt.Sprintf("s%d", i)
		servers[name] = fakeEntry(name, fakeserver.EnvStartDelay, strconv.Itoa(delay))
	}
	benchOpenCatalog(b, "", oneToolbox(servers), func(b *testing.B) { b.ReportMetric(delay, "server-start-ms") })

	fakeserver.NPMServer(b, "mcp-server-memory") // installed, or say how
	npmDir := filepath.Join(fakeserver.RepoRoot(b), "testdata", "npm")
	npx := func(pkg string, args ...string) map[string]any {
		return map[string]any{"command": "npx", "args": append([]string{"--offline", "--no", pkg}, args...), "cwd": npmDir}
	}
	official := oneToolbox(map[string]any{
		"memory":     npx("@modelcontextprotocol/server-memory"),
		"filesystem": npx("@modelcontextprotocol/server-filesystem", b.TempDir()),
		"everything": npx("@modelcontextprotocol/server-everything"),
	})
	benchOpenCatalog(b, "npx-", official, func(*testing.B) {})
}

func benchOpenCatalog(b *testing.B, prefix string, cfg map[string]any, report func(*testing.B)) {
	open := func(b *testing.B, cache, want string, timed bool) {
		cmd := workbenchCmd(b, cfg)
		// The catalog lives in the user's cache folder: a folder of the
		// benchmark's, never the real one.
		for _, v := range fakeserver.HomeVars {
			cmd.Env = append(cmd.Env, v+"="+cache)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-host", Version: "1"}, nil).
			Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		if timed {
			b.StartTimer()
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox_name": "bench"}})
		if timed {
			b.StopTimer()
		}
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; strings.Count(text, `"status":"`+want+`"`) != 3 {
			b.Fatalf("want every server %s: %s", want, text)
		}
		cs.Close()
	}
	for _, mode := range []string{"cold", "warm"} {
		b.Run(prefix+mode, func(b *testing.B) {
			cache := b.TempDir()
			want := "connected"
			if mode == "warm" {
				open(b, cache, "connected", false) // fills the catalog
				want = "starting"
			}
			for b.Loop() {
				b.StopTimer()
				if mode == "cold" {
					cache = b.TempDir()
				}
				open(b, cache, want, true)
				b.StartTimer()
			}
			report(b)
		})
	}
}

// BenchmarkContext measures what the host's context pays: the workbench's
// own tools/list, and each open_toolbox result against the same server's
// own tools/list response, for the official servers. Its time per op is
// meaningless; its metrics are bytes.
func BenchmarkContext(b *testing.B) {
	b.Run("tools-list", func(b *testing.B) {
		root := fakeserver.RepoRoot(b)
		cmd := exec.Command(os.Args[0], "--config", filepath.Join(root, "workbench-config.example.json"))
		cmd.Env = append(os.Environ(), envMain+"=1")
		cs := benchClient(b, cmd)
		var n int
		for b.Loop() {
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				b.Fatal(err)
			}
			data, _ := json.Marshal(res)
			n = len(data)
		}
		b.ReportMetric(float64(n), "bytes")
	})
	for _, server := range []struct{ name, bin string }{
		{"memory", "mcp-server-memory"}, {"filesystem", "mcp-server-filesystem"}, {"everything", "mcp-server-everything"},
	} {
		b.Run("open="+server.name, func(b *testing.B) {
			bin := fakeserver.NPMServer(b, server.bin)
			args := []string{}
			if server.name == "filesystem" {
				args = []string{b.TempDir()}
			}
			direct := exec.Command(bin, args...)
			pages := &rawToolPages{}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-host", Version: "1"}, nil).Connect(context.Background(),
				&rawToolsTransport{Transport: &mcp.CommandTransport{Command: direct}, pages: pages}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				b.Fatal(err)
			}
			for _, err := range cs.Tools(context.Background(), nil) {
				if err != nil {
					b.Fatal(err)
				}
			}
			cs.Close()
			listBytes := pages.total()

			wb := benchClient(b, workbenchCmd(b, oneToolbox(map[string]any{server.name: map[string]any{"command": bin, "args": args}})))
			var openBytes int
			for b.Loop() {
				res, err := wb.CallTool(context.Background(), &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox_name": "bench"}})
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
				openBytes = len(res.Content[0].(*mcp.TextContent).Text)
			}
			b.ReportMetric(float64(listBytes), "server-tools-list-bytes")
			b.ReportMetric(float64(openBytes), "open-toolbox-bytes")
			b.ReportMetric(float64(openBytes)/float64(listBytes), "ratio")
		})
	}
}

// rawToolsTransport records the size of each tools/list result as the
// server sent it, before the SDK decodes it.
type rawToolsTransport struct {
	mcp.Transport
	pages *rawToolPages
}

type rawToolPages struct {
	mu    sync.Mutex
	ids   map[any]bool
	bytes int
}

func (p *rawToolPages) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bytes
}

func (t *rawToolsTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	return &rawToolsConn{Connection: c, pages: t.pages}, err
}

type rawToolsConn struct {
	mcp.Connection
	pages *rawToolPages
}

func (c *rawToolsConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" {
		c.pages.mu.Lock()
		if c.pages.ids == nil {
			c.pages.ids = map[any]bool{}
		}
		c.pages.ids[req.ID.Raw()] = true
		c.pages.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *rawToolsConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.pages.mu.Lock()
		if c.pages.ids[resp.ID.Raw()] {
			c.pages.bytes += len(resp.Result)
		}
		c.pages.mu.Unlock()
	}
	return msg, err
}

// BenchmarkShared measures sharing: ten host sessions on one configuration
// each open the same toolbox of three servers and call a tool, with
// "shared": true (one shared workbench; each session's process relays to
// it) and "shared": false (each session runs its own servers). Each op is
// that whole scenario: its time is meaningless; its metrics are the server
// processes, the resident memory of the workbench processes (relays, the
// shared workbench, watchdogs) and of the servers, and for sessions 2–10
// the time from open_toolbox to its result and to the result of the
// session's first call. The servers are fakes that take 300ms to start, as
// an npx-started server does on a warm npm cache. call is use_tool's
// latency through the relay beside a session that runs its own servers
// and that session behind a byte relay (the floor of a process hop),
// called in turn.
func BenchmarkShared(b *testing.B) {
	n := 10
	if testing.Short() { // make test's run, which only keeps it working
		n = 3
	}
	for _, mode := range []string{"own", "shared"} {
		b.Run(fmt.Sprintf("sessions=%d/%s", n, mode), func(b *testing.B) { benchSharedSessions(b, n, mode == "shared") })
	}
	b.Run("call", benchSharedCall)
}

// sharedBenchStartMs is how long each server of BenchmarkShared takes to
// start.
const sharedBenchStartMs = 300

// sharedBenchConfig writes the configuration of BenchmarkShared: toolbox
// "bench" of servers s, t and u, their processes tagged tag, and a short
// grace so that a shared workbench leaves soon after its last session.
func sharedBenchConfig(b testing.TB, tag string, shared bool) string {
	servers := map[string]any{}
	for _, name := range []string{"s", "t", "u"} {
		servers[name] = taggedServer(tag, name, fakeserver.EnvStartDelay, strconv.Itoa(sharedBenchStartMs))
	}
	cfg := oneToolbox(servers)
	cfg["shared"] = shared
	cfg["sharedGraceMs"] = 100
	return writeConfig(b, cfg)
}

func benchSharedSessions(b *testing.B, n int, shared bool) {
	sharingHome(b)
	var opens, firsts []time.Duration
	var serverProcs, wbProcs, iters int
	var serverRSS, wbRSS, pss float64
	for b.Loop() {
		iters++
		tag := fmt.Sprintf("shbench-%d-%d", iters, time.Now().UnixNano())
		wbTag := tag + "-wb"
		cfg := sharedBenchConfig(b, tag, shared)
		sessions := make([]*process, n)
		for i := range sessions {
			sessions[i] = launchSession(b, []string{"--config", cfg}, wbTag, "", nil)
		}
		for i, p := range sessions {
			c := &caller{cs: p.cs, viaWB: true, payload: map[string]any{"text": "hi"}}
			start := time.Now()
			res, err := p.cs.CallTool(ctxT(b), &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox_name": "bench"}})
			opened := time.Since(start)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
			if err := c.call(); err != nil {
				b.Fatal(err)
			}
			if i > 0 { // session 1 starts the servers
				opens = append(opens, opened)
				firsts = append(firsts, time.Since(start))
			}
			// A call to each server, so that every one the session
			// needs is running when the processes are counted.
			for _, server := range []string{"t", "u"} {
				if _, isErr := callTool(b, p.cs, "use_tool", use("bench", server, "echo", map[string]any{"text": "hi"})); isErr {
					b.Fatalf("echo on %s failed", server)
				}
			}
		}
		if shared {
			if st := sharedStatuses(b); len(st) != 1 || len(st[0].Sessions) != n {
				b.Fatalf("status: %+v, want one shared workbench with %d sessions", st, n)
			}
		}
		servers, ok := fakeserver.Tagged(tag)
		if !ok {
			b.Skip("counting processes reads /proc: Linux only")
		}
		wbs, _ := fakeserver.Tagged(wbTag)
		serverProcs += len(servers)
		wbProcs += len(wbs)
		for _, pid := range servers {
			serverRSS += pidStatus(pid, "VmRSS:")
		}
		for _, pid := range wbs {
			wbRSS += pidStatus(pid, "VmRSS:")
		}
		for _, pid := range append(servers, wbs...) {
			// The resident set counts the binary's pages in each process
			// that maps them; the proportional set shares them out.
			pss += procFile(pid, "smaps_rollup", "Pss:")
		}
		b.StopTimer()
		// Every session leaves; then the shared workbench, after its
		// grace, with the servers.
		for _, p := range sessions {
			p.stdin.Close()
		}
		for _, p := range sessions {
			select {
			case <-p.done:
			case <-time.After(30 * time.Second):
				b.Fatal("a session did not exit after its stdin closed")
			}
		}
		for _, t := range []string{tag, wbTag} {
			if left := fakeserver.WaitUntagged(t, 30*time.Second); len(left) > 0 {
				for _, pid := range left {
					if proc, err := os.FindProcess(pid); err == nil {
						_ = proc.Kill()
					}
				}
				b.Fatalf("processes left after the last session and the grace: %v", left)
			}
		}
		b.StartTimer()
	}
	slices.Sort(opens)
	slices.Sort(firsts)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	b.ReportMetric(float64(serverProcs)/float64(iters), "server-procs")
	b.ReportMetric(float64(wbProcs)/float64(iters), "workbench-procs")
	b.ReportMetric(serverRSS/float64(iters), "servers-RSS-MiB")
	b.ReportMetric(wbRSS/float64(iters), "workbench-RSS-MiB")
	b.ReportMetric((serverRSS+wbRSS)/float64(iters), "total-RSS-MiB")
	b.ReportMetric(pss/float64(iters), "total-PSS-MiB")
	b.ReportMetric(ms(opens[len(opens)/2]), "open-p50-ms")
	b.ReportMetric(ms(opens[len(opens)-1]), "open-max-ms")
	b.ReportMetric(ms(firsts[len(firsts)/2]), "first-result-p50-ms")
	b.ReportMetric(ms(firsts[len(firsts)-1]), "first-result-max-ms")
	b.ReportMetric(sharedBenchStartMs, "server-start-ms")
}

// benchSharedCall calls use_tool in three sessions in turn, in an order
// that rotates: one relayed to a shared workbench, one running its own
// servers, and that one behind a byte relay. Its time per op is one call
// of each.
func benchSharedCall(b *testing.B) {
	sharingHome(b)
	tag := fmt.Sprintf("shbench-call-%d", time.Now().UnixNano())
	wbTag := tag + "-wb"
	noneLeft(b, tag, wbTag)
	payload := map[string]any{"text": strings.Repeat("x", 64)}
	benchEnv := strings.Fields(os.Getenv("WB_BENCH_ENV"))
	session := launchSession(b, []string{"--config", sharedBenchConfig(b, tag, true)}, wbTag, "", nil, benchEnv...)
	relayed := &caller{cs: session.cs, viaWB: true, payload: payload}
	ownCfg := sharedBenchConfig(b, tag, false)
	ownSession := launchSession(b, []string{"--config", ownCfg}, wbTag, "", nil, benchEnv...)
	own := &caller{cs: ownSession.cs, viaWB: true, payload: payload}
	// The floor: the same session behind a byte relay, a process hop
	// that does nothing else.
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "--config", ownCfg)
	cmd.Env = append(os.Environ(), envRelay+"=1", fakeserver.TagVar+"="+wbTag)
	hop := &caller{cs: benchClient(b, cmd), viaWB: true, payload: payload}
	for _, c := range []*caller{relayed, own, hop} {
		for range 20 { // opens the toolbox, warms up every process
			if err := c.call(); err != nil {
				b.Fatal(err)
			}
		}
	}
	// CPU time per call of the processes on each path besides the
	// server: the relay and the shared workbench, the session's own
	// workbench, the byte relay in front of another.
	st := sharedStatuses(b)
	if len(st) != 1 {
		b.Fatalf("status: %+v, want one shared workbench", st)
	}
	procs := map[string]int{"relay": session.cmd.Process.Pid, "shared-workbench": st[0].PID, "own-workbench": ownSession.cmd.Process.Pid, "byte-relay": serverPID(hop.cs)}
	cpu0 := map[string]time.Duration{}
	for name, pid := range procs {
		cpu0[name] = pidCPU(pid)
	}
	lat := map[*caller][]time.Duration{}
	orders := [][]*caller{{relayed, own, hop}, {own, hop, relayed}, {hop, relayed, own}}
	i := 0
	for b.Loop() {
		i++
		for _, c := range orders[i%len(orders)] {
			start := time.Now()
			if err := c.call(); err != nil {
				b.Fatal(err)
			}
			lat[c] = append(lat[c], time.Since(start))
		}
	}
	b.StopTimer()
	for name, pid := range procs {
		if cpu := pidCPU(pid) - cpu0[name]; cpu > 0 {
			b.ReportMetric(float64(cpu.Microseconds())/float64(i), name+"-cpu-µs/call")
		}
	}
	us := func(c *caller, q int) float64 {
		l := lat[c]
		slices.Sort(l)
		return float64(l[len(l)*q/100].Nanoseconds()) / 1e3
	}
	b.ReportMetric(us(relayed, 50), "relayed-p50-µs")
	b.ReportMetric(us(relayed, 99), "relayed-p99-µs")
	b.ReportMetric(us(own, 50), "own-p50-µs")
	b.ReportMetric(us(own, 99), "own-p99-µs")
	b.ReportMetric(us(hop, 50), "byte-relay-p50-µs")
	b.ReportMetric(us(hop, 99), "byte-relay-p99-µs")
}

// BenchmarkRefusedToolList opens a toolbox whose one server lists 200,000
// tools (about 50 MB in one line), which the workbench refuses: by
// maxToolListBytes (the default bounds), and by maxTools (the byte bound
// raised). It reports the workbench's resident memory before the open,
// at its peak, and 5 s after the refusal: what a refused list leaves
// taken, the workbench otherwise idle.
func BenchmarkRefusedToolList(b *testing.B) {
	for _, bound := range []string{"maxToolListBytes", "maxTools"} {
		b.Run("bound="+bound, func(b *testing.B) {
			server := fakeEntry("huge", fakeserver.EnvHugeList, "200000")
			if bound == "maxTools" {
				server["maxToolListBytes"] = 100 << 20
			}
			cfg := oneToolbox(map[string]any{"huge": server})
			cfg["catalog"] = false
			var before, peak, after float64
			for b.Loop() {
				cs := benchClient(b, workbenchCmd(b, cfg))
				before += procStatus(cs, "VmRSS:")
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox_name": "bench"}})
				if err != nil {
					b.Fatal(err)
				}
				if text := fmt.Sprint(res.Content[0]); !strings.Contains(text, "("+bound+")") {
					b.Fatalf("the open = %s, want the list refused by %s", text, bound)
				}
				b.StopTimer()
				time.Sleep(5 * time.Second)
				b.StartTimer()
				peak += procStatus(cs, "VmHWM:")
				after += procStatus(cs, "VmRSS:")
				cs.Close()
			}
			n := float64(b.N)
			b.ReportMetric(before/n, "RSS-before-MiB")
			b.ReportMetric(peak/n, "peak-RSS-MiB")
			b.ReportMetric(after/n, "RSS-5s-after-MiB")
		})
	}
}
