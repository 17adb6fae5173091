package workbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostMeta is the _meta of both tools, for hosts that read it: Claude
// Code keeps a tool with "anthropic/alwaysLoad" loaded instead of behind
// its own tool search, and hands the model results up to
// "anthropic/maxResultSizeChars" inline instead of as a file preview.
func hostMeta() mcp.Meta {
	return mcp.Meta{"anthropic/alwaysLoad": true, "anthropic/maxResultSizeChars": 500000}
}

// openToolboxTool describes open_toolbox. The toolbox names appear in its
// schema and description too, because some hosts drop the instructions.
func (w *Workbench) openToolboxTool() *mcp.Tool {
	names := w.state.Load().cfg.ToolboxNames()
	nameSchema := map[string]any{"type": "string", "description": "Name of the toolbox to open (optional with query: without it, every toolbox is searched)"}
	list := "none configured"
	if len(names) > 0 {
		nameSchema["enum"] = names
		list = strings.Join(names, ", ")
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"toolbox_name": nameSchema,
			"query": map[string]any{"type": "string", "maxLength": maxQueryChars,
				"description": "The first action the task needs, in a few words (\"read the diff of pull request 12\", \"take a screenshot of the page\"), rather than its goal (\"review PR 12\"): returns the best matching tools of every toolbox, or of toolbox_name, without opening whole toolboxes"},
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": maxLimit,
				"description": "With query: how many matching tools to return whole (default 5); the next matches are named after them"},
			"tools": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": maxSelectTools,
				"description": "With toolbox_name: return exactly these tools (names as listed, or server/name)"},
			"refresh": map[string]any{"type": "boolean", "description": "List the tools again even if the toolbox is already open"},
		},
	}
	return &mcp.Tool{
		Name: "open_toolbox",
		Description: "Find and open tools. With query, searches the tools of every toolbox and returns the best matches, " +
			"each with the name, description and inputSchema to call it with use_tool: the cheapest way to reach a tool. " +
			"Write the query as the first action to take, not the goal: \"read the diff of pull request 12\" finds the tool " +
			"for \"review PR 12\" far more often (the goal may follow, after \"then\"). " +
			"With toolbox_name alone, opens the toolbox: starts its MCP servers and returns all their tools. " +
			"With toolbox_name and tools, returns just those tools. Toolboxes: " + list + ".",
		InputSchema: mustJSON(schema),
		Meta:        hostMeta(),
	}
}

