package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tokens estimates the model tokens of a text: about four bytes each for
// English and JSON. It is a guide to size, not a tokenizer.
func tokens(n int) int { return (n + 3) / 4 }

// check starts the servers of the named toolboxes (every toolbox if none)
// as open_toolbox would, all in parallel, reports each server on stderr as
// it finishes, then prints a report: per server its status, tool count and
// start time; per toolbox the size of what open_toolbox returns. It fails
// if any enabled server could not start.
//
// Every tool list it gets is stored in the tool catalog (cat, if not nil)
// when it differs from the entry there: check refreshes the catalog.
func check(ctx context.Context, cfg *config.Config, names []string, cat *catalog.Catalog, log *slog.Logger, logOut, stdout io.Writer) error {
	if len(names) == 0 {
		names = cfg.ToolboxNames()
	}
	for _, n := range names {
		if cfg.Toolbox(n) == nil {
			fmt.Fprintf(logOut, "mcp-workbench: check: no toolbox %q in %s (toolboxes: %s)\n", n, cfg.Path, strings.Join(cfg.ToolboxNames(), ", "))
			return &exitError{code: 2}
		}
	}
	wb := workbench.New(cfg, workbench.Options{Version: Version(), Logger: log, Stderr: logOut, Catalog: cat, CatalogStoreOnly: true})
	defer wb.Close()

	type outcome struct {
		took time.Duration
		err  error
	}
	results := map[*downstream.Server]*outcome{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	total := 0
	for _, name := range names {
		for _, s := range wb.Servers(name) {
			if s.Config().Disabled {
				continue
			}
			total++
			wg.Go(func() {
				start := time.Now()
				_, err := s.Connect(ctx)
				o := &outcome{took: time.Since(start), err: err}
				mu.Lock()
				results[s] = o
				done := len(results)
				mu.Unlock()
				if err != nil {
					fmt.Fprintf(logOut, "[%d/%d] %s/%s failed after %s: %v\n", done, total, s.Toolbox, s.Name, round(o.took), err)
				} else {
					fmt.Fprintf(logOut, "[%d/%d] %s/%s started in %s\n", done, total, s.Toolbox, s.Name, round(o.took))
				}
			})
		}
	}
	fmt.Fprintf(logOut, "starting %d server(s) of %d toolbox(es) from %s…\n", total, len(names), cfg.Path)
	wg.Wait()

	failed := 0
	for i, name := range names {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		tb := cfg.Toolbox(name)
		res := wb.Open(ctx, name, false)
		text := resultText(res)
		if res.IsError {
			fmt.Fprintf(stdout, "%s: could not open\n", name)
		} else {
			fmt.Fprintf(stdout, "%s — %s\n  open_toolbox returns %d bytes (≈ %d tokens)\n", name, tb.Description, len(text), tokens(len(text)))
		}
		for _, s := range wb.Servers(name) {
			st := s.State()
			switch {
			case st.Status == downstream.StatusDisabled:
				fmt.Fprintf(stdout, "  %-20s disabled\n", s.Name)
			case st.Status == downstream.StatusConnected:
				fmt.Fprintf(stdout, "  %-20s connected  %3d tools  started in %s\n", s.Name, len(st.Tools.Tools), round(results[s].took))
			default:
				failed++
				reason := "not started"
				if o := results[s]; o != nil && o.err != nil {
					reason = o.err.Error()
				}
				fmt.Fprintf(stdout, "  %-20s error      %s\n", s.Name, reason)
			}
		}
	}
	defs, _ := json.Marshal(wb.Tools())
	fmt.Fprintf(stdout, "\nBefore any toolbox is opened, a host sees the workbench's two tools: %d bytes (≈ %d tokens).\n", len(defs), tokens(len(defs)))
	if failed > 0 {
		fmt.Fprintf(stdout, "%d of %d server(s) failed to start.\n", failed, total)
		return &exitError{code: 1}
	}
	fmt.Fprintf(stdout, "All %d server(s) started.\n", total)
	return nil
}

func round(d time.Duration) time.Duration {
	if d > time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Microsecond)
}

// call makes one use_tool call from the shell: TOOLBOX SERVER TOOL
// [JSON-ARGS], where JSON-ARGS "-" reads the arguments from stdin. It
// prints the tool's text (or, with --json, the whole result), and fails
// with the error text on stderr when the result is an error.
func call(ctx context.Context, cfg *config.Config, pos []string, asJSON bool, cat *catalog.Catalog, log *slog.Logger, logOut io.Writer, stdin io.Reader, stdout io.Writer) error {
	args := json.RawMessage("{}")
	if len(pos) == 4 {
		raw := []byte(pos[3])
		if pos[3] == "-" {
			var err error
			if raw, err = io.ReadAll(stdin); err != nil {
				return fmt.Errorf("reading the arguments from stdin: %w", err)
			}
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			fmt.Fprintf(logOut, "mcp-workbench: call: JSON-ARGS must be a JSON object, such as '{\"path\": \"/tmp\"}': %v\n", err)
			return &exitError{code: 2}
		}
		args = raw
	}
	wb := workbench.New(cfg, workbench.Options{Version: Version(), Logger: log, Stderr: logOut, Catalog: cat})
	defer wb.Close()
	raw := wb.Use(ctx, pos[0], pos[1], pos[2], args, nil)
	var res result
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("the server's result is not a JSON object: %v", err)
	}
	if asJSON {
		var b bytes.Buffer
		if err := json.Indent(&b, raw, "", "  "); err != nil {
			return err
		}
		fmt.Fprintln(stdout, b.String())
	} else {
		out := stdout
		if res.IsError {
			out = logOut
		}
		printResult(out, &res)
	}
	if res.IsError {
		return &exitError{code: 1}
	}
	return nil
}

// result is a tools/call result as the command line shows it. It is
// decoded leniently, so that content of a type this build does not know
// is still shown, by its type.
type result struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		MIMEType string `json:"mimeType"`
		Data     string `json:"data"` // base64
		URI      string `json:"uri"`
		Resource *struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"resource"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// printResult writes a result for a person: text as it is, other content
// described, structured content as JSON when there is nothing else.
func printResult(w io.Writer, res *result) {
	for _, c := range res.Content {
		switch c.Type {
		case "text":
			fmt.Fprintln(w, c.Text)
		case "image", "audio":
			data, _ := base64.StdEncoding.DecodeString(c.Data)
			fmt.Fprintf(w, "[%s %s, %d bytes]\n", c.Type, c.MIMEType, len(data))
		case "resource_link":
			fmt.Fprintf(w, "[resource link %s]\n", c.URI)
		case "resource":
			if c.Resource != nil && c.Resource.Text != "" {
				fmt.Fprintln(w, c.Resource.Text)
			} else if c.Resource != nil {
				fmt.Fprintf(w, "[resource %s]\n", c.Resource.URI)
			}
		default:
			fmt.Fprintf(w, "[%s content]\n", c.Type)
		}
	}
	if len(res.Content) == 0 && len(res.StructuredContent) > 0 {
		var b bytes.Buffer
		if json.Indent(&b, res.StructuredContent, "", "  ") == nil {
			fmt.Fprintln(w, b.String())
		}
	}
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
