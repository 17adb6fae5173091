package workbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/search"
	"github.com/mcpworkbench/mcp-workbench/internal/serverproc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Discovery: open_toolbox with a "query" searches the tools of every
// toolbox (or of one) and returns the best matches; with "tools" it
// returns the named tools of one toolbox. Both answer from what is known
// of each server without starting it: its live list, else the tool
// catalog. Only a server known to neither is started, to be listed, as an
// open would; use_tool starts the others when a tool of theirs is called.

// Limits of open_toolbox's discovery arguments.
const (
	defaultLimit   = 5
	maxLimit       = 20
	maxQueryChars  = 1000
	maxSelectTools = 50
	// moreMatches is how many matches past limit a search names (without
	// their objects), for the model to ask for.
	moreMatches = 10
)

// openArgs are open_toolbox's arguments, checked.
type openArgs struct {
	toolbox string // "" when not given
	refresh bool
	query   string // "" when not given
	limit   int
	tools   []string // nil when not given
}

// parseOpenArgs reads open_toolbox's arguments, with an error in the
// tool's terms for each one that is wrong: which field, and what it takes.
func parseOpenArgs(raw json.RawMessage) (openArgs, error) {
	var in struct {
		ToolboxName json.RawMessage `json:"toolbox_name"`
		Refresh     json.RawMessage `json:"refresh"`
		Query       json.RawMessage `json:"query"`
		Limit       json.RawMessage `json:"limit"`
		Tools       json.RawMessage `json:"tools"`
	}
	a := openArgs{limit: defaultLimit}
	if len(raw) > 0 && string(raw) != "null" {
		if err := frame.Unmarshal(raw, &in); err != nil {
			return a, fmt.Errorf(`open_toolbox takes {"toolbox_name": "<name>", "refresh": true or false, "query": "<what the task needs>", "limit": 1-20, "tools": ["<tool name>", ...]}: %s`, frame.Explain(err))
		}
	}
	given := func(r json.RawMessage) bool { return len(r) > 0 && string(r) != "null" }
	if given(in.ToolboxName) {
		if err := frame.Unmarshal(in.ToolboxName, &a.toolbox); err != nil {
			return a, errors.New(`open_toolbox: "toolbox_name" must be a string, the name of a toolbox`)
		}
	}
	if given(in.Refresh) {
		if err := frame.Unmarshal(in.Refresh, &a.refresh); err != nil {
			return a, errors.New(`open_toolbox: "refresh" must be true or false`)
		}
	}
	if given(in.Query) {
		if err := frame.Unmarshal(in.Query, &a.query); err != nil {
			return a, errors.New(`open_toolbox: "query" must be a string saying what the task needs`)
		}
		if strings.TrimSpace(a.query) == "" {
			return a, errors.New(`open_toolbox: "query" is empty: say in a few words what the task needs, such as "create a pull request"`)
		}
		if n := utf8.RuneCountInString(a.query); n > maxQueryChars {
			return a, fmt.Errorf(`open_toolbox: "query" is %d characters long; at most %d are allowed: say in a few words what the task needs`, n, maxQueryChars)
		}
	}
	if given(in.Limit) {
		n, err := strconv.ParseInt(string(bytes.TrimSpace(in.Limit)), 10, 64)
		if err != nil || n < 1 || n > maxLimit {
			return a, fmt.Errorf(`open_toolbox: "limit" must be a whole number from 1 to %d, got %s`, maxLimit, serverproc.Clip(string(in.Limit), 40))
		}
		if a.query == "" {
			return a, errors.New(`open_toolbox: "limit" goes with "query": it is how many matching tools to return`)
		}
		a.limit = int(n)
	}
	if given(in.Tools) {
		var names []json.RawMessage
		if err := frame.Unmarshal(in.Tools, &names); err != nil {
			return a, errors.New(`open_toolbox: "tools" must be a list of tool names, such as ["read_file", "write_file"]`)
		}
		if len(names) == 0 {
			return a, errors.New(`open_toolbox: "tools" is empty: name the tools to return, or leave it out to open the whole toolbox`)
		}
		if len(names) > maxSelectTools {
			return a, fmt.Errorf(`open_toolbox: "tools" names %d tools; at most %d are allowed`, len(names), maxSelectTools)
		}
		a.tools = make([]string, len(names))
		for i, r := range names {
			if err := frame.Unmarshal(r, &a.tools[i]); err != nil || a.tools[i] == "" {
				return a, fmt.Errorf(`open_toolbox: "tools"[%d] must be a tool name (a non-empty string), got %s`, i, serverproc.Clip(string(r), 40))
			}
		}
		if a.toolbox == "" {
			return a, errors.New(`open_toolbox: "tools" needs "toolbox_name": the toolbox whose tools they are (a "query" searches every toolbox)`)
		}
		if a.query != "" {
			return a, errors.New(`open_toolbox: give "query" or "tools", not both`)
		}
	}
	if a.refresh && (a.query != "" || a.tools != nil) {
		return a, errors.New(`open_toolbox: "refresh" opens a whole toolbox; it does not go with "query" or "tools"`)
	}
	return a, nil
}

