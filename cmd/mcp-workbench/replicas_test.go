package main

// Three workbenches serving over HTTP (serve --http) behind haproxy, with
// deploy/haproxy.cfg: the harness of TestHTTPReplicasBehindHAProxy (make
// test: a few hosts, correctness only) and BenchmarkHTTPReplicas (make
// bench: 200 hosts, figures).
//
// Each replica runs the same configuration: toolbox "bench" with one fake
// server whose name is ${WB_REPLICA}, the replica's name, so that every
// echo answer says which replica answered it. Hosts of two kinds call
// use_tool → echo with a text of their own and check that the answer
// holds it: stateless hosts speak 2026-07-28 (no session: any replica
// answers, round robin), session hosts 2025-11-25 (Mcp-Session-Id: haproxy's
// stick table keeps them on one replica). Mid-run one replica is killed
// (SIGKILL): stateless calls go on through the others; the sessions it
// held are answered 404 by the others, and their hosts start new ones.

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// replica is one serve --http process.
type replica struct {
	name string
	addr string // HOST:PORT it reported
	cmd  *exec.Cmd
	log  *fakeserver.Buffer
	done chan struct{}
}

var servingLine = regexp.MustCompile(`msg="serving over HTTP".*\baddr=(\S+)`)

// startReplica starts mcp-workbench serve --http 127.0.0.1:0 --config cfg
// (this test binary as main), its processes tagged tag, its user folders
// in home, and waits (bounded) for the line that gives its address. The
// clean-up stops it with SIGTERM (SIGKILL if it is still there after 30s).
func startReplica(t testing.TB, cfg, tag, home string) *replica {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "serve", "--http", "127.0.0.1:0", "--config", cfg, "--log-level", "info")
	cmd.Env = append(os.Environ(), envMain+"=1", fakeserver.TagVar+"="+tag, "WB_REPLICA="+tag)
	for _, v := range fakeserver.HomeVars {
		cmd.Env = append(cmd.Env, v+"="+home)
	}
	// WB_BENCH_ENV adds variables to the replicas (GOGC=…, or
	// WB_CPUPROFILE=/tmp/cpu-{replica}.prof: {replica} is the replica's
	// name, a file each).
	cmd.Env = append(cmd.Env, strings.Fields(strings.ReplaceAll(os.Getenv("WB_BENCH_ENV"), "{replica}", tag))...)
	dieWithTest(cmd)
	r := &replica{name: tag, cmd: cmd, log: &fakeserver.Buffer{}, done: make(chan struct{})}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintln(r.log, sc.Text())
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- strings.Trim(m[1], `"`):
				default:
				}
			}
		}
		_, _ = io.Copy(r.log, stderr)
	}()
	go func() { _ = cmd.Wait(); close(r.done) }()
	t.Cleanup(func() { r.stop(t) })
	select {
	case r.addr = <-addr:
	case <-r.done:
		t.Fatalf("replica %s exited before serving:\n%s", tag, r.log)
	case <-time.After(60 * time.Second):
		t.Fatalf("replica %s did not log its address within 60s:\n%s", tag, r.log)
	}
	return r
}

// stop ends the replica gracefully (SIGTERM), and for good after 30s.
func (r *replica) stop(t testing.TB) {
	select {
	case <-r.done:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
		t.Errorf("replica %s did not stop within 30s of SIGTERM:\n%s", r.name, r.log)
	}
}

// kill ends the replica at once, as a crash or an evicted pod does.
func (r *replica) kill() {
	_ = r.cmd.Process.Kill()
	<-r.done
}