func useToolTool() *mcp.Tool {
	str := map[string]any{"type": "string"}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"tool": map[string]any{
				"type":        "object",
				"description": "Which tool: toolbox_name, source_server and name of a tool listed by open_toolbox",
				"properties":  map[string]any{"toolbox": str, "server": str, "tool": str},
				"required":    []string{"toolbox", "server", "tool"},
			},
			"arguments": map[string]any{"type": "object", "description": "The tool's arguments, as its inputSchema says"},
		},
		"required": []string{"tool"},
	}
	return &mcp.Tool{
		Name: "use_tool",
		Description: "Call a tool of a toolbox (the toolbox is opened first if needed). Returns the tool's own result. " +
			`Example: {"tool":{"toolbox":"dev","server":"filesystem","tool":"read_file"},"arguments":{"path":"/tmp/a.txt"}}`,
		InputSchema: mustJSON(schema),
		Meta:        hostMeta(),
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func textResult(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}

func errorResult(format string, args ...any) *mcp.CallToolResult {
	return textResult(fmt.Sprintf(format, args...), true)
}

// toolboxNotFound is the refusal for an unknown toolbox name.
func (w *Workbench) toolboxNotFound(name string) string {
	names := w.state.Load().cfg.ToolboxNames()
	if len(names) == 0 {
		return fmt.Sprintf("Toolbox '%s' not found. No toolboxes are configured.", name)
	}
	return fmt.Sprintf("Toolbox '%s' not found. Available toolboxes: %s", name, strings.Join(names, ", "))
}

func (w *Workbench) handleOpen(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	in, err := parseOpenArgs(req.Params.Arguments)
	if err != nil {
		return textResult(err.Error(), true), nil
	}
	switch {
	case in.query != "":
		return w.Search(ctx, in.toolbox, in.query, in.limit), nil
	case in.tools != nil:
		return w.Select(ctx, in.toolbox, in.tools), nil
	case in.toolbox == "":
		return errorResult(`open_toolbox needs "toolbox_name" (one of %s) or a "query" saying what the task needs`, strings.Join(w.state.Load().cfg.ToolboxNames(), ", ")), nil
	}
	retry := w.finishLogins(ctx, req.Session, req.Params)
	return w.Open(withHost(ctx, req.Session, retry), in.toolbox, in.refresh), nil
}

// Open is open_toolbox: it starts the toolbox's servers that are not
// running, in parallel, and returns the tool's result. refresh lists the
// tools of running servers again.
func (w *Workbench) Open(ctx context.Context, toolbox string, refresh bool) *mcp.CallToolResult {
	tb := w.state.Load().byName[toolbox]
	if tb == nil {
		return textResult(w.toolboxNotFound(toolbox), true)
	}
	res, err := w.open(ctx, tb, refresh)
	if err != nil {
		return errorResult("Could not open toolbox '%s': %v", tb.cfg.Name, err)
	}
	return res
}

// open connects every enabled server of tb in parallel (those already
// connected return at once), and renders the result. refresh lists the
// tools of connected servers again. Without refresh, a toolbox whose
// servers' tools are all in the catalog (or live) is answered from it at
// once while the servers start in the background (see openFromCatalog).
func (w *Workbench) open(ctx context.Context, tb *toolbox, refresh bool) (*mcp.CallToolResult, error) {
	res, _, err := w.openCached(ctx, tb, refresh)
	return res, err
}

// openCached is open, also reporting whether the catalog answered (the
// servers may still be starting).
func (w *Workbench) openCached(ctx context.Context, tb *toolbox, refresh bool) (*mcp.CallToolResult, bool, error) {
	if !refresh && w.catalogOpens {
		if res := w.openFromCatalog(ctx, tb); res != nil {
			return res, true, nil
		}
	}
	// The open waits at most openTimeoutMs: a server still starting then
	// goes on in the background, and the next open or call picks it up.
	wctx, cancel := context.WithTimeout(ctx, w.openTimeout())
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var needLogin []*downstream.Server
	late := make([]bool, len(tb.servers))
	// Servers starting since before this open, or failing until their
	// next try: the open does not wait for them (a refresh does).
	pre := make([]*serverView, len(tb.servers))
	// What each start produced: an idleTimeoutMs shorter than the
	// slowest start may stop a server before the open renders.
	got := make([]*downstream.ToolSet, len(tb.servers))
	for i, s := range tb.servers {
		if s.Config().Disabled {
			continue
		}
		if !refresh {
			if v, ok := w.background(s, s.State()); ok {
				pre[i] = &v
				continue
			}
		}
		wg.Go(func() {
			var err error
			if refresh {
				got[i], err = s.Refresh(wctx)
			} else {
				got[i], err = s.Connect(wctx)
			}
			if err != nil && wctx.Err() != nil && ctx.Err() == nil {
				late[i] = true
			}
			if needsLogin(err) {
				mu.Lock()
				needLogin = append(needLogin, s)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if res := w.loginRequests(ctx, needLogin); res != nil {
		return res, false, nil // the host shows the login pages and opens again
	}
	views := make([]serverView, len(tb.servers))
	for i, s := range tb.servers {
		views[i] = liveView(s)
		switch {
		case pre[i] != nil && views[i].status != downstream.StatusConnected:
			views[i] = *pre[i]
		case got[i] != nil && views[i].status != downstream.StatusConnected:
			// Listed by this open, stopped since for idleness: the tools
			// are those it listed, and a call starts it again.
			views[i] = serverView{status: downstream.StatusConnected, tools: got[i]}
		case late[i] && views[i].status != downstream.StatusConnected:
			views[i] = w.startingView(s)
		}
		s.Shown(w, views[i].shown())
	}
	tb.opened.Store(true)
	return w.renderOpen(tb, views), false, nil
}

// openFromCatalog answers an open from the tool catalog when every enabled
// server that uses it has an entry there (or is running): those servers
// start in the background, so that they are ready by the first use_tool,
// which waits for a server still starting. Servers that do not use the
// catalog are started and waited for, as by any open. It returns nil when
// the catalog cannot answer: no catalog, a miss, a server whose last start
// failed, or nothing to gain (every server running or none using the
// catalog).
func (w *Workbench) openFromCatalog(ctx context.Context, tb *toolbox) *mcp.CallToolResult {
	views := make([]serverView, len(tb.servers))
	var cached, wait []int
	for i, s := range tb.servers {
		switch st := s.State(); {
		case st.Status == downstream.StatusDisabled:
			views[i] = serverView{status: downstream.StatusDisabled}
		case st.Status == downstream.StatusConnected:
			views[i] = serverView{status: downstream.StatusConnected, tools: st.Tools}
		case st.Status == downstream.StatusError:
			// Its last start failed: until its next try is due, the open
			// says so at once; then it starts again in the background. A
			// server that needs a login: the open offers it.
			if v, ok := w.background(s, st); ok {
				views[i] = v
				continue
			}
			w.log.Debug("its last start failed; the open waits for the servers", "toolbox", tb.cfg.Name, "server", s.Name)
			return nil
		case !s.UsesCatalog():
			if v, ok := w.background(s, st); ok {
				views[i] = v
				continue
			}
			wait = append(wait, i)
		default:
			ts, ok, reason := s.Cached()
			if !ok {
				w.log.Debug("not in the tool catalog; the open waits for the servers", "toolbox", tb.cfg.Name, "server", s.Name, "reason", reason)
				return nil
			}
			views[i] = serverView{status: statusStarting, tools: ts}
			cached = append(cached, i)
		}
	}
	if len(cached) == 0 {
		return nil
	}
	for _, i := range cached {
		s := tb.servers[i]
		s.Shown(w, views[i].tools)
		s.StartInBackground()
	}
	wctx, cancel := context.WithTimeout(ctx, w.openTimeout())
	defer cancel()
	var wg sync.WaitGroup
	for _, i := range wait {
		s := tb.servers[i]
		wg.Go(func() {
			_, err := s.Connect(wctx)
			views[i] = liveView(s)
			if err != nil && wctx.Err() != nil && ctx.Err() == nil {
				views[i] = w.startingView(s) // goes on in the background
			}
		})
	}
	wg.Wait()
	for i, s := range tb.servers {
		if views[i].status == downstream.StatusConnected {
			s.Shown(w, nil)
		}
	}
	tb.opened.Store(true)
	return w.renderOpen(tb, views)
}

// statusStarting is the status of a server whose tools open_toolbox shows
// from the catalog while it starts, or that is starting.
const statusStarting = downstream.StatusStarting

// serverView is what open_toolbox shows of one server.
type serverView struct {
	status downstream.Status
	tools  *downstream.ToolSet // connected or starting
	err    error               // error; starting: why the last start failed
	since  time.Time           // starting, installing: when the start began
}

// starting reports whether the view is of a server starting (or
// installing) in the background.
func (v serverView) starting() bool {
	return v.status == statusStarting || v.status == downstream.StatusInstalling
}

// why says, for a server starting in the background, since when.
func (v serverView) why(now time.Time) string {
	if v.status == downstream.StatusInstalling {
		return "installing its package since " + ago(now, v.since)
	}
	msg := "starting since " + ago(now, v.since)
	if v.err != nil {
		msg += "; its last start failed: " + v.err.Error()
	}
	return msg
}

// ago is how long ago t was, in whole seconds, as the results say it.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "a moment"
	}
	return strconv.Itoa(int(max(now.Sub(t), 0).Round(time.Second)/time.Second)) + " s"
}

// shown is what [downstream.Server.Shown] takes for the view: the tools
// shown from the catalog, or nil for the live list (or none).
func (v serverView) shown() *downstream.ToolSet {
	if v.starting() {
		return v.tools
	}
	return nil
}

// startingView is the view of a server that is starting: its state's, with
// its tools from the catalog if it has them.
func (w *Workbench) startingView(s *downstream.Server) serverView {
	v := serverView{status: statusStarting}
	if st := s.State(); st.Status == downstream.StatusStarting || st.Status == downstream.StatusInstalling {
		v.status, v.since, v.err = st.Status, st.Since, st.Err
	}
	if w.catalogOpens && s.UsesCatalog() {
		if ts, ok, _ := s.Cached(); ok {
			v.tools = ts
		}
	}
	return v
}

// background returns the view of a server that an open or a search does
// not wait for, and true: one starting since before it (in the
// background), or one whose last start failed and whose next try is not
// due yet (see [downstream.State]). A failed server whose next try is due
// is started again, in the background. It returns false for a server to
// start and wait for: one never started (or stopped since), or failed for
// want of a login, which the open offers.
func (w *Workbench) background(s *downstream.Server, st downstream.State) (serverView, bool) {
	switch st.Status {
	case downstream.StatusStarting, downstream.StatusInstalling:
		if st.Awaited {
			return serverView{}, false // an open waits for it: share its wait
		}
		return w.startingView(s), true
	case downstream.StatusError:
		if st.NextTry.IsZero() {
			return serverView{}, false
		}
		now := time.Now()
		if now.Before(st.NextTry) {
			return serverView{status: downstream.StatusError, err: &scheduledError{st: st, now: now}}, true
		}
		s.StartInBackground()
		return w.startingView(s), true
	}
	return serverView{}, false
}

// scheduledError is a failed server's last error with its schedule, as an
// open or a search shows it; fresh when the open or search itself tried
// the server.
type scheduledError struct {
	st    downstream.State
	now   time.Time
	fresh bool
}

func (e *scheduledError) Error() string {
	if e.fresh {
		return fmt.Sprintf(`%v; next try in %s (open its toolbox with "refresh": true to try now)`, e.st.Err, ago(e.st.NextTry, e.now))
	}
	return fmt.Sprintf(`failed %s ago: %v; next try in %s (open its toolbox with "refresh": true to try now)`,
		ago(e.now, e.st.FailedAt), e.st.Err, ago(e.st.NextTry, e.now))
}

func (e *scheduledError) Unwrap() error { return e.st.Err }

func liveView(s *downstream.Server) serverView {
	st := s.State()
	v := serverView{status: st.Status, tools: st.Tools, err: st.Err, since: st.Since}
	if st.Status == downstream.StatusError && !st.NextTry.IsZero() {
		v.err = &scheduledError{st: st, now: time.Now(), fresh: true}
	}
	return v
}

// withSchedule is err, a start's failure, with when opens and searches
// try the server again, if it is on a schedule now.
func withSchedule(s *downstream.Server, err error) error {
	if st := s.State(); st.Status == downstream.StatusError && !st.NextTry.IsZero() {
		return &scheduledError{st: st, now: time.Now(), fresh: true}
	}
	return err
}

// renderOpen builds open_toolbox's result: compact JSON with the toolbox,
// each server's status, and every tool as the server sent it plus
// source_server and toolbox_name, within the character budget (see
// [Workbench.renderTools]). If no enabled server could start, the result
// is an error naming each one and why. servers_connected counts the
// servers whose tools are offered: connected, or starting with their
// tools from the catalog.
func (w *Workbench) renderOpen(tb *toolbox, views []serverView) *mcp.CallToolResult {
	type serverLine struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Tools  int    `json:"tools"`
		Error  string `json:"error,omitempty"`
		// Warnings: tools whose arguments the workbench cannot check.
		Warnings []string `json:"warnings,omitempty"`
		// Withheld: tools left out until the user approves them (changed
		// since approved, or flagged); Changed: tools served although
		// they changed ("toolChanges": "warn"); Flagged: what screening
		// found in the tools' definitions.
		Withheld []string `json:"withheld,omitempty"`
		Changed  []string `json:"changed,omitempty"`
		Flagged  []string `json:"flagged,omitempty"`
		// Note: since when a server whose tools are not known yet is
		// starting (or installing its package).
		Note string `json:"note,omitempty"`
	}
	now := time.Now()
	lines := make([]serverLine, 0, len(tb.servers))
	var tools []found
	var starting []string
	connected, failed := 0, 0
	for i, s := range tb.servers {
		v := views[i]
		line := serverLine{Name: s.Name, Status: string(v.status)}
		switch v.status {
		case downstream.StatusConnected, statusStarting, downstream.StatusInstalling:
			if v.tools == nil {
				starting = append(starting, s.Name) // its tools are not known yet
				line.Note = v.why(now)
				break
			}
			connected++
			line.Tools = len(v.tools.Tools)
			k := &known{tb: tb, s: s, serverView: v}
			for _, t := range v.tools.Tools {
				tools = append(tools, found{k, t})
				if t.Unchecked != "" {
					line.Warnings = append(line.Warnings, fmt.Sprintf("tool '%s': %s", t.Name, t.Unchecked))
				}
				if t.Change != "" {
					line.Changed = append(line.Changed, fmt.Sprintf("tool '%s': %s", t.Name, t.Change))
				}
				for _, f := range t.Flags {
					line.Flagged = append(line.Flagged, fmt.Sprintf("tool '%s': %s", t.Name, f))
				}
			}
			for _, wh := range v.tools.Withheld {
				line.Withheld = append(line.Withheld, fmt.Sprintf("tool '%s': %s; %s", wh.Name, wh.Reason, downstream.ForTheUser))
			}
		case downstream.StatusError, downstream.StatusIdle:
			failed++
			line.Status = string(downstream.StatusError)
			if v.err != nil {
				line.Error = v.err.Error()
			} else {
				line.Error = "not connected"
			}
		}
		lines = append(lines, line)
	}
	if connected == 0 && failed > 0 && len(starting) == 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "Could not open toolbox '%s': no server could be started.", tb.cfg.Name)
		for _, l := range lines {
			if l.Status == string(downstream.StatusError) {
				fmt.Fprintf(&b, "\n- server '%s': %s", l.Name, l.Error)
			}
		}
		return textResult(b.String(), true)
	}
	buf := bytes.NewBuffer(tb.head())
	fmt.Fprintf(buf, `,"servers_connected":%d,"servers":`, connected)
	buf.Write(mustJSON(lines))
	var note string
	if len(starting) > 0 {
		note = fmt.Sprintf("Still starting, their tools not known yet: %s. They go on starting in the background: open the toolbox again in a moment to see their tools.", strings.Join(starting, ", "))
	}
	res, _ := w.renderTools(buf.Bytes(), tools, nil, note, true)
	return res
}
