package downstream

//lint:file-ignore SA1019 roots and sampling are deprecated from 2026-07-28 on, but hosts and servers of the 2025 protocols still use them, and the workbench relays what they use.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a server asks of the host. A server may send the client (the
// workbench) elicitation/create, sampling/createMessage and roots/list;
// the workbench passes each to the host session the server belongs to, and
// the host's answer back. A server is told the client capabilities its
// host declared, of those the workbench relays (elicitation with its
// modes, sampling with its sub-capabilities, roots), and no more: one
// without a host (check, call, a server shared by several sessions) is told
// none, and its requests are refused at once.
//
// During a call the request goes with the call: its [AskFunc], when the
// caller gave one (a host on the 2026-07-28 protocol answers through its
// retry of use_tool), else the host session's. Outside a call it goes to
// the host session ([Host.Ask]), which answers what it can. While the host
// is asked, the timeouts of the server's calls wait: a person may take
// longer to answer than requestTimeoutMs.

// Methods a server may ask of the host through the workbench.
const (
	MethodElicit        = "elicitation/create"
	MethodCreateMessage = "sampling/createMessage"
	MethodListRoots     = "roots/list"
)

// maxAsking bounds the requests of one server waiting for the host at
// once: a server that floods the host with them gets errors for the rest.
const maxAsking = 8

// AskFunc asks the host, for one call, what its server asked: method is one
// of the Method constants, params the server's params as JSON (an
// elicitation's message already names the toolbox and server). It returns
// the host's result as JSON.
type AskFunc func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

// Host is the host session a server belongs to.
type Host interface {
	// HostCapabilities returns the client capabilities of the host that
	// the workbench relays (see [Relayed]), or nil when the host is not
	// known yet.
	HostCapabilities() *mcp.ClientCapabilities
	// Ask asks the host outside any call: what a call without an AskFunc
	// asks too.
	Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// Relayed returns the part of a host's client capabilities that the
// workbench passes on to servers: elicitation (form and url), sampling
// (context and tools) and roots (listChanged). Nil for nil.
func Relayed(c *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	if c == nil {
		return nil
	}
	out := &mcp.ClientCapabilities{}
	if e := c.Elicitation; e != nil {
		out.Elicitation = &mcp.ElicitationCapabilities{Form: e.Form, URL: e.URL}
		if e.Form == nil && e.URL == nil {
			// {} is form mode, from before the modes had names.
			out.Elicitation.Form = &mcp.FormElicitationCapabilities{}
		}
	}
	if s := c.Sampling; s != nil {
		out.Sampling = &mcp.SamplingCapabilities{Context: s.Context, Tools: s.Tools}
	}
	if c.RootsV2 != nil {
		out.RootsV2 = &mcp.RootCapabilities{ListChanged: c.RootsV2.ListChanged}
	}
	return out
}

// SetHost makes h the host session s belongs to, for the connections it
// starts from now on; nil: none (the server is told no client
// capabilities).
func (s *Server) SetHost(h Host) {
	s.mu.Lock()
	s.host = h
	s.mu.Unlock()
}

func (s *Server) getHost() Host {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host
}

// clientOptions returns what the client of a new connection declares and
// answers: the capabilities of s's host (fixed for the connection's life,
// as MCP's initialize fixes them), with handlers that pass requests on.
func (c *conn) clientOptions(o *mcp.ClientOptions) {
	var caps *mcp.ClientCapabilities
	if h := c.s.getHost(); h != nil {
		caps = Relayed(h.HostCapabilities())
	}
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	c.caps = caps
	o.Capabilities = caps
	if caps.Elicitation != nil {
		o.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			p := *req.Params
			p.Message = fmt.Sprintf("[%s/%s] %s", c.s.Toolbox, c.s.Name, p.Message)
			res := &mcp.ElicitResult{}
			if err := c.ask(ctx, MethodElicit, &p, res); err != nil {
				return nil, err
			}
			return res, nil
		}
		o.ElicitationCompleteHandler = func(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			if h := c.s.getHost(); h != nil {
				if n, ok := h.(interface {
					ElicitationComplete(context.Context, *mcp.ElicitationCompleteParams)
				}); ok {
					n.ElicitationComplete(ctx, req.Params)
				}
			}
		}
	}
	if caps.Sampling != nil {
		o.CreateMessageWithToolsHandler = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			res := &mcp.CreateMessageWithToolsResult{}
			if err := c.ask(ctx, MethodCreateMessage, req.Params, res); err != nil {
				return nil, err
			}
			return res, nil
		}
	}
}

