package workbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
)

// use_tool. The host's connection (host.go) hands each use_tool call here
// as bytes, and sends the result object it gets back as its response:
// the server's own bytes, or a tool error in the workbench's words.

// toolRef is use_tool's structured identifier.
type toolRef struct {
	Toolbox string `json:"toolbox"`
	Server  string `json:"server"`
	Tool    string `json:"tool"`
}

// parsedUse is use_tool's input read once: the tool's identifier and
// arguments, or why they cannot be read, and the input as it came.
type parsedUse struct {
	ref     toolRef
	rawArgs json.RawMessage
	err     error
	input   json.RawMessage
}

func parseUse(input json.RawMessage) parsedUse {
	ref, rawArgs, err := parseUseInput(input)
	return parsedUse{ref: ref, rawArgs: rawArgs, err: err, input: input}
}

// useParsed serves one use_tool call whose input (the tool's "arguments"),
// read by parseUse, is in. reply gets the result object to answer with,
// exactly once, on another goroutine or before useParsed returns. cancel
// gives the call up. ask, if set, answers the server's requests of the
// host during the call. scope is the host session the call comes from,
// where the workbench serves several (see grantScope); "" for the
// workbench's one.
func (w *Workbench) useParsed(in parsedUse, scope string, progress downstream.ProgressFunc, ask downstream.AskFunc, reply func(json.RawMessage)) (cancel func()) {
	if in.err != nil {
		reply(resultJSON("use_tool: "+in.err.Error(), true))
		return func() {}
	}
	args, err := objectArgs(in.rawArgs)
	if err != nil {
		reply(in.ref.refused(err.Error()))
		return func() {}
	}
	return w.useWith(in.ref, args, in.input, scope, progress, ask, reply)
}

// Use is use_tool from Go: it calls tool of server in toolbox with args (a
// JSON object), opening the toolbox first if it never was, and returns the
// server's result object as the server sent it, or a tool error that names
// toolbox, server and tool. progress, if set, receives the call's progress
// notifications.
func (w *Workbench) Use(ctx context.Context, toolbox, server, tool string, args json.RawMessage, progress downstream.ProgressFunc) json.RawMessage {
	ref := toolRef{Toolbox: toolbox, Server: server, Tool: tool}
	ch := make(chan json.RawMessage, 1)
	cancel := w.use(ref, args, progress, nil, func(res json.RawMessage) { ch <- res })
	select {
	case res := <-ch:
		if e, ok := errorAnswer(res); ok {
			var we struct {
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			}
			_ = json.Unmarshal(e, &we)
			return ref.failed(fmt.Errorf("the server needs the user to open a page first: %s %s", we.Message, we.Data))
		}
		return res
	case <-ctx.Done():
		cancel()
		return ref.failed(ctx.Err())
	}
}

func (w *Workbench) use(ref toolRef, args json.RawMessage, progress downstream.ProgressFunc, ask downstream.AskFunc, reply func(json.RawMessage)) (cancel func()) {
	return w.useWith(ref, args, nil, "", progress, ask, reply)
}

// useWith is use of a call whose use_tool input was input (nil: none),
// where a hook's approval may be (permissions.go).
func (w *Workbench) useWith(ref toolRef, args, input json.RawMessage, scope string, progress downstream.ProgressFunc, ask downstream.AskFunc, reply func(json.RawMessage)) (cancel func()) {
	refuse := func(reason string) func() {
		reply(ref.refused(reason))
		return func() {}
	}
	st := w.state.Load()
	tb := st.byName[ref.Toolbox]
	if tb == nil {
		return refuse(w.toolboxNotFound(ref.Toolbox))
	}
	s := tb.server(ref.Server)
	if s == nil {
		names := make([]string, len(tb.servers))
		for i, s := range tb.servers {
			names[i] = s.Name
		}
		return refuse(fmt.Sprintf("toolbox '%s' has no server '%s'. Its servers: %s", ref.Toolbox, ref.Server, strings.Join(names, ", ")))
	}
	if st.cfg.AnyPermissions {
		if pol := policyFor(st.cfg, ref); !pol.Empty() {
			rec := &decided{}
			return w.guarded(pol, tb, s, ref, args, input, scope, progress, ask, rec, w.recorded(ref, args, scope, rec, reply))
		}
	}
	return w.call(tb, s, ref, args, progress, ask, w.recorded(ref, args, scope, nil, reply))
}

// call makes the call of a tool that may be called.
func (w *Workbench) call(tb *toolbox, s *downstream.Server, ref toolRef, args json.RawMessage, progress downstream.ProgressFunc, ask downstream.AskFunc, reply func(json.RawMessage)) (cancel func()) {
	done := func(res json.RawMessage, err error) { reply(ref.result(res, err, s, w)) }
	if tb.opened.Load() {
		return s.StartFor(downstream.Caller{Viewer: w, Ask: ask}, ref.Tool, args, progress, done)
	}
	// The toolbox's first use opens it, as open_toolbox would, in the
	// background; the call waits only for its own server, whose start the
	// open shares: another server of the toolbox that is slow or broken
	// does not hold it up.
	started := s.Join()
	if tb.opening.CompareAndSwap(false, true) {
		go func() {
			_, _, _ = w.openCached(context.Background(), tb, false)
			tb.opening.Store(false)
		}()
	}
	ctx, cancelCall := context.WithCancel(context.Background())
	go func() {
		defer cancelCall()
		if _, err := started(ctx); err != nil {
			done(nil, err) // its start failed, after its retries
			return
		}
		res, err := s.CallFor(ctx, downstream.Caller{Viewer: w, Ask: ask}, ref.Tool, args, progress)
		done(res, err)
	}()
	return cancelCall
}

