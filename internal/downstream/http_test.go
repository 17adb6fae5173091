package downstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpModes are the everything server's two HTTP modes: its endpoint
// path and the workbench transport that speaks it.
var httpModes = []struct {
	mode, path string
	transport  config.Transport
}{
	{"streamableHttp", "/mcp", config.HTTP},
	{"sse", "/sse", config.SSE},
}

func remote(name string, t config.Transport, url string) *config.Server {
	return &config.Server{
		Name: name, Transport: t, URL: url,
		ConnectionTimeout: 20 * time.Second, RequestTimeout: 20 * time.Second,
	}
}

// TestEverythingServer drives the official everything server in both of
// its HTTP modes: tools listed, a call made, a tool error kept.
func TestEverythingServer(t *testing.T) {
	for _, tc := range httpModes {
		t.Run(tc.mode, func(t *testing.T) {
			h := newHarness(t)
			ev := fakeserver.StartEverything(t, tc.mode)
			s := h.server(remote("everything", tc.transport, ev.URL(tc.path)))
			ts, err := s.Connect(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			echo := ts.Lookup("echo")
			if echo == nil {
				t.Fatalf("no echo tool among %v", ts.offeredNames())
			}
			if !strings.Contains(string(echo.JSON), `"source_server":"everything"`) {
				t.Errorf("echo = %s", echo.JSON)
			}
			res, err := s.Call(ctxT(t), "echo", json.RawMessage(`{"message":"over `+tc.mode+`"}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(t, res); got != "Echo: over "+tc.mode {
				t.Errorf("echo = %q", got)
			}
			if _, err := s.Call(ctxT(t), "echo", json.RawMessage(`{"message":7}`), nil); err == nil || !strings.Contains(err.Error(), "/message: got number, want string") {
				t.Errorf("invalid arguments: %v", err)
			}
		})
	}
}

// TestRemoteServerRestartIsRecovered stops the everything server under a
// live session: the death is noticed, and the next call connects again to
// the server started anew.
func TestRemoteServerRestartIsRecovered(t *testing.T) {
	for _, tc := range httpModes {
		t.Run(tc.mode, func(t *testing.T) {
			h := newHarness(t)
			ev := fakeserver.StartEverything(t, tc.mode)
			cfg := remote("everything", tc.transport, ev.URL(tc.path))
			cfg.MaxRetries = 3
			s := h.server(cfg)
			if _, err := s.Call(ctxT(t), "echo", json.RawMessage(`{"message":"one"}`), nil); err != nil {
				t.Fatal(err)
			}
			ev.Stop()
			// Whether the loss shows before the next call depends on the
			// transport (SSE streams break at once); the next call must
			// either way fail cleanly or succeed on the restarted server.
			ev.Restart()
			var lastErr error
			for range 3 {
				res, err := s.Call(ctxT(t), "echo", json.RawMessage(`{"message":"two"}`), nil)
				if err == nil {
					if got := resultText(t, res); got != "Echo: two" {
						t.Fatalf("echo = %q", got)
					}
					return
				}
				lastErr = err
			}
			t.Fatalf("the restarted server was never reached: %v", lastErr)
		})
	}
}

// guarded serves a Go MCP server over streamable HTTP (or SSE) that
// refuses every request without the right Authorization header.
func guarded(t *testing.T, sse bool) (url string, refused *atomic.Int32) {
	server := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you may pass"}}}, nil
		})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	if sse {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil)
	}
	refused = &atomic.Int32{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret-t0ken" || r.Header.Get("X-Team") != "tools" {
			refused.Add(1)
			http.Error(w, "missing or wrong credentials", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	ts.Listener.Close()
	ts.Listener = l
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL, refused
}

func TestHeadersReachTheServerAndAreNeverLogged(t *testing.T) {
	for _, sse := range []bool{false, true} {
		name := map[bool]string{false: "http", true: "sse"}[sse]
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			url, refused := guarded(t, sse)
			transport := config.HTTP
			if sse {
				transport = config.SSE
			}
			with := remote("guarded", transport, url)
			with.Headers = map[string]string{"Authorization": "Bearer s3cret-t0ken", "X-Team": "tools"}
			res, err := h.server(with).Call(ctxT(t), "whoami", nil, nil)
			if err != nil {
				t.Fatalf("with headers: %v", err)
			}
			if got := resultText(t, res); got != "you may pass" {
				t.Errorf("whoami = %q", got)
			}
			if n := refused.Load(); n != 0 {
				t.Errorf("%d requests went out without the headers", n)
			}

			without := remote("guarded", transport, url)
			without.MaxRetries = 1
			_, err = h.server(without).Connect(ctxT(t))
			if err == nil || !strings.Contains(err.Error(), "2 attempts") || !strings.Contains(err.Error(), "Unauthorized") {
				t.Errorf("without headers: err = %v, want a refusal after 2 attempts naming the status", err)
			}
			for _, out := range []string{h.logs.String(), h.stderr.String()} {
				if strings.Contains(out, "s3cret-t0ken") {
					t.Errorf("a header value was logged:\n%s", out)
				}
			}
		})
	}
}

func TestRemoteFailuresAreBounded(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)

	// Nothing listens: refused at once, retried, counted.
	closed := remote("down", config.HTTP, "http://127.0.0.1:"+strconv.Itoa(fakeserver.FreePort(t))+"/mcp")
	closed.MaxRetries = 2
	_, err := h.server(closed).Connect(ctx)
	if err == nil || !strings.Contains(err.Error(), "3 attempts") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("closed port: %v", err)
	}

	// A server that accepts and never answers: bounded by connectionTimeoutMs.
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server notices the client leaving
		<-r.Context().Done()
	}))
	defer hang.Close()
	for _, tr := range []config.Transport{config.HTTP, config.SSE} {
		cfg := remote("hang", tr, hang.URL)
		cfg.ConnectionTimeout = 300 * time.Millisecond
		_, err := h.server(cfg).Connect(ctx)
		if err == nil || !strings.Contains(err.Error(), "no answer within 300ms (connectionTimeoutMs)") {
			t.Errorf("%s server that never answers: %v", tr, err)
		}
	}
}

// TestURLAloneFallsBackToSSE gives only a url, as Cursor configurations
// do, for a server that speaks the older SSE transport: the workbench
// tries streamable HTTP, is refused, and uses SSE from then on.
func TestURLAloneFallsBackToSSE(t *testing.T) {
	h := newHarness(t)
	ev := fakeserver.StartEverything(t, "sse")
	cfg := remote("legacy", config.HTTP, ev.URL("/sse"))
	cfg.TransportInferred = true
	s := h.server(cfg)
	res, err := s.Call(ctxT(t), "echo", json.RawMessage(`{"message":"via sse"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "Echo: via sse" {
		t.Errorf("echo = %q", got)
	}
	if !strings.Contains(h.logs.String(), "trying the SSE transport") {
		t.Error("the fallback was not logged")
	}
	// Named explicitly, the transport is never second-guessed.
	explicit := remote("strict", config.HTTP, ev.URL("/sse"))
	if _, err := h.server(explicit).Connect(ctxT(t)); err == nil || !strings.Contains(err.Error(), "the server answered HTTP 404 Not Found: check that url is the server's MCP endpoint") {
		t.Errorf("explicit http against an SSE server: %v", err)
	}
}

// TestHTTPStatusesAreNamed: a url that is not an MCP endpoint fails with
// the status it answered and what to check, not the status's bare text.
func TestHTTPStatusesAreNamed(t *testing.T) {
	h := newHarness(t)
	for _, code := range []int{http.StatusNotFound, http.StatusNotImplemented, http.StatusInternalServerError} {
		web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "not here", code)
		}))
		for _, c := range []struct {
			tr       config.Transport
			inferred bool
		}{{config.HTTP, false}, {config.HTTP, true}, {config.SSE, false}} {
			cfg := remote("web", c.tr, web.URL+"/mcp")
			cfg.TransportInferred = c.inferred
			_, err := h.server(cfg).Connect(ctxT(t))
			want := fmt.Sprintf("the server answered HTTP %d %s: check that url is the server's MCP endpoint", code, http.StatusText(code))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s (inferred %v) answering %d: %v", c.tr, c.inferred, code, err)
			}
		}
		web.Close()
	}
}

// TestURLQueryIsNeverShown connects to a url whose query carries a key, as
// many hosted servers take one: no message or log may repeat it.
func TestURLQueryIsNeverShown(t *testing.T) {
	h := newHarness(t)
	cfg := remote("hosted", config.HTTP, "http://127.0.0.1:"+strconv.Itoa(fakeserver.FreePort(t))+"/mcp?api_key=sk-live-0123456789")
	_, err := h.server(cfg).Connect(ctxT(t))
	if err == nil {
		t.Fatal("connected to a closed port")
	}
	for what, text := range map[string]string{"error": err.Error(), "logs": h.logs.String()} {
		if strings.Contains(text, "sk-live-0123456789") {
			t.Errorf("the key appears in the %s: %s", what, text)
		}
	}
	if !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("the error no longer says where: %v", err)
	}
}

// TestRemoteSessionIdleStop: a remote server's session idle for
// idleTimeoutMs is closed, as a stdio server's process is stopped, and the
// next call opens a new one.
func TestRemoteSessionIdleStop(t *testing.T) {
	for _, tc := range httpModes {
		t.Run(tc.mode, func(t *testing.T) {
			h := newHarness(t)
			ev := fakeserver.StartEverything(t, tc.mode)
			cfg := remote("everything", tc.transport, ev.URL(tc.path))
			cfg.IdleTimeout = 200 * time.Millisecond
			s := h.server(cfg)
			if _, err := s.Call(ctxT(t), "echo", json.RawMessage(`{"message":"one"}`), nil); err != nil {
				t.Fatal(err)
			}
			fakeserver.Eventually(t, "the idle session to close", func() bool { return s.State().Status != StatusConnected })
			if st := s.State(); st.Status == StatusError {
				t.Errorf("an idle stop left the server in error: %v", st.Err)
			}
			res, err := s.Call(ctxT(t), "echo", json.RawMessage(`{"message":"two"}`), nil)
			if err != nil {
				t.Fatalf("the call after the idle stop: %v", err)
			}
			if got := resultText(t, res); got != "Echo: two" {
				t.Errorf("echo = %q", got)
			}
			if !strings.Contains(h.logs.String(), "idle for idleTimeoutMs") {
				t.Errorf("the idle stop is not logged:\n%s", h.logs)
			}
		})
	}
}

// A remote server whose answer nests JSON millions of levels deep, as
// JSON or as an event stream, fails that call and nothing else: the SDK
// decodes remote bodies with encoding/json, whose nesting limit refuses
// it (a decoder that recursed would overflow the stack and end the
// process, as segmentio's did on stdio). The server's next call works.
func TestRemoteDeepAnswerFailsOnlyItsCall(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "event-stream"}[stream], func(t *testing.T) { remoteDeepAnswer(t, stream) })
	}
}

