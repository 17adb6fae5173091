package front

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth/oauthtest"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) { fakeserver.TestMain(m) }

// httpEnv is a workbench served over HTTP on 127.0.0.1 for one test.
type httpEnv struct {
	url   string // the MCP endpoint
	base  string // http://127.0.0.1:port
	state string // the fake servers' state folder
	logs  *fakeserver.Buffer
	stop  func() error
}

// fakeJSON is a fake server's definition in a configuration file.
func fakeJSON(t *testing.T, state, name string, extra ...string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := fakeserver.Env(append([]string{fakeserver.EnvName, name, fakeserver.EnvStateDir, state}, extra...)...)
	b, _ := json.Marshal(map[string]any{"command": exe, "env": env, "maxRetries": 0})
	return string(b)
}

// serveHTTPFor writes cfgText (its %[1]s: a fake server "a" with the ask
// tools, %[2]s: the fake server's state folder) and serves it.
func serveHTTPFor(t *testing.T, cfgText string, o HTTPOptions) *httpEnv {
	t.Helper()
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.json")
	text := strings.ReplaceAll(cfgText, "FAKE_A", fakeJSON(t, state, "a", fakeserver.EnvAsk, "1", fakeserver.EnvSleepGate, filepath.Join(state, "gate")))
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	logs := &fakeserver.Buffer{}
	o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o.LogOut = logs
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	bound := make(chan string, 1)
	o.Listening = func(addr string) { bound <- addr }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeHTTP(ctx, cfg, o) }()
	var addr string
	select {
	case addr = <-bound:
	case err := <-done:
		cancel()
		t.Fatalf("ServeHTTP ended at once: %v", err)
	}
	stopped := false
	e := &httpEnv{url: "http://" + addr + "/mcp", base: "http://" + addr, state: state, logs: logs}
	e.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(60 * time.Second):
			t.Fatal("ServeHTTP did not return within a minute of its context's end")
			return nil
		}
	}
	t.Cleanup(func() {
		if err := e.stop(); err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	return e
}

const oneToolbox = `{"toolboxes": {"dev": {"description": "Development tools", "mcpServers": {"a": FAKE_A}}}}`

// connect opens a go-sdk client session over Streamable HTTP on protocol.
func connect(t *testing.T, url, protocol string, opts *mcp.ClientOptions, hc *http.Client) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connecting at %s: %v", protocol, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls a tool and returns its result's text and isError.
var callTool = fakeserver.CallTool

func useArgs(toolbox, server, tool string, args any) map[string]any {
	return map[string]any{"tool": map[string]any{"toolbox": toolbox, "server": server, "tool": tool}, "arguments": args}
}

// elicitingHost answers every elicitation with a name.
func elicitingHost() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	}
}

