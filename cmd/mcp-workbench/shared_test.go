package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
	"github.com/mcpworkbench/mcp-workbench/internal/shared"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// envPeerUID makes a re-executed workbench's shared workbench accept only
// this uid: how a test sees another user's connection refused.
const envPeerUID = "WB_TEST_PEER_UID"

func init() {
	if v := os.Getenv(envPeerUID); v != "" {
		uid, _ := strconv.Atoi(v)
		allowedPeer = func() int { return uid }
	}
}

// sharingHome points HOME, the XDG folders and the runtime folder of the
// shared workbench's socket at temp folders (the socket's under a short
// path: a Unix socket's path is short).
func sharingHome(t testing.TB) {
	t.Helper()
	if !shared.Supported() {
		t.Skip("sharing is not supported on this system")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	rt, err := os.MkdirTemp("", "wbrt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	t.Setenv("XDG_RUNTIME_DIR", rt)
}

// sharingTest prepares a sharing test (see sharingHome) and returns the
// tags of its servers' processes and of its workbench processes, checked
// gone at the end (noneLeft).
func sharingTest(t *testing.T, name string) (tag, wbTag string) {
	t.Helper()
	sharingHome(t)
	tag = fmt.Sprintf("%s-%d", name, time.Now().UnixNano())
	wbTag = tag + "-wb"
	noneLeft(t, tag, wbTag)
	return tag, wbTag
}

// sharedConfig writes a configuration with sharing on and a short grace.
func sharedConfig(t *testing.T, toolboxes map[string]any) string {
	t.Helper()
	return writeConfig(t, map[string]any{"shared": true, "sharedGraceMs": 300, "toolboxes": toolboxes})
}

// taggedServer is a fake server whose processes carry tag.
func taggedServer(tag, name string, extra ...string) map[string]any {
	e := fakeServerEntry(name, append([]string{fakeserver.TagVar, tag}, extra...)...)
	return e
}

// startSession starts the workbench as a host does, in dir (the test's
// own folder if ""), with env added, its processes tagged wbTag.
func startSession(t *testing.T, cfgPath, wbTag, dir string, env ...string) *process {
	t.Helper()
	return launchSession(t, []string{"--config", cfgPath}, wbTag, dir, nil, env...)
}

// launchSession is startSession with a host of the given options.
func launchSession(t testing.TB, args []string, wbTag, dir string, opts *mcp.ClientOptions, env ...string) *process {
	t.Helper()
	return launchHost(t, args, wbTag, dir, opts, "", env...)
}

// launchHost is launchSession with a host that asks for protocol version
// (the client's latest if "").
func launchHost(t testing.TB, args []string, wbTag, dir string, opts *mcp.ClientOptions, version string, env ...string) *process {
	t.Helper()
	return launchClient(t, args, wbTag, dir, mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, opts), version, env...)
}

// launchClient is launchHost with a host of its own client (one with
// roots, say).
func launchClient(t testing.TB, args []string, wbTag, dir string, client *mcp.Client, version string, env ...string) *process {
	t.Helper()
	p, stdout := startWorkbench(t, args, wbTag, dir, env...)
	cs, err := client.Connect(ctxT(t), &mcp.IOTransport{Reader: stdout, Writer: p.stdin}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, p.stderr)
	}
	p.cs = cs
	return p
}

// startWorkbench starts the workbench process as a host does, before any
// message: its stdout is the caller's to read. The clean-up closes its
// stdin and waits for it to exit.
func startWorkbench(t testing.TB, args []string, wbTag, dir string, env ...string) (*process, io.ReadCloser) {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), envMain+"=1", fakeserver.TagVar+"="+wbTag), env...)
	p := &process{cmd: cmd, stderr: &fakeserver.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.stdin = stdin
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
			t.Error("a session did not exit after its stdin closed")
		}
		if t.Failed() {
			t.Logf("session stderr:\n%s", p.stderr)
		}
	})
	return p, stdout
}

// noneLeft registers a check, run after every session's clean-up, that
// the shared workbench (tagged wbTag) and the servers (tagged tag) are
// gone once the grace has passed.
func noneLeft(t testing.TB, tags ...string) {
	t.Helper()
	if _, ok := fakeserver.Tagged("probe"); !ok {
		return // process checks read /proc: Linux only
	}
	// Registered first: runs last, after the sessions have ended.
	t.Cleanup(func() {
		for _, tag := range tags {
			if left := fakeserver.WaitUntagged(tag, 30*time.Second); len(left) > 0 {
				t.Errorf("processes tagged %s left after the last session and the grace: %v", tag, left)
				for _, pid := range left {
					killPID(pid)
				}
			}
		}
	})
}

