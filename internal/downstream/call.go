package downstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RefusedError is a call the workbench refused without sending anything
// downstream: unknown or filtered tool, disabled server, invalid arguments.
type RefusedError struct {
	Reason string
	// SaysChanged is set when Reason already says that the toolbox changed
	// since it was opened.
	SaysChanged bool
}

func (e *RefusedError) Error() string { return e.Reason }

// lostError is a call whose connection broke before any answer came: the
// server may or may not have run it.
type lostError struct{ reason error }

func (e *lostError) Error() string { return e.reason.Error() }
func (e *lostError) Unwrap() error { return e.reason }

var errTimedOut = errors.New("request timed out")

// Progress is one progress notification of a call, its values as the
// JSON the server sent.
type Progress struct {
	Progress json.RawMessage // a number
	Total    json.RawMessage // a number, or nil
	Message  json.RawMessage // a string, or nil
}

// ProgressFunc receives the progress notifications of one call.
type ProgressFunc func(Progress)

// inflight is a call under way on a connection, registered under its
// progress token (a relayed call's id too).
type inflight struct {
	progress ProgressFunc // nil: the caller did not ask for progress
	// ask, if set, answers the server's requests of the host during the
	// call (ask.go); seq orders calls, newest last. asking counts the
	// server's requests under way, which hold the call's timeout.
	// asking is guarded by the conn's callsMu.
	ask    AskFunc
	seq    uint64
	asking int

	// A call through the SDK (remote servers).
	touch  func() // restarts the call's timeout
	cancel context.CancelCauseFunc

	// A relayed call (stdio servers).
	timer *time.Timer // requestTimeoutMs, restarted by progress
	done  func(json.RawMessage, error)
	// mu orders the call's progress before its end: progress is passed on
	// under it until the call is finished, and finish waits for it.
	mu       sync.Mutex
	finished bool
}

// finish ends a relayed call with its outcome, once no progress of it is
// on its way: nothing of the call reaches the caller after its result.
func (call *inflight) finish(res json.RawMessage, err error) {
	call.mu.Lock()
	call.finished = true
	call.mu.Unlock()
	call.done(res, err)
}

// report passes on a relayed call's progress, unless it has finished.
func (call *inflight) report(p Progress) {
	call.mu.Lock()
	defer call.mu.Unlock()
	if !call.finished {
		call.progress(p)
	}
}

// increasing passes on only progress higher than any before it. The MCP
// spec asks a call's progress to increase, and a call retried after a
// crash reports its progress again from the start: the caller sees it
// carry on from where the first attempt got to.
func increasing(f ProgressFunc) ProgressFunc {
	if f == nil {
		return nil
	}
	var mu sync.Mutex
	highest := math.Inf(-1)
	return func(p Progress) {
		v, err := strconv.ParseFloat(string(p.Progress), 64)
		mu.Lock()
		defer mu.Unlock()
		if err == nil && v > highest {
			highest = v
			f(p)
		}
	}
}

// tokenSeq numbers the progress tokens sent downstream. Every call gets a
// fresh one, whether or not its caller asked for progress, so that a
// server's progress keeps a long call from timing out.
var tokenSeq atomic.Uint64

const tokenTag = "wb-"

// relayProgress passes on the progress of a call made through the SDK.
func (c *conn) relayProgress(p *mcp.ProgressNotificationParams) {
	tok, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	c.callsMu.Lock()
	call := c.calls[tok]
	asking := call != nil && call.asking > 0
	c.callsMu.Unlock()
	if call == nil || call.touch == nil {
		return // late, after the result: dropping it is fine
	}
	if !asking { // the host is being asked: the timeout waits
		call.touch()
	}
	if call.progress != nil {
		pr := Progress{Progress: number(p.Progress)}
		if p.Total != 0 {
			pr.Total = number(p.Total)
		}
		if p.Message != "" {
			pr.Message = json.RawMessage(frame.Quote(p.Message))
		}
		call.progress(pr)
	}
}

func number(f float64) json.RawMessage {
	b, err := json.Marshal(f)
	if err != nil {
		return json.RawMessage("0")
	}
	return b
}

