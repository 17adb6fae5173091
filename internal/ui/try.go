package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/pins"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// workbench returns the Try page's workbench, made on first use and made
// again when the configuration changed.
func (s *Server) workbench() (*workbench.Workbench, error) {
	cfg, err := loads.load(s.o.ConfigPath)
	if err != nil {
		return nil, errNoConfig
	}
	s.wbMu.Lock()
	defer s.wbMu.Unlock()
	if s.wb != nil && s.wbCfg == cfg {
		return s.wb, nil
	}
	if s.wb != nil {
		s.wb.Close()
	}
	s.wb, s.wbCfg = s.o.NewWorkbench(cfg), cfg
	return s.wb, nil
}

// decode reads a request's JSON body into v, saying in JSON terms what is
// wrong with it.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		refuse(w, http.StatusBadRequest, "the request's body is not the JSON object this takes: "+frame.Explain(err))
		return false
	}
	return true
}

// searchAnswer is the Try page's search: what open_toolbox with a query
// answers, byte for byte, and the tools it ranked.
type searchAnswer struct {
	Text    string   `json:"text"` // the exact text the model reads
	Bytes   int      `json:"bytes"`
	Tokens  int      `json:"tokens"` // about: bytes/4
	IsError bool     `json:"isError"`
	Ranked  []ranked `json:"ranked"`
}

type ranked struct {
	Toolbox     string `json:"toolbox"`
	Server      string `json:"server"`
	Tool        string `json:"tool"`
	Description string `json:"description,omitempty"`
	More        bool   `json:"more,omitempty"` // listed by name only
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Toolbox string `json:"toolbox"`
		Query   string `json:"query"`
		Limit   int    `json:"limit"`
	}
	if !decode(w, r, &in) {
		return
	}
	if strings.TrimSpace(in.Query) == "" {
		refuse(w, http.StatusBadRequest, `"query" is empty: say what the task needs`)
		return
	}
	if in.Limit <= 0 || in.Limit > 50 {
		in.Limit = 5
	}
	wb, err := s.workbench()
	if err != nil {
		refuse(w, http.StatusConflict, err.Error())
		return
	}
	res := wb.Search(r.Context(), in.Toolbox, in.Query, in.Limit)
	text := resultText(res)
	a := searchAnswer{Text: text, Bytes: len(text), Tokens: (len(text) + 3) / 4, IsError: res.IsError, Ranked: []ranked{}}
	if !res.IsError {
		a.Ranked = rankedOf(text)
	}
	writeJSON(w, a)
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// rankedOf reads the tools a search answer lists, best first: "tools"
// in full, then "not_shown" and "more" by name.
func rankedOf(text string) []ranked {
	type named struct {
		Toolbox string `json:"toolbox"`
		Server  string `json:"server"`
		Tool    string `json:"tool"`
		About   string `json:"about"`
	}
	var doc struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Server      string `json:"source_server"`
			Toolbox     string `json:"toolbox_name"`
		} `json:"tools"`
		NotShown []named `json:"not_shown"`
		More     []named `json:"more"`
	}
	out := []ranked{}
	if json.Unmarshal([]byte(text), &doc) != nil {
		return out
	}
	for _, t := range doc.Tools {
		out = append(out, ranked{Toolbox: t.Toolbox, Server: t.Server, Tool: t.Name, Description: t.Description})
	}
	for _, t := range append(doc.NotShown, doc.More...) {
		out = append(out, ranked{Toolbox: t.Toolbox, Server: t.Server, Tool: t.Tool, Description: t.About, More: true})
	}
	return out
}

// toolsAnswer lists the tools the call form offers: each running or
// catalogued server's, with its input schema.
func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	tbName := r.URL.Query().Get("toolbox")
	wb, err := s.workbench()
	if err != nil {
		refuse(w, http.StatusConflict, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 60*time.Second)
	defer cancel()
	res := wb.Open(ctx, tbName, false)
	writeJSON(w, map[string]any{"text": resultText(res), "isError": res.IsError})
}