func whoami(t *testing.T, cs *mcp.ClientSession, toolbox, server string) string {
	t.Helper()
	return downstreamPID(t, cs, toolbox, server)
}

// sharedStatuses are the shared workbenches running for this test's
// runtime folder, as mcp-workbench status reports them.
func sharedStatuses(t testing.TB) []front.Status {
	t.Helper()
	code, out, errOut := runCmd(t, "", "status", "--json")
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, errOut)
	}
	var list []front.Status
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return list
}

// TestSharedSessionsRunAServerOnce: sessions on one configuration share
// one shared workbench and one process per server; a server that opts out
// runs once per session; status shows the sessions and servers; the shared
// workbench and its servers are gone after the last session and the
// grace.
func TestSharedSessionsRunAServerOnce(t *testing.T) {
	for _, n := range []int{2, 10} {
		t.Run(fmt.Sprintf("sessions=%d", n), func(t *testing.T) {
			tag, wbTag := sharingTest(t, fmt.Sprintf("share%d", n))
			own := taggedServer(tag, "own")
			own["shared"] = false
			cfg := sharedConfig(t, map[string]any{
				"tb": map[string]any{"description": "d", "mcpServers": map[string]any{
					"a": taggedServer(tag, "a"), "b": taggedServer(tag, "b"), "own": own,
				}},
			})
			sessions := make([]*process, n)
			var wg sync.WaitGroup
			for i := range sessions {
				wg.Go(func() { sessions[i] = startSession(t, cfg, wbTag, "") })
			}
			wg.Wait()
			pidA, pidOwn := map[string]bool{}, map[string]bool{}
			for _, p := range sessions {
				if text, isErr := callTool(t, p.cs, "open_toolbox", map[string]any{"toolbox_name": "tb"}); isErr {
					t.Fatal(text)
				}
				pidA[whoami(t, p.cs, "tb", "a")] = true
				pidOwn[whoami(t, p.cs, "tb", "own")] = true
			}
			if len(pidA) != 1 {
				t.Errorf("server a ran as %d processes for %d sessions, want 1: %v", len(pidA), n, pidA)
			}
			if len(pidOwn) != n {
				t.Errorf(`server own ("shared": false) ran as %d processes for %d sessions, want %d`, len(pidOwn), n, n)
			}
			if pids, ok := fakeserver.Tagged(tag); ok && len(pids) != 2+n {
				t.Errorf("%d server processes, want %d (a, b, and own per session): %v", len(pids), 2+n, pids)
			}
			st := sharedStatuses(t)
			if len(st) != 1 {
				t.Fatalf("status shows %d shared workbenches, want 1: %+v", len(st), st)
			}
			if len(st[0].Sessions) != n {
				t.Errorf("status shows %d sessions, want %d", len(st[0].Sessions), n)
			}
			users := map[string]int{}
			for _, s := range st[0].Servers {
				if s.Server == "a" {
					users[s.Status] += s.Users
				}
			}
			if users["connected"] != n {
				t.Errorf("status: server a used by %v, want %d sessions connected", users, n)
			}
		})
	}
}