func remoteDeepAnswer(t *testing.T, stream bool) {
	server := mcp.NewServer(&mcp.Implementation{Name: "deep", Version: "1"}, nil)
	for _, name := range []string{"deep", "echo"} {
		server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine"}}}, nil
			})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The call of "deep" is answered with 5,000,000 nested arrays in
	// structuredContent, written as bytes (no encoder would write them).
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct{ Name string }
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && msg.Params.Name == "deep" {
			answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[],"structuredContent":%s%s}}`,
				msg.ID, strings.Repeat("[", 5_000_000), strings.Repeat("]", 5_000_000))
			if stream {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", answer)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, answer)
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		h.ServeHTTP(w, r)
	}))
	ts.Listener.Close()
	ts.Listener = l
	ts.Start()
	t.Cleanup(ts.Close)

	hs := newHarness(t)
	s := hs.server(remote("deep", config.HTTP, ts.URL))
	_, err = s.Call(ctxT(t), "deep", json.RawMessage(`{}`), nil)
	if err == nil {
		t.Fatal("the deep answer did not fail its call")
	}
	res, err := s.Call(ctxT(t), "echo", json.RawMessage(`{}`), nil)
	if err != nil || !strings.Contains(string(res), "fine") {
		t.Errorf("a call after the deep answer: %s %v", res, err)
	}
}

// TestRemoteToolListIsBoundedByBytes: a streamable HTTP server's tool list
// is bounded by maxToolListBytes too, as it is read (it was bounded by
// count alone), in both of its answer forms; the start is not retried.
func TestRemoteToolListIsBoundedByBytes(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "wordy", Version: "1"}, nil)
	for i := range 50 {
		server.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: strings.Repeat("d", 10<<10), InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("jsonResponse=%v", jsonResponse), func(t *testing.T) {
			var lists atomic.Int32
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if strings.Contains(string(body), `"tools/list"`) {
					lists.Add(1)
				}
				r.Body = io.NopCloser(strings.NewReader(string(body)))
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(ts.Close)
			hs := newHarness(t)
			cfg := remote("wordy", config.HTTP, ts.URL)
			cfg.MaxTools, cfg.MaxToolListBytes, cfg.MaxRetries = config.DefaultMaxTools, 100<<10, 2
			_, err := hs.server(cfg).Connect(ctxT(t))
			if err == nil || !strings.Contains(err.Error(), "could not start (1 attempt): listing tools: the server's tool list is larger than 102400 bytes (maxToolListBytes)") {
				t.Errorf("err = %v", err)
			}
			if n := lists.Load(); n != 1 {
				t.Errorf("%d listings, want 1", n)
			}
			cfg = remote("wordy", config.HTTP, ts.URL)
			cfg.MaxTools, cfg.MaxToolListBytes = config.DefaultMaxTools, config.DefaultMaxToolListBytes
			if ts, err := hs.server(cfg).Connect(ctxT(t)); err != nil || len(ts.Tools) != 50 {
				t.Errorf("within the bound: %v", err)
			}
		})
	}
}
