package workbench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Multi round-trip requests (SEP-2322) for hosts on the 2026-07-28
// protocol, which take no requests from servers. When a server asks the
// host something during a use_tool call of such a host, the call is held:
// use_tool answers at once with resultType "input_required", the server's
// requests as inputRequests (each under a key of its own) and a
// requestState; the server's call goes on waiting. The host calls use_tool
// again with the same tool, its inputResponses and that requestState: the
// answers go to the waiting server, and this second use_tool call gets the
// call's result, or the next input_required. The request state is opaque to
// the host and signed (HMAC-SHA-256, with the configured key, else one
// made when the process starts): it names the held call, its round, the
// host connection it was given to, and when it expires. A state that was tampered with, comes
// from another session, is past its expiry or was used already is refused
// with a tool error; the held call waits for a good one until it expires.

// processKey signs request states when no key is configured
// (Options.StateKey); it lives as long as the process.
var processKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}()

const (
	statePrefix = "wb1."
	// holdFor is how long a held call waits for the host's retry, from
	// each input_required: long enough for a person to fill in a form.
	holdFor = 10 * time.Minute
	// maxHeld bounds the calls of one host connection waiting for its
	// answers at once.
	maxHeld = 32
)

// heldCall is a use_tool call waiting for the host's answers to its
// server's requests.
type heldCall struct {
	id  string
	ref toolRef
	hc  *hostConn
	mu  sync.Mutex
	seq int // input requests made so far: their keys
	// round counts the input_required results given; the request state of
	// the latest one is the only one that is good.
	round int
	// reply answers the use_tool request that waits now; nil between an
	// input_required and the host's retry.
	reply func(json.RawMessage)
	// asks are the server's requests not answered yet, by key.
	asks   map[string]*heldAsk
	result json.RawMessage // the call's result, while no request waits for it
	ended  bool
	expiry *time.Timer
	cancel func() // gives the server's call up
}

type heldAsk struct {
	method string
	params json.RawMessage
	answer chan json.RawMessage
}

// holdCall makes the held-call machinery for a use_tool call of a
// 2026-07-28 host: ask is the call's downstream.AskFunc, finish its reply.
func (c *hostConn) holdCall(ref toolRef, reply func(json.RawMessage)) *heldCall {
	return &heldCall{ref: ref, hc: c, reply: reply} // asks made when one comes: most calls never ask
}

// ask is the call's downstream.AskFunc: the server's request goes to the
// host as an input request of the call's result.
func (h *heldCall) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := canAnswer(h.hc.w.HostCapabilities(), method, params); err != nil {
		return nil, err // this host's request declared less than the server was told
	}
	h.mu.Lock()
	if h.ended {
		h.mu.Unlock()
		return nil, errors.New("the call ended")
	}
	if h.id == "" && !h.hc.registerHeld(h) { // its first request of the host
		h.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the host has %d calls waiting for its answers already", maxHeld)}
	}
	if h.asks == nil {
		h.asks = map[string]*heldAsk{}
	}
	h.seq++
	key := "r" + strconv.Itoa(h.seq)
	a := &heldAsk{method: method, params: params, answer: make(chan json.RawMessage, 1)}
	h.asks[key] = a
	h.offerLocked()
	h.mu.Unlock()

	select {
	case ans := <-a.answer:
		if ans == nil {
			return nil, errors.New("the host did not answer in time")
		}
		return ans, nil
	case <-ctx.Done():
		h.mu.Lock()
		delete(h.asks, key)
		h.mu.Unlock()
		return nil, ctx.Err()
	}
}

