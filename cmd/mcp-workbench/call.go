package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
)

const callUsage = `Usage: mcp-workbench call [--config PATH] [--json] TOOLBOX SERVER TOOL [JSON-ARGS]

Calls one tool, as use_tool does: the toolbox is opened first, the
arguments are checked against the tool's inputSchema, and the result is
printed: its text as it is, other content described, or with --json the
whole result. A result that is an error goes to stderr, with exit status 1.

JSON-ARGS is a JSON object, such as '{"path": "/tmp"}' (default {}); "-"
reads it from stdin.

Flags:
  --json              print the whole result as JSON
` + globalFlagsHelp

// callOptions is the parsed command line of mcp-workbench call.
type callOptions struct {
	globalOptions
	json                  bool   // print the whole result as JSON
	toolbox, server, tool string // the tool to call
	args                  string // JSON-ARGS as given; "-" for stdin, "" for {}
}

func runCall(ctx context.Context, e *env, args []string) error {
	var opts callOptions
	fs := e.flagSet("call", &opts.globalOptions)
	fs.BoolVar(&opts.json, "json", false, "")
	positional, err := parse(fs, args)
	if err == nil && (len(positional) < 3 || len(positional) > 4) {
		err = errors.New("needs TOOLBOX SERVER TOOL and, optionally, JSON-ARGS")
	}
	if err != nil {
		return e.usageError("call", err)
	}
	opts.toolbox, opts.server, opts.tool = positional[0], positional[1], positional[2]
	if len(positional) == 4 {
		opts.args = positional[3]
	}
	toolArgs := json.RawMessage("{}")
	if opts.args != "" {
		raw := []byte(opts.args)
		if opts.args == "-" {
			if raw, err = io.ReadAll(e.stdin); err != nil {
				return fmt.Errorf("reading the arguments from stdin: %w", err)
			}
		}
		if err := checkArguments(raw); err != nil {
			return e.usageError("call", err)
		}
		toolArgs = raw
	}
	cfg, log, logOut, err := e.load("call", opts.globalOptions)
	if err != nil {
		return err
	}
	return call(ctx, cfg, opts, toolArgs, log, logOut, e.stdout)
}

// checkArguments checks that JSON-ARGS is a JSON object, and says what it
// is otherwise.
func checkArguments(raw []byte) error {
	const want = `JSON-ARGS must be a JSON object, such as '{"path": "/tmp"}'`
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("%s: %s", want, frame.Explain(err))
	}
	kind := "null"
	switch v.(type) {
	case map[string]any:
		return nil
	case []any:
		kind = "an array"
	case string:
		kind = "a string"
	case float64:
		kind = "a number"
	case bool:
		kind = "a boolean"
	}
	return fmt.Errorf("%s, not %s", want, kind)
}

// call makes one use_tool call and prints its result: the tool's text (or,
// with --json, the whole result); a result that is an error goes to
// stderr, with exit status 1.
func call(ctx context.Context, cfg *config.Config, opts callOptions, args json.RawMessage, log *slog.Logger, logOut io.Writer, stdout io.Writer) error {
	wb := workbench.New(cfg, workbench.Options{Version: Version(), Logger: log, Stderr: logOut, Catalog: front.OpenCatalog(log), Pins: front.OpenPins(log)})
	defer wb.Close()
	raw := wb.Use(ctx, opts.toolbox, opts.server, opts.tool, args, nil)
	var res result
	if err := json.Unmarshal(raw, &res); err != nil {
		// Results pass from the server unchanged: a server can send this.
		return fmt.Errorf("the result of %s/%s/%s is not an MCP tool result: %s", opts.toolbox, opts.server, opts.tool, frame.Explain(err))
	}
	if opts.json {
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