// writeHAProxyConfig makes deploy/haproxy.cfg a configuration for this
// machine: its frontend bound to bind, its replicas (the server-template
// line) the given addresses, without DNS (they are addresses), a stats
// socket to read servers' states from, and replicaHeader on answers. Everything else — balance,
// stick table, health checks, retries — is the file's.
func writeHAProxyConfig(t testing.TB, bind string, servers []string, statsSock string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(deployDir(t), "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var bound, templated, resolvers bool
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
			out = append(out, line)
		case f[0] == "global":
			out = append(out, line, "    stats socket "+statsSock+" mode 600 level admin")
		case f[0] == "resolvers":
			// The section, up to the next one: the test's replicas are
			// addresses.
			resolvers = true
			for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || strings.HasPrefix(lines[i+1], " ")) {
				i++
			}
		case f[0] == "bind":
			bound = true
			out = append(out, "    bind "+bind)
		case f[0] == "default-server":
			line = regexp.MustCompile(`\s+resolvers \S+|\s+init-addr \S+`).ReplaceAllString(line, "")
			out = append(out, line)
		case f[0] == "server-template":
			templated = true
			for i, s := range servers {
				out = append(out, fmt.Sprintf("    server wb%d %s", i+1, s))
			}
			// The tests' own addition: which server answered, so that a
			// session's replica is known from its initialize.
			out = append(out, "    http-response set-header "+replicaHeader+" %s")
		default:
			out = append(out, line)
		}
	}
	if !bound || !templated || !resolvers {
		t.Fatalf("deploy/haproxy.cfg has no bind, server-template or resolvers line to replace (%v %v %v)", bound, templated, resolvers)
	}
	p := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(p, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// replicaHeader names, in the tests' haproxy, the server (wb1, wb2, …) that
// answered.
const replicaHeader = "X-Wb-Replica"

// haproxy is haproxy running in the foreground.
type haproxy struct {
	addr  string // the frontend, HOST:PORT
	stats string // its stats socket
	log   *fakeserver.Buffer
	cmd   *exec.Cmd
	done  chan struct{}
}

// startHAProxy runs haproxy -db in front of the replicas and waits
// (bounded) until its health checks see every one of them up.
func startHAProxy(t testing.TB, replicas []*replica) *haproxy {
	t.Helper()
	bin := haproxyPath(t)
	var servers []string
	for _, r := range replicas {
		servers = append(servers, r.addr)
	}
	// The stats socket's path must be short (sun_path): not under a test's
	// long temp folder.
	sockDir, err := os.MkdirTemp("", "wbhap")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	h := &haproxy{stats: filepath.Join(sockDir, "stats.sock"), log: &fakeserver.Buffer{}, done: make(chan struct{})}
	// A free port, found by listening: haproxy binds it a moment later. If
	// another process took it meanwhile, haproxy exits, and we try again.
	for attempt := 0; ; attempt++ {
		h.addr = fmt.Sprintf("127.0.0.1:%d", fakeserver.FreePort(t))
		cfg := writeHAProxyConfig(t, h.addr, servers, h.stats)
		h.cmd = exec.Command(bin, "-db", "-f", cfg)
		h.cmd.Stdout, h.cmd.Stderr = h.log, h.log
		dieWithTest(h.cmd)
		if err := h.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		h.done = make(chan struct{})
		go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(h.cmd, h.done)
		up := h.waitUp(len(replicas))
		if up {
			break
		}
		exited := false
		select {
		case <-h.done:
			exited = true
		default:
		}
		servers := h.servers()
		h.stop(t)
		if !exited || attempt == 2 {
			t.Fatalf("haproxy did not see the replicas up (servers %+v):\n%s", servers, h.log)
		}
	}
	t.Cleanup(func() { h.stop(t) })
	return h
}

// waitUp waits up to 30s for n servers up, false if haproxy exits first
// (its port was taken meanwhile: the caller tries another) or they never
// are.
func (h *haproxy) waitUp(n int) bool {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-h.done:
			return false
		default:
		}
		up := 0
		for _, s := range h.servers() {
			if strings.HasPrefix(s.status, "UP") {
				up++
			}
		}
		if up == n {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func (h *haproxy) stop(t testing.TB) {
	select {
	case <-h.done:
		return
	default:
	}
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.done:
	case <-time.After(15 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.done
		t.Errorf("haproxy did not stop within 15s of SIGTERM")
	}
}

// backendServer is one server line of haproxy's show stat.
type backendServer struct {
	name, status string
	sessions     string // stot: connections (sessions) it was given
}

// stat reads show stat from the stats socket: its rows, and the column
// index of each field.
func (h *haproxy) stat() (rows [][]string, col map[string]int) {
	c, err := net.DialTimeout("unix", h.stats, 5*time.Second)
	if err != nil {
		return nil, nil
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "show stat\n"); err != nil {
		return nil, nil
	}
	data, _ := io.ReadAll(c)
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(data), "# ")))
	r.FieldsPerRecord = -1
	rows, _ = r.ReadAll()
	if len(rows) == 0 {
		return nil, nil
	}
	col = map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	return rows[1:], col
}

// requests is how many HTTP requests haproxy's frontend has taken.
func (h *haproxy) requests() int {
	rows, col := h.stat()
	for _, row := range rows {
		if len(row) > col["req_tot"] && row[col["pxname"]] == "mcp" && row[col["svname"]] == "FRONTEND" {
			n, _ := strconv.Atoi(row[col["req_tot"]])
			return n
		}
	}
	return 0
}