// TestSharedServerPerProject: a server whose arguments read a variable of
// the session's environment runs once per value of it; one that does not
// runs once for all; a variable only one session's host set is not seen
// by a shared server.
func TestSharedServerPerProject(t *testing.T) {
	tag, wbTag := sharingTest(t, "project")
	perProject := taggedServer(tag, "p")
	perProject["args"] = []string{"${PROJECT}"}
	cfg := sharedConfig(t, map[string]any{
		"tb": map[string]any{"description": "d", "mcpServers": map[string]any{"p": perProject, "all": taggedServer(tag, "all")}},
	})
	a1 := startSession(t, cfg, wbTag, "", "PROJECT=alpha", "ONLY_ONE_HOST=secret")
	a2 := startSession(t, cfg, wbTag, "", "PROJECT=alpha")
	b1 := startSession(t, cfg, wbTag, "", "PROJECT=beta")
	pids := map[string][]string{}
	for _, p := range []*process{a1, a2, b1} {
		pids["p"] = append(pids["p"], whoami(t, p.cs, "tb", "p"))
		pids["all"] = append(pids["all"], whoami(t, p.cs, "tb", "all"))
	}
	if p := pids["p"]; p[0] != p[1] || p[0] == p[2] {
		t.Errorf("per-project server: pids %v, want alpha's two sessions on one and beta on another", p)
	}
	if p := pids["all"]; p[0] != p[1] || p[0] != p[2] {
		t.Errorf("server without a per-session argument: pids %v, want one for all", p)
	}
	if v := whoamiEnv(t, a1.cs, "tb", "all", "ONLY_ONE_HOST"); v != "" {
		t.Errorf("a shared server sees a variable only one session's host set: %q", v)
	}
	if v := whoamiEnv(t, a1.cs, "tb", "all", "HOME"); v == "" {
		t.Error("a shared server does not see HOME")
	}
}

// whoamiEnv is the value of a variable in a server's environment.
func whoamiEnv(t *testing.T, cs *mcp.ClientSession, toolbox, server, name string) string {
	t.Helper()
	text, isErr := callTool(t, cs, "use_tool", use(toolbox, server, "whoami", map[string]any{"env": name}))
	if isErr {
		t.Fatalf("whoami %s/%s: %s", toolbox, server, text)
	}
	var out struct{ Env string }
	_ = json.Unmarshal([]byte(text), &out)
	return out.Env
}

// TestSharedProgressAndCancellationStayInTheirSession: two sessions call
// the same shared server at once; each sees its own progress only, and
// one's cancellation ends its call alone.
func TestSharedProgressAndCancellationStayInTheirSession(t *testing.T) {
	tag, wbTag := sharingTest(t, "progress")
	gate := filepath.Join(t.TempDir(), "gate")
	state := t.TempDir()
	cfg := sharedConfig(t, map[string]any{
		"tb": map[string]any{"description": "d", "mcpServers": map[string]any{
			"a": taggedServer(tag, "a", fakeserver.EnvSleepGate, gate, fakeserver.EnvStateDir, state),
		}},
	})
	s1 := startSessionWith(t, cfg, wbTag)
	s2 := startSessionWith(t, cfg, wbTag)

	// Progress: each session's call reports its own steps, under its own token.
	var wg sync.WaitGroup
	for i, s := range []*progressSession{s1, s2} {
		wg.Go(func() {
			steps := 3 + i*2
			params := &mcp.CallToolParams{Name: "use_tool", Arguments: use("tb", "a", "progress", map[string]any{"steps": steps, "delayMs": 1})}
			params.SetProgressToken(fmt.Sprintf("tok-%d", i))
			res, err := s.p.cs.CallTool(ctxT(t), params)
			if err != nil || res.IsError {
				t.Errorf("session %d: progress call: %v %+v", i, err, res)
				return
			}
		})
	}
	wg.Wait()
	for i, s := range []*progressSession{s1, s2} {
		// The last notification races the result and may be dropped
		// (progress is never relayed after a result); the others come.
		steps, tok := 3+i*2, fmt.Sprintf("tok-%d", i)
		fakeserver.Eventually(t, "the progress notifications", func() bool { return s.progress(tok) >= steps-1 })
		if got := s.progress(tok); got > steps {
			t.Errorf("session %d got %d progress notifications for its token, want %d", i, got, steps)
		}
		if other := s.progress(fmt.Sprintf("tok-%d", 1-i)); other != 0 {
			t.Errorf("session %d got %d progress notifications of the other session", i, other)
		}
	}

	// Cancellation: s1's sleep is cancelled; s2's, on the same process,
	// goes on and answers once the gate opens.
	ctx1, cancel1 := context.WithCancel(ctxT(t))
	done1 := make(chan error, 1)
	go func() {
		_, err := s1.p.cs.CallTool(ctx1, &mcp.CallToolParams{Name: "use_tool", Arguments: use("tb", "a", "sleep", map[string]any{"ms": 1})})
		done1 <- err
	}()
	done2 := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := s2.p.cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "use_tool", Arguments: use("tb", "a", "sleep", map[string]any{"ms": 1})})
		if err != nil {
			t.Errorf("session 2's sleep: %v", err)
		}
		done2 <- res
	}()
	fakeserver.Eventually(t, "both sleeps running", func() bool {
		n := 0
		for _, l := range fakeserver.ReadLines(state, fakeserver.CallsFile) {
			if l == "sleep" {
				n++
			}
		}
		return n == 2
	})
	cancel1()
	if err := <-done1; err == nil {
		t.Error("session 1's cancelled call answered")
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done2:
		if res == nil || res.IsError {
			t.Errorf("session 2's call after session 1 cancelled its own: %+v", res)
		}
	case <-time.After(time.Minute):
		t.Fatal("session 2's call did not answer")
	}
}