// TestHTTPServesBothProtocolGenerations: a go-sdk host on 2025-11-25 (with
// a session) and one on 2026-07-28 (without) search, open and call tools
// through serve --http, and a server's question reaches each: as a
// request on the session's stream, or as input_required and a retry.
func TestHTTPServesBothProtocolGenerations(t *testing.T) {
	e := serveHTTPFor(t, oneToolbox, HTTPOptions{})
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			cs := connect(t, e.url, protocol, elicitingHost(), nil)
			if id := cs.ID(); (protocol < newProtocol) != (id != "") {
				t.Errorf("session id %q at %s: want one for 2025 hosts only", id, protocol)
			}
			got, isErr := callTool(t, cs, "open_toolbox", map[string]any{"query": "echo a message back"})
			if isErr || !strings.Contains(got, `"echo"`) {
				t.Fatalf("search: %s (error %v)", got, isErr)
			}
			got, isErr = callTool(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev"})
			if isErr || !strings.Contains(got, `"sleep"`) {
				t.Fatalf("open: %s (error %v)", got, isErr)
			}
			got, isErr = callTool(t, cs, "use_tool", useArgs("dev", "a", "echo", map[string]any{"message": "hi " + protocol}))
			if isErr || !strings.Contains(got, "hi "+protocol) {
				t.Fatalf("use_tool echo: %s (error %v)", got, isErr)
			}
			got, isErr = callTool(t, cs, "use_tool", useArgs("dev", "a", "ask", map[string]any{"what": "elicit"}))
			if isErr || !strings.Contains(got, `"name":"Ada"`) {
				t.Fatalf("a server's elicitation through the host: %s (error %v)", got, isErr)
			}
		})
	}
	metrics := get(t, e.base+"/metrics", nil)
	for _, want := range []string{`mcp_workbench_tool_calls_total{outcome="ok",server="a",toolbox="dev"} 4`, `mcp_workbench_tool_calls_total{outcome="input_required",server="a",toolbox="dev"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s:\n%s", want, grepLines(metrics, "tool_calls_total"))
		}
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

// get returns the body of a GET, failing on a status other than 200.
func get(t *testing.T, url string, hdr http.Header) string {
	t.Helper()
	code, body, _ := do(t, http.MethodGet, url, hdr, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	return body
}

// do makes a request and returns its status, body and headers.
func do(t *testing.T, method, url string, hdr http.Header, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), resp.Header
}

func mcpHeaders(kv ...string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestHTTPSessionsEnd: a session the host ends (DELETE) is gone: its id
// gets 404, so that the host starts again, as the transport asks; so is
// one idle past sessionIdleMs; the sessions gauge follows. A user idle as
// long is let go, with their servers.
func TestHTTPSessionsEnd(t *testing.T) {
	e := serveHTTPFor(t, strings.Replace(oneToolbox, `{"toolboxes"`, `{"http": {"limits": {"sessionIdleMs": 1000}}, "toolboxes"`, 1), HTTPOptions{})
	// A request without a session starts a server for its user.
	stateless := connect(t, e.url, "2026-07-28", nil, nil)
	if got, isErr := callTool(t, stateless, "use_tool", useArgs("dev", "a", "echo", map[string]any{"message": "x"})); isErr {
		t.Fatalf("a stateless call: %s", got)
	}
	if m := get(t, e.base+"/metrics", nil); !strings.Contains(m, "mcp_workbench_servers_running 1") || !strings.Contains(m, "mcp_workbench_users 1") {
		t.Errorf("after a stateless call: %s", grepLines(m, "mcp_workbench_"))
	}
	code, _, hdr := do(t, http.MethodPost, e.url, mcpHeaders(), initBody)
	sid := hdr.Get("Mcp-Session-Id")
	if code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", code, sid)
	}
	if !strings.Contains(get(t, e.base+"/metrics", nil), "mcp_workbench_sessions 1") {
		t.Errorf("the sessions gauge does not count the new session")
	}
	if code, body, _ := do(t, http.MethodDelete, e.url, mcpHeaders("Mcp-Session-Id", sid), ""); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if code, body, _ := do(t, http.MethodPost, e.url, mcpHeaders("Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"), list); code != http.StatusNotFound {
		t.Errorf("a request of an ended session: %d %s; want 404", code, body)
	}
	fakeserver.Eventually(t, "the sessions gauge to drop", func() bool {
		return strings.Contains(get(t, e.base+"/metrics", nil), "mcp_workbench_sessions 0")
	})
	// Idle: the session ends by itself (watched on the gauge: a request
	// would keep it alive).
	_, _, hdr = do(t, http.MethodPost, e.url, mcpHeaders(), initBody)
	sid = hdr.Get("Mcp-Session-Id")
	if !strings.Contains(get(t, e.base+"/metrics", nil), "mcp_workbench_sessions 1") {
		t.Errorf("the sessions gauge does not count the second session")
	}
	fakeserver.Eventually(t, "the idle session to end", func() bool {
		return strings.Contains(get(t, e.base+"/metrics", nil), "mcp_workbench_sessions 0")
	})
	if code, body, _ := do(t, http.MethodPost, e.url, mcpHeaders("Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"), list); code != http.StatusNotFound {
		t.Errorf("a request of a session ended idle: %d %s; want 404", code, body)
	}
	// With no session and no request for sessionIdleMs, the user is let
	// go: their servers stop.
	fakeserver.Eventually(t, "the idle user's servers to stop", func() bool {
		m := get(t, e.base+"/metrics", nil)
		return strings.Contains(m, "mcp_workbench_users 0") && strings.Contains(m, "mcp_workbench_servers_running 0")
	})
}

// TestHTTPRefusesBadRequests: each bad request gets the status the
// transport gives it, and the workbench goes on serving.
func TestHTTPRefusesBadRequests(t *testing.T) {
	e := serveHTTPFor(t, strings.Replace(oneToolbox, `{"toolboxes"`, `{"http": {"allowedOrigins": ["https://app.example.com"], "limits": {"maxBodyBytes": 2048, "maxSessions": 1}}, "toolboxes"`, 1), HTTPOptions{})
	cases := []struct {
		name string
		hdr  http.Header
		host string
		body string
		want int
		says string
	}{
		{"bad origin", mcpHeaders("Origin", "https://evil.example.com"), "", initBody, http.StatusForbidden, "origin"},
		{"rebound host", mcpHeaders(), "evil.example.com", initBody, http.StatusMisdirectedRequest, "host"},
		{"oversized body", mcpHeaders(), "", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 4096) + `"}}`, http.StatusRequestEntityTooLarge, "exceeds"},
		{"malformed JSON", mcpHeaders(), "", `{"jsonrpc":"2.0","id":1,`, http.StatusBadRequest, ""},
		{"unknown protocol version", mcpHeaders("MCP-Protocol-Version", "1999-01-01"), "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.StatusBadRequest, "protocol version"},
		{"unknown session", mcpHeaders("Mcp-Session-Id", "NOSUCHSESSION", "MCP-Protocol-Version", "2025-11-25"), "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.StatusNotFound, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(c.body))
			req.Header = c.hdr
			if c.host != "" {
				req.Host = c.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want || !strings.Contains(strings.ToLower(string(b)), c.says) {
				t.Errorf("%d %s; want %d saying %q", resp.StatusCode, b, c.want, c.says)
			}
		})
	}
	// The probes answer whatever Host they name (a kubelet names the
	// pod's address, a load balancer's check none); /mcp does not.
	for _, host := range []string{"10.1.2.3:8080", ""} {
		for _, path := range []string{"/healthz", "/readyz"} {
			req, _ := http.NewRequest(http.MethodGet, e.base+path, nil)
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s with Host %q: %d; want 200", path, host, resp.StatusCode)
			}
		}
	}
	// An allowed origin passes; the one session allowed is taken, and,
	// while it holds its event stream (its host is there), a second is
	// refused with a time to retry.
	code, _, hdr := do(t, http.MethodPost, e.url, mcpHeaders("Origin", "https://app.example.com"), initBody)
	if code != http.StatusOK || hdr.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize from an allowed origin: %d", code)
	}
	stream := openStream(t, e.url, mcpHeaders("Mcp-Session-Id", hdr.Get("Mcp-Session-Id"), "MCP-Protocol-Version", "2025-11-25"))
	code, body, hdr := do(t, http.MethodPost, e.url, mcpHeaders(), initBody)
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || !strings.Contains(body, "maxSessions") {
		t.Errorf("a session past maxSessions: %d %s (Retry-After %q)", code, body, hdr.Get("Retry-After"))
	}
	stream()
	// Still serving everyone else: a stateless request.
	cs := connect(t, e.url, "2026-07-28", nil, nil)
	if got, isErr := callTool(t, cs, "use_tool", useArgs("dev", "a", "echo", map[string]any{"message": "still here"})); isErr || !strings.Contains(got, "still here") {
		t.Errorf("after the bad requests: %s", got)
	}
}

// TestHTTPNeedsAuthOffLoopback: an address other than loopback is refused
// without authentication, before anything listens.
func TestHTTPNeedsAuthOffLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "192.0.2.1:8080", "[::]:8080"} {
		err := ServeHTTP(context.Background(), &config.Config{}, HTTPOptions{Options: Options{Logger: slog.New(slog.DiscardHandler)}, Addr: addr})
		if !errors.Is(err, ErrNeedsAuth) || !strings.Contains(err.Error(), "http.auth") {
			t.Errorf("%s: %v; want a refusal saying how to configure auth", addr, err)
		}
	}
}