// servers reads the backend's servers from the stats socket.
func (h *haproxy) servers() []backendServer {
	rows, col := h.stat()
	var out []backendServer
	for _, row := range rows {
		if len(row) <= col["status"] || row[col["pxname"]] != "workbench" || row[col["svname"]] == "BACKEND" {
			continue
		}
		out = append(out, backendServer{name: row[col["svname"]], status: row[col["status"]], sessions: row[col["stot"]]})
	}
	return out
}

// replicaConfig is the configuration every replica runs: one fake server
// named after the replica (WB_REPLICA, set per process), limits raised.
func replicaConfig(t testing.TB) string {
	cfg := oneToolbox(map[string]any{"s": fakeEntry("${WB_REPLICA}")})
	// Hosts here are many and fast, all anonymous on loopback: the
	// limits per caller are raised out of the way, the rest are defaults.
	// The shutdown bound is short: the clean-up waits for it.
	cfg["http"] = map[string]any{"limits": map[string]any{"callsPerSecond": 1e6, "burst": 1e6, "concurrentCalls": 1000, "maxSessions": 10000, "shutdownMs": 5000}}
	return writeConfig(t, cfg)
}

// fleet is three replicas behind haproxy.
type fleet struct {
	replicas []*replica
	proxy    *haproxy
	tag      string
}

func startFleet(t testing.TB) *fleet {
	t.Helper()
	haproxyPath(t) // fail early, saying how to install it
	f := &fleet{tag: fmt.Sprintf("wbhttp-%d", time.Now().UnixNano())}
	var tags []string
	for i := range 3 {
		tags = append(tags, fmt.Sprintf("%s-r%d", f.tag, i+1))
	}
	// Registered first, so run last: every replica and every server it
	// started is gone once the clean-ups have stopped them.
	noneLeft(t, tags...)
	cfg := replicaConfig(t)
	home := t.TempDir()
	for _, tag := range tags {
		f.replicas = append(f.replicas, startReplica(t, cfg, tag, home))
	}
	// Registered after the replicas' clean-ups: stopped before them.
	f.proxy = startHAProxy(t, f.replicas)
	t.Cleanup(func() {
		if t.Failed() {
			f.logTrouble(t)
		}
	})
	return f
}

// logTrouble logs what explains a failed run, not the thousands of lines
// of one that went well: haproxy's lines of answers that were not 2xx and
// its servers' state changes, and the replicas' warnings and errors.
func (f *fleet) logTrouble(t testing.TB) {
	var b strings.Builder
	ok := regexp.MustCompile(`^\S+ \[[^]]*\] \S+ \S+ \S+ 2\d\d `)
	for _, line := range strings.Split(f.proxy.log.String(), "\n") {
		if line != "" && !ok.MatchString(line) {
			fmt.Fprintln(&b, line)
		}
	}
	t.Logf("haproxy, all but its 2xx lines:\n%s", b.String())
	for _, r := range f.replicas {
		b.Reset()
		for _, line := range strings.Split(r.log.String(), "\n") {
			if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") || strings.Contains(line, "serving over HTTP") {
				fmt.Fprintln(&b, line)
			}
		}
		t.Logf("replica %s, its warnings and errors:\n%s", r.name, b.String())
	}
}

// serverName is haproxy's name of replica r: wb1, wb2, wb3.
func (f *fleet) serverName(r *replica) string {
	i := slices.Index(f.replicas, r)
	if i < 0 {
		return ""
	}
	return fmt.Sprintf("wb%d", i+1)
}

// replicaOf is the replica called name (what an echo answer says).
func (f *fleet) replicaOf(name string) *replica {
	for _, r := range f.replicas {
		if r.name == name {
			return r
		}
	}
	return nil
}

// statusCounter counts the HTTP statuses a host's requests got, and notes
// which haproxy server began each of its sessions.
type statusCounter struct {
	base     http.RoundTripper
	notFound atomic.Int64 // 404: a session the replica does not know
	bad      atomic.Int64 // 5xx (haproxy's 502/503 while a replica goes)

	mu    sync.Mutex
	began map[string]string // session id → the server (wb1, …) that answered its initialize
}

// beganOn is the haproxy server that began session id.
func (s *statusCounter) beganOn(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.began[id]
}

