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
	pid := serverPID(cs)
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
	pid := serverPID(cs)
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
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
