package workbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/permissions"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Permissions (internal/permissions has the rules). Before a use_tool
// call reaches its server, the configuration's rules decide: allow (the
// call goes on as without rules), deny (a tool error; the server is never
// called) or ask. An asked call waits on a goroutine of its own while the
// workbench asks the user through the host with a form (elicitation/create):
// a 2025 host gets the workbench's own request; a 2026-07-28 host gets the
// form as the call's input_required, and its retry carries the answer
// (roundtrip.go). Only an accept lets the call go on; a decline, a
// dismissal, an answer that does not fit the form or a host that cannot
// show one refuse it. The user may allow the tool for the rest of the
// session: that host session's alone (grantScope). Where the rules say
// "askIn": "page" (Policy.AskIn), the question goes to the web UI's page
// instead, whatever the host can do (askInPage, live.go).
//
// A rule that names the tool decides at once; a decision that depends on
// the tool's annotations needs the server's live tool list, and waits for
// its start.

// policyFor returns the rules that apply to ref's server under cfg: read
// from the configuration in force, since a reload that changes only
// rules keeps the servers and their toolbox objects.
func policyFor(cfg *config.Config, ref toolRef) permissions.Policy {
	pol := permissions.Policy{Top: cfg.Permissions}
	if tc := cfg.Toolbox(ref.Toolbox); tc != nil {
		pol.Toolbox = tc.Permissions
		if sc := tc.Server(ref.Server); sc != nil {
			pol.Server = sc.Permissions
		}
	}
	return pol
}

// allowances are the tools the user allowed for the rest of a host
// session, by the session's scope.
type allowances struct {
	mu sync.Mutex
	m  map[grant]bool
}

// grant is one tool allowed in one host session.
type grant struct {
	scope string
	ref   toolRef
}

// Scopes of the host sessions a Workbench serves. Over stdio, in a shared
// workbench's session and in a 2025 host's session over HTTP, the
// Workbench serves one host session: its scope is "". Over HTTP, the
// 2026-07-28 requests of one user, which come without a session, share
// one Workbench: there a host session is the requests that declare one
// client (the clientInfo name and version in their _meta), and a request
// that declares none is a session of its own that keeps no grant.
const noScope = "\x00"

// maxGrants bounds the grants a Workbench keeps: past it, an accept "for
// the session" counts for its call alone.
const maxGrants = 4096

// grantScope is the scope of a 2026-07-28 request over HTTP, from its
// _meta's clientInfo.
func grantScope(meta map[string]any) string {
	ci, _ := meta[mcp.MetaKeyClientInfo].(map[string]any)
	name, _ := ci["name"].(string)
	version, _ := ci["version"].(string)
	if name == "" {
		return noScope
	}
	return "client " + name + "\x00" + version
}

func (a *allowances) has(scope string, ref toolRef) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.m[grant{scope, ref}]
}

// add keeps the grant, and reports whether it could.
func (a *allowances) add(scope string, ref toolRef) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if scope == noScope || len(a.m) >= maxGrants {
		return false
	}
	if a.m == nil {
		a.m = map[grant]bool{}
	}
	a.m[grant{scope, ref}] = true
	return true
}

// logDecision writes the record of one ask, answer or denial, and keeps
// the last for the call's activity record (rec, which may be nil).
func (w *Workbench) logDecision(rec *decided, ref toolRef, event string, d permissions.Decision, who, why string) {
	rec.set(d.String() + ": " + why + " (" + who + ")")
	w.log.Info("permission "+event, "toolbox", ref.Toolbox, "server", ref.Server, "tool", ref.Tool, "decision", d.String(), "who", who, "why", why)
}