func (s *statusCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(req)
	if err == nil {
		switch {
		case resp.StatusCode == http.StatusNotFound:
			s.notFound.Add(1)
		case resp.StatusCode >= 500:
			s.bad.Add(1)
		}
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" && req.Header.Get("Mcp-Session-Id") == "" {
			s.mu.Lock()
			if s.began == nil {
				s.began = map[string]string{}
			}
			s.began[id] = resp.Header.Get(replicaHeader)
			s.mu.Unlock()
		}
		if cut, ok := req.Context().Value(cutKey{}).(context.CancelCauseFunc); ok {
			resp.Body = &cutBody{ReadCloser: resp.Body, cut: cut}
		}
	}
	return resp, err
}

// cutKey holds, in the context of a call's attempt, the function that
// ends it as cut (errStreamCut).
type cutKey struct{}

// errStreamCut ends an attempt whose answer stream broke off: its replica
// died while answering. The go-sdk client cannot resume a stream cut
// before its first event and would wait for the call's timeout; a host
// that watches its connections, as this one does, sends the call again
// at once.
var errStreamCut = errors.New("the answer's stream was cut")

// cutBody ends its call's attempt when the body breaks off (not at its
// end).
type cutBody struct {
	io.ReadCloser
	cut context.CancelCauseFunc
}

func (b *cutBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		b.cut(errStreamCut)
	}
	return n, err
}

// callAttemptTimeout bounds one attempt of a call: the host's timeout.
const callAttemptTimeout = 60 * time.Second

// answer is one call's result: what it said and who answered.
type answer struct {
	text    string // the text the call sent, as echoed back
	replica string
	session string // the host's session ("" for stateless hosts)
	after   bool   // sent after the kill had completed
	cut     bool   // an attempt was cut by the kill
	first   bool   // the first call answered in its session (a 2025 host's)
	latency time.Duration
}

// host is one MCP host of the run.
type host struct {
	id       int
	stateful bool // 2025-11-25 with a session, else 2026-07-28 stateless
	endpoint string
	http     *http.Client
	counter  *statusCounter
	cs       *mcp.ClientSession

	sessions  []string      // every session it had, in order
	restarts  int           // new sessions after the old one was gone
	began     time.Duration // how long its first connection took
	cut       int           // attempts whose answer stream broke off
	timedOut  int           // attempts given up after callAttemptTimeout
	retries   int           // calls sent again after a failure
	answers   []answer
	saw404    bool
	lastError error
}

func (h *host) connect(ctx context.Context) error {
	version := "2026-07-28"
	if h.stateful {
		version = "2025-11-25"
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("host-%d", h.id), Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.endpoint, HTTPClient: h.http, MaxRetries: 2}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return err
	}
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		cs.Close()
		return fmt.Errorf("host %d: protocol %s, want %s", h.id, got, version)
	}
	if h.stateful != (cs.ID() != "") {
		cs.Close()
		return fmt.Errorf("host %d (%s): session id %q", h.id, version, cs.ID())
	}
	h.cs = cs
	h.sessions = append(h.sessions, cs.ID())
	return nil
}

// call sends one use_tool → echo of text and checks its answer, trying
// again as a host does: a stateless call is sent again (haproxy picks a
// live replica); a session whose replica answered 404 is begun again.
func (h *host) call(ctx context.Context, text string, killed func() bool) error {
	start := time.Now()
	after := killed()
	cut := false
	var err error
	for attempt := range 10 {
		if attempt > 0 {
			h.retries++
			time.Sleep(time.Duration(attempt) * 20 * time.Millisecond)
		}
		if h.cs == nil {
			if err = h.connect(ctx); err != nil {
				continue
			}
		}
		before404 := h.counter.notFound.Load()
		var res *mcp.CallToolResult
		// An attempt whose answer stream breaks off (its replica killed)
		// is ended at once (cutBody); any other ends after
		// callAttemptTimeout.
		actx, cutIt := context.WithCancelCause(ctx)
		cctx, cancel := context.WithTimeout(context.WithValue(actx, cutKey{}, cutIt), callAttemptTimeout)
		res, err = h.cs.CallTool(cctx, &mcp.CallToolParams{Name: "use_tool", Arguments: use("bench", "s", "echo", map[string]any{"text": text})})
		cancel()
		cutIt(nil)
		if err != nil {
			switch {
			case errors.Is(context.Cause(actx), errStreamCut):
				h.cut++
				cut = true
			case errors.Is(err, context.DeadlineExceeded):
				h.timedOut++
			}
			if errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed) || h.counter.notFound.Load() > before404 {
				// The connection is over; for a session host, its
				// replica is gone and another answered 404.
				if h.stateful {
					h.saw404 = h.saw404 || h.counter.notFound.Load() > 0
					h.restarts++
				}
				h.cs.Close()
				h.cs = nil
			}
			continue
		}
		if res.IsError {
			return fmt.Errorf("host %d: echo %q: tool error %v", h.id, text, res.Content)
		}
		var out struct {
			Server string
			Args   struct{ Text string }
		}
		if len(res.Content) != 1 {
			return fmt.Errorf("host %d: echo %q: %d contents", h.id, text, len(res.Content))
		}
		tc, _ := res.Content[0].(*mcp.TextContent)
		if tc == nil || json.Unmarshal([]byte(tc.Text), &out) != nil {
			return fmt.Errorf("host %d: echo %q: answer %v", h.id, text, res.Content[0])
		}
		first := h.stateful && (len(h.answers) == 0 || h.answers[len(h.answers)-1].session != h.cs.ID())
		h.answers = append(h.answers, answer{text: out.Args.Text, replica: out.Server, session: h.cs.ID(), after: after, cut: cut, first: first, latency: time.Since(start)})
		if out.Args.Text != text {
			return fmt.Errorf("host %d: sent %q, answered %q", h.id, text, out.Args.Text)
		}
		return nil
	}
	h.lastError = err
	return fmt.Errorf("host %d: echo %q: no answer after 10 tries: %v", h.id, text, err)
}

