package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
	"github.com/mcpworkbench/mcp-workbench/internal/pins"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
)

const toolsUsage = `Usage: mcp-workbench tools diff    [--config PATH] [TOOLBOX [SERVER [TOOL]]]
       mcp-workbench tools approve [--config PATH] [TOOLBOX [SERVER [TOOL]]]

The workbench pins each tool's definition (name, title, description,
inputSchema, outputSchema, annotations) the first time it lists a server,
and withholds a tool whose definition changed since ("toolChanges").

diff starts the named servers (every server if none is named), and shows
each tool that changed, is new or was removed since it was pinned, as a
unified diff with hidden characters written as \uXXXX, and what screening
flags in each tool.

approve pins the current definitions: of every server, of one server, or
of one tool; the workbench serves them again (open the toolbox again). A
removed tool's pin is dropped. Nothing to approve is not an error.
` + globalFlagsHelp

// toolsOptions is the parsed command line of mcp-workbench tools.
type toolsOptions struct {
	globalOptions
	verb                  string // diff or approve
	toolbox, server, tool string
}

func runTools(ctx context.Context, e *env, args []string) error {
	var opts toolsOptions
	fs := e.flagSet("tools", &opts.globalOptions)
	positional, err := parse(fs, args)
	if err != nil {
		return e.usageError("tools", err)
	}
	if len(positional) == 0 || (positional[0] != "diff" && positional[0] != "approve") {
		return e.usageError("tools", errors.New(`needs "diff" or "approve"`))
	}
	if len(positional) > 4 {
		return e.usageError("tools", fmt.Errorf("too many arguments: %s", strings.Join(positional[4:], " ")))
	}
	opts.verb = positional[0]
	sel := append(positional[1:], "", "", "")
	opts.toolbox, opts.server, opts.tool = sel[0], sel[1], sel[2]
	cfg, log, logOut, err := e.load("tools", opts.globalOptions)
	if err != nil {
		return err
	}
	if opts.toolbox != "" {
		tb := cfg.Toolbox(opts.toolbox)
		if tb == nil {
			return e.usageError("tools", fmt.Errorf("no toolbox %q in %s (toolboxes: %s)", opts.toolbox, cfg.Path, strings.Join(cfg.ToolboxNames(), ", ")))
		}
		if opts.server != "" && tb.Server(opts.server) == nil {
			var names []string
			for _, s := range tb.Servers {
				names = append(names, s.Name)
			}
			return e.usageError("tools", fmt.Errorf("toolbox %q has no server %q (servers: %s)", opts.toolbox, opts.server, strings.Join(names, ", ")))
		}
	}
	store := front.OpenPins(log)
	if store == nil {
		return &exitError{code: 1}
	}
	err = reviewTools(ctx, cfg, opts, store, log, logOut, e.stdout)
	var unknown *unknownToolError
	if errors.As(err, &unknown) {
		return e.usageError("tools", err)
	}
	return err
}

// unknownToolError is a TOOL that the named server does not have.
type unknownToolError struct{ msg string }

func (e *unknownToolError) Error() string { return e.msg }

// reviewTools starts the selected servers and shows (diff) or pins
// (approve) their tools' changes.
func reviewTools(ctx context.Context, cfg *config.Config, opts toolsOptions, store *pins.Store, log *slog.Logger, logOut, stdout io.Writer) error {
	wb := workbench.New(cfg, workbench.Options{Version: Version(), Logger: log, Stderr: logOut, Catalog: front.OpenCatalog(log), CatalogStoreOnly: true, Pins: store})
	defer wb.Close()
	var servers []*downstream.Server
	for _, name := range cfg.ToolboxNames() {
		if opts.toolbox != "" && name != opts.toolbox {
			continue
		}
		for _, s := range wb.Servers(name) {
			if !s.Config().Disabled && (opts.server == "" || s.Name == opts.server) {
				servers = append(servers, s)
			}
		}
	}
	type outcome struct {
		tools *downstream.ToolSet
		err   error
	}
	results := make([]outcome, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			ts, err := s.Connect(ctx)
			results[i] = outcome{ts, err}
		})
	}
	wg.Wait()
	failed, shown, approved := 0, 0, 0
	for i, s := range servers {
		label := s.Toolbox + "/" + s.Name
		o := results[i]
		if o.err != nil {
			failed++
			fmt.Fprintf(stdout, "%s: could not start: %v\n", label, o.err)
			continue
		}
		if cur := s.State().Tools; cur != nil {
			o.tools = cur // screened again now that every server has listed its tools
		}
		reports, state, why := s.PinReport(o.tools)
		if opts.tool != "" {
			idx := slices.IndexFunc(reports, func(r pins.Report) bool { return r.Name == opts.tool })
			if idx < 0 {
				var names []string
				for _, r := range reports {
					names = append(names, r.Name)
				}
				return &unknownToolError{fmt.Sprintf("server %s has no tool %q (tools: %s)", label, opts.tool, strings.Join(names, ", "))}
			}
			reports = reports[idx : idx+1]
		}
		if state == pins.Corrupt {
			fmt.Fprintf(stdout, "%s: the pin file %s is damaged or was edited (%s): nothing in it is trusted; every tool shows as new until approved.\n", label, store.Path(s.PinKey()), why)
		}
		if opts.verb == "approve" {
			var names []string
			if opts.tool != "" {
				names = []string{opts.tool}
			}
			done, err := s.Approve(o.tools, names)
			if err != nil {
				return fmt.Errorf("%s: %w", label, err)
			}
			if len(done) > 0 {
				approved += len(done)
				fmt.Fprintf(stdout, "%s: approved %s\n", label, strings.Join(done, ", "))
			}
			continue
		}
		for _, r := range reports {
			flags := o.tools.FlagsOf(r.Name)
			if r.Kind == pins.Same && len(flags) == 0 {
				continue
			}
			shown++
			head := fmt.Sprintf("%s/%s: %s", label, r.Name, r.Kind)
			if r.Kind == pins.Changed {
				head += " (" + strings.Join(r.What, ", ") + ")"
			}
			if why := o.tools.WithheldReason(r.Name); why != "" {
				head += "; withheld: " + why
			}
			fmt.Fprintln(stdout, head)
			for _, f := range flags {
				fmt.Fprintf(stdout, "  flagged: %s\n", f)
			}
			if r.Kind != pins.Same {
				fmt.Fprint(stdout, indentLines(pins.Diff(r.Name, r.Old, r.New), "  "))
			}
		}
	}
	switch {
	case opts.verb == "approve" && approved == 0 && failed == 0:
		fmt.Fprintln(stdout, "Nothing to approve: every tool is pinned as it is now.")
	case opts.verb == "diff" && shown == 0 && failed == 0:
		fmt.Fprintln(stdout, "No changes: every tool is as it was pinned, and none is flagged.")
	case opts.verb == "diff" && shown > 0:
		fmt.Fprintf(stdout, "\nApprove with: %s\n", strings.TrimSpace(downstream.ReviewCommand("approve", cfg.Path, opts.toolbox, opts.server, opts.tool)))
	}
	if failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

func indentLines(s, prefix string) string {
	if s == "" {
		return ""
	}
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	if !strings.HasSuffix(s, "\n") {
		b.WriteString("\n")
	}
	return b.String()
}