// bearerAuth is the go-sdk's bearer-token middleware over a fixed set of
// tokens: the front's use of whatever authentication is configured.
type bearerAuth map[string]*auth.TokenInfo

func (b bearerAuth) Middleware(next http.Handler) http.Handler {
	return auth.RequireBearerToken(func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if ti, ok := b[tok]; ok {
			return ti, nil
		}
		return nil, auth.ErrInvalidToken
	}, &auth.RequireBearerTokenOptions{ResourceMetadataURL: "http://127.0.0.1/.well-known/oauth-protected-resource"})(next)
}

func (bearerAuth) MetadataHandler() http.Handler { return nil }

func (bearerAuth) Caller(ctx context.Context) Caller {
	ti := auth.TokenInfoFromContext(ctx)
	if ti == nil {
		return Caller{}
	}
	var groups []string
	gs, _ := ti.Extra["groups"].([]any)
	for _, g := range gs {
		groups = append(groups, g.(string))
	}
	return Caller{Key: ti.UserID, Subject: ti.UserID, Groups: groups}
}

// tokenClient sends tok with every request.
func tokenClient(tok string) *http.Client {
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+tok)
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestHTTPUsersAreApart: each user has servers of their own; a toolbox
// limited to a group is invisible to others and refused to them; a
// session cannot be used by another user.
func TestHTTPUsersAreApart(t *testing.T) {
	far := time.Now().Add(time.Hour)
	users := bearerAuth{
		"alice-token": {UserID: "alice", Expiration: far, Extra: map[string]any{"groups": []any{"eng"}}},
		"bob-token":   {UserID: "bob", Expiration: far},
	}
	cfgText := `{"shared": true, "toolboxes": {
		"dev": {"description": "Development tools", "mcpServers": {"a": FAKE_A}},
		"ops": {"description": "Operations tools", "access": {"groups": ["eng"]}, "mcpServers": {"a": FAKE_A}}}}`
	e := serveHTTPFor(t, cfgText, HTTPOptions{Auth: users})
	if code, _, hdr := do(t, http.MethodPost, e.url, mcpHeaders(), initBody); code != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("no token: %d, WWW-Authenticate %q; want 401 with a Bearer challenge", code, hdr.Get("WWW-Authenticate"))
	}
	// Both protocols' hosts stay connected to the end: a user's servers
	// outlive none of their workbenches.
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		{
			alice := connect(t, e.url, protocol, nil, tokenClient("alice-token"))
			bob := connect(t, e.url, protocol, nil, tokenClient("bob-token"))
			enum := func(cs *mcp.ClientSession) string {
				res, err := cs.ListTools(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, tool := range res.Tools {
					if tool.Name == "open_toolbox" {
						b, _ := json.Marshal(tool.InputSchema)
						return string(b)
					}
				}
				return ""
			}
			if s := enum(alice); !strings.Contains(s, `"ops"`) {
				t.Errorf("alice's open_toolbox does not offer ops: %s", s)
			}
			if s := enum(bob); strings.Contains(s, `"ops"`) || !strings.Contains(s, `"dev"`) {
				t.Errorf("bob's open_toolbox: %s; want dev without ops", s)
			}
			if got, isErr := callTool(t, bob, "use_tool", useArgs("ops", "a", "echo", map[string]any{"message": "x"})); !isErr || !strings.Contains(got, "ops") {
				t.Errorf("bob's call of ops: %s (error %v); want a refusal", got, isErr)
			}
			if got, isErr := callTool(t, alice, "use_tool", useArgs("ops", "a", "echo", map[string]any{"message": "mine"})); isErr || !strings.Contains(got, "mine") {
				t.Errorf("alice's call of ops: %s", got)
			}
			if got, isErr := callTool(t, bob, "use_tool", useArgs("dev", "a", "echo", map[string]any{"message": "bob's"})); isErr || !strings.Contains(got, "bob's") {
				t.Errorf("bob's call of dev: %s", got)
			}
			if got, isErr := callTool(t, alice, "use_tool", useArgs("dev", "a", "echo", map[string]any{"message": "alice's"})); isErr || !strings.Contains(got, "alice's") {
				t.Errorf("alice's call of dev: %s", got)
			}
			if protocol < newProtocol {
				// Bob with Alice's session.
				req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
				req.Header = mcpHeaders("Mcp-Session-Id", alice.ID(), "MCP-Protocol-Version", protocol, "Authorization", "Bearer bob-token")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusForbidden {
					t.Errorf("bob using alice's session: %d; want 403", resp.StatusCode)
				}
			}
		}
	}
	// "shared": one process per server for all of a user's workbenches
	// (both protocols' here), never one for two users: dev/a started for
	// alice and for bob.
	starts := fakeserver.ReadLines(e.state, fakeserver.StartsFile)
	if len(starts) != 3 {
		t.Errorf("%d server starts; want 3 (alice's dev/a and ops/a, bob's dev/a)", len(starts))
	}
	if strings.Contains(e.logs.String(), "alice-token") || strings.Contains(e.logs.String(), "bob-token") {
		t.Errorf("a token reached the log")
	}
}