// known is what the workbench knows of one server's tools for a search or
// a selection.
type known struct {
	tb         *toolbox
	s          *downstream.Server
	serverView // status: connected, statusCatalog, disabled, error or statusStarting
}

// statusCatalog is the status of a server whose tools a search or a
// selection took from the tool catalog, without starting it.
const statusCatalog downstream.Status = "catalog"

// gather returns what is known of the tools of every server of tbs: the
// live list of a running server, else the catalog's, else the list of a
// start made now (in parallel, waiting at most wait, as an open does: a
// start still under way then goes on in the background). A start that
// needs a login is reported as failed: opening the toolbox offers the
// login.
func (w *Workbench) gather(ctx context.Context, tbs []*toolbox, wait time.Duration) []known {
	var out []known
	for _, tb := range tbs {
		for _, s := range tb.servers {
			k := known{tb: tb, s: s}
			switch st := s.State(); {
			case st.Status == downstream.StatusDisabled:
				k.status = downstream.StatusDisabled
			case st.Status == downstream.StatusConnected:
				k.status, k.tools = st.Status, st.Tools
			default:
				if w.catalogOpens && s.UsesCatalog() {
					if ts, ok, _ := s.Cached(); ok {
						k.status, k.tools = statusCatalog, ts
						break
					}
				}
				// Starting since before this search, or failing until its
				// next try: not waited for.
				if v, ok := w.background(s, st); ok {
					k.serverView = v
					if k.starting() {
						k.tools = nil // its catalog entry is not its tools for a search
					}
				}
			}
			out = append(out, k)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var wg sync.WaitGroup
	for i := range out {
		k := &out[i]
		if k.status != "" {
			continue
		}
		wg.Go(func() {
			ts, err := k.s.Connect(wctx)
			switch {
			case err == nil:
				k.status, k.tools = downstream.StatusConnected, ts
			case wctx.Err() != nil && ctx.Err() == nil:
				k.serverView = w.startingView(k.s) // goes on in the background
				k.tools = nil
			default:
				k.status, k.err = downstream.StatusError, withSchedule(k.s, err)
			}
		})
	}
	wg.Wait()
	return out
}

// openTimeout is how long an open waits for servers to start.
func (w *Workbench) openTimeout() time.Duration {
	if d := w.state.Load().cfg.OpenTimeout; d > 0 {
		return d
	}
	return config.DefaultOpenTimeout
}

// searchTimeout is how long a search waits for servers it knows nothing
// of: searchTimeoutMs, within openTimeoutMs.
func (w *Workbench) searchTimeout() time.Duration {
	d := w.state.Load().cfg.SearchTimeout
	if d <= 0 {
		d = config.DefaultSearchTimeout
	}
	return min(d, w.openTimeout())
}

// shownFrom notes, for each server whose tools a result showed, where they
// came from (see [downstream.Server.Shown]), and counts its toolbox as
// opened: a use_tool of a tool it showed starts only that tool's server.
func (w *Workbench) shownFrom(ks []known, used map[*downstream.Server]bool) {
	for _, k := range ks {
		if !used[k.s] {
			continue
		}
		if k.status == statusCatalog {
			k.s.Shown(w, k.tools)
		} else {
			k.s.Shown(w, nil)
		}
		k.tb.opened.Store(true)
	}
}

// found is one tool a search or selection returns.
type found struct {
	k *known
	t *downstream.Tool
}

// Search is open_toolbox with a query: the tools of toolbox (every
// toolbox when "") that best match query, best first, at most limit
// whole, and the next matches by name.
func (w *Workbench) Search(ctx context.Context, name, query string, limit int) *mcp.CallToolResult {
	st := w.state.Load()
	tbs := st.toolboxes
	if name != "" {
		tb := st.byName[name]
		if tb == nil {
			return textResult(w.toolboxNotFound(name), true)
		}
		tbs = []*toolbox{tb}
	}
	if len(tbs) == 0 {
		return textResult("No toolboxes are configured: there is nothing to search.", true)
	}
	ks := w.gather(ctx, tbs, w.searchTimeout())
	if err := ctx.Err(); err != nil {
		return errorResult("Could not search: %v", err)
	}
	ix, refs := w.searchIndex(ks)
	hits := ix.Search(query, limit+moreMatches)
	matches := make([]found, len(hits))
	for i, h := range hits {
		matches[i] = refs[h.Doc]
	}
	full := matches[:min(limit, len(matches))]
	more := matches[len(full):]

	var head bytes.Buffer
	head.WriteString(`{"query":`)
	head.Write(frame.AppendString(nil, query))
	writeSearched(&head, ks)
	var note string
	switch {
	case len(matches) == 0:
		note = "No tool matched the query. Try other words, or open a toolbox by name: " + strings.Join(st.cfg.ToolboxNames(), ", ") + "."
	default:
		note = `Call a tool with use_tool. For tools listed under "more", call open_toolbox with "toolbox_name" and "tools" to get their descriptions and schemas.`
	}
	res, used := w.renderTools(head.Bytes(), full, more, note, false)
	w.shownFrom(ks, used)
	return res
}

// indexCache keeps the search indexes of the last few sets of tool lists
// searched: building an index costs far more than a search, and the
// lists change rarely (a live list, or a catalog entry, is a new
// *downstream.ToolSet when it changes).
type indexCache struct {
	mu      sync.Mutex
	entries []*indexEntry // most recent first
}

type indexEntry struct {
	sets []*downstream.ToolSet // what was indexed, server by server
	tbs  []*toolbox
	ix   *search.Index
	refs []found
}

const indexCacheSize = 4

// searchIndex returns the index of the tools in ks and, for each
// document, the tool it is.
func (w *Workbench) searchIndex(ks []known) (*search.Index, []found) {
	var sets []*downstream.ToolSet
	var tbs []*toolbox
	for i := range ks {
		if ks[i].tools != nil {
			sets = append(sets, ks[i].tools)
			tbs = append(tbs, ks[i].tb)
		}
	}
	c := &w.indexes
	c.mu.Lock()
	for i, e := range c.entries {
		if slices.Equal(e.sets, sets) && slices.Equal(e.tbs, tbs) {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			c.mu.Unlock()
			return e.ix, w.rebind(e.refs, ks)
		}
	}
	c.mu.Unlock()

	var docs []search.Doc
	var refs []found
	for i := range ks {
		k := &ks[i]
		if k.tools == nil {
			continue
		}
		for _, t := range k.tools.Tools {
			docs = append(docs, search.Doc{Toolbox: k.tb.cfg.Name, ToolboxDescription: k.tb.cfg.Description, Server: k.s.Name, Tool: t.JSON})
			refs = append(refs, found{k, t})
		}
	}
	e := &indexEntry{sets: sets, tbs: tbs, ix: search.NewIndex(docs), refs: refs}
	c.mu.Lock()
	c.entries = append([]*indexEntry{e}, c.entries...)
	if len(c.entries) > indexCacheSize {
		c.entries = c.entries[:indexCacheSize]
	}
	c.mu.Unlock()
	return e.ix, refs
}

// rebind points refs made for an earlier search at this search's known
// servers (the same servers with the same tool sets).
func (w *Workbench) rebind(refs []found, ks []known) []found {
	byServer := make(map[*downstream.Server]*known, len(ks))
	for i := range ks {
		byServer[ks[i].s] = &ks[i]
	}
	out := make([]found, len(refs))
	for i, r := range refs {
		out[i] = found{byServer[r.k.s], r.t}
	}
	return out
}

// Select is open_toolbox with tools: exactly the named tools of the
// toolbox tbName. An unknown name is an error that lists the closest names.
func (w *Workbench) Select(ctx context.Context, tbName string, names []string) *mcp.CallToolResult {
	tb := w.state.Load().byName[tbName]
	if tb == nil {
		return textResult(w.toolboxNotFound(tbName), true)
	}
	ks := w.gather(ctx, []*toolbox{tb}, w.openTimeout())
	if err := ctx.Err(); err != nil {
		return errorResult("Could not open toolbox '%s': %v", tbName, err)
	}
	var all []string
	var picked []found
	var unknown []string
	seen := map[*downstream.Tool]bool{}
	for _, name := range names {
		hit := false
		for i := range ks {
			k := &ks[i]
			t := k.tools.Lookup(name)
			if t == nil {
				// "server/tool" names the tool of one server.
				if srv, tn, ok := strings.Cut(name, "/"); ok && srv == k.s.Name {
					t = k.tools.Lookup(tn)
				}
			}
			if t == nil {
				continue
			}
			hit = true
			if !seen[t] {
				seen[t] = true
				picked = append(picked, found{k, t})
			}
		}
		if !hit {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		for _, k := range ks {
			if k.tools != nil {
				for _, t := range k.tools.Tools {
					if !slices.Contains(all, t.Name) {
						all = append(all, t.Name)
					}
				}
			}
		}
		var b strings.Builder
		for i, name := range unknown {
			if i > 0 {
				b.WriteString("\n")
			}
			if k := withholding(ks, name); k != nil {
				fmt.Fprintf(&b, "Tool '%s' of server '%s' (toolbox '%s') is withheld until the user approves it: %s; %s.",
					name, k.s.Name, tbName, k.tools.WithheldReason(name), downstream.ForTheUser)
				continue
			}
			fmt.Fprintf(&b, "Toolbox '%s' has no tool '%s'.", tbName, name)
			if c := search.Closest(name, all, 5); len(c) > 0 {
				fmt.Fprintf(&b, " Closest: %s.", strings.Join(c, ", "))
			}
		}
		for _, k := range ks {
			switch k.status {
			case downstream.StatusError:
				fmt.Fprintf(&b, "\nServer '%s' could not be listed: %v", k.s.Name, k.err)
			case statusStarting, downstream.StatusInstalling:
				fmt.Fprintf(&b, "\nServer '%s' is %s; its tools are not known yet.", k.s.Name, k.why(time.Now()))
			}
		}
		if len(all) > 0 && len(all) <= 100 {
			fmt.Fprintf(&b, "\nIts tools: %s.", strings.Join(all, ", "))
		} else if len(all) > 100 {
			b.WriteString("\nA \"query\" finds tools by what they do.")
		}
		return textResult(b.String(), true)
	}
	res, used := w.renderTools(tb.head(), picked, nil, "", false)
	w.shownFrom(ks, used)
	return res
}

// head is the start of a result about the toolbox: a JSON object, left
// open, with its name and description.
func (tb *toolbox) head() []byte {
	b := append([]byte(`{"toolbox":`), frame.AppendString(nil, tb.cfg.Name)...)
	b = append(b, `,"description":`...)
	return append(b, frame.AppendString(nil, tb.cfg.Description)...)
}

// withholding returns the server of ks that withholds a tool of that
// name (a changed or flagged tool awaiting approval), or nil.
func withholding(ks []known, name string) *known {
	for i := range ks {
		if ks[i].tools.WithheldReason(name) != "" {
			return &ks[i]
		}
	}
	return nil
}

// writeSearched writes the servers a search looked at, and those it could
// not (with why), as two fields after a comma.
func writeSearched(b *bytes.Buffer, ks []known) {
	type searched struct {
		Toolbox string `json:"toolbox"`
		Server  string `json:"server"`
		Tools   int    `json:"tools"`
	}
	type notSearched struct {
		Toolbox string `json:"toolbox"`
		Server  string `json:"server"`
		Status  string `json:"status"`
		Error   string `json:"error,omitempty"`
	}
	var yes []searched
	var no []notSearched
	now := time.Now()
	for _, k := range ks {
		switch k.status {
		case downstream.StatusConnected, statusCatalog:
			yes = append(yes, searched{k.tb.cfg.Name, k.s.Name, len(k.tools.Tools)})
		default:
			n := notSearched{Toolbox: k.tb.cfg.Name, Server: k.s.Name, Status: string(k.status)}
			if k.err != nil {
				n.Error = k.err.Error()
				if needsLogin(k.err) {
					n.Status = "needs login"
					n.Error += fmt.Sprintf(" (open the toolbox '%s' to log in)", k.tb.cfg.Name)
				}
			}
			if k.starting() {
				n.Error = k.why(now) + ": search again in a moment"
			}
			no = append(no, n)
		}
	}
	b.WriteString(`,"searched":`)
	b.Write(mustJSON(orEmpty(yes)))
	if len(no) > 0 {
		b.WriteString(`,"not_searched":`)
		b.Write(mustJSON(no))
	}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// summary is a tool a result names without its object: when the character
// budget leaves no room for it, or as a further match of a search.
type summary struct {
	Toolbox string `json:"toolbox"`
	Server  string `json:"server"`
	Tool    string `json:"tool"`
	About   string `json:"about,omitempty"`
}

// aboutChars is how much of a tool's first sentence a summary keeps.
const aboutChars = 100

func summarize(f found, about bool) summary {
	s := summary{Toolbox: f.k.tb.cfg.Name, Server: f.k.s.Name, Tool: f.t.Name}
	if about {
		s.About = firstSentence(f.t.JSON, aboutChars)
	}
	return s
}

// firstSentence is the start of a tool object's description: its first
// sentence as the search reads it, up to a line break, at most n bytes.
func firstSentence(tool json.RawMessage, n int) string {
	var t struct {
		Description string `json:"description"`
	}
	if frame.Unmarshal(tool, &t) != nil {
		return ""
	}
	d := search.FirstSentence(t.Description)
	if i := strings.IndexAny(d, "\n\r"); i >= 0 {
		d = d[:i]
	}
	return serverproc.Clip(strings.TrimSpace(d), n)
}

// renderTools finishes a result that begins with head (a JSON object
// left open): the whole objects of full, in order, as far as the
// character budget allows, the ones past it and more by name, and note.
// dropLargest chooses which tools give way to the budget: the largest
// (an open, to keep as many whole as fit) or the last (a search, whose
// order is its ranking). The names of the tools that give way come with
// the start of their description if that fits, else without it; if even
// the names do not all fit, as many as do. It returns the servers whose
// tools it showed.
func (w *Workbench) renderTools(head []byte, full, more []found, note string, dropLargest bool) (*mcp.CallToolResult, map[*downstream.Server]bool) {
	budget := w.state.Load().cfg.OpenResultMaxChars
	order := make([]int, len(full))
	for i := range order {
		order[i] = len(full) - 1 - i
	}
	if dropLargest {
		slices.SortStableFunc(order, func(a, b int) int { return len(full[b].t.JSON) - len(full[a].t.JSON) })
	}
	for _, about := range []bool{true, false} {
		if out, keep, ok := fitBudget(head, full, more, note, budget, order, about); ok {
			used := map[*downstream.Server]bool{}
			for i, f := range full {
				if keep[i] {
					used[f.k.s] = true
				}
			}
			return textResult(string(out), false), used
		}
	}
	return textResult(string(renderNamesOnly(head, full, more, budget)), false), map[*downstream.Server]bool{}
}

// fitBudget renders the result with tools giving way in order until it
// fits the budget (0: none), keeping an estimate of its size so that it
// renders only what should fit. It reports false if it does not fit even
// with every tool named only.
func fitBudget(head []byte, full, more []found, note string, budget int, order []int, about bool) ([]byte, []bool, bool) {
	keep := make([]bool, len(full))
	for i := range keep {
		keep[i] = true
	}
	size := len(head) + 400 + len(note) // the fixed parts, the budget's note included
	for _, f := range full {
		size += len(f.t.JSON) + 1
	}
	for _, f := range more {
		size += len(mustJSON(summarize(f, false))) + 1
	}
	next := 0
	for {
		if budget <= 0 || size <= budget || next == len(order) {
			if out, fits := renderWith(head, full, keep, more, note, budget, about); fits {
				return out, keep, true
			}
			if next == len(order) {
				return nil, nil, false
			}
		}
		j := order[next]
		next++
		keep[j] = false
		size += len(mustJSON(summarize(full[j], about))) - len(full[j].t.JSON)
	}
}

// renderWith renders the result with the objects of the kept tools and
// the others by name (with the start of their description if about), and
// reports whether it fits the budget (0: none).
func renderWith(head []byte, full []found, keep []bool, more []found, note string, budget int, about bool) ([]byte, bool) {
	var b bytes.Buffer
	b.Write(head)
	b.WriteString(`,"tools":[`)
	n := 0
	var rest []summary
	for i, f := range full {
		if !keep[i] {
			rest = append(rest, summarize(f, about))
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(f.t.JSON)
		n++
	}
	b.WriteByte(']')
	if len(rest) > 0 {
		b.WriteString(`,"not_shown":`)
		b.Write(mustJSON(rest))
		note = fmt.Sprintf(`The result is limited to %d characters: the %d tools under "not_shown" are named only. `+
			`Call open_toolbox with "toolbox_name" and "tools" (a list of their names) to get them, or with a "query" saying what the task needs. `, budget, len(rest)) + note
	}
	if len(more) > 0 {
		ms := make([]summary, len(more))
		for i, f := range more {
			ms[i] = summarize(f, false)
		}
		b.WriteString(`,"more":`)
		b.Write(mustJSON(ms))
	}
	if note != "" {
		b.WriteString(`,"note":`)
		b.Write(frame.AppendString(nil, strings.TrimSpace(note)))
	}
	b.WriteByte('}')
	return b.Bytes(), budget <= 0 || b.Len() <= budget
}

// renderNamesOnly is the last resort of a result over its budget even
// with every tool named only: as many names as fit (the size grows with
// their number, so a binary search finds it), and how many more.
func renderNamesOnly(head []byte, full, more []found, budget int) []byte {
	all := append(append([]found{}, full...), more...)
	ms := make([]summary, len(all))
	for i, f := range all {
		ms[i] = summarize(f, false)
	}
	render := func(n int) []byte {
		var b bytes.Buffer
		b.Write(head)
		b.WriteString(`,"tools":[],"not_shown":`)
		b.Write(mustJSON(ms[:n]))
		b.WriteString(`,"note":`)
		b.Write(frame.AppendString(nil, fmt.Sprintf(`The result is limited to %d characters: %d tools are named only, and %d more are left out. `+
			`Call open_toolbox with "toolbox_name" and "tools", or with a "query" saying what the task needs.`, budget, n, len(all)-n)))
		b.WriteByte('}')
		return b.Bytes()
	}
	// The largest n whose rendering fits; 0 when none does.
	n := sort.Search(len(all)+1, func(n int) bool { return len(render(n)) > budget }) - 1
	return render(max(n, 0))
}