// offerLocked answers the waiting use_tool request, if there is one, with
// the input requests not answered yet. h.mu is held.
func (h *heldCall) offerLocked() {
	if h.reply == nil || len(h.asks) == 0 {
		return
	}
	reply := h.reply
	h.reply = nil
	h.round++
	if h.expiry == nil {
		h.expiry = time.AfterFunc(holdFor, h.expire)
	} else {
		h.expiry.Reset(holdFor)
	}
	var b []byte
	// "content": [] as the go-sdk writes it over HTTP: one shape on
	// every transport.
	b = append(b, `{"content":[],"resultType":"input_required","inputRequests":{`...)
	first := true
	for key, a := range h.asks {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = frame.AppendString(b, key)
		b = append(b, `:{"method":`...)
		b = frame.AppendString(b, a.method)
		b = append(b, `,"params":`...)
		b = append(b, a.params...)
		b = append(b, '}')
	}
	b = append(b, `},"requestState":`...)
	b = frame.AppendString(b, h.hc.sign(h.id, h.round, time.Now().Add(holdFor)))
	b = append(b, '}')
	go reply(b)
}

// finish is the call's end: its result goes to the waiting use_tool
// request, or waits for the host's retry.
func (h *heldCall) finish(result json.RawMessage) {
	h.mu.Lock()
	if h.ended {
		h.mu.Unlock()
		return
	}
	reply := h.reply
	if reply == nil {
		h.result = result
		h.mu.Unlock()
		return
	}
	h.endLocked()
	h.mu.Unlock()
	reply(result)
}

// endLocked forgets the held call. h.mu is held.
func (h *heldCall) endLocked() {
	h.ended = true
	if h.expiry != nil {
		h.expiry.Stop()
	}
	for _, a := range h.asks {
		select {
		case a.answer <- nil:
		default:
		}
	}
	h.hc.forgetHeld(h.id)
}

// expire gives up a call whose host did not come back in time.
func (h *heldCall) expire() {
	h.mu.Lock()
	if h.ended || h.reply != nil {
		h.mu.Unlock()
		return
	}
	h.endLocked()
	cancel := h.cancel
	h.mu.Unlock()
	h.hc.log.Info("a call waited for the host's answers past its time; given up", "toolbox", h.ref.Toolbox, "server", h.ref.Server, "tool", h.ref.Tool)
	if cancel != nil {
		cancel()
	}
}