// progressSession is a session whose client counts the progress
// notifications it gets, by token.
type progressSession struct {
	p      *process
	mu     sync.Mutex
	counts map[string]int
}

func (s *progressSession) progress(token string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[token]
}

// startSessionWith starts a session whose host counts progress.
func startSessionWith(t *testing.T, cfgPath, wbTag string) *progressSession {
	t.Helper()
	s := &progressSession{counts: map[string]int{}}
	opts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		s.mu.Lock()
		s.counts[fmt.Sprint(req.Params.ProgressToken)]++
		s.mu.Unlock()
	}}
	s.p = launchSession(t, []string{"--config", cfgPath}, wbTag, "", opts)
	return s
}

// TestSharedWorkbenchKilledMidCall: kill -9 of the shared workbench fails
// the calls in flight with a clear error; the session's next call starts
// a new shared workbench and works; the old one's servers are gone.
func TestSharedWorkbenchKilledMidCall(t *testing.T) {
	tag, wbTag := sharingTest(t, "killed")
	state := t.TempDir()
	cfg := sharedConfig(t, map[string]any{
		"tb": map[string]any{"description": "d", "mcpServers": map[string]any{
			"a": taggedServer(tag, "a", fakeserver.EnvSleepGate, filepath.Join(state, "never"), fakeserver.EnvStateDir, state),
		}},
	})
	p := startSession(t, cfg, wbTag, "")
	first := whoami(t, p.cs, "tb", "a")
	st := sharedStatuses(t)
	if len(st) != 1 {
		t.Fatalf("status: %+v", st)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "use_tool", Arguments: use("tb", "a", "sleep", map[string]any{"ms": 1})})
		done <- err
	}()
	fakeserver.Eventually(t, "the sleep running", func() bool {
		return len(fakeserver.ReadLines(state, fakeserver.CallsFile)) >= 2 // whoami, sleep
	})
	killPID(st[0].PID)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "the shared workbench ended during this request") {
			t.Errorf("the call in flight: err = %v, want the shared workbench's end", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the call in flight got no answer after the shared workbench died")
	}
	// The watchdog stops the dead workbench's server.
	if pid, _ := strconv.Atoi(first); pid > 0 {
		fakeserver.Eventually(t, "the old server gone", func() bool { return processGone(pid) })
	}
	second := whoami(t, p.cs, "tb", "a")
	if second == first {
		t.Errorf("the call after the restart reached the old server %s", first)
	}
	st2 := sharedStatuses(t)
	if len(st2) != 1 || st2[0].PID == st[0].PID {
		t.Errorf("status after the restart: %+v, want one new shared workbench", st2)
	}
}

// TestSharedRefusesAnotherUser: a shared workbench drops a connection
// whose peer is not its user; the session runs its servers itself, and
// says why.
func TestSharedRefusesAnotherUser(t *testing.T) {
	tag, wbTag := sharingTest(t, "peer")
	cfg := sharedConfig(t, map[string]any{
		"tb": map[string]any{"description": "d", "mcpServers": map[string]any{"a": taggedServer(tag, "a")}},
	})
	p := startSession(t, cfg, wbTag, "", fmt.Sprintf("%s=%d", envPeerUID, os.Getuid()+1))
	if text, isErr := callTool(t, p.cs, "use_tool", use("tb", "a", "echo", map[string]any{"text": "hi"})); isErr || !strings.Contains(text, "hi") {
		t.Fatalf("the session did not fall back to its own servers: %s", text)
	}
	if !strings.Contains(p.stderr.String(), "this session runs its servers itself") {
		t.Errorf("the session does not say why it is not shared:\n%s", p.stderr)
	}
	dir, _ := shared.Dir()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var all strings.Builder
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		all.Write(b)
	}
	if !strings.Contains(all.String(), "refused a connection from another user") {
		t.Errorf("the shared workbench's log does not show the refusal:\n%s", all.String())
	}
	// The refusing shared workbench has no session: it leaves after the
	// grace (noneLeft checks).
}