// result is the result object for a call's outcome: the server's result,
// or a tool error that names toolbox, server and tool. A refusal by a
// server whose live tools differ from those w's last open_toolbox showed
// from the catalog says so: the model works from a list that is out of
// date.
func (ref toolRef) result(res json.RawMessage, err error, s *downstream.Server, w *Workbench) json.RawMessage {
	if err == nil {
		return res
	}
	var urlErr *downstream.URLElicitationError
	if errors.As(err, &urlErr) {
		return urlElicitationAnswer(ref, urlErr)
	}
	var refused *downstream.RefusedError
	if errors.As(err, &refused) {
		if s.ChangedSinceShown(w) && !refused.SaysChanged {
			return ref.refused(fmt.Sprintf("the toolbox '%s' changed since it was opened: server '%s' now offers other tools than open_toolbox showed. "+
				"Open the toolbox again with open_toolbox to see them. (%s)", ref.Toolbox, ref.Server, refused.Reason))
		}
		return ref.refused(refused.Reason)
	}
	return ref.failed(err)
}

// A use_tool call usually answers with a result object; a server's
// "URL elicitation required" error (-32042) goes to the host as the
// JSON-RPC error it is, so that its client shows the pages. Such an answer
// is the error object behind a '!' (no result object starts with one):
// the host's connection writes it as an error response, and Use turns it
// into a tool error.
const errorAnswerMark = '!'

func urlElicitationAnswer(ref toolRef, e *downstream.URLElicitationError) json.RawMessage {
	b := []byte{errorAnswerMark}
	b = append(b, `{"code":`...)
	b = strconv.AppendInt(b, downstream.CodeURLElicitationRequired, 10)
	b = append(b, `,"message":`...)
	b = frame.AppendString(b, fmt.Sprintf("[%s/%s] %s", ref.Toolbox, ref.Server, e.Message))
	if len(e.Data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, e.Data...)
	}
	return append(b, '}')
}

// errorAnswer returns the JSON-RPC error object of an answer that is one.
func errorAnswer(answer json.RawMessage) (json.RawMessage, bool) {
	if len(answer) > 0 && answer[0] == errorAnswerMark {
		return answer[1:], true
	}
	return nil, false
}

// refused is a call the workbench turned down without calling the server.
func (ref toolRef) refused(reason string) json.RawMessage {
	return resultJSON(fmt.Sprintf("Cannot call tool '%s' in server '%s' (toolbox '%s'): %s", ref.Tool, ref.Server, ref.Toolbox, reason), true)
}

// failed is a call that failed on its way to or from the server.
func (ref toolRef) failed(err error) json.RawMessage {
	return resultJSON(fmt.Sprintf("Error executing tool '%s' in server '%s' (toolbox '%s'): %v", ref.Tool, ref.Server, ref.Toolbox, err), true)
}

// resultJSON is a tools/call result of one text block.
func resultJSON(text string, isError bool) json.RawMessage {
	b := append([]byte(`{"content":[{"type":"text","text":`), frame.AppendString(nil, text)...)
	if isError {
		return append(b, `}],"isError":true}`...)
	}
	return append(b, `}]}`...)
}

const refShape = `"tool" must be an object {"toolbox": "...", "server": "...", "tool": "..."} naming a tool listed by open_toolbox`

// parseUseInput reads use_tool's input: the tool identifier and the
// tool's arguments as given.
func parseUseInput(input json.RawMessage) (toolRef, json.RawMessage, error) {
	var in struct {
		Tool      json.RawMessage `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	var ref toolRef
	input = bytes.TrimSpace(input)
	if len(input) == 0 || string(input) == "null" {
		return ref, nil, errors.New(`"tool" is missing; ` + refShape)
	}
	if input[0] != '{' || frame.Unmarshal(input, &in) != nil {
		return ref, nil, errors.New(`takes a JSON object {"tool": {"toolbox", "server", "tool"}, "arguments": {...}}`)
	}
	if len(in.Tool) == 0 || string(in.Tool) == "null" {
		return ref, nil, errors.New(`"tool" is missing; ` + refShape)
	}
	if in.Tool[0] != '{' || frame.Unmarshal(in.Tool, &ref) != nil {
		return ref, nil, errors.New(refShape)
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"toolbox", ref.Toolbox}, {"server", ref.Server}, {"tool", ref.Tool}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return ref, nil, fmt.Errorf("the tool identifier needs a non-empty %s: %s", strings.Join(missing, ", "), refShape)
	}
	return ref, in.Arguments, nil
}

// objectArgs returns use_tool's "arguments" as a JSON object. Absent or
// null means {}. A string holding a JSON object — a common slip of models —
// is accepted as that object.
func objectArgs(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), nil
	}
	if raw[0] == '"' {
		var s string
		if err := frame.Unmarshal(raw, &s); err == nil {
			if inner := bytes.TrimSpace([]byte(s)); len(inner) > 0 && inner[0] == '{' && json.Valid(inner) {
				return inner, nil
			}
		}
	}
	if raw[0] != '{' {
		return nil, errors.New(`"arguments" must be a JSON object of the tool's arguments`)
	}
	return raw, nil
}