// runResult is what a run of hosts gave.
type runResult struct {
	hosts       []*host
	victim      *replica
	killedAt    int // calls answered when the kill was done
	elapsed     time.Duration
	calls       int
	sent        map[string]int // text → times sent (once each)
	answered    map[string]int // text → times answered
	statuses    [2]int64       // 404s, 5xx seen by the hosts
	errs        []error
	restarts    int
	retries     int
	cut         int
	timedOut    int
	latencies   []time.Duration // every call's, sorted
	uncut       []time.Duration // those of calls no kill cut, sorted
	byReplica   map[string]int  // stateless answers per replica
	afterKill   map[string]int  // stateless answers per replica, sent after the kill
	victimSess  int             // session hosts whose session was on the victim
	cpu         map[string]time.Duration
	requests    int             // HTTP requests through haproxy during the run
	begins      []time.Duration // the hosts' first connections, sorted
	procsAtKill int             // server processes of the replicas just before the kill
}

// replicasCPU is the CPU time the live replicas have used (Linux only).
func (f *fleet) replicasCPU() time.Duration {
	var d time.Duration
	for _, r := range f.replicas {
		select {
		case <-r.done:
		default:
			d += pidCPU(r.cmd.Process.Pid)
		}
	}
	return d
}

// selfCPU is the CPU time this process has used (Linux only).
func selfCPU() time.Duration { return pidCPU(os.Getpid()) }

