package workbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/live"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
	"github.com/mcpworkbench/mcp-workbench/internal/permissions"
)

// liveServers is what the workbench's state file says of its servers (see
// internal/live): the web UI's Now page reads it.
func (w *Workbench) liveServers() []live.Server {
	var out []live.Server
	for _, tb := range w.state.Load().toolboxes {
		for _, s := range tb.servers {
			st := s.State()
			ls := live.Server{Toolbox: tb.cfg.Name, Server: s.Name, Status: string(st.Status), Failures: st.Failures}
			if st.Tools != nil {
				ls.Tools, ls.Withheld = len(st.Tools.Tools), len(st.Tools.Withheld)
			}
			if st.Err != nil {
				ls.Error = st.Err.Error()
				var le *oauth.Error
				ls.NeedsLogin = errors.As(st.Err, &le) && le.Command != ""
			}
			out = append(out, ls)
		}
	}
	return out
}

// chainChanged makes the servers' state changes poke the state file's
// publisher, after what the options' own Changed does.
func chainChanged(do *downstream.Options, p *live.Publisher) {
	if prev := do.Changed; prev != nil {
		do.Changed = func() { prev(); p.Poke() }
		return
	}
	do.Changed = p.Poke
}

// recorded wraps the reply of a use_tool call so that its answer goes to
// the activity record (internal/live): the host, the tool, how long, the
// outcome and the sizes, never the arguments or the result. The record is
// written by another goroutine; here only the answer's ends are looked at.
func (w *Workbench) recorded(ref toolRef, args json.RawMessage, scope string, rec *decided, reply func(json.RawMessage)) func(json.RawMessage) {
	start := time.Now()
	return func(res json.RawMessage) {
		outcome := "ok"
		if isErrorResult(res) {
			outcome = "error"
		}
		name, version := w.hostOf(scope)
		live.Record(live.Call{Time: start, PID: os.Getpid(), Toolbox: ref.Toolbox, Server: ref.Server, Tool: ref.Tool,
			Ms: time.Since(start).Milliseconds(), Outcome: outcome, Bytes: len(res), ArgBytes: len(args), Checked: rec != nil, Permission: rec.get(),
			Host: name, HostVersion: version})
		reply(res)
	}
}

// hostOf is the name and version of the host a call comes from: the
// clientInfo of a 2026-07-28 request over HTTP (its scope), else of the
// host connection's initialize.
func (w *Workbench) hostOf(scope string) (name, version string) {
	if rest, ok := strings.CutPrefix(scope, "client "); ok {
		name, version, _ = strings.Cut(rest, "\x00")
		return name, version
	}
	if hc := w.host.Load(); hc != nil {
		if ss := hc.ss.Load(); ss != nil {
			if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
				return p.ClientInfo.Name, p.ClientInfo.Version
			}
		}
	}
	return "", ""
}

// decided is the permission decision of one call that the rules govern,
// for its activity record: the rule's, or the answer to the question
// (the host's prompt, the web UI's), as logDecision last logged it.
type decided struct {
	mu sync.Mutex
	s  string
}

func (d *decided) set(s string) {
	if d != nil {
		d.mu.Lock()
		d.s = s
		d.mu.Unlock()
	}
}