// Start calls tool with args (a JSON object) on the server and returns at
// once; done gets what [Server.Call] would return, exactly once, on
// another goroutine or before Start returns. cancel gives the call up:
// the server is told, and done gets context.Canceled.
//
// A call to a running stdio server is relayed as frames, with no
// goroutine of its own; anything else (a server to start first, a remote
// server) runs Call on a goroutine.
func (s *Server) Start(tool string, args json.RawMessage, progress ProgressFunc, done func(json.RawMessage, error)) (cancel func()) {
	return s.StartFor(Caller{}, tool, args, progress, done)
}

// Caller is who a call is made for.
type Caller struct {
	// Viewer is the one whose last open the call is checked against (see
	// [Server.Shown]): a tool whose definition is not the one viewer's
	// last open showed is refused with "the toolbox changed".
	Viewer any
	// Ask, if set, answers the server's requests of the host during the
	// call (see ask.go).
	Ask AskFunc
}

// StartFor is [Server.Start] for a call of who.
func (s *Server) StartFor(who Caller, tool string, args json.RawMessage, progress ProgressFunc, done func(json.RawMessage, error)) (cancel func()) {
	ask := who.Ask
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	s.mu.Lock()
	c := s.live
	s.mu.Unlock()
	if c != nil && c.stdio != nil {
		t, err := c.resolve(who.Viewer, tool, args)
		if err != nil {
			done(nil, err)
			return func() {}
		}
		if !t.ReadOnly && !t.Idempotent {
			if cancel := c.relay(t, args, progress, ask, func(res json.RawMessage, err error) { done(res, s.redact(err)) }); cancel != nil {
				return cancel
			}
		} else {
			// A tool that may be retried after a crash: cancel ends the
			// retry too, if it comes to one.
			r := &retrying{}
			progress := increasing(progress)
			cancelRelay := c.relay(t, args, progress, ask, func(res json.RawMessage, err error) {
				var ctx context.Context
				if s.shouldRetry(context.Background(), t, err) {
					ctx = r.start()
				}
				if ctx == nil {
					done(res, s.redact(err))
					return
				}
				go func() {
					res, err := s.retry(ctx, who, tool, args, progress, err)
					r.cancel()
					done(res, s.redact(err))
				}()
			})
			if cancelRelay != nil {
				r.setRelay(cancelRelay)
				return r.cancel
			}
		}
		// The connection ended (or is stopping for idleness) under us:
		// the call goes to a new one, as below.
	}
	ctx, cancelCall := context.WithCancel(context.Background())
	go func() {
		res, err := s.CallFor(ctx, who, tool, args, progress)
		cancelCall()
		done(res, err)
	}()
	return cancelCall
}

// retrying is a relayed call that may be retried: cancelling it cancels
// the relayed call, or the retry once one started.
type retrying struct {
	mu          sync.Mutex
	relay       func() // cancels the relayed call; set once it is sent
	cancelled   bool
	cancelRetry context.CancelFunc
}

// setRelay records how to cancel the relayed call.
func (r *retrying) setRelay(cancel func()) {
	r.mu.Lock()
	r.relay = cancel
	r.mu.Unlock()
}

// start returns the retry's context, or nil if the call was cancelled.
func (r *retrying) start() context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancelled {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancelRetry = cancel
	return ctx
}

func (r *retrying) cancel() {
	r.mu.Lock()
	r.cancelled = true
	cancelRetry, cancelRelay := r.cancelRetry, r.relay
	r.mu.Unlock()
	if cancelRetry != nil {
		cancelRetry()
	}
	if cancelRelay != nil {
		cancelRelay()
	}
}

// Call calls tool with args (a JSON object) on the server, starting it if
// needed, and returns the server's result object as the server sent it.
// Refusals come back as *RefusedError, with nothing sent downstream. A
// downstream tool error is a result with isError, not an error. Other
// errors mean the call failed on its way: the server could not start, the
// connection broke, no answer came in time.
//
// When the connection breaks before any answer and the tool is annotated
// readOnlyHint or idempotentHint, the server is started again and the call
// retried once; other tools are never retried, since they may have run.
func (s *Server) Call(ctx context.Context, tool string, args json.RawMessage, onProgress ProgressFunc) (json.RawMessage, error) {
	return s.CallFor(ctx, Caller{}, tool, args, onProgress)
}