// drive runs nHosts hosts (every other one with a session) making
// callsPerHost calls each, all at once, and kills one replica (the one
// holding host 1's session) once half the calls are answered. With gate,
// every host waits at its half for the kill to be done, so that each has
// calls before and after it whatever the machine's speed (the test);
// without, the kill comes as it comes, calls in flight (the benchmark).
func (f *fleet) drive(t testing.TB, nHosts, callsPerHost int, gate bool) *runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	transport := &http.Transport{MaxIdleConns: 2 * nHosts, MaxIdleConnsPerHost: 2 * nHosts, IdleConnTimeout: time.Minute}
	defer transport.CloseIdleConnections()
	res := &runResult{sent: map[string]int{}, answered: map[string]int{}, byReplica: map[string]int{}, afterKill: map[string]int{}}
	for i := range nHosts {
		counter := &statusCounter{base: transport}
		res.hosts = append(res.hosts, &host{id: i, stateful: i%2 == 1, endpoint: "http://" + f.proxy.addr + "/mcp", http: &http.Client{Transport: counter}, counter: counter})
	}
	// answered counts calls answered; arrived hosts at their half (or
	// ended early: they will make no more calls before the kill).
	var answered, arrived atomic.Int64
	killDone := make(chan struct{})
	var killedFlag atomic.Bool
	killed := killedFlag.Load
	// Host 1 has a session: its replica is the one killed, so that the
	// kill always ends sessions.
	var victimName atomic.Value
	var wg sync.WaitGroup
	var errMu sync.Mutex
	// Every host begins (server/discover, or initialize and its session)
	// before the calls, all at once: what a fleet of hosts arriving
	// together costs, apart from the calls' latency.
	for _, h := range res.hosts {
		wg.Go(func() {
			began := time.Now()
			if err := h.connect(ctx); err != nil {
				errMu.Lock()
				res.errs = append(res.errs, fmt.Errorf("host %d: %v", h.id, err))
				errMu.Unlock()
				return
			}
			h.began = time.Since(began)
		})
	}
	wg.Wait()
	for _, h := range res.hosts {
		if h.cs != nil {
			res.begins = append(res.begins, h.began)
		}
	}
	slices.Sort(res.begins)
	// CPU time of each process on the path: the replicas (the killed one
	// counted up to its kill), haproxy, and this process (the hosts).
	cpu0 := map[string]time.Duration{"replicas": f.replicasCPU(), "haproxy": pidCPU(f.proxy.cmd.Process.Pid), "hosts": selfCPU()}
	requests0 := f.proxy.requests()
	var victimCPU time.Duration
	start := time.Now()
	for _, h := range res.hosts {
		wg.Go(func() {
			half := false
			defer func() {
				if !half {
					arrived.Add(1)
				}
				if h.cs != nil {
					h.cs.Close()
				}
			}()
			for c := range callsPerHost {
				if c == callsPerHost/2 {
					half = true
					arrived.Add(1)
					if gate {
						select {
						case <-killDone:
						case <-ctx.Done():
							return
						}
					}
				}
				text := fmt.Sprintf("host-%d-call-%d", h.id, c)
				if err := h.call(ctx, text, killed); err != nil {
					errMu.Lock()
					res.errs = append(res.errs, err)
					errMu.Unlock()
					return
				}
				if h.id == 1 && c == 0 {
					victimName.Store(h.answers[0].replica)
				}
				answered.Add(1)
			}
		})
	}
	// The killer: once half the calls are answered (with gate: every host
	// at its half), SIGKILL the victim.
	go func() {
		defer close(killDone)
		for ctx.Err() == nil {
			if gate && arrived.Load() == int64(nHosts) || !gate && answered.Load() >= int64(nHosts*(callsPerHost/2)) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		name, _ := victimName.Load().(string)
		if res.victim = f.replicaOf(name); res.victim == nil || ctx.Err() != nil {
			return
		}
		victimCPU = pidCPU(res.victim.cmd.Process.Pid)
		for _, r := range f.replicas {
			if pids, ok := fakeserver.Tagged(r.name); ok {
				res.procsAtKill += len(pids) - 1 // its servers, not itself
			}
		}
		res.victim.kill()
		res.killedAt = int(answered.Load())
		killedFlag.Store(true)
	}()
	wg.Wait()
	res.elapsed = time.Since(start)
	res.requests = f.proxy.requests() - requests0
	res.cpu = map[string]time.Duration{
		"replicas": f.replicasCPU() + victimCPU - cpu0["replicas"],
		"haproxy":  pidCPU(f.proxy.cmd.Process.Pid) - cpu0["haproxy"],
		"hosts":    selfCPU() - cpu0["hosts"],
	}
	cancel()
	<-killDone
	if res.victim != nil && !killedFlag.Load() {
		res.victim = nil // the run ended before the kill
	}
	for _, h := range res.hosts {
		res.restarts += h.restarts
		res.retries += h.retries
		res.cut += h.cut
		res.timedOut += h.timedOut
		res.statuses[0] += h.counter.notFound.Load()
		res.statuses[1] += h.counter.bad.Load()
		for c := range callsPerHost {
			res.sent[fmt.Sprintf("host-%d-call-%d", h.id, c)]++
		}
		for _, a := range h.answers {
			res.answered[a.text]++
			res.latencies = append(res.latencies, a.latency)
			if !a.cut {
				res.uncut = append(res.uncut, a.latency)
			}
			res.calls++
			if !h.stateful {
				res.byReplica[a.replica]++
				if a.after {
					res.afterKill[a.replica]++
				}
			}
		}
		if h.stateful && res.victim != nil && h.counter.beganOn(h.sessions[0]) == f.serverName(res.victim) {
			res.victimSess++
		}
	}
	slices.Sort(res.latencies)
	slices.Sort(res.uncut)
	return res
}