// handleCall is the call command in a form: use_tool with the arguments
// checked against the tool's input schema.
func (s *Server) handleCall(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Toolbox   string          `json:"toolbox"`
		Server    string          `json:"server"`
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if !decode(w, r, &in) {
		return
	}
	args := in.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if args[0] != '{' {
		refuse(w, http.StatusBadRequest, `"arguments" must be a JSON object, such as {"path": "/tmp"}`)
		return
	}
	wb, err := s.workbench()
	if err != nil {
		refuse(w, http.StatusConflict, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Minute)
	defer cancel()
	raw := wb.Use(ctx, in.Toolbox, in.Server, in.Tool, args, nil)
	w.Header().Set("Content-Type", "application/json")
	w.Write(raw)
}

// reviewItem is one tool whose definition is not as pinned, or that
// screening flags.
type reviewItem struct {
	Toolbox  string   `json:"toolbox"`
	Server   string   `json:"server"`
	Tool     string   `json:"tool"` // as pins.Line shows it
	Kind     string   `json:"kind"`
	What     []string `json:"what,omitempty"`
	Withheld string   `json:"withheld,omitempty"`
	Flags    []string `json:"flags,omitempty"`
	Old      string   `json:"old,omitempty"` // indented, hidden characters visible
	New      string   `json:"new,omitempty"`
	Diff     string   `json:"diff,omitempty"`
}

type reviewAnswer struct {
	Items    []reviewItem `json:"items"`
	Failed   []string     `json:"failed,omitempty"` // servers that did not start
	Code     string       `json:"code,omitempty"`   // what approve must name
	Pending  int          `json:"pending"`
	NoPinned bool         `json:"noPinStore,omitempty"`
}

// review starts every enabled server and compares its tools with its
// pins: the tools command's diff.
func (s *Server) review(ctx context.Context) (reviewAnswer, []downstream.Review, error) {
	wb, err := s.workbench()
	if err != nil {
		return reviewAnswer{}, nil, err
	}
	var servers []*downstream.Server
	for _, tb := range s.wbCfg.ToolboxNames() {
		servers = append(servers, wb.Servers(tb)...)
	}
	a := reviewAnswer{Items: []reviewItem{}}
	var rs []downstream.Review
	for _, rv := range downstream.StartForReview(ctx, servers) {
		sv := rv.Server
		if rv.Err != nil {
			a.Failed = append(a.Failed, rv.Label+": "+pins.Visible(rv.Err.Error()))
			continue
		}
		reports, state, _ := sv.PinReport(rv.Tools)
		if state == pins.Missing && reports == nil {
			a.NoPinned = true
		}
		for _, rp := range reports {
			flags := rv.Tools.FlagsOf(rp.Name)
			if rp.Kind == pins.Same && len(flags) == 0 {
				continue
			}
			it := reviewItem{Toolbox: sv.Toolbox, Server: sv.Name, Tool: pins.Line(rp.Name), Kind: string(rp.Kind), What: rp.What, Withheld: pins.Line(rv.Tools.WithheldReason(rp.Name))}
			for _, f := range flags {
				it.Flags = append(it.Flags, pins.Line(f))
			}
			it.Old, it.New = indented(rp.Old), indented(rp.New)
			if rp.Kind != pins.Same {
				it.Diff = pins.Diff(rp.Name, rp.Old, rp.New)
			}
			a.Items = append(a.Items, it)
		}
		rv.Pending = sv.Pending(rv.Tools, nil)
		a.Pending += len(rv.Pending)
		rs = append(rs, rv)
	}
	if a.Pending > 0 {
		a.Code = downstream.ReviewCode(rs)
	}
	return a, rs, nil
}

// indented is a definition for reading: indented, hidden characters
// written as \uXXXX.
func indented(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b strings.Builder
	var v any
	if json.Unmarshal(raw, &v) == nil {
		out, _ := json.MarshalIndent(v, "", "  ")
		b.Write(out)
	} else {
		b.Write(raw)
	}
	return pins.Visible(b.String())
}

func (s *Server) handleReview(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute)
	defer cancel()
	a, _, err := s.review(ctx)
	if err != nil {
		refuse(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, a)
}

// handleApprove pins what the review of the given code showed, and only
// that: if the servers list something else now, nothing is approved.
func (s *Server) handleApprove(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Code string `json:"code"`
	}
	if !decode(w, r, &in) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute)
	defer cancel()
	a, rs, err := s.review(ctx)
	if err != nil {
		refuse(w, http.StatusConflict, err.Error())
		return
	}
	if a.Code == "" || a.Code != in.Code {
		refuse(w, http.StatusConflict, "nothing approved: the servers do not list what that review showed (they changed since); review again")
		return
	}
	var approved []string
	for _, rv := range rs {
		done, err := rv.Server.Approve(rv.Tools, rv.Pending)
		if err != nil {
			refuse(w, http.StatusInternalServerError, rv.Label+": "+err.Error())
			return
		}
		for _, d := range done {
			approved = append(approved, rv.Label+"/"+pins.Line(d))
		}
	}
	s.log.Info("approved tool definitions from the web UI", "tools", len(approved))
	writeJSON(w, map[string]any{"approved": approved})
}
