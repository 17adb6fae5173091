package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/httpauth/issuertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpWorkbench is mcp-workbench serve --http run as a process of its own.
type httpWorkbench struct {
	url  string // the MCP endpoint
	cmd  *exec.Cmd
	logs *fakeserver.Buffer
	done chan error
}

// boundAddr finds the address in the workbench's "serving over HTTP" line,
// as the text log writes it or as the JSON one does.
var boundAddr = regexp.MustCompile(`msg="serving over HTTP" addr=(\S+)|"msg":"serving over HTTP","addr":"([^"]+)"`)

// startHTTPWorkbench starts this test binary as mcp-workbench serve --http
// 127.0.0.1:0 with args, and waits for the address it bound. It is
// stopped (SIGTERM, then waited for) when the test ends.
func startHTTPWorkbench(t testing.TB, env []string, args ...string) *httpWorkbench {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(append(os.Environ(), envMain+"=1"), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &httpWorkbench{cmd: cmd, logs: &fakeserver.Buffer{}, done: make(chan error, 1)}
	bound := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			_, _ = w.logs.Write([]byte(line + "\n"))
			if m := boundAddr.FindStringSubmatch(line); m != nil {
				select {
				case bound <- m[1] + m[2]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		w.done <- cmd.Wait()
	}()
	select {
	case addr := <-bound:
		w.url = "http://" + addr + "/mcp"
	case err := <-w.done:
		t.Fatalf("serve --http ended before serving: %v\n%s", err, w.logs.String())
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("serve --http did not say where it serves within a minute:\n%s", w.logs.String())
	}
	t.Cleanup(func() { w.stop(t) })
	return w
}

// stop ends the workbench with SIGTERM and returns its exit error.
func (w *httpWorkbench) stop(t testing.TB) error {
	if w.cmd.ProcessState != nil {
		return nil
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-w.done:
		w.done <- err
		return err
	case <-time.After(time.Minute):
		_ = w.cmd.Process.Kill()
		t.Errorf("serve --http did not end within a minute of SIGTERM:\n%s", w.logs.String())
		return nil
	}
}

// TestServeHTTPWithOfficialClients: the official TypeScript client over
// Streamable HTTP (2025-11-25, with a session) and a go-sdk client at
// 2026-07-28 (without) open toolboxes, search and call the official
// memory server through mcp-workbench serve --http; SIGTERM stops it and
// its servers.
func TestServeHTTPWithOfficialClients(t *testing.T) {
	memory := fakeserver.NPMServer(t, "mcp-server-memory")
	tag := "http-official-" + t.Name()
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"knowledge": map[string]any{"description": "A knowledge graph of entities and relations", "mcpServers": map[string]any{
			"memory": map[string]any{"command": memory, "env": map[string]string{
				"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl"), fakeserver.TagVar: tag}},
		}},
	}})
	wb := startHTTPWorkbench(t, nil, "--config", cfg)

	steps := []map[string]any{
		{"list": true},
		{"call": "open_toolbox", "arguments": map[string]any{"query": "remember facts about a person"}},
		{"call": "use_tool", "arguments": map[string]any{"tool": map[string]any{"toolbox": "knowledge", "server": "memory", "tool": "create_entities"},
			"arguments": map[string]any{"entities": []map[string]any{{"name": "Ada", "entityType": "person", "observations": []string{"wrote the first program"}}}}}},
	}
	out, stderr := tsHostWith(t, steps, []string{"HOST_URL=" + wb.url})
	if !regexp.MustCompile(`host: session \S+`).MatchString(stderr) {
		t.Errorf("the TypeScript host got no session id:\n%s", stderr)
	}
	if !strings.Contains(string(out[0]), `"open_toolbox"`) || !strings.Contains(string(out[0]), `"use_tool"`) {
		t.Errorf("tools/list: %s", out[0])
	}
	if text, isErr := toolText(t, out[1]); isErr || !strings.Contains(text, "create_entities") {
		t.Errorf("search: %s (error %v)", text, isErr)
	}
	if text, isErr := toolText(t, out[2]); isErr || !strings.Contains(text, "Ada") {
		t.Errorf("create_entities: %s (error %v)", text, isErr)
	}

	// A go-sdk host on 2026-07-28 reads what the TypeScript host wrote.
	client := mcp.NewClient(&mcp.Implementation{Name: "go-host", Version: "1"}, nil)
	cs, err := client.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: wb.url}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.ID() != "" {
		t.Errorf("the 2026-07-28 host got session %q; want none", cs.ID())
	}
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox_name": "knowledge"}})
	if err != nil || res.IsError {
		t.Fatalf("open_toolbox: %v %v", err, res)
	}
	res, err = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "use_tool", Arguments: map[string]any{
		"tool": map[string]any{"toolbox": "knowledge", "server": "memory", "tool": "read_graph"}, "arguments": map[string]any{}}})
	if err != nil || res.IsError {
		t.Fatalf("read_graph: %v %v", err, res)
	}
	b, _ := json.Marshal(res.Content)
	if !strings.Contains(string(b), "wrote the first program") {
		t.Errorf("read_graph at 2026-07-28: %s; want what the TypeScript host wrote", b)
	}

	if err := wb.stop(t); err != nil {
		t.Errorf("serve --http after SIGTERM: %v\n%s", err, wb.logs.String())
	}
	if left := fakeserver.WaitUntagged(tag, 10*time.Second); len(left) > 0 {
		t.Errorf("processes left after serve --http stopped: %v", left)
	}
}