// guarded serves a call under the permission rules pol.
func (w *Workbench) guarded(pol permissions.Policy, tb *toolbox, s *downstream.Server, ref toolRef, args, input json.RawMessage, scope string, progress downstream.ProgressFunc, ask downstream.AskFunc, rec *decided, reply func(json.RawMessage)) (cancel func()) {
	v, known := pol.ByName(ref.Server, ref.Tool)
	if !known {
		t, err := s.Resolve(w, ref.Tool, args)
		if err != nil {
			reply(ref.result(nil, err, s, w))
			return func() {}
		}
		if t != nil {
			h := permissions.HintsOf(t.JSON)
			v, known = pol.Decide(ref.Server, ref.Tool, &h), true
		}
	}
	if known {
		switch {
		case v.Decision == permissions.Deny:
			reply(w.deny(rec, ref, v))
			return func() {}
		case v.Decision != permissions.Ask:
			rec.set(v.Decision.String() + ": " + v.By + " (rule)")
			return w.call(tb, s, ref, args, progress, ask, reply)
		case w.allowed.has(scope, ref):
			w.logDecision(rec, ref, "answer", permissions.Allow, "user", "allowed for the rest of the session earlier")
			return w.call(tb, s, ref, args, progress, ask, reply)
		case w.approvedByHook(pol, rec, ref, args, input):
			return w.call(tb, s, ref, args, progress, ask, reply)
		}
	}
	// Asked, or waiting for the tool's annotations: on a goroutine of its
	// own, which cancel ends.
	g := &gated{}
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		defer stop()
		if !known {
			if _, err := s.Connect(ctx); err != nil {
				reply(ref.result(nil, err, s, w))
				return
			}
			t, err := s.Resolve(w, ref.Tool, args)
			if err != nil {
				reply(ref.result(nil, err, s, w))
				return
			}
			var hints *permissions.Hints
			if t != nil {
				h := permissions.HintsOf(t.JSON)
				hints = &h
			}
			v = pol.Decide(ref.Server, ref.Tool, hints)
			switch {
			case v.Decision == permissions.Deny:
				reply(w.deny(rec, ref, v))
				return
			case v.Decision != permissions.Ask:
				rec.set(v.Decision.String() + ": " + v.By + " (rule)")
				g.start(w.call(tb, s, ref, args, progress, ask, reply))
				return
			case w.allowed.has(scope, ref) || w.approvedByHook(pol, rec, ref, args, input):
				if w.allowed.has(scope, ref) {
					w.logDecision(rec, ref, "answer", permissions.Allow, "user", "allowed for the rest of the session earlier")
				}
				g.start(w.call(tb, s, ref, args, progress, ask, reply))
				return
			}
		}
		if refusal := w.askUser(ctx, pol, rec, s, ref, args, v, scope, ask); refusal != nil {
			reply(refusal)
			return
		}
		g.start(w.call(tb, s, ref, args, progress, ask, reply))
	}()
	return func() {
		stop()
		g.cancel()
	}
}

// approvals checks the approvals of the host's own prompt (the Claude
// Code hook), each good once for the user: whichever session or process
// of theirs it comes to (the record beside the key).
var approvals = permissions.NewApprovals("")

// approvedByHook reports whether the call's use_tool input carries an
// approval of Claude Code's prompt for this very call (see
// permissions.Approvals); one that does not check out is logged and
// ignored: the call is asked about as usual. Where the rules ask in the
// web UI's page ("askIn": "page"), the page is the one place to answer:
// an approval is not looked at (the hook does not ask for those calls).
func (w *Workbench) approvedByHook(pol permissions.Policy, rec *decided, ref toolRef, args, input json.RawMessage) bool {
	if len(input) == 0 || !bytes.Contains(input, []byte(permissions.ApprovalField)) {
		return false
	}
	if where, by := pol.AskIn(); where == permissions.AskInPage {
		w.log.Warn("permission: the call carries an approval of the host's prompt, which does not count where the rules ask in the web UI's page; asking there", "toolbox", ref.Toolbox, "server", ref.Server, "tool", ref.Tool, "askIn", by)
		return false
	}
	var in map[string]json.RawMessage
	var token string
	if json.Unmarshal(input, &in) != nil || json.Unmarshal(in[permissions.ApprovalField], &token) != nil || token == "" {
		return false
	}
	ok, why := approvals.Take(token, ref.Toolbox, ref.Server, ref.Tool, args, time.Now())
	if !ok {
		w.log.Warn("permission: the call carries an approval that does not count; asking as usual", "toolbox", ref.Toolbox, "server", ref.Server, "tool", ref.Tool, "why", why)
		return false
	}
	w.logDecision(rec, ref, "answer", permissions.Allow, "host", "approved in the host's own prompt (the hook)")
	return true
}