// CallFor is [Server.Call] for a call of who.
func (s *Server) CallFor(ctx context.Context, who Caller, tool string, args json.RawMessage, onProgress ProgressFunc) (json.RawMessage, error) {
	res, err := s.call(ctx, who, tool, args, onProgress)
	return res, s.redact(err)
}

func (s *Server) call(ctx context.Context, who Caller, tool string, args json.RawMessage, onProgress ProgressFunc) (json.RawMessage, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	onProgress = increasing(onProgress) // across a retry
	res, t, err := s.callOnce(ctx, who, tool, args, onProgress)
	if t == nil || !s.shouldRetry(ctx, t, err) {
		return res, err
	}
	return s.retry(ctx, who, tool, args, onProgress, err)
}

// callOnce connects if needed and makes the call, on a new connection if
// the one it found ended before the call could be sent (a server that
// died, or stopped for idleness, a moment before). It returns the tool
// it resolved, nil if it got no further.
func (s *Server) callOnce(ctx context.Context, who Caller, tool string, args json.RawMessage, onProgress ProgressFunc) (json.RawMessage, *Tool, error) {
	for attempt := 1; ; attempt++ {
		c, err := s.connect(ctx)
		if err != nil {
			return nil, nil, err
		}
		t, err := c.resolve(who.Viewer, tool, args)
		if err != nil {
			return nil, nil, err
		}
		res, err := c.call(ctx, t, args, onProgress, who.Ask)
		if !errors.Is(err, errNotSent) {
			return res, t, err
		}
		select { // until the connection is gone, so that connect makes a new one
		case <-c.done:
		case <-ctx.Done():
			return nil, t, ctx.Err()
		}
		if attempt == 3 {
			// Connections that keep ending as calls arrive: say why the
			// last one ended (endErr is set before done closes).
			if c.endErr != nil && c.endErr != errIdle {
				return nil, t, fmt.Errorf("%w: %v", errNotSent, c.endErr)
			}
			return nil, t, err
		}
	}
}

// shouldRetry reports whether a call of t that failed with err is tried
// again: the connection broke before any answer, the tool is read-only or
// idempotent, and neither the workbench nor the caller gave up.
func (s *Server) shouldRetry(ctx context.Context, t *Tool, err error) bool {
	if err == nil || !(t.ReadOnly || t.Idempotent) {
		return false
	}
	var lost *lostError
	return errors.As(err, &lost) && (t.ReadOnly || t.Idempotent) && !errors.Is(lost.reason, errClosed) && ctx.Err() == nil
}

// retry starts the server again and makes the call once more, after the
// connection broke under it with err.
func (s *Server) retry(ctx context.Context, who Caller, tool string, args json.RawMessage, onProgress ProgressFunc, err error) (json.RawMessage, error) {
	var lost *lostError
	errors.As(err, &lost)
	s.log.Warn("connection lost during a call to a read-only or idempotent tool; starting the server again to retry it once",
		"tool", tool, "reason", s.redact(lost.reason))
	res, t2, err2 := s.callOnce(ctx, who, tool, args, onProgress)
	switch {
	case err2 == nil:
		return res, nil
	case t2 == nil:
		var refused *RefusedError
		if errors.As(err2, &refused) {
			return nil, fmt.Errorf("%v; after starting it again: %v", err, err2)
		}
		return nil, fmt.Errorf("%v; starting it again to retry the call failed: %v", err, err2)
	}
	return nil, fmt.Errorf("%w (after one automatic retry)", err2)
}

