package workbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// openToolboxTool describes open_toolbox. The toolbox names appear in its
// schema and description too, because some hosts drop the instructions.
func (w *Workbench) openToolboxTool() *mcp.Tool {
	names := w.cfg.ToolboxNames()
	nameSchema := map[string]any{"type": "string", "description": "Name of the toolbox to open"}
	list := "none configured"
	if len(names) > 0 {
		nameSchema["enum"] = names
		list = strings.Join(names, ", ")
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"toolbox_name": nameSchema,
			"refresh":      map[string]any{"type": "boolean", "description": "List the tools again even if the toolbox is already open"},
		},
		"required": []string{"toolbox_name"},
	}
	return &mcp.Tool{
		Name: "open_toolbox",
		Description: "Open a toolbox: starts its MCP servers and returns their tools, each with the name, description " +
			"and inputSchema to call it with use_tool. Opening an open toolbox is cheap. Toolboxes: " + list + ".",
		InputSchema: mustJSON(schema),
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
	names := w.cfg.ToolboxNames()
	if len(names) == 0 {
		return fmt.Sprintf("Toolbox '%s' not found. No toolboxes are configured.", name)
	}
	return fmt.Sprintf("Toolbox '%s' not found. Available toolboxes: %s", name, strings.Join(names, ", "))
}

func (w *Workbench) handleOpen(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		ToolboxName *string `json:"toolbox_name"`
		Refresh     bool    `json:"refresh"`
	}
	if err := decodeArgs(req.Params.Arguments, &in); err != nil {
		return errorResult(`open_toolbox takes {"toolbox_name": "<name>"}: %v`, err), nil
	}
	if in.ToolboxName == nil || *in.ToolboxName == "" {
		return errorResult(`open_toolbox needs "toolbox_name": one of %s`, strings.Join(w.cfg.ToolboxNames(), ", ")), nil
	}
	return w.Open(withHost(ctx, req.Session), *in.ToolboxName, in.Refresh), nil
}

