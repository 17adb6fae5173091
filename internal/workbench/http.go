package workbench

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Serving over HTTP. The SDK's Streamable HTTP handler owns the
// transport; the workbench gives it an [mcp.Server] whose use_tool is
// served through the SDK (handleUse), not as bytes off a line as on stdio:
// over HTTP the request's own framing, sessions and streams are the SDK's.
// What a call does is the same: startUse, the held calls of 2026-07-28
// hosts (roundtrip.go), and servers asking a 2025 host through the session.

// HTTPHost is one host of the workbench over HTTP: a 2025 host's session,
// or the 2026-07-28 requests of one user, which come without a session.
type HTTPHost struct {
	hc     *hostConn
	server *mcp.Server
	// perClient says the host is a user's 2026-07-28 requests: each
	// client among them is a host session of its own (grantScope).
	perClient bool
	// OnCall, if set, is told each use_tool call's end: its toolbox and
	// server (as the call named them), its outcome (ok, tool_error,
	// input_required, error, cancelled) and how long it took.
	OnCall func(toolbox, server, outcome string, took time.Duration)
	// CallTimeout, if set, bounds each use_tool call of the host (the
	// "http.limits.requestTimeoutMs"): past it the call is cancelled and
	// the host gets a tool error saying so. A 2025 host's call is served
	// on the session's context, which the HTTP request's end does not
	// reach; this bounds both generations alike.
	CallTimeout time.Duration
}

// errCallTimeout is the cause of a call's end at CallTimeout.
var errCallTimeout = errors.New("the call outlasted requestTimeoutMs")

// Waiting is how many of the host's calls wait for its answers (2026-07-28
// held calls, up to their 10 minutes).
func (h *HTTPHost) Waiting() int {
	h.hc.heldMu.Lock()
	defer h.hc.heldMu.Unlock()
	return len(h.hc.held)
}

// Server is the MCP server to serve the host's requests with.
func (h *HTTPHost) Server() *mcp.Server { return h.server }

// NewHTTPHost makes the workbench's host over HTTP. user names the caller
// whose requests come without a session (2026-07-28): the request states
// handed to it are bound to the user, so that any replica sharing the
// state key verifies them; "" makes a host of one session, bound to it.
// The host connected last is the one the servers ask outside a call.
func (w *Workbench) NewHTTPHost(user string) *HTTPHost {
	id := rand.Text()
	if user != "" {
		sum := sha256.Sum256([]byte("mcp-workbench user\x00" + user))
		id = "u" + base64.RawURLEncoding.EncodeToString(sum[:12])
	}
	hc := &hostConn{w: w, log: w.log, closed: make(chan struct{}), calls: map[string]*hostCall{}, id: id}
	h := &HTTPHost{hc: hc, perClient: user != ""}
	h.server = w.newMCPServer(func(_ context.Context, req *mcp.InitializedRequest) {
		hc.ss.Store(req.Session)
		hc.initialized.Store(true)
	}, h.handleUse)
	w.host.Store(hc)
	return h
}

// inputResponsesKey keys a use_tool retry's inputResponses, as the host
// wrote them, in its request's context.
type inputResponsesKey struct{}

// WithInputResponses returns ctx carrying the inputResponses of the
// use_tool retry it serves, as the host wrote them. The SDK decodes them
// into its own types, which drop what they leave empty or out (an
// accept's "content": {}, a sampling answer without "model"); given
// these, the workbench judges the answers as written, as over stdio.
func WithInputResponses(ctx context.Context, raw json.RawMessage) context.Context {
	return context.WithValue(ctx, inputResponsesKey{}, raw)
}

// handleUse serves a use_tool call of the SDK's session.
func (h *HTTPHost) handleUse(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c, p := h.hc, req.Params
	if h.CallTimeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, h.CallTimeout, errCallTimeout)
		defer stop()
	}
	var protocol string
	if v, ok := p.Meta[mcp.MetaKeyProtocolVersion].(string); ok {
		protocol = v
	}
	// A 2026-07-28 request's capabilities were noted on its way in
	// (noteRequestCapabilities).
	held := protocol >= newProtocol
	if !held && c.ss.Load() == nil && req.Session != nil && req.Session.InitializeParams() != nil {
		c.ss.Store(req.Session)
	}
	var progress downstream.ProgressFunc
	if tok := p.GetProgressToken(); tok != nil && req.Session != nil {
		ss := req.Session
		progress = func(pr downstream.Progress) {
			n := &mcp.ProgressNotificationParams{ProgressToken: tok}
			_ = json.Unmarshal(pr.Progress, &n.Progress)
			_ = json.Unmarshal(pr.Total, &n.Total)
			_ = json.Unmarshal(pr.Message, &n.Message)
			_ = ss.NotifyProgress(ctx, n)
		}
	}
	start := time.Now()
	outcome := "error"
	in := parseUse(p.Arguments) // once: the call and its metrics read it
	if h.OnCall != nil {
		defer func() { h.OnCall(in.ref.Toolbox, in.ref.Server, outcome, time.Since(start)) }()
	}
	var responses json.RawMessage
	if len(p.InputResponses) > 0 {
		if raw, ok := ctx.Value(inputResponsesKey{}).(json.RawMessage); ok {
			responses = raw
		} else {
			responses, _ = json.Marshal(p.InputResponses)
		}
	}
	var ask downstream.AskFunc
	if !held {
		// A server's question in the call goes out on the call's own
		// response stream: the SDK sends a request made with the
		// handler's context there (a host need not hold a stream open
		// for questions).
		ask = func(actx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			qctx, stop := context.WithCancel(ctx)
			defer stop()
			defer context.AfterFunc(actx, stop)()
			return c.w.Ask(qctx, method, params)
		}
	}
	done := make(chan json.RawMessage, 1)
	scope := ""
	if h.perClient {
		scope = grantScope(p.Meta)
	}
	cancel := c.startParsed(in, p.RequestState, responses, held, scope, progress, ask, func(res json.RawMessage) {
		select {
		case done <- res:
		default:
		}
	})
	var answer json.RawMessage
	select {
	case answer = <-done:
	case <-ctx.Done():
		cancel()
		if context.Cause(ctx) == errCallTimeout {
			return textResult(fmt.Sprintf("use_tool: no answer within %s (the workbench's \"http.limits.requestTimeoutMs\"); the call was cancelled", h.CallTimeout), true), nil
		}
		outcome = "cancelled"
		return nil, ctx.Err()
	}
	if e, ok := errorAnswer(answer); ok {
		var werr jsonrpc.Error
		if err := json.Unmarshal(e, &werr); err != nil {
			return nil, err
		}
		return nil, &werr
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(answer, &res); err != nil {
		return textResult(fmt.Sprintf("use_tool: the server's result is not a valid tool result: %s", frame.Explain(err)), true), nil
	}
	switch {
	case len(res.InputRequests) > 0:
		outcome = "input_required"
	case res.IsError:
		outcome = "tool_error"
	default:
		outcome = "ok"
	}
	return &res, nil
}