// TestHTTPShutsDownGracefully: on its context's end the workbench stops
// being ready, lets the call in flight finish, refuses new requests, and
// returns once its servers stopped.
func TestHTTPShutsDownGracefully(t *testing.T) {
	e := serveHTTPFor(t, oneToolbox, HTTPOptions{})
	cs := connect(t, e.url, "2026-07-28", nil, nil)
	result := make(chan string, 1)
	go func() {
		got, _ := callTool(t, cs, "use_tool", useArgs("dev", "a", "sleep", map[string]any{"ms": 1}))
		result <- got
	}()
	fakeserver.Eventually(t, "the call to reach the server", func() bool {
		return len(fakeserver.ReadLines(e.state, fakeserver.CallsFile)) > 0
	})
	stopped := make(chan error, 1)
	go func() { stopped <- e.stop() }()
	fakeserver.Eventually(t, "readiness to fail", func() bool {
		code, _, _ := do(t, http.MethodGet, e.base+"/readyz", nil, "")
		return code == http.StatusServiceUnavailable
	})
	if code, body, hdr := do(t, http.MethodPost, e.url, mcpHeaders(), initBody); code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
		t.Errorf("a new request while shutting down: %d %s", code, body)
	}
	// The call in flight ends as the server answers it.
	if err := os.WriteFile(filepath.Join(e.state, "gate"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := <-result; !strings.Contains(got, "slept") {
		t.Errorf("the call in flight: %q; want its result", got)
	}
	if err := <-stopped; err != nil {
		t.Errorf("ServeHTTP: %v", err)
	}
}

// TestHTTPRequestStatesVerifyOnEveryReplica: two workbenches with one
// configured state key verify each other's request states (the held call
// itself lives where it began: the other says so); one with another key
// does not.
func TestHTTPRequestStatesVerifyOnEveryReplica(t *testing.T) {
	key := []byte("a shared key of at least thirty-two bytes")
	a := serveHTTPFor(t, oneToolbox, HTTPOptions{StateKey: key})
	b := serveHTTPFor(t, oneToolbox, HTTPOptions{StateKey: key})
	c := serveHTTPFor(t, oneToolbox, HTTPOptions{StateKey: []byte("another key, of thirty-two bytes or more")})
	// A host without a form answer handler: the first input_required
	// comes back to the test as it is.
	raw := func(url, body string) string {
		_, out, _ := do(t, http.MethodPost, url, mcpHeaders("MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "use_tool"), body)
		return out
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`
	args := `"arguments":{"tool":{"toolbox":"dev","server":"a","tool":"ask"},"arguments":{"what":"elicit"}}`
	out := raw(a.url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"use_tool",`+meta+`,`+args+`}}`)
	i := strings.Index(out, `"requestState":"`)
	if i < 0 || !strings.Contains(out, "input_required") {
		t.Fatalf("the first call: %s; want input_required with a requestState", out)
	}
	if !strings.Contains(out, `"content":[]`) {
		t.Errorf("the input_required result over HTTP: %s; want content [] (as over stdio)", out)
	}
	state := out[i+len(`"requestState":"`):]
	state = state[:strings.IndexByte(state, '"')]
	retry := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"use_tool",%s,%s,"requestState":%q,"inputResponses":{}}}`, meta, args, state)
	if got := raw(b.url, retry); !strings.Contains(got, "is not waiting here") {
		t.Errorf("the state at another replica with the key: %s; want it verified, its call not there", got)
	}
	if got := raw(c.url, retry); !strings.Contains(got, "not one the workbench gave") {
		t.Errorf("the state at a workbench with another key: %s; want it refused as not the workbench's", got)
	}
}

// TestHTTPUsersLogInAlone: two users of one workbench open a toolbox
// whose remote server needs a login. Each is shown a login page of their
// own through their host (URL elicitation); Alice's login does not log Bob
// in, and each one's tokens are kept in a folder of their own.
func TestHTTPUsersLogInAlone(t *testing.T) {
	srv := oauthtest.Start(t, oauthtest.Options{})
	far := time.Now().Add(time.Hour)
	users := bearerAuth{
		"alice-token": {UserID: "alice", Expiration: far},
		"bob-token":   {UserID: "bob", Expiration: far},
	}
	cfgText := fmt.Sprintf(`{"toolboxes": {"dev": {"description": "Remote tools", "mcpServers": {
		"linear": {"type": "http", "url": %q, "oauth": {"scopes": "tools"}}}}}}`, srv.URL)
	e := serveHTTPFor(t, cfgText, HTTPOptions{Auth: users})

	pages := make(chan string, 4)
	hostOpts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			pages <- req.Params.URL
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}
	// login opens the toolbox as tok's user, takes the page the host is
	// shown, follows it as the user's browser would, and returns the
	// session once the open has ended.
	login := func(tok string) *mcp.ClientSession {
		cs := connect(t, e.url, "2025-11-25", hostOpts, tokenClient(tok))
		opened := make(chan string, 1)
		go func() {
			text, _ := callTool(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev"})
			opened <- text
		}()
		var page string
		select {
		case page = <-pages:
		case text := <-opened:
			t.Fatalf("%s's open ended without a login page: %s", tok, text)
		case <-time.After(time.Minute):
			t.Fatalf("%s's host was not shown a login page", tok)
		}
		if !strings.HasPrefix(page, srv.Issuer+"/authorize?") {
			t.Fatalf("%s's login page: %q", tok, page)
		}
		resp, err := http.Get(page)
		if err != nil {
			t.Fatalf("%s's browser step: %v", tok, err)
		}
		resp.Body.Close()
		select {
		case text := <-opened:
			if !strings.Contains(text, `"whoami"`) {
				t.Errorf("%s's open after the login: %s", tok, text)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s's open did not end after the login", tok)
		}
		return cs
	}
	alice := login("alice-token")
	if got, isErr := callTool(t, alice, "use_tool", useArgs("dev", "linear", "whoami", nil)); isErr || got != "you are logged in" {
		t.Errorf("alice's call: %s (error %v)", got, isErr)
	}
	if n := srv.Logins.Load(); n != 1 {
		t.Fatalf("%d logins after alice's; want 1", n)
	}
	// Bob is not logged in by Alice's login: he is shown a page of his own.
	bob := login("bob-token")
	if got, isErr := callTool(t, bob, "use_tool", useArgs("dev", "linear", "whoami", nil)); isErr || got != "you are logged in" {
		t.Errorf("bob's call: %s (error %v)", got, isErr)
	}
	if n := srv.Logins.Load(); n != 2 {
		t.Errorf("%d logins; want 2, one per user", n)
	}
	log := slog.New(slog.DiscardHandler)
	da, db := userOAuthStore("alice", log).Dir, userOAuthStore("bob", log).Dir
	for who, dir := range map[string]string{"alice": da, "bob": db} {
		if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) == 0 {
			t.Errorf("%s's token folder %s holds no token", who, dir)
		}
	}
	if da == db {
		t.Errorf("alice and bob share the token folder %s", da)
	}
}

// TestHTTPStreamsProgressAndListChanges: a call's progress reaches the
// host on the call's stream at both protocols, and a 2025 session hears
// of a configuration edit that changes the toolboxes (tools/list_changed
// on its event stream).
func TestHTTPStreamsProgressAndListChanges(t *testing.T) {
	e := serveHTTPFor(t, oneToolbox, HTTPOptions{})
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		var mu sync.Mutex
		var got []string
		cs := connect(t, e.url, protocol, &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				got = append(got, req.Params.Message)
				mu.Unlock()
			},
		}, nil)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "use_tool", Arguments: useArgs("dev", "a", "progress", map[string]any{"steps": 3}),
			Meta: mcp.Meta{"progressToken": "tok-" + protocol}})
		if err != nil || res.IsError {
			t.Fatalf("%s: progress call: %v %v", protocol, err, res)
		}
		fakeserver.Eventually(t, "the progress notifications", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got) == 3
		})
		mu.Lock()
		if strings.Join(got, ",") != "step 1,step 2,step 3" {
			t.Errorf("%s: progress %q", protocol, got)
		}
		mu.Unlock()
	}

	changed := make(chan struct{}, 4)
	cs := connect(t, e.url, "2025-11-25", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}, nil)
	cfg := filepath.Join(filepath.Dir(e.state), "config.json")
	old, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(old), `{"toolboxes": {`, `{"toolboxes": {"notes": {"description": "Notes", "mcpServers": {"n": {"command": "no-such-command"}}}, `, 1)
	if err := os.WriteFile(cfg, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(time.Minute):
		t.Fatal("the 2025 session was not told the tool list changed")
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Tools)
	if !strings.Contains(string(b), `"notes"`) {
		t.Errorf("after the edit, open_toolbox does not offer notes: %s", b)
	}
}

// TestHTTPServesTLS: with "tls", the workbench serves HTTPS with the
// given certificate, and a host that trusts it calls tools.
func TestHTTPServesTLS(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cfgText := strings.Replace(oneToolbox, `{"toolboxes"`, fmt.Sprintf(`{"http": {"tls": {"certFile": %q, "keyFile": %q}}, "toolboxes"`, certFile, keyFile), 1)
	e := serveHTTPFor(t, cfgText, HTTPOptions{})
	if !strings.HasPrefix(e.url, "http://") {
		t.Fatalf("url %s", e.url)
	}
	url := "https://" + strings.TrimPrefix(e.url, "http://")
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	cs := connect(t, url, "2025-11-25", nil, hc)
	if got, isErr := callTool(t, cs, "use_tool", useArgs("dev", "a", "echo", map[string]any{"message": "over tls"})); isErr || !strings.Contains(got, "over tls") {
		t.Errorf("a call over HTTPS: %s", got)
	}
	// Plain HTTP to the TLS port is refused.
	if resp, err := http.Post(e.url, "application/json", strings.NewReader(initBody)); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP to the HTTPS port answered 200")
		}
	}
}

// TestHTTPBadCertificate: a certificate that cannot be loaded stops the
// workbench before it listens, naming the files.
func TestHTTPBadCertificate(t *testing.T) {
	dir := t.TempDir()
	cfg := &config.Config{HTTP: config.Serving{CertFile: filepath.Join(dir, "missing.pem"), KeyFile: filepath.Join(dir, "key.pem")}}
	err := ServeHTTP(context.Background(), cfg, HTTPOptions{Options: Options{Logger: slog.New(slog.DiscardHandler)}, Addr: "127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "http.tls") || !strings.Contains(err.Error(), "missing.pem") {
		t.Errorf("a missing certificate: %v", err)
	}
}

// TestHTTPRequestTimeout: a call that outlasts requestTimeoutMs is given
// up, at both protocol generations (a 2025 session's call is served on the
// session's context, which the HTTP request's end does not reach): the
// host gets a tool error naming the bound, the server's call is
// cancelled, and the workbench goes on.
func TestHTTPRequestTimeout(t *testing.T) {
	e := serveHTTPFor(t, strings.Replace(oneToolbox, `{"toolboxes"`, `{"http": {"limits": {"requestTimeoutMs": 1000}}, "toolboxes"`, 1), HTTPOptions{})
	for _, protocol := range []string{"2026-07-28", "2025-11-25"} {
		cs := connect(t, e.url, protocol, nil, nil)
		// The server started first (open_toolbox is not a use_tool call):
		// the bound is for the call alone.
		if got, isErr := callTool(t, cs, "open_toolbox", map[string]any{"toolbox_name": "dev"}); isErr {
			t.Fatalf("%s: open_toolbox: %s", protocol, got)
		}
		// The sleep's gate is never opened: only the timeout ends the call.
		got, isErr := callTool(t, cs, "use_tool", useArgs("dev", "a", "sleep", map[string]any{"ms": 1}))
		if !isErr || !strings.Contains(got, "requestTimeoutMs") {
			t.Errorf("%s: the call past the bound: %q (error %v); want a tool error naming requestTimeoutMs", protocol, got, isErr)
		}
		// Each sleep that reached its server is cancelled there (on a busy
		// machine the bound may pass before the call is sent).
		fakeserver.Eventually(t, protocol+": the server's call to be cancelled", func() bool {
			return len(fakeserver.ReadLines(e.state, fakeserver.CancelsFile)) == strings.Count(strings.Join(fakeserver.ReadLines(e.state, fakeserver.CallsFile), ","), "sleep")
		})
		if got, isErr := callTool(t, cs, "use_tool", useArgs("dev", "a", "echo", map[string]any{"message": "after"})); isErr || !strings.Contains(got, "after") {
			t.Errorf("%s: a call after the timeout: %s", protocol, got)
		}
	}
}

// TestHTTPMetricsBounded: /metrics answers without credentials, so what
// it shows must not be a client's to grow or a restricted toolbox's to
// tell. Requests with made-up methods are counted under "other" (the
// series stay few and /metrics small, however many come), and a call of
// a toolbox with "access" is counted without its toolbox's or server's
// name.
func TestHTTPMetricsBounded(t *testing.T) {
	far := time.Now().Add(time.Hour)
	users := bearerAuth{"alice-token": {UserID: "alice", Expiration: far, Extra: map[string]any{"groups": []any{"sre"}}}}
	cfgText := `{"toolboxes": {
		"dev": {"description": "Development tools", "mcpServers": {"a": FAKE_A}},
		"secretops": {"description": "Operations tools", "access": {"groups": ["sre"]}, "mcpServers": {"hidden": FAKE_A}}}}`
	e := serveHTTPFor(t, cfgText, HTTPOptions{Auth: users})
	alice := connect(t, e.url, "2026-07-28", nil, tokenClient("alice-token"))
	if got, isErr := callTool(t, alice, "use_tool", useArgs("secretops", "hidden", "echo", map[string]any{"message": "x"})); isErr {
		t.Fatalf("alice's call of secretops: %s", got)
	}
	if got, isErr := callTool(t, alice, "use_tool", useArgs("dev", "a", "echo", map[string]any{"message": "x"})); isErr {
		t.Fatalf("alice's call of dev: %s", got)
	}
	before := len(get(t, e.base+"/metrics", nil))
	for i := range 300 {
		for _, path := range []string{"/healthz", "/mcp", "/nothing"} {
			do(t, fmt.Sprintf("MADEUP%d", i), e.base+path, nil, "")
		}
	}
	m := get(t, e.base+"/metrics", nil)
	if strings.Contains(m, "MADEUP") {
		t.Errorf("a made-up method is a label: %s", grepLines(m, "MADEUP")[:200])
	}
	if n := len(strings.Split(grepLines(m, "mcp_workbench_http_requests_total{"), "\n")); n > 20 {
		t.Errorf("%d series of requests_total after 900 requests with made-up methods; want a handful", n)
	}
	if !strings.Contains(m, `mcp_workbench_http_requests_total{code="401",method="other"} 300`) {
		t.Errorf("the made-up methods to /mcp are not counted as other:\n%s", grepLines(m, "requests_total"))
	}
	// Growth by the new series of "other" (a counter, a histogram), not
	// by 900 requests' worth.
	if len(m) > before+8<<10 {
		t.Errorf("/metrics grew from %d to %d bytes", before, len(m))
	}
	if strings.Contains(m, "secretops") || strings.Contains(m, "hidden") {
		t.Errorf("/metrics names the restricted toolbox or its server:\n%s", grepLines(m, "tool_call"))
	}
	for _, want := range []string{`mcp_workbench_tool_calls_total{outcome="ok",server="(restricted)",toolbox="(restricted)"} 1`, `mcp_workbench_tool_calls_total{outcome="ok",server="a",toolbox="dev"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, grepLines(m, "tool_calls_total"))
		}
	}
}

// TestHTTPConnectionFlood: 300 connections that hold their descriptors —
// half idle after a request, half sending a body a byte at a time — do
// not keep a real user out: the workbench keeps at most maxConnections
// open, closes the idle and the slow ones, and the user's initialize gets
// in. A session's event stream and a call that wait longer than every one
// of those bounds are not cut.
func TestHTTPConnectionFlood(t *testing.T) {
	e := serveHTTPFor(t, strings.Replace(oneToolbox, `{"toolboxes"`, `{"http": {"limits": {"maxConnections": 40, "readTimeoutMs": 500, "writeTimeoutMs": 500, "idleConnectionMs": 500}}, "toolboxes"`, 1), HTTPOptions{})
	addr := strings.TrimPrefix(e.base, "http://")

	// A 2025 session with its event stream open, and a call held by its
	// server, begun before the flood: both outlast the bounds.
	changed := make(chan struct{}, 4)
	cs := connect(t, e.url, "2025-11-25", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}, nil)
	held := make(chan string, 1)
	go func() {
		got, _ := callTool(t, cs, "use_tool", useArgs("dev", "a", "sleep", map[string]any{"ms": 1}))
		held <- got
	}()
	fakeserver.Eventually(t, "the held call to reach the server", func() bool {
		return len(fakeserver.ReadLines(e.state, fakeserver.CallsFile)) > 0
	})

	const flood = 300
	conns := make([]net.Conn, 0, flood)
	var wg sync.WaitGroup
	for i := range flood {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 0 {
			_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
			continue
		}
		_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{")
		wg.Go(func() {
			for {
				time.Sleep(50 * time.Millisecond)
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		})
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
		wg.Wait()
	})

	// A real user, behind the flood in the accept queue.
	client := &http.Client{Timeout: 3 * time.Minute}
	req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(initBody))
	req.Header = mcpHeaders()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("a real user's initialize during the flood: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("a real user's initialize during the flood: %d", resp.StatusCode)
	}
	// Every flood connection is closed by the workbench, idle or slow.
	closed := make(chan int, flood)
	for i, c := range conns {
		go func() {
			_ = c.SetReadDeadline(time.Now().Add(3 * time.Minute))
			_, err := io.Copy(io.Discard, c)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				closed <- -1 - i
				return
			}
			closed <- i
		}()
	}
	for range flood {
		if i := <-closed; i < 0 {
			t.Fatalf("flood connection %d still open after 3 minutes", -1-i)
		}
	}
	m := get(t, e.base+"/metrics", nil)
	if !strings.Contains(m, "mcp_workbench_http_connections ") {
		t.Errorf("no connections gauge: %s", grepLines(m, "connections"))
	}

	// The stream and the held call lived through it all.
	cfg := filepath.Join(filepath.Dir(e.state), "config.json")
	old, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(old), `"toolboxes": {`, `"toolboxes": {"notes": {"description": "Notes", "mcpServers": {"n": {"command": "no-such-command"}}}, `, 1)
	if err := os.WriteFile(cfg, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(time.Minute):
		t.Fatal("the session's event stream did not carry tools/list_changed after the flood")
	}
	if err := os.WriteFile(filepath.Join(e.state, "gate"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-held:
		if !strings.Contains(got, "slept") {
			t.Errorf("the held call: %q; want its result", got)
		}
	case <-time.After(time.Minute):
		t.Fatal("the held call did not end after its server answered")
	}
}

// switchingClient sends whichever token *tok holds now: a host whose
// token was renewed.
func switchingClient(tok *atomic.Pointer[string]) *http.Client {
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+*tok.Load())
		return http.DefaultTransport.RoundTrip(r)
	})}
}

// TestHTTPSessionFollowsItsTokensGroups: a session opened with a token of
// group sre uses the sre toolbox; once the host's token is renewed
// without the group, the same session is refused it at the next request,
// and the toolbox is gone from its tools/list. Another session of the
// same user, still with the group, keeps it.
func TestHTTPSessionFollowsItsTokensGroups(t *testing.T) {
	far := time.Now().Add(time.Hour)
	users := bearerAuth{
		"bob-sre":  {UserID: "bob", Expiration: far, Extra: map[string]any{"groups": []any{"sre"}}},
		"bob-none": {UserID: "bob", Expiration: far, Extra: map[string]any{"groups": []any{}}},
	}
	cfgText := `{"toolboxes": {
		"dev": {"description": "Development tools", "mcpServers": {"a": FAKE_A}},
		"ops": {"description": "Operations tools", "access": {"groups": ["sre"]}, "mcpServers": {"a": FAKE_A}}}}`
	e := serveHTTPFor(t, cfgText, HTTPOptions{Auth: users})
	var tok atomic.Pointer[string]
	sre, none := "bob-sre", "bob-none"
	tok.Store(&sre)
	cs := connect(t, e.url, "2025-11-25", nil, switchingClient(&tok))
	other := connect(t, e.url, "2025-11-25", nil, tokenClient("bob-sre"))
	if got, isErr := callTool(t, cs, "use_tool", useArgs("ops", "a", "echo", map[string]any{"message": "with sre"})); isErr || !strings.Contains(got, "with sre") {
		t.Fatalf("a call of ops with the group: %s", got)
	}
	tok.Store(&none)
	if got, isErr := callTool(t, cs, "use_tool", useArgs("ops", "a", "echo", map[string]any{"message": "without"})); !isErr || strings.Contains(got, "without") {
		t.Errorf("a call of ops after the token lost the group: %s (error %v); want a refusal", got, isErr)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res.Tools); strings.Contains(string(b), `"ops"`) {
		t.Errorf("tools/list after the token lost the group still offers ops: %s", b)
	}
	if got, isErr := callTool(t, cs, "use_tool", useArgs("dev", "a", "echo", map[string]any{"message": "dev still"})); isErr || !strings.Contains(got, "dev still") {
		t.Errorf("a call of dev after the renewal: %s", got)
	}
	if got, isErr := callTool(t, other, "use_tool", useArgs("ops", "a", "echo", map[string]any{"message": "other session"})); isErr || !strings.Contains(got, "other session") {
		t.Errorf("the session whose token keeps the group: %s", got)
	}
	tok.Store(&sre)
	if got, isErr := callTool(t, cs, "use_tool", useArgs("ops", "a", "echo", map[string]any{"message": "back"})); isErr || !strings.Contains(got, "back") {
		t.Errorf("a call of ops once the group is back: %s", got)
	}
}

// TestHTTPSessionsPerUser: one user cannot take every session: past
// maxSessionsPerUser their least recently used idle session makes room
// for their new one (its id then gets 404), and another user's
// initialize gets in.
func TestHTTPSessionsPerUser(t *testing.T) {
	far := time.Now().Add(time.Hour)
	users := bearerAuth{"alice-token": {UserID: "alice", Expiration: far}, "bob-token": {UserID: "bob", Expiration: far}}
	e := serveHTTPFor(t, strings.Replace(oneToolbox, `{"toolboxes"`, `{"http": {"limits": {"maxSessions": 10, "maxSessionsPerUser": 3}}, "toolboxes"`, 1), HTTPOptions{Auth: users})
	var sids []string
	for i := range 10 {
		code, body, hdr := do(t, http.MethodPost, e.url, mcpHeaders("Authorization", "Bearer alice-token"), initBody)
		if code != http.StatusOK {
			t.Fatalf("alice's initialize %d: %d %s", i, code, body)
		}
		sids = append(sids, hdr.Get("Mcp-Session-Id"))
	}
	if m := get(t, e.base+"/metrics", nil); !strings.Contains(m, "mcp_workbench_sessions 3") {
		t.Errorf("alice opened 10 sessions; want 3 open: %s", grepLines(m, "mcp_workbench_sessions"))
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if code, _, _ := do(t, http.MethodPost, e.url, mcpHeaders("Mcp-Session-Id", sids[0], "MCP-Protocol-Version", "2025-11-25", "Authorization", "Bearer alice-token"), ping); code != http.StatusNotFound {
		t.Errorf("alice's first session: %d; want 404, ended to make room", code)
	}
	if code, body, _ := do(t, http.MethodPost, e.url, mcpHeaders("Mcp-Session-Id", sids[9], "MCP-Protocol-Version", "2025-11-25", "Authorization", "Bearer alice-token"), ping); code != http.StatusOK {
		t.Errorf("alice's latest session: %d %s", code, body)
	}
	cs := connect(t, e.url, "2025-11-25", nil, tokenClient("bob-token"))
	if got, isErr := callTool(t, cs, "use_tool", useArgs("dev", "a", "echo", map[string]any{"message": "bob's"})); isErr || !strings.Contains(got, "bob's") {
		t.Errorf("bob's call: %s", got)
	}
}

// TestHTTPHeldCallOutlivesIdleUser: a 2026-07-28 call held for its
// user's answer waits its 10 minutes even when the user sends nothing for
// longer than sessionIdleMs: the user is not let go while a call of
// theirs waits. (Another user, idle and with nothing waiting, is let go:
// the sweep ran.)
func TestHTTPHeldCallOutlivesIdleUser(t *testing.T) {
	far := time.Now().Add(time.Hour)
	users := bearerAuth{"alice-token": {UserID: "alice", Expiration: far}, "bob-token": {UserID: "bob", Expiration: far}}
	e := serveHTTPFor(t, strings.Replace(oneToolbox, `{"toolboxes"`, `{"http": {"limits": {"sessionIdleMs": 1000}}, "toolboxes"`, 1), HTTPOptions{Auth: users})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`
	args := `"arguments":{"tool":{"toolbox":"dev","server":"a","tool":"ask"},"arguments":{"what":"elicit"}}`
	raw := func(tok, body string) string {
		_, out, _ := do(t, http.MethodPost, e.url, mcpHeaders("MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "use_tool", "Authorization", "Bearer "+tok), body)
		return out
	}
	out := raw("alice-token", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"use_tool",`+meta+`,`+args+`}}`)
	i := strings.Index(out, `"requestState":"`)
	if i < 0 {
		t.Fatalf("the first call: %s; want input_required with a requestState", out)
	}
	state := out[i+len(`"requestState":"`):]
	state = state[:strings.IndexByte(state, '"')]
	key := out[strings.Index(out, `"inputRequests":{"`)+len(`"inputRequests":{"`):]
	key = key[:strings.IndexByte(key, '"')]
	// Bob comes after Alice's last request: once he is let go, Alice was
	// idle as long.
	echo := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"use_tool",` + meta + `,"arguments":{"tool":{"toolbox":"dev","server":"a","tool":"echo"},"arguments":{"message":"bob"}}}}`
	if got := raw("bob-token", echo); !strings.Contains(got, "bob") {
		t.Fatalf("bob's call: %s", got)
	}
	fakeserver.Eventually(t, "the idle user with nothing waiting to be let go", func() bool {
		return strings.Contains(get(t, e.base+"/metrics", nil), "mcp_workbench_users 1")
	})
	retry := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"use_tool",%s,%s,"requestState":%q,"inputResponses":{%q:{"action":"accept","content":{"name":"Ada"}}}}}`, meta, args, state, key)
	if got := raw("alice-token", retry); !strings.Contains(got, "Ada") {
		t.Errorf("the answer after the user idled: %s; want the held call's result", got)
	}
}