func (d *decided) get() string {
	if d == nil {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.s
}

// isErrorResult reports whether a result object says "isError": true,
// looking only at its first and last bytes (where encoders put it), so
// that a large result costs nothing more; an error answer (see
// errorAnswerMark) counts as one.
func isErrorResult(res json.RawMessage) bool {
	if len(res) > 0 && res[0] == errorAnswerMark {
		return true
	}
	const ends = 128
	has := func(b []byte) bool {
		return bytes.Contains(b, []byte(`"isError":true`)) || bytes.Contains(b, []byte(`"isError": true`))
	}
	if len(res) <= 2*ends {
		return has(res)
	}
	return has(res[:ends]) || has(res[len(res)-ends:])
}

// uiAskWait bounds how long a call waits for an answer in the web UI:
// one whose host cannot ask, or whose rules ask there.
var uiAskWait = 2 * time.Minute

// askThroughUI puts a permission question the host cannot ask to the web
// UI, when one runs (mcp-workbench ui), and waits for the user's answer
// up to uiAskWait. answered is false when no UI runs or nobody answered,
// and note then says so for the refusal: the call is refused as before.
// Otherwise refusal is nil for an allowed call, else the call's refusal.
func (w *Workbench) askThroughUI(ctx context.Context, rec *decided, s *downstream.Server, ref toolRef, args json.RawMessage, v permissions.Verdict, scope, why string) (refusal json.RawMessage, answered bool, note string) {
	if !live.UIRuns() {
		return nil, false, ""
	}
	w.logDecision(rec, ref, "ask", permissions.Ask, "rule", v.By+" (in the web UI: the host cannot ask)")
	refusal, answered, err := w.answerInUI(ctx, rec, ref, scope, live.Question{Toolbox: ref.Toolbox, Server: ref.Server, Tool: ref.Tool, Rule: v.By,
		Args: shownArgs(args, secretsOf(s.Config())), Why: why})
	switch {
	case answered:
		return refusal, true, ""
	case err != nil:
		w.log.Warn("permission: could not ask in the web UI", "error", err)
		return nil, false, "; nor could the web UI (mcp-workbench ui) be asked: " + err.Error()
	}
	return nil, false, fmt.Sprintf("; the question waited in the web UI (mcp-workbench ui) for %v without an answer", uiAskWait)
}

// askInPage puts a permission question to the web UI's Questions page
// because the rules say so (by: "askIn": "page" and where), whatever the
// host can do, and whether or not a web UI runs yet: one opened while the
// call waits shows it. It returns nil for an allowed call, else the
// call's refusal; with no answer within uiAskWait the call is refused.
func (w *Workbench) askInPage(ctx context.Context, rec *decided, s *downstream.Server, ref toolRef, args json.RawMessage, v permissions.Verdict, scope, by string) json.RawMessage {
	if !live.UIRuns() {
		w.log.Warn("permission: a question waits in the web UI's Questions page, and no web UI runs: run mcp-workbench ui to answer it",
			"toolbox", ref.Toolbox, "server", ref.Server, "tool", ref.Tool, "wait", uiAskWait)
	}
	w.logDecision(rec, ref, "ask", permissions.Ask, "rule", v.By+" (in the web UI: askIn "+by+")")
	refusal, answered, err := w.answerInUI(ctx, rec, ref, scope, live.Question{Toolbox: ref.Toolbox, Server: ref.Server, Tool: ref.Tool, Rule: v.By,
		Args: shownArgs(args, secretsOf(s.Config())), AskIn: permissions.AskInPage, Why: by})
	if answered {
		return refusal
	}
	asks := fmt.Sprintf("the workbench configuration asks the user before this tool runs (%s), in the workbench's web UI (\"askIn\": %s)", v.By, by)
	if err != nil {
		w.log.Warn("permission: could not ask in the web UI", "error", err)
		w.logDecision(rec, ref, "answer", permissions.Deny, "rule", "the question could not be put to the web UI: "+err.Error())
		return ref.refused(fmt.Sprintf("%s, and the question could not be put there: %v. The call is refused; the server was not called.", asks, err))
	}
	w.logDecision(rec, ref, "answer", permissions.Deny, "rule", fmt.Sprintf("no answer in the web UI within %v", uiAskWait))
	return ref.refused(fmt.Sprintf("%s; the question waited there for %v without an answer, and the call is refused: the server was not called. "+
		"Tell the user: `mcp-workbench ui` shows the waiting questions (Questions page); with it open, call again to be asked again.", asks, uiAskWait))
}

// answerInUI puts q to the web UI and waits up to uiAskWait for the
// answer. answered is false when nobody answered in time or the question
// could not be put (err); else refusal is nil for an allowed call, or the
// call's refusal.
func (w *Workbench) answerInUI(ctx context.Context, rec *decided, ref toolRef, scope string, q live.Question) (refusal json.RawMessage, answered bool, err error) {
	action, err := live.AskUI(ctx, q, uiAskWait)
	switch {
	case err != nil && ctx.Err() != nil:
		return ref.failed(ctx.Err()), true, nil
	case err != nil:
		return nil, false, err
	case action == live.AllowOnce:
		w.logDecision(rec, ref, "answer", permissions.Allow, "user", "allowed once, in the web UI")
		return nil, true, nil
	case action == live.AllowSession:
		if w.allowed.add(scope, ref) {
			w.logDecision(rec, ref, "answer", permissions.Allow, "user", "allowed for the rest of the session, in the web UI")
		} else {
			w.logDecision(rec, ref, "answer", permissions.Allow, "user", "allowed for the rest of the session in the web UI, kept for this call only")
		}
		return nil, true, nil
	case action == live.Deny:
		w.logDecision(rec, ref, "answer", permissions.Deny, "user", "denied in the web UI")
		return ref.refused("the user denied this call in the workbench's web UI; the server was not called. Do not call it again unless the user asks for it."), true, nil
	}
	return nil, false, nil
}