// gated is the call an asked call becomes once allowed: cancel reaches it
// whenever it comes.
type gated struct {
	mu        sync.Mutex
	stop      func()
	cancelled bool
}

func (g *gated) start(stop func()) {
	g.mu.Lock()
	cancelled := g.cancelled
	if !cancelled {
		g.stop = stop
	}
	g.mu.Unlock()
	if cancelled {
		stop()
	}
}

func (g *gated) cancel() {
	g.mu.Lock()
	g.cancelled = true
	stop := g.stop
	g.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// deny is the refusal of a call the configuration denies.
func (w *Workbench) deny(rec *decided, ref toolRef, v permissions.Verdict) json.RawMessage {
	w.logDecision(rec, ref, "denial", permissions.Deny, "rule", v.By)
	return ref.refused(fmt.Sprintf("the workbench configuration denies this tool (%s). Do not call it again; if the user wants it used, they can change that rule in %s.", v.By, w.configFile()))
}

func (w *Workbench) configFile() string {
	if p := w.state.Load().cfg.Path; p != "" {
		return p
	}
	return "the workbench configuration"
}

// sessionKey is the form's one field: allow the tool for the rest of the
// session.
const sessionKey = "allowForSession"

// askUser asks the user, through the host or, where the rules say so
// ("askIn": "page"), in the web UI's page, whether the call may go on. It
// returns nil if it may, else the call's refusal.
func (w *Workbench) askUser(ctx context.Context, pol permissions.Policy, rec *decided, s *downstream.Server, ref toolRef, args json.RawMessage, v permissions.Verdict, scope string, ask downstream.AskFunc) json.RawMessage {
	if where, by := pol.AskIn(); where == permissions.AskInPage {
		return w.askInPage(ctx, rec, s, ref, args, v, scope, by)
	}
	params := permissionForm(ref, shownArgs(args, secretsOf(s.Config())), v)
	cannot := func(why string) json.RawMessage {
		refusal, answered, note := w.askThroughUI(ctx, rec, s, ref, args, v, scope, why)
		if answered {
			return refusal
		}
		why += note
		w.logDecision(rec, ref, "answer", permissions.Deny, "host", "the host cannot ask the user: "+why)
		return ref.refused(fmt.Sprintf("the workbench configuration asks the user before this tool runs (%s), and the host cannot ask: %s. "+
			"Tell the user: to allow it, they can change that rule to \"allow\" in %s, or use a host that supports elicitation forms.", v.By, why, w.configFile()))
	}
	if ask == nil {
		ask = w.Ask // it checks what the host can answer itself
	} else if err := canAnswer(w.HostCapabilities(), downstream.MethodElicit, params); err != nil {
		return cannot(err.Error())
	}
	w.logDecision(rec, ref, "ask", permissions.Ask, "rule", v.By)
	notFit := func(what string) json.RawMessage {
		w.logDecision(rec, ref, "answer", permissions.Deny, "host", "the answer does not match the form")
		return ref.refused(fmt.Sprintf("the host's answer to the permission question does not match its form (%s; the form has only %q, true or false); the call is refused. Call again to be asked again.", what, sessionKey))
	}
	raw, err := ask(ctx, downstream.MethodElicit, params)
	if err != nil {
		if ctx.Err() != nil {
			return ref.failed(ctx.Err())
		}
		if isContentMismatch(err) {
			// The SDK checked a 2025 host's accept against the form.
			return notFit("its content does not have the types the form gives")
		}
		return cannot(err.Error())
	}
	var ans struct {
		Action  string                     `json:"action"`
		Content map[string]json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		w.logDecision(rec, ref, "answer", permissions.Deny, "host", "the answer is not an elicitation result")
		return ref.refused("the host's answer to the permission question is not an elicitation result; the call is refused. Call again to be asked again.")
	}
	switch ans.Action {
	case "accept":
		session := false
		for k, val := range ans.Content {
			var b bool
			if k != sessionKey {
				return notFit(fmt.Sprintf("it has %q", k))
			}
			if json.Unmarshal(val, &b) != nil {
				return notFit(fmt.Sprintf("its %q is not true or false", k))
			}
			session = b
		}
		switch {
		case session && w.allowed.add(scope, ref):
			w.logDecision(rec, ref, "answer", permissions.Allow, "user", "accepted, for the rest of the session")
		case session:
			w.logDecision(rec, ref, "answer", permissions.Allow, "user", "accepted for the rest of the session, kept for this call only: the host's requests name no client (clientInfo), or too many tools are allowed already")
		default:
			w.logDecision(rec, ref, "answer", permissions.Allow, "user", "accepted, this call")
		}
		return nil
	case "decline":
		w.logDecision(rec, ref, "answer", permissions.Deny, "user", "declined")
		return ref.refused("the user declined this call when asked; the server was not called. Do not call it again unless the user asks for it.")
	case "cancel":
		w.logDecision(rec, ref, "answer", permissions.Deny, "user", "dismissed the question")
		return ref.refused("the user dismissed the permission question without allowing the call; the server was not called.")
	}
	w.logDecision(rec, ref, "answer", permissions.Deny, "host", "an unknown action")
	return ref.refused(fmt.Sprintf("the host answered the permission question with the action %q, which is none of accept, decline and cancel; the call is refused.", ans.Action))
}

// isContentMismatch reports whether err is the SDK's refusal of a 2025
// host's elicitation answer whose content does not fit the form's schema
// (ServerSession.Elicit validates an accept; its error is not typed).
func isContentMismatch(err error) bool {
	return strings.Contains(err.Error(), "does not match requested schema")
}

// permissionForm is the elicitation that asks the user about a call.
func permissionForm(ref toolRef, shown string, v permissions.Verdict) json.RawMessage {
	msg := fmt.Sprintf("Allow tool '%s' of server '%s' (toolbox '%s') to run?\n\nArguments: %s\n\nThe workbench asks because of %s.",
		ref.Tool, ref.Server, ref.Toolbox, shown, v.By)
	form := map[string]any{
		"mode":    "form",
		"message": msg,
		"requestedSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				sessionKey: map[string]any{
					"type":        "boolean",
					"title":       "Allow this tool for the rest of the session",
					"description": fmt.Sprintf("Do not ask again for tool '%s' of server '%s' until this session ends.", ref.Tool, ref.Server),
					"default":     false,
				},
			},
		},
	}
	return mustJSON(form)
}