// check asserts what every run must show, whatever its size: every call
// answered once with its own text; stateless calls spread over every
// replica, and after the kill over the survivors only; each session on one
// replica; the sessions of the killed replica answered 404 and begun
// again on a survivor, the others never moved.
func (r *runResult) check(t testing.TB, f *fleet) {
	t.Helper()
	for _, err := range r.errs {
		t.Error(err)
	}
	if r.victim == nil {
		t.Fatal("no replica was killed during the run")
	}
	for text, n := range r.sent {
		if r.answered[text] != n {
			t.Errorf("%q sent %d time(s), answered %d time(s)", text, n, r.answered[text])
		}
	}
	for text := range r.answered {
		if r.sent[text] == 0 {
			t.Errorf("%q answered, never sent", text)
		}
	}
	for _, rep := range f.replicas {
		if r.byReplica[rep.name] == 0 {
			t.Errorf("replica %s answered no stateless call; per replica: %v", rep.name, r.byReplica)
		}
		if rep != r.victim && r.afterKill[rep.name] == 0 {
			t.Errorf("replica %s answered no stateless call after the kill; per replica: %v", rep.name, r.afterKill)
		}
	}
	if r.afterKill[r.victim.name] != 0 {
		t.Errorf("the killed replica %s answered %d call(s) sent after it was gone", r.victim.name, r.afterKill[r.victim.name])
	}
	if r.victimSess == 0 {
		t.Errorf("no session was on the killed replica %s", r.victim.name)
	}
	for _, h := range r.hosts {
		if !h.stateful || len(h.answers) == 0 {
			continue
		}
		// Within one session, one replica.
		on := map[string]string{}
		for _, a := range h.answers {
			if prev, ok := on[a.session]; ok && prev != a.replica {
				t.Errorf("host %d: session %s answered by %s and %s", h.id, a.session, prev, a.replica)
			}
			on[a.session] = a.replica
		}
		// Each session answered by the replica whose haproxy server
		// began it.
		for _, a := range h.answers {
			if began := h.counter.beganOn(a.session); began != f.serverName(f.replicaOf(a.replica)) {
				t.Errorf("host %d: session %s began on %s, answered by %s", h.id, a.session, began, a.replica)
			}
		}
		first := h.counter.beganOn(h.sessions[0])
		last := h.answers[len(h.answers)-1]
		switch {
		case first == f.serverName(r.victim) && last.after:
			if !h.saw404 || h.restarts == 0 || len(h.sessions) < 2 {
				t.Errorf("host %d: its session's replica was killed, yet 404 seen %v, %d new session(s)", h.id, h.saw404, h.restarts)
			}
			if last.replica == r.victim.name || last.session == h.sessions[0] {
				t.Errorf("host %d: after the kill still answered by %s in session %s", h.id, last.replica, last.session)
			}
		case first != f.serverName(r.victim):
			if h.restarts != 0 || len(h.sessions) != 1 {
				t.Errorf("host %d: its session began on %s, which lived, yet %d new session(s) (404 seen %v)", h.id, first, h.restarts, h.saw404)
			}
		}
	}
}

// TestHTTPReplicasBehindHAProxy: three workbenches behind haproxy with
// deploy/haproxy.cfg and a few hosts: 2026-07-28 calls spread over the
// three, 2025 sessions kept on one replica, one replica killed mid-run —
// stateless calls go on through the others, its sessions get 404 and
// begin again — and every call answered once with its own text.
// (BenchmarkHTTPReplicas is the same with 200 hosts, for figures.)
func TestHTTPReplicasBehindHAProxy(t *testing.T) {
	f := startFleet(t)
	res := f.drive(t, 8, 12, true)
	res.check(t, f)
	// haproxy saw the killed replica go down through its health checks.
	fakeserver.Eventually(t, "haproxy marking the killed replica down", func() bool {
		for i, s := range f.proxy.servers() {
			if f.replicas[i] == res.victim && strings.HasPrefix(s.status, "DOWN") {
				return true
			}
		}
		return false
	})
	t.Logf("stateless answers per replica: %v (after the kill: %v); %d sessions restarted, %d retries, 404s %d, 5xx %d",
		res.byReplica, res.afterKill, res.restarts, res.retries, res.statuses[0], res.statuses[1])
}

