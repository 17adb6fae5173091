package workbench

//lint:file-ignore SA1019 roots and sampling are deprecated from 2026-07-28 on, but hosts and servers of the 2025 protocols still use them, and the workbench relays what they use.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What servers ask of the host. The workbench is the host session of its
// own servers (downstream.Host): they are told the capabilities the host
// declared (of those relayed: elicitation, sampling, roots), and what they
// ask goes to the host. A host on a 2025 protocol is asked with requests of
// the workbench's own (elicitation/create, sampling/createMessage,
// roots/list), at any time; a host on the 2026-07-28 protocol takes no
// requests from servers: during a use_tool call, the call's result becomes
// input_required and the host's retry answers (roundtrip.go); outside a
// call nothing is passed, roots/list included.

// HostCapabilities returns the capabilities the workbench relays to its
// servers: those its host declared, at initialize or, on the 2026-07-28
// protocol, in its latest request. Nil before a host connected.
func (w *Workbench) HostCapabilities() *mcp.ClientCapabilities {
	hc := w.host.Load()
	if hc == nil {
		return nil
	}
	if caps := hc.requestCaps.Load(); caps != nil {
		return downstream.Relayed(caps)
	}
	ss := hc.ss.Load()
	if ss == nil || ss.InitializeParams() == nil {
		return nil
	}
	return downstream.Relayed(ss.InitializeParams().Capabilities)
}

// noteRequestCapabilities keeps the capabilities of every request that
// names its protocol version itself (2026-07-28): a server started by it
// (an open_toolbox, a search) is told what this host can answer, as one
// started by a use_tool call is.
func (w *Workbench) noteRequestCapabilities(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// Params may be a typed nil (a request without params).
		if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
			meta := p.GetMeta()
			if v, _ := meta[mcp.MetaKeyProtocolVersion].(string); v >= newProtocol {
				raw, _ := json.Marshal(meta[mcp.MetaKeyClientCapabilities])
				if caps, hc := requestCapabilities(raw), w.host.Load(); caps != nil && hc != nil {
					hc.requestCaps.Store(caps)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// askable reports whether the host takes requests of the workbench's own:
// a session on a 2025 protocol does, one on 2026-07-28 does not.
func (hc *hostConn) askable() (*mcp.ServerSession, bool) {
	ss := hc.ss.Load()
	if ss == nil || hc.newProtocol.Load() || hc.requestCaps.Load() != nil {
		return nil, false
	}
	p := ss.InitializeParams()
	return ss, p != nil && p.ProtocolVersion < newProtocol
}

// Ask asks the host what a server asked of it, outside any call, or in a
// call of a host that takes requests of the workbench's own.
func (w *Workbench) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	hc := w.host.Load()
	if hc == nil {
		return nil, errors.New("no host is connected to the workbench")
	}
	caps := w.HostCapabilities()
	if err := canAnswer(caps, method, params); err != nil {
		return nil, err
	}
	ss, ok := hc.askable()
	if ok {
		// A host that never answers holds the server no longer than a
		// held call of a 2026-07-28 host waits (roundtrip.go).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, holdFor)
		defer cancel()
	} else {
		// Not even roots/list: a server keeps what it was given (a
		// filesystem server its folders), as it would with this host.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the host uses the 2026-07-28 protocol, which takes a server's " + method + " only during a call of one of its tools"}
	}
	switch method {
	case downstream.MethodElicit:
		return askAs(ctx, params, ss.Elicit)
	case downstream.MethodCreateMessage:
		return askAs(ctx, params, ss.CreateMessageWithTools)
	case downstream.MethodListRoots:
		return askAs(ctx, params, func(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
			res, err := ss.ListRoots(ctx, p)
			if err == nil && res.Roots == nil {
				res.Roots = []*mcp.Root{}
			}
			return res, err
		})
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "the workbench does not pass " + method + " to the host"}
}

// askAs asks the host with send, the SDK's request for params (the
// server's, as JSON), and returns the host's answer as JSON.
func askAs[P, R any](ctx context.Context, params json.RawMessage, send func(context.Context, *P) (R, error)) (json.RawMessage, error) {
	p := new(P)
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, p); err != nil {
			return nil, err
		}
	}
	res, err := send(ctx, p)
	if err != nil {
		return nil, hostError(err)
	}
	return json.Marshal(res)
}

// hostError is the error a server gets when the host answered its request
// with one: the host's own JSON-RPC error as it was, or the reason the
// request did not reach it.
func hostError(err error) error {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return werr
	}
	return fmt.Errorf("the host did not answer: %w", err)
}

// canAnswer refuses a request the host's capabilities do not cover: a
// server that was told them at start by an earlier host (another session
// of a shared server, or a host that reconnected) learns it when it asks.
func canAnswer(caps *mcp.ClientCapabilities, method string, params json.RawMessage) error {
	refuse := func(what string) error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the host does not support " + what}
	}
	if caps == nil {
		return refuse(method)
	}
	switch method {
	case downstream.MethodElicit:
		if caps.Elicitation == nil {
			return refuse("elicitation")
		}
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(params, &p)
		if p.Mode == "url" && caps.Elicitation.URL == nil {
			return refuse(`"url" elicitation`)
		}
		if p.Mode != "url" && caps.Elicitation.Form == nil {
			return refuse(`"form" elicitation`)
		}
	case downstream.MethodCreateMessage:
		if caps.Sampling == nil {
			return refuse("sampling")
		}
	case downstream.MethodListRoots:
		if caps.RootsV2 == nil {
			return refuse("roots")
		}
	}
	return nil
}

// ElicitationComplete passes a server's notifications/elicitation/complete
// (the end of a URL-mode elicitation) on to a host that takes it.
func (w *Workbench) ElicitationComplete(ctx context.Context, p *mcp.ElicitationCompleteParams) {
	hc := w.host.Load()
	if hc == nil || p == nil {
		return
	}
	if ss, ok := hc.askable(); ok {
		_ = ss.NotifyElicitationComplete(ctx, p)
	}
}

// rootsChanged tells the servers of the workbench that the host's roots
// changed.
func (w *Workbench) rootsChanged(context.Context, *mcp.RootsListChangedRequest) {
	for _, tb := range w.state.Load().toolboxes {
		for _, s := range tb.servers {
			s.RootsChanged()
		}
	}
}

// requestCapabilities reads the client capabilities a request of the
// 2026-07-28 protocol declares in its _meta; nil if they are not an object.
func requestCapabilities(raw json.RawMessage) *mcp.ClientCapabilities {
	var caps mcp.ClientCapabilities
	if json.Unmarshal(raw, &caps) != nil {
		return nil
	}
	// The SDK's struct keeps "roots" where its JSON tag does not read it.
	var roots struct {
		Roots *mcp.RootCapabilities `json:"roots"`
	}
	_ = json.Unmarshal(raw, &roots)
	caps.RootsV2 = roots.Roots
	return &caps
}