// resolve finds the tool and checks the arguments against its inputSchema;
// viewer is who calls (see [Server.Shown]).
func (c *conn) resolve(viewer any, name string, args json.RawMessage) (*Tool, error) {
	ts := c.tools.Load()
	t := ts.Lookup(name)
	if t == nil && ts.WithheldReason(name) != "" {
		ts = c.recheck() // approved meanwhile?
		t = ts.Lookup(name)
	}
	if t == nil {
		if why := ts.WithheldReason(name); why != "" {
			return nil, c.s.withheldError(viewer, name, why)
		}
		if ts.isFiltered(name) {
			return nil, &RefusedError{Reason: "the tool is not offered: the workbench configuration's toolFilters exclude it"}
		}
		names := ts.offeredNames()
		if len(names) == 0 {
			return nil, &RefusedError{Reason: "no such tool; this server offers no tools"}
		}
		return nil, &RefusedError{Reason: "no such tool; this server's tools are: " + listNames(names, 30)}
	}
	if t.Change != "" { // served although it changed since approved ("warn")
		if h, ok := c.s.shownHash(viewer, name); ok && h != t.def.Hash {
			return nil, &RefusedError{SaysChanged: true, Reason: fmt.Sprintf("the toolbox '%s' changed since it was opened: the definition of tool '%s' is not the one open_toolbox showed (%s). "+
				"Open the toolbox again with open_toolbox to see it as it is now.", c.s.Toolbox, name, t.Change)}
		}
	}
	violations, err := t.validate(args)
	if err != nil {
		return nil, &RefusedError{Reason: fmt.Sprintf("arguments are not valid JSON: %v", err)}
	}
	if len(violations) > 0 {
		var b strings.Builder
		b.WriteString("arguments do not match the tool's inputSchema:")
		for _, v := range violations {
			b.WriteString("\n- ")
			b.WriteString(v.String())
		}
		return nil, &RefusedError{Reason: b.String()}
	}
	return t, nil
}

func listNames(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(", … (%d more)", len(names)-max)
}

// call sends one tools/call, bounded by requestTimeoutMs, which each
// progress notification of the call restarts, and waits for its answer.
func (c *conn) call(ctx context.Context, t *Tool, args json.RawMessage, onProgress ProgressFunc, ask AskFunc) (json.RawMessage, error) {
	if c.stdio != nil {
		type answer struct {
			res json.RawMessage
			err error
		}
		ch := make(chan answer, 1)
		cancel := c.relay(t, args, onProgress, ask, func(res json.RawMessage, err error) { ch <- answer{res, err} })
		if cancel == nil {
			return nil, errNotSent
		}
		select {
		case a := <-ch:
			return a.res, a.err
		case <-ctx.Done():
			cancel()
			return nil, ctx.Err()
		}
	}
	s := c.s
	timeout := s.cfg.RequestTimeout
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(timeout, func() { cancel(errTimedOut) })
	defer timer.Stop()

	// The call is registered under its progress token: progress finds it
	// there, and so does end(), which cancels it before closing the session.
	token := tokenTag + strconv.FormatUint(tokenSeq.Add(1), 36)
	c.callsMu.Lock()
	if c.calls == nil { // the connection has ended
		c.callsMu.Unlock()
		return nil, errNotSent
	}
	c.calls[token] = &inflight{progress: onProgress, touch: func() { timer.Reset(timeout) }, cancel: cancel, timer: timer, ask: ask, seq: tokenSeq.Load()}
	c.callStartedLocked()
	c.callsMu.Unlock()
	defer func() {
		c.callsMu.Lock()
		if c.calls != nil {
			delete(c.calls, token)
			c.callEndedLocked()
		}
		c.callsMu.Unlock()
	}()

	params := &mcp.CallToolParams{Name: t.Name, Arguments: args}
	params.SetProgressToken(token)
	res, err := c.cs.CallTool(callCtx, params)
	if c.cap != nil {
		if raw, ok := c.cap.takeResult(token); ok && err == nil {
			return raw, nil
		}
	}
	if err == nil {
		// Only the streamable HTTP transport cannot be captured: its
		// results are re-encoded from the SDK's structs.
		return json.Marshal(res)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // the caller gave up; the SDK told the server
	}
	if errors.Is(context.Cause(callCtx), errTimedOut) {
		return nil, fmt.Errorf("no response within %v (requestTimeoutMs); the call was cancelled", timeout)
	}
	var loginErr *oauth.Error
	if errors.As(err, &loginErr) {
		// The server asked for a login (or more scopes) for this call: the
		// SDK's "rejected by transport" would hide the command to run.
		return nil, loginErr
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		if werr.Code == CodeURLElicitationRequired {
			return nil, &URLElicitationError{Message: werr.Message, Data: werr.Data}
		}
		return nil, fmt.Errorf("the server answered with an error: %s (code %d)", werr.Message, werr.Code)
	}
	// The connection broke under the call. Say how, once the watcher knows.
	select {
	case <-c.done:
		return nil, &lostError{reason: c.endErr}
	case <-time.After(time.Second):
		return nil, &lostError{reason: err}
	}
}