// BenchmarkHTTPReplicas: 200 hosts at once (half 2026-07-28 stateless,
// half 2025-11-25 with sessions) make 50 calls each of use_tool through
// haproxy in front of three workbenches; halfway one replica is killed.
// Each op is that whole run (run it with -benchtime 1x): its time is
// meaningless. The hosts first begin all at once (reported apart: a
// host's start); then it reports the latency of a call as its host sees it
// (tries again included; also without the calls the kill cut), calls a
// second, how the stateless calls spread
// over the replicas, what the kill cost (sessions begun again, 404s, calls
// cut and tried again), and the calls lost or answered twice (0: the run
// fails otherwise).
func BenchmarkHTTPReplicas(b *testing.B) {
	const hosts, perHost = 200, 50
	var res *runResult
	var f *fleet
	for b.Loop() {
		b.StopTimer()
		f = startFleet(b)
		b.StartTimer()
		res = f.drive(b, hosts, perHost, false)
		b.StopTimer()
		res.check(b, f)
		for _, r := range f.replicas {
			r.stop(b)
		}
		f.proxy.stop(b)
		b.StartTimer()
	}
	// Where the time goes: each kind of host before and after the kill.
	for _, stateful := range []bool{false, true} {
		for _, after := range []bool{false, true} {
			var l []time.Duration
			for _, h := range res.hosts {
				for _, a := range h.answers {
					if h.stateful == stateful && a.after == after {
						l = append(l, a.latency)
					}
				}
			}
			if len(l) == 0 {
				continue
			}
			slices.Sort(l)
			b.Logf("session hosts %v, after the kill %v: %d calls, p50 %v, p99 %v, max %v", stateful, after, len(l), l[len(l)/2], l[len(l)*99/100], l[len(l)-1])
		}
	}
	type slow struct {
		h *host
		a answer
	}
	var slowest []slow
	for _, h := range res.hosts {
		for _, a := range h.answers {
			slowest = append(slowest, slow{h, a})
		}
	}
	slices.SortFunc(slowest, func(x, y slow) int { return int(y.a.latency - x.a.latency) })
	for _, s := range slowest[:min(5, len(slowest))] {
		b.Logf("slow: %s took %v (session host %v, %d session(s), sent after the kill %v, answered by %s)", s.a.text, s.a.latency, s.h.stateful, len(s.h.sessions), s.a.after, s.a.replica)
	}
	lost, twice := 0, 0
	for text, n := range res.sent {
		switch {
		case res.answered[text] < n:
			lost++
		case res.answered[text] > n:
			twice++
		}
	}
	q := func(l []time.Duration, p int) float64 { return float64(l[len(l)*p/100].Microseconds()) }
	b.ReportMetric(float64(hosts), "hosts")
	b.ReportMetric(float64(res.calls), "calls")
	b.ReportMetric(q(res.latencies, 50), "p50-µs")
	b.ReportMetric(q(res.latencies, 99), "p99-µs")
	// A 2025 host's session has servers of its own ("shared": false, the
	// default), which its first call starts; other calls find them.
	var firsts, others []time.Duration
	for _, h := range res.hosts {
		for _, a := range h.answers {
			if a.first {
				firsts = append(firsts, a.latency)
			} else {
				others = append(others, a.latency)
			}
		}
	}
	slices.Sort(firsts)
	slices.Sort(others)
	b.ReportMetric(q(firsts, 50), "session-first-p50-µs")
	b.ReportMetric(q(firsts, 99), "session-first-p99-µs")
	b.ReportMetric(q(others, 50), "others-p50-µs")
	b.ReportMetric(q(others, 99), "others-p99-µs")
	b.ReportMetric(float64(res.procsAtKill), "server-procs-at-kill")
	b.ReportMetric(q(res.begins, 50), "begin-p50-µs")
	b.ReportMetric(q(res.begins, 99), "begin-p99-µs")
	// Without the calls the kill cut, which were sent again.
	b.ReportMetric(q(res.uncut, 50), "uncut-p50-µs")
	b.ReportMetric(q(res.uncut, 99), "uncut-p99-µs")
	b.ReportMetric(float64(res.timedOut), "tries-timed-out")
	b.ReportMetric(float64(res.calls)/res.elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(res.requests)/res.elapsed.Seconds(), "http-requests/s")
	b.ReportMetric(float64(lost), "lost")
	b.ReportMetric(float64(twice), "answered-twice")
	b.ReportMetric(float64(res.victimSess), "sessions-on-killed")
	for _, who := range []string{"replicas", "haproxy", "hosts"} {
		if d := res.cpu[who]; d > 0 {
			b.ReportMetric(float64(d.Microseconds())/float64(res.calls), who+"-cpu-µs/call")
		}
	}
	b.ReportMetric(float64(res.restarts), "sessions-restarted")
	b.ReportMetric(float64(res.statuses[0]), "404s")
	b.ReportMetric(float64(res.cut), "calls-cut-by-kill")
	b.ReportMetric(float64(res.retries), "calls-retried")
	total := 0
	for _, n := range res.byReplica {
		total += n
	}
	for i, r := range f.replicas {
		b.ReportMetric(100*float64(res.byReplica[r.name])/float64(total), fmt.Sprintf("stateless-%%-replica-%d", i+1))
	}
}