// TestServeHTTPAuthentication: serve --http with static tokens (made with
// token add) and an OAuth authorization server's JWTs. No token is 401
// with the resource metadata; a token of another audience or an expired
// one is refused; a group sees the toolbox limited to it and others do
// not; a token revoked with token revoke is refused at the next request;
// nothing of a token reaches the log.
func TestServeHTTPAuthentication(t *testing.T) {
	tokenHome(t)
	code, out, errOut := runCmd(t, "", "token", "add", "alice")
	if code != 0 {
		t.Fatalf("token add: %d %s", code, errOut)
	}
	aliceTok := strings.TrimSpace(out)
	is := issuertest.New(t, "/.well-known/oauth-authorization-server")
	const public = "https://wb.example.test/mcp"
	tag := "http-auth-" + t.Name()
	cfg := writeConfig(t, map[string]any{
		"http": map[string]any{"publicUrl": public, "auth": map[string]any{"tokens": true, "oauth": map[string]any{"issuer": is.URL, "groupsClaim": "groups"}}},
		"toolboxes": map[string]any{
			"dev": map[string]any{"description": "Development tools", "mcpServers": map[string]any{"a": taggedServer(tag, "a")}},
			"ops": map[string]any{"description": "Operations tools", "access": map[string]any{"groups": []string{"sre"}}, "mcpServers": map[string]any{"a": taggedServer(tag, "a")}},
		}})
	wb := startHTTPWorkbench(t, nil, "--config", cfg)
	base := strings.TrimSuffix(wb.url, "/mcp")

	post := func(tok string) (int, http.Header) {
		req, _ := http.NewRequest(http.MethodPost, wb.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	if code, hdr := post(""); code != http.StatusUnauthorized || !strings.Contains(hdr.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("no token: %d %q; want 401 naming the resource metadata", code, hdr.Get("WWW-Authenticate"))
	}
	resp, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if md.Resource != public || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != is.URL {
		t.Errorf("protected resource metadata: %+v", md)
	}
	hour := time.Hour
	bobTok := is.Token(t, issuertest.Claims{Issuer: is.URL, Audience: []string{public}, Subject: "bob", Groups: []string{"sre"}, Exp: hour}, nil)
	for name, tok := range map[string]string{
		"another audience": is.Token(t, issuertest.Claims{Issuer: is.URL, Audience: []string{"https://other.example.test/mcp"}, Subject: "bob", Exp: hour}, nil),
		"expired":          is.Token(t, issuertest.Claims{Issuer: is.URL, Audience: []string{public}, Subject: "bob", Exp: -hour}, nil),
		"unsigned":         issuertest.Unsigned(t, issuertest.Claims{Issuer: is.URL, Audience: []string{public}, Subject: "bob", Exp: hour}),
	} {
		if code, _ := post(name); code != http.StatusUnauthorized {
			t.Errorf("a token that is not one (%s): %d", name, code)
		}
		if code, _ := post(tok); code != http.StatusUnauthorized {
			t.Errorf("a token of %s: %d; want 401", name, code)
		}
	}

	session := func(tok, protocol string) *mcp.ClientSession {
		hc := &http.Client{Transport: bearer{tok}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: wb.url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			t.Fatalf("connecting at %s: %v", protocol, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	alice := session(aliceTok, "2025-11-25")
	bob := session(bobTok, "2026-07-28")
	if text, isErr := callTool(t, alice, "use_tool", use("ops", "a", "echo", map[string]any{"message": "x"})); !isErr || !strings.Contains(text, "ops") {
		t.Errorf("alice (no group) calls ops: %s", text)
	}
	if text, isErr := callTool(t, alice, "use_tool", use("dev", "a", "echo", map[string]any{"message": "alice's"})); isErr || !strings.Contains(text, "alice's") {
		t.Errorf("alice calls dev: %s", text)
	}
	if text, isErr := callTool(t, bob, "use_tool", use("ops", "a", "echo", map[string]any{"message": "bob's"})); isErr || !strings.Contains(text, "bob's") {
		t.Errorf("bob (sre) calls ops: %s", text)
	}

	if code, _, errOut := runCmd(t, "", "token", "revoke", "alice"); code != 0 {
		t.Fatalf("token revoke: %s", errOut)
	}
	if code, _ := post(aliceTok); code != http.StatusUnauthorized {
		t.Errorf("a revoked token: %d; want 401 at the next request", code)
	}
	if _, err := alice.CallTool(ctxT(t), &mcp.CallToolParams{Name: "use_tool", Arguments: use("dev", "a", "echo", map[string]any{"message": "again"})}); err == nil {
		t.Errorf("alice's session goes on after her token was revoked")
	}
	logs := wb.logs.String()
	for _, tok := range []string{aliceTok, aliceTok[len(aliceTok)-12:], bobTok[len(bobTok)-20:]} {
		if strings.Contains(logs, tok) {
			t.Errorf("the log holds a token (%s…)", tok[:6])
		}
	}
}

// bearer sends its token with every request.
type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeHTTPJSONLogs: with "logFormat": "json", every line the
// workbench logs is one JSON object, the servers' stderr lines and the
// configuration's warnings (logged before serving begins) included.
func TestServeHTTPJSONLogs(t *testing.T) {
	cfg := writeConfig(t, map[string]any{
		"somethingElseEntirely": true,
		"http":                  map[string]any{"logFormat": "json"},
		"toolboxes":             map[string]any{"dev": map[string]any{"description": "Development tools", "mcpServers": map[string]any{"a": taggedServer("json-logs", "a", fakeserver.EnvFlood, "3")}}},
	})
	wb := startHTTPWorkbench(t, nil, "--config", cfg)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: wb.url}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := callTool(t, cs, "use_tool", use("dev", "a", "echo", map[string]any{"message": "x"})); isErr {
		t.Fatalf("a call: %s", text)
	}
	cs.Close()
	if err := wb.stop(t); err != nil {
		t.Fatalf("serve --http: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(wb.logs.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("the log: %q", lines)
	}
	stderrLines := 0
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["msg"] == nil || m["level"] == nil {
			t.Errorf("a log line that is not a JSON object with msg and level: %s", l)
		}
		if m["msg"] == "server stderr" && strings.HasPrefix(fmt.Sprint(m["line"]), "[dev/a] ") {
			stderrLines++
		}
	}
	if !strings.Contains(wb.logs.String(), "somethingElseEntirely") {
		t.Errorf("the configuration's warning of an unknown key is not in the log:\n%s", wb.logs.String())
	}
	if stderrLines < 3 {
		t.Errorf("%d of the server's stderr lines logged as records; want its 3 at least", stderrLines)
	}
}

// rawSession begins a 2025 session at url with tok (none if "") and
// opens its event stream; it returns the session id and the stream's
// response, whose body ends when the workbench ends the stream.
func rawSession(t *testing.T, url, tok string) (string, *http.Response) {
	t.Helper()
	send := func(method, sid, body string, accept string) *http.Response {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := send(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, "application/json, text/event-stream")
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	resp = send(http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "application/json, text/event-stream")
	resp.Body.Close()
	stream := send(http.MethodGet, sid, "", "text/event-stream")
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("the event stream: %d", stream.StatusCode)
	}
	t.Cleanup(func() { stream.Body.Close() })
	return sid, stream
}

// ended waits up to a minute for body to end, and says whether it did.
func ended(body io.Reader) bool {
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, body); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(time.Minute):
		return false
	}
}

// metricsOf returns the workbench's /metrics.
func metricsOf(t *testing.T, wb *httpWorkbench) string {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(wb.url, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestServeHTTPCredentials: a static token named alice and a JWT whose
// subject is alice are two users (each with servers of their own); a
// request without a token is logged at debug, as the refusals of tokens
// are; and when a static token is revoked, its session's open event
// stream ends, rather than go on hearing of the user's toolboxes.
func TestServeHTTPCredentials(t *testing.T) {
	tokenHome(t)
	token := func(name string) string {
		code, out, errOut := runCmd(t, "", "token", "add", name)
		if code != 0 {
			t.Fatalf("token add %s: %d %s", name, code, errOut)
		}
		return strings.TrimSpace(out)
	}
	aliceTok, bobTok := token("alice"), token("bob")
	is := issuertest.New(t, "/.well-known/oauth-authorization-server")
	const public = "https://wb.example.test/mcp"
	cfg := writeConfig(t, map[string]any{
		"http":      map[string]any{"publicUrl": public, "auth": map[string]any{"tokens": true, "oauth": map[string]any{"issuer": is.URL}}},
		"toolboxes": map[string]any{"dev": map[string]any{"description": "Development tools", "mcpServers": map[string]any{"a": taggedServer("http-credentials", "a")}}},
	})
	wb := startHTTPWorkbench(t, nil, "--config", cfg, "--log-level", "debug")
	jwtAlice := is.Token(t, issuertest.Claims{Issuer: is.URL, Audience: []string{public}, Subject: "alice", Exp: time.Hour}, nil)

	resp, err := http.Post(wb.url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d", resp.StatusCode)
	}
	fakeserver.Eventually(t, "the request without a token to be logged", func() bool {
		return strings.Contains(wb.logs.String(), "no bearer token")
	})

	for _, tok := range []string{aliceTok, jwtAlice} {
		hc := &http.Client{Transport: bearer{tok}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: wb.url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatal(err)
		}
		if text, isErr := callTool(t, cs, "use_tool", use("dev", "a", "echo", map[string]any{"message": "x"})); isErr {
			t.Fatalf("a call: %s", text)
		}
		cs.Close()
	}
	if m := metricsOf(t, wb); !strings.Contains(m, "mcp_workbench_users 2") {
		t.Errorf("the static token alice and the JWT subject alice: %s; want two users", grepLines(m, "mcp_workbench_users"))
	}

	_, stream := rawSession(t, wb.url, bobTok)
	if code, _, errOut := runCmd(t, "", "token", "revoke", "bob"); code != 0 {
		t.Fatalf("token revoke: %s", errOut)
	}
	if !ended(stream.Body) {
		t.Errorf("the revoked token's event stream is still open a minute after token revoke")
	}
}

// TestServeHTTPSessionOfAGoneHost: a host that ends its run without
// DELETE (Claude Code does) leaves a session whose event stream closed:
// it ends after sessionOrphanMs, not sessionIdleMs. A session that never
// held a stream is not taken for one whose host went.
func TestServeHTTPSessionOfAGoneHost(t *testing.T) {
	cfg := writeConfig(t, map[string]any{
		"http":      map[string]any{"limits": map[string]any{"sessionOrphanMs": 500}},
		"toolboxes": map[string]any{"dev": map[string]any{"description": "Development tools", "mcpServers": map[string]any{"a": taggedServer("http-gone-host", "a")}}},
	})
	wb := startHTTPWorkbench(t, nil, "--config", cfg)
	// One without a stream: initialize alone.
	req, _ := http.NewRequest(http.MethodPost, wb.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	quiet := resp.Header.Get("Mcp-Session-Id")
	if quiet == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	_, stream := rawSession(t, wb.url, "")
	if m := metricsOf(t, wb); !strings.Contains(m, "mcp_workbench_sessions 2") {
		t.Fatalf("two sessions: %s", grepLines(m, "mcp_workbench_sessions"))
	}
	stream.Body.Close() // the host's process ends: its connection closes
	fakeserver.Eventually(t, "the gone host's session to end", func() bool {
		return strings.Contains(metricsOf(t, wb), "mcp_workbench_sessions 1")
	})
	req, _ = http.NewRequest(http.MethodPost, wb.url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", quiet)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the session without a stream: %d; want it still there", resp.StatusCode)
	}
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestServeHTTPBatchesCountEachCall: a host of 2025-03-26 may send
// JSON-RPC batches; each call in one counts against its credential's
// limits as it would alone. With 2 calls at once and a burst of 4, a POST
// of 20 calls is refused with 429 (none of them runs); one of 2 is
// served.
func TestServeHTTPBatchesCountEachCall(t *testing.T) {
	cfg := writeConfig(t, map[string]any{
		"http":      map[string]any{"limits": map[string]any{"callsPerSecond": 2, "burst": 4, "concurrentCalls": 2}},
		"toolboxes": map[string]any{"dev": map[string]any{"description": "Development tools", "mcpServers": map[string]any{"a": taggedServer("http-batch", "a")}}},
	})
	wb := startHTTPWorkbench(t, nil, "--config", cfg)
	post := func(sid, body string) (int, string, string) {
		req, _ := http.NewRequest(http.MethodPost, wb.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-03-26")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id")
	}
	code, body, sid := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if code != http.StatusOK || sid == "" || !strings.Contains(body, "2025-03-26") {
		t.Fatalf("initialize at 2025-03-26: %d %s", code, body)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	batch := func(n int) string {
		calls := make([]string, n)
		for i := range calls {
			calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"dev","server":"a","tool":"echo"},"arguments":{"message":"call %d"}}}}`, i+1, i+1)
		}
		return "[" + strings.Join(calls, ",") + "]"
	}
	code, body, _ = post(sid, batch(20))
	if code != http.StatusTooManyRequests || !strings.Contains(body, "a batch of 20 calls") {
		t.Errorf("a batch of 20 calls: %d %.300s; want 429 naming the batch", code, body)
	}
	if strings.Contains(body, "call 1") {
		t.Errorf("a call of the refused batch ran: %.300s", body)
	}
	code, body, _ = post(sid, batch(2))
	if code != http.StatusOK || !strings.Contains(body, "call 1") || !strings.Contains(body, "call 2") {
		t.Errorf("a batch of 2 calls: %d %.500s; want both answered", code, body)
	}
}