// giveUp cancels the held call (the host cancelled the use_tool request
// that waited for it).
func (h *heldCall) giveUp() {
	h.mu.Lock()
	if h.ended {
		h.mu.Unlock()
		return
	}
	h.endLocked()
	cancel := h.cancel
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (c *hostConn) registerHeld(h *heldCall) bool {
	c.heldMu.Lock()
	defer c.heldMu.Unlock()
	h.id = rand.Text() // only calls that ask pay for it
	if c.held == nil {
		c.held = map[string]*heldCall{}
	}
	if len(c.held) >= maxHeld {
		return false
	}
	c.held[h.id] = h
	return true
}

func (c *hostConn) forgetHeld(id string) {
	c.heldMu.Lock()
	delete(c.held, id)
	c.heldMu.Unlock()
}

// sign makes the request state of round of held call id, good until
// expiry, for this connection only.
func (c *hostConn) sign(id string, round int, expiry time.Time) string {
	payload := strings.Join([]string{id, strconv.Itoa(round), strconv.FormatInt(expiry.Unix(), 10), c.id}, ".")
	return statePrefix + base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(c.mac(payload))
}

func (c *hostConn) mac(payload string) []byte {
	m := hmac.New(sha256.New, c.w.stateKey)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// resume takes the host's retry of a held call: state is its requestState,
// responses its inputResponses. It returns the held call, or the refusal
// to answer the retry with.
func (c *hostConn) resume(ref toolRef, state string, responses json.RawMessage) (*heldCall, string) {
	body, ok := strings.CutPrefix(state, statePrefix)
	enc, sig, ok2 := strings.Cut(body, ".")
	payload, err := base64.RawURLEncoding.DecodeString(enc)
	got, err2 := base64.RawURLEncoding.DecodeString(sig)
	if !ok || !ok2 || err != nil || err2 != nil || !hmac.Equal(got, c.mac(string(payload))) {
		return nil, "the requestState is not one the workbench gave: it was changed, or made elsewhere. Call use_tool again without inputResponses and requestState to start over."
	}
	parts := strings.Split(string(payload), ".")
	if len(parts) != 4 {
		return nil, "the requestState is not one the workbench gave"
	}
	id, session := parts[0], parts[3]
	round, _ := strconv.Atoi(parts[1])
	expiry, _ := strconv.ParseInt(parts[2], 10, 64)
	if session != c.id {
		return nil, "the requestState belongs to another session of the workbench; it can be used only where it was given"
	}
	if time.Now().Unix() > expiry {
		return nil, "the requestState has expired: the call it belonged to was given up. Call use_tool again without inputResponses and requestState to start over."
	}
	c.heldMu.Lock()
	h := c.held[id]
	c.heldMu.Unlock()
	if h == nil {
		return nil, "the requestState's call is not waiting here: it was used already (each requestState is good for one retry), its call ended, or it waits at another replica of the workbench. Call use_tool again without inputResponses and requestState to start over."
	}
	if h.ref != ref {
		return nil, fmt.Sprintf("the requestState belongs to a call of tool '%s' of server '%s' in toolbox '%s'; retry that call with it", h.ref.Tool, h.ref.Server, h.ref.Toolbox)
	}
	var answers map[string]json.RawMessage
	if len(responses) > 0 && !bytes.Equal(responses, []byte("null")) {
		if err := json.Unmarshal(responses, &answers); err != nil {
			return nil, "inputResponses must be an object of the answers to the inputRequests, by their keys"
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended || h.round != round || h.reply != nil {
		return nil, "the requestState was used already: each requestState is good for one retry, the latest one given"
	}
	for key, ans := range answers {
		a := h.asks[key]
		if a == nil {
			return nil, fmt.Sprintf("inputResponses has an answer under '%s', which names no input request of this call", key)
		}
		if why := badAnswer(a, ans); why != "" {
			return nil, fmt.Sprintf("the answer under '%s' to %s is not valid: %s", key, a.method, why)
		}
	}
	for key, ans := range answers {
		a := h.asks[key]
		delete(h.asks, key)
		a.answer <- ans
	}
	return h, ""
}

// attach makes reply the use_tool request that waits for the held call:
// it gets the call's result if it came, the input requests still
// unanswered, or what comes next.
func (h *heldCall) attach(reply func(json.RawMessage)) {
	h.mu.Lock()
	if h.result != nil {
		res := h.result
		h.endLocked()
		h.mu.Unlock()
		reply(res)
		return
	}
	h.reply = reply
	h.offerLocked()
	h.mu.Unlock()
}

// badAnswer says what is wrong with a host's answer to a request of
// method, or "" if nothing is.
func badAnswer(a *heldAsk, ans json.RawMessage) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(ans, &obj) != nil || obj == nil {
		return "it is not a JSON object"
	}
	switch a.method {
	case downstream.MethodElicit:
		var action string
		if json.Unmarshal(obj["action"], &action) != nil {
			return `it has no "action"`
		}
		switch action {
		case "accept", "decline", "cancel":
		default:
			return fmt.Sprintf(`"action" is %q; it must be accept, decline or cancel`, action)
		}
		c, ok := obj["content"]
		if ok && (len(c) == 0 || c[0] != '{') {
			return `"content" must be an object`
		}
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(a.params, &p)
		if action == "accept" && !ok && p.Mode != "url" {
			return `an "accept" of a form must have the form's "content"`
		}
	case downstream.MethodCreateMessage:
		for _, k := range []string{"role", "content", "model"} {
			if _, ok := obj[k]; !ok {
				return fmt.Sprintf("it has no %q", k)
			}
		}
	case downstream.MethodListRoots:
		if r, ok := obj["roots"]; !ok || len(r) == 0 || r[0] != '[' {
			return `"roots" must be an array`
		}
	}
	return ""
}