// TestSharedStatusAndStop: status lists the shared workbench; stop-shared
// stops it and its servers; the session's next call starts a new one.
func TestSharedStatusAndStop(t *testing.T) {
	tag, wbTag := sharingTest(t, "stop")
	cfg := sharedConfig(t, map[string]any{
		"tb": map[string]any{"description": "d", "mcpServers": map[string]any{"a": taggedServer(tag, "a")}},
	})
	p := startSession(t, cfg, wbTag, "")
	first := whoami(t, p.cs, "tb", "a")
	code, out, errOut := runCmd(t, "", "status")
	if code != 0 || !strings.Contains(out, cfg) || !strings.Contains(out, "tb/a  connected") || !strings.Contains(out, "sessions: 1") {
		t.Errorf("status: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCmd(t, "", "stop-shared", "--config", cfg)
	if code != 0 || !strings.Contains(out, "Stopped the shared workbench of "+cfg) {
		t.Fatalf("stop-shared: exit %d\n%s%s", code, out, errOut)
	}
	if pid, _ := strconv.Atoi(first); pid > 0 {
		fakeserver.Eventually(t, "the server stopped with its shared workbench", func() bool { return processGone(pid) })
	}
	if second := whoami(t, p.cs, "tb", "a"); second == first {
		t.Errorf("the call after stop-shared reached the old server")
	}
	code, out, _ = runCmd(t, "", "stop-shared", "--config", filepath.Join(t.TempDir(), "other.json"))
	if code != 0 || !strings.Contains(out, "No shared workbench is running for") {
		t.Errorf("stop-shared of another configuration: exit %d: %s", code, out)
	}
}

// TestSharedSessionKilled: kill -9 of a session's process leaves the other
// session and the shared server running; once the last session is gone
// too, nothing is left after the grace (noneLeft).
func TestSharedSessionKilled(t *testing.T) {
	tag, wbTag := sharingTest(t, "relaykill")
	cfg := sharedConfig(t, map[string]any{
		"tb": map[string]any{"description": "d", "mcpServers": map[string]any{"a": taggedServer(tag, "a")}},
	})
	p1 := startSession(t, cfg, wbTag, "")
	p2 := startSession(t, cfg, wbTag, "")
	first := whoami(t, p1.cs, "tb", "a")
	if err := p1.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p1.done
	fakeserver.Eventually(t, "the shared workbench to see the session gone", func() bool {
		st := sharedStatuses(t)
		return len(st) == 1 && len(st[0].Sessions) == 1
	})
	if again := whoami(t, p2.cs, "tb", "a"); again != first {
		t.Errorf("the other session's server changed after a session was killed: %s, then %s", first, again)
	}
}

// TestSharedFlag: --shared (before or after serve's name) turns sharing on
// for a configuration that does not, --shared=false off for one that
// does; other commands refuse it.
func TestSharedFlag(t *testing.T) {
	tag, wbTag := sharingTest(t, "flag")
	toolboxes := map[string]any{"tb": map[string]any{"description": "d", "mcpServers": map[string]any{"a": taggedServer(tag, "a")}}}
	plain := writeConfig(t, map[string]any{"sharedGraceMs": 300, "toolboxes": toolboxes})
	on := sharedConfig(t, toolboxes)

	off := launchSession(t, []string{"--config", on, "--shared=false"}, wbTag, "", nil)
	whoami(t, off.cs, "tb", "a")
	if st := sharedStatuses(t); len(st) != 0 {
		t.Errorf("--shared=false: status shows %+v, want no shared workbench", st)
	}
	s1 := launchSession(t, []string{"--config", plain, "--shared"}, wbTag, "", nil)
	s2 := launchSession(t, []string{"serve", "--shared=true", "--config", plain}, wbTag, "", nil)
	if a, b := whoami(t, s1.cs, "tb", "a"), whoami(t, s2.cs, "tb", "a"); a != b {
		t.Errorf("--shared: two sessions ran server a twice (%s, %s)", a, b)
	}
	if st := sharedStatuses(t); len(st) != 1 || len(st[0].Sessions) != 2 {
		t.Errorf("--shared: status shows %+v, want one shared workbench with two sessions", st)
	}
	code, _, errOut := runCmd(t, "", "--shared", "validate", "--config", plain)
	if code != 2 || !strings.Contains(errOut, "--shared is a flag of serve, not of validate") {
		t.Errorf("--shared validate: exit %d: %s", code, errOut)
	}
}

// killPID kills the process pid (SIGKILL on Unix).
func killPID(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// processGone reports whether no process pid runs any more.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	return err != nil || p.Signal(syscall.Signal(0)) != nil
}

// TestSharedRestartBeforeInitialize: a shared workbench that stops after
// a session's relay connected but before the host's initialize: the
// initialize goes to a new one, once, and the session works.
func TestSharedRestartBeforeInitialize(t *testing.T) {
	tag, wbTag := sharingTest(t, "earlystop")
	cfg := sharedConfig(t, map[string]any{"tb": map[string]any{"description": "d", "mcpServers": map[string]any{"a": taggedServer(tag, "a")}}})
	p, stdout := startWorkbench(t, []string{"--config", cfg}, wbTag, "")
	// The relay connects before the host says anything.
	var first []front.Status
	fakeserver.Eventually(t, "the relay's session in the shared workbench", func() bool {
		first = sharedStatuses(t)
		return len(first) == 1 && len(first[0].Sessions) == 1
	})
	if code, out, errOut := runCmd(t, "", "stop-shared", "--config", cfg); code != 0 {
		t.Fatalf("stop-shared: %s%s", out, errOut)
	}
	fakeserver.Eventually(t, "the shared workbench gone", func() bool { return processGone(first[0].PID) })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil).
		Connect(ctxT(t), &mcp.IOTransport{Reader: stdout, Writer: p.stdin}, nil)
	if err != nil {
		t.Fatalf("initialize after the shared workbench stopped: %v\n%s", err, p.stderr)
	}
	defer cs.Close()
	whoami(t, cs, "tb", "a")
}

// TestSharedWorkbenchThatExitsAtOnce: a shared workbench that ends as it
// starts (here its socket's path is taken by a file that is not a socket)
// is noticed when it ends, not after the dial timeout: the session runs
// its servers itself and says why, with the end of the shared
// workbench's log.
func TestSharedWorkbenchThatExitsAtOnce(t *testing.T) {
	tag, wbTag := sharingTest(t, "exits")
	cfg := sharedConfig(t, map[string]any{"tb": map[string]any{"description": "d", "mcpServers": map[string]any{"a": taggedServer(tag, "a")}}})
	dir, err := shared.Dir()
	if err != nil {
		t.Fatal(err)
	}
	sock, err := shared.SocketPath(dir, cfg, Version())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sock, []byte("not a socket"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startSession(t, cfg, wbTag, "")
	if text, isErr := callTool(t, p.cs, "use_tool", use("tb", "a", "echo", map[string]any{"text": "hi"})); isErr || !strings.Contains(text, "hi") {
		t.Fatalf("the session did not serve itself: %s", text)
	}
	for _, want := range []string{"this session runs its servers itself", "ended without answering", "is not a socket"} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("the session's log lacks %q:\n%s", want, p.stderr)
		}
	}
}

// TestSharedLeavesOnlyItsLog: once the last session has left and the
// grace has passed, the shared workbench leaves nothing in the runtime
// folder but its log: no socket, no lock file.
func TestSharedLeavesOnlyItsLog(t *testing.T) {
	tag, wbTag := sharingTest(t, "leftovers")
	cfg := sharedConfig(t, map[string]any{"tb": map[string]any{"description": "d", "mcpServers": map[string]any{"a": taggedServer(tag, "a")}}})
	p := startSession(t, cfg, wbTag, "")
	whoami(t, p.cs, "tb", "a")
	st := sharedStatuses(t)
	if len(st) != 1 {
		t.Fatalf("status: %+v", st)
	}
	_ = p.stdin.Close()
	<-p.done
	fakeserver.Eventually(t, "the shared workbench gone", func() bool { return processGone(st[0].PID) })
	dir, err := shared.Dir()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".log") {
			left = append(left, e.Name())
		}
	}
	if len(left) > 0 {
		t.Errorf("left in the runtime folder after the shared workbench ended: %v", left)
	}
}