// Open is open_toolbox: it starts the toolbox's servers that are not
// running, in parallel, and returns the tool's result. refresh lists the
// tools of running servers again.
func (w *Workbench) Open(ctx context.Context, toolbox string, refresh bool) *mcp.CallToolResult {
	tb := w.byName[toolbox]
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
// tools of connected servers again.
func (w *Workbench) open(ctx context.Context, tb *toolbox, refresh bool) (*mcp.CallToolResult, error) {
	var wg sync.WaitGroup
	for _, s := range tb.servers {
		if s.Config().Disabled {
			continue
		}
		wg.Go(func() {
			var err error
			if refresh {
				_, err = s.Refresh(ctx)
			} else {
				_, err = s.Connect(ctx)
			}
			if err != nil {
				w.loginThroughHost(ctx, s, err)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tb.mu.Lock()
	tb.opened = true
	tb.mu.Unlock()
	return renderOpen(tb), nil
}

// renderOpen builds open_toolbox's result: compact JSON with the toolbox,
// each server's status, and every tool as the server sent it plus
// source_server and toolbox_name. If no enabled server could start, the
// result is an error naming each one and why.
func renderOpen(tb *toolbox) *mcp.CallToolResult {
	type serverLine struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Tools  int    `json:"tools"`
		Error  string `json:"error,omitempty"`
	}
	lines := make([]serverLine, 0, len(tb.servers))
	var tools []json.RawMessage
	connected, failed := 0, 0
	for _, s := range tb.servers {
		st := s.State()
		line := serverLine{Name: s.Name, Status: string(st.Status)}
		switch st.Status {
		case downstream.StatusConnected:
			connected++
			line.Tools = len(st.Tools.Tools)
			for _, t := range st.Tools.Tools {
				tools = append(tools, t.JSON)
			}
		case downstream.StatusError, downstream.StatusIdle:
			failed++
			line.Status = string(downstream.StatusError)
			if st.Err != nil {
				line.Error = st.Err.Error()
			} else {
				line.Error = "not connected"
			}
		}
		lines = append(lines, line)
	}
	if connected == 0 && failed > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "Could not open toolbox '%s': no server could be started.", tb.cfg.Name)
		for _, l := range lines {
			if l.Status == string(downstream.StatusError) {
				fmt.Fprintf(&b, "\n- server '%s': %s", l.Name, l.Error)
			}
		}
		return textResult(b.String(), true)
	}
	var buf bytes.Buffer
	buf.WriteString(`{"toolbox":`)
	buf.Write(mustJSON(tb.cfg.Name))
	buf.WriteString(`,"description":`)
	buf.Write(mustJSON(tb.cfg.Description))
	fmt.Fprintf(&buf, `,"servers_connected":%d,"servers":`, connected)
	buf.Write(mustJSON(lines))
	buf.WriteString(`,"tools":[`)
	for i, t := range tools {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(t)
	}
	buf.WriteString("]}")
	return textResult(buf.String(), false)
}

// toolRef is use_tool's structured identifier.
type toolRef struct {
	Toolbox string `json:"toolbox"`
	Server  string `json:"server"`
	Tool    string `json:"tool"`
}

func (w *Workbench) handleUse(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Tool      *toolRef        `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := decodeArgs(req.Params.Arguments, &in); err != nil {
		return errorResult("use_tool: %v", explainUseInput(req.Params.Arguments, err)), nil
	}
	if err := checkRef(in.Tool); err != nil {
		return errorResult("use_tool: %v", err), nil
	}
	ref := *in.Tool
	args, err := objectArgs(in.Arguments)
	if err != nil {
		return errorResult("Cannot call tool '%s' in server '%s' (toolbox '%s'): %v", ref.Tool, ref.Server, ref.Toolbox, err), nil
	}
	var progress downstream.ProgressFunc
	if tok := req.Params.GetProgressToken(); tok != nil {
		progress = func(p *mcp.ProgressNotificationParams) {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: tok, Progress: p.Progress, Total: p.Total, Message: p.Message,
			})
		}
	}
	return w.held.hold(w.Use(ctx, ref.Toolbox, ref.Server, ref.Tool, args, progress)), nil
}

// Use is use_tool: it calls tool of server in toolbox with args (a JSON
// object), opening the toolbox first if it never was, and returns the
// server's result object as the server sent it, or a tool error that names
// toolbox, server and tool. progress, if set, receives the call's progress
// notifications.
func (w *Workbench) Use(ctx context.Context, toolbox, server, tool string, args json.RawMessage, progress downstream.ProgressFunc) json.RawMessage {
	ref := toolRef{Toolbox: toolbox, Server: server, Tool: tool}
	refuse := func(format string, a ...any) json.RawMessage {
		return mustJSON(errorResult("Cannot call tool '%s' in server '%s' (toolbox '%s'): %s", ref.Tool, ref.Server, ref.Toolbox, fmt.Sprintf(format, a...)))
	}
	tb := w.byName[ref.Toolbox]
	if tb == nil {
		return refuse("%s", w.toolboxNotFound(ref.Toolbox))
	}
	s := tb.server(ref.Server)
	if s == nil {
		names := make([]string, len(tb.servers))
		for i, s := range tb.servers {
			names[i] = s.Name
		}
		return refuse("toolbox '%s' has no server '%s'. Its servers: %s", ref.Toolbox, ref.Server, strings.Join(names, ", "))
	}
	if s.Config().Disabled {
		return refuse("the server is disabled in the workbench configuration")
	}
	tb.mu.Lock()
	opened := tb.opened
	tb.mu.Unlock()
	if !opened {
		if _, err := w.open(ctx, tb, false); err != nil {
			return mustJSON(errorResult("Error executing tool '%s' in server '%s' (toolbox '%s'): %v", ref.Tool, ref.Server, ref.Toolbox, err))
		}
	}
	res, err := s.Call(ctx, ref.Tool, args, progress)
	if err != nil {
		var refused *downstream.RefusedError
		if errors.As(err, &refused) {
			return refuse("%s", refused.Reason)
		}
		return mustJSON(errorResult("Error executing tool '%s' in server '%s' (toolbox '%s'): %v", ref.Tool, ref.Server, ref.Toolbox, err))
	}
	return res
}

// decodeArgs decodes a tool's arguments; absent arguments decode as {}.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return nil
	}
	return json.Unmarshal(raw, v)
}

const refShape = `"tool" must be an object {"toolbox": "...", "server": "...", "tool": "..."} naming a tool listed by open_toolbox`

// checkRef checks use_tool's "tool" identifier.
func checkRef(ref *toolRef) error {
	if ref == nil {
		return errors.New("missing " + refShape)
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"toolbox", ref.Toolbox}, {"server", ref.Server}, {"tool", ref.Tool}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the tool identifier needs a non-empty %s: %s", strings.Join(missing, ", "), refShape)
	}
	return nil
}

// explainUseInput says what is wrong with use_tool arguments that did not
// decode: usually a "tool" that is not an object.
func explainUseInput(raw json.RawMessage, err error) error {
	var loose struct {
		Tool json.RawMessage `json:"tool"`
	}
	if json.Unmarshal(raw, &loose) == nil {
		var ref toolRef
		if json.Unmarshal(loose.Tool, &ref) != nil {
			return errors.New(refShape)
		}
	}
	return fmt.Errorf(`takes {"tool": {"toolbox", "server", "tool"}, "arguments": {...}}: %v`, err)
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
		if err := json.Unmarshal(raw, &s); err == nil {
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