// Bounds of the arguments a permission question shows.
const (
	maxShownArgs   = 1500
	maxShownString = 200
)

// secretWords mark argument names whose values are never shown.
var secretWords = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "api-key", "authorization", "credential", "cookie", "private_key", "privatekey"}

// secretsOf returns the values of a server's configuration that are
// secrets (its env and headers values, its OAuth client secret), so that
// an argument that repeats one is never shown.
func secretsOf(sc *config.Server) []string {
	var out []string
	add := func(v string) {
		if len(v) >= 6 {
			out = append(out, v)
		}
	}
	for _, v := range sc.Env {
		add(v)
	}
	for _, v := range sc.Headers {
		add(v)
	}
	if sc.OAuth != nil {
		add(sc.OAuth.ClientSecret)
	}
	return out
}

// shownArgs renders a call's arguments for the question: values of
// secret-looking names and configured secrets masked, long strings and the
// whole cut.
func shownArgs(args json.RawMessage, secrets []string) string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return "(not shown: not a JSON object)"
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				lk := strings.ToLower(k)
				if slices.ContainsFunc(secretWords, func(w string) bool { return strings.Contains(lk, w) }) {
					x[k] = "***"
					continue
				}
				x[k] = walk(e)
			}
			return x
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
			return x
		case string:
			for _, s := range secrets {
				x = strings.ReplaceAll(x, s, "***")
			}
			return cut(x, maxShownString)
		}
		return v
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		return "(not shown)"
	}
	return cut(string(b), maxShownArgs)
}

// cut shortens s to at most n bytes, at a character boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… (%d more bytes)", len(s)-n)
}