// rootsMiddleware answers a server's roots/list from its host: the SDK's
// own answer is a fixed list.
func (c *conn) rootsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != MethodListRoots {
			return next(ctx, method, req)
		}
		if c.caps == nil || c.caps.RootsV2 == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "the client does not support roots: the host did not declare them"}
		}
		res := &mcp.ListRootsResult{}
		if err := c.ask(ctx, MethodListRoots, req.GetParams(), res); err != nil {
			return nil, err
		}
		if res.Roots == nil {
			res.Roots = []*mcp.Root{}
		}
		return res, nil
	}
}

// ask passes one request of the server to its host and decodes the answer
// into res. Its errors reach the server as the JSON-RPC error of its
// request, in the workbench's words.
func (c *conn) ask(ctx context.Context, method string, params any, res any) error {
	if n := c.asking.Add(1); n > maxAsking {
		c.asking.Add(-1)
		c.s.log.Warn("the server asks the host too much at once; refused", "method", method, "limit", maxAsking)
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the workbench has %d requests of this server waiting for the host already; try again when they are answered", maxAsking)}
	}
	defer c.asking.Add(-1)
	raw, err := json.Marshal(params)
	if err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the request's params cannot be passed on"}
	}
	ask, resume := c.asker()
	defer resume()
	if ask == nil {
		h := c.s.getHost()
		if h == nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "the workbench has no host session to ask for this server"}
		}
		ask = h.Ask
	}
	c.s.log.Debug("the server asks the host", "method", method)
	out, err := ask(ctx, method, raw)
	if err != nil {
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			return werr
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.s.log.Info("the host did not answer the server's request", "method", method, "error", err)
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	if err := json.Unmarshal(out, res); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the host's answer to %s does not have the shape MCP gives it", method)}
	}
	return nil
}

// asker finds the call a request of the server goes with, and stops the
// timeouts of the server's calls until resume: the request is part of a
// call, and the host (a person, perhaps) may take its time. A server of
// one host session has calls of that session only: when several are in
// flight, the newest one that can be asked takes the request. It returns a
// nil AskFunc when no call in flight has one of its own.
func (c *conn) asker() (ask AskFunc, resume func()) {
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	var paused []*inflight
	var newest uint64
	for _, call := range c.calls {
		if call.ask != nil && call.seq >= newest {
			ask, newest = call.ask, call.seq
		}
		if call.timer != nil {
			call.timer.Stop()
		}
		call.asking++
		paused = append(paused, call)
	}
	return ask, func() {
		c.callsMu.Lock()
		defer c.callsMu.Unlock()
		for _, call := range paused {
			call.asking--
			// A call that ended meanwhile is not in c.calls: its timer
			// firing finds nothing to end.
			if call.asking == 0 && call.timer != nil {
				call.timer.Reset(c.s.cfg.RequestTimeout)
			}
		}
	}
}

// RootsChanged tells the server that its host's roots changed
// (notifications/roots/list_changed), if it was told the host has roots
// that announce changes.
func (s *Server) RootsChanged() {
	s.mu.Lock()
	c := s.live
	s.mu.Unlock()
	if c == nil || c.cs == nil || c.caps == nil || c.caps.RootsV2 == nil || !c.caps.RootsV2.ListChanged {
		return
	}
	// The SDK's client sends the notification when its own list changes.
	c.client.AddRoots(&mcp.Root{URI: rootsChangedMark})
	c.client.RemoveRoots(rootsChangedMark)
}

// rootsChangedMark is a root that is never answered to anyone: adding and
// removing it is how the SDK's client tells its server of a change.
const rootsChangedMark = "workbench:roots-changed"
