package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
	"github.com/mcpworkbench/mcp-workbench/internal/pins"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
)

const toolsUsage = `Usage: mcp-workbench tools diff    [--config PATH] [TOOLBOX [SERVER [TOOL]]]
       mcp-workbench tools approve [--config PATH] [--reviewed CODE] [TOOLBOX [SERVER [TOOL]]]

The workbench pins each tool's definition (its whole tool object but
_meta: name, title, description, inputSchema, outputSchema, annotations
and any other member) the first time it lists a server, and withholds a
tool whose definition changed since ("toolChanges").

diff starts the named servers (every server if none is named), and shows
each tool that changed, is new or was removed since it was pinned, as a
unified diff with hidden characters written as \uXXXX, and what screening
flags in each tool. It ends with the approve command for what it showed,
with a code (--reviewed) that stands for exactly those definitions.

approve pins what diff showed: of every server, of one server, or of one
tool; the workbench serves them again (open the toolbox again). A removed
tool's pin is dropped. With --reviewed, it approves only if the servers
list exactly what the diff of that code showed; without, it shows what it
would approve and asks. Nothing to approve is not an error.
` + globalFlagsHelp

// toolsOptions is the parsed command line of mcp-workbench tools.
type toolsOptions struct {
	globalOptions
	verb                  string // diff or approve
	toolbox, server, tool string
	reviewed              string // approve's --reviewed: the code diff printed
}

func runTools(ctx context.Context, e *env, args []string) error {
	var opts toolsOptions
	fs := e.flagSet("tools", &opts.globalOptions)
	fs.StringVar(&opts.reviewed, "reviewed", "", "")
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
	if opts.reviewed != "" && opts.verb != "approve" {
		return e.usageError("tools", errors.New("--reviewed goes with approve"))
	}
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
	err = reviewTools(ctx, cfg, opts, store, log, logOut, e.stdin, e.stdout)
	var unknown *unknownToolError
	if errors.As(err, &unknown) {
		return e.usageError("tools", err)
	}
	return err
}

// unknownToolError is a TOOL that the named server does not have.
type unknownToolError struct{ msg string }

func (e *unknownToolError) Error() string { return e.msg }

// reviewed is one server's part of a review: its tools, compared with
// its pins, and what approving them changes.
type reviewed struct {
	downstream.Review
	reports []pins.Report
}

// reviewTools starts the selected servers and shows (diff) or pins
// (approve) their tools' changes. Every string a server wrote is printed
// through pins.Line or pins.Visible: a name or description cannot draw
// over, or add, lines of the review.
func reviewTools(ctx context.Context, cfg *config.Config, opts toolsOptions, store *pins.Store, log *slog.Logger, logOut io.Writer, stdin io.Reader, stdout io.Writer) error {
	wb := workbench.New(cfg, workbench.Options{Version: Version(), Logger: log, Stderr: logOut, Catalog: front.OpenCatalog(log), CatalogStoreOnly: true, Pins: store})
	defer wb.Close()
	var servers []*downstream.Server
	for _, name := range cfg.ToolboxNames() {
		if opts.toolbox != "" && name != opts.toolbox {
			continue
		}
		for _, s := range wb.Servers(name) {
			if opts.server == "" || s.Name == opts.server {
				servers = append(servers, s)
			}
		}
	}
	started := downstream.StartForReview(ctx, servers)
	failed := 0
	var rs []reviewed
	for i := range started {
		r := &started[i]
		s, label := r.Server, r.Label
		if r.Err != nil {
			failed++
			fmt.Fprintf(stdout, "%s: could not start: %s\n", label, pins.Visible(r.Err.Error()))
			continue
		}
		reports, state, why := s.PinReport(r.Tools)
		var names []string
		if opts.tool != "" {
			idx := slices.IndexFunc(reports, func(r pins.Report) bool { return r.Name == opts.tool })
			if idx < 0 {
				var have []string
				for _, r := range reports {
					have = append(have, pins.Line(r.Name))
				}
				return &unknownToolError{fmt.Sprintf("server %s has no tool %q (tools: %s)", label, opts.tool, strings.Join(have, ", "))}
			}
			reports = reports[idx : idx+1]
			names = []string{opts.tool}
		}
		if state == pins.Corrupt {
			fmt.Fprintf(stdout, "%s: the pin file %s is damaged or was edited (%s): nothing in it is trusted; every tool shows as new until approved.\n", label, store.Path(s.PinKey()), pins.Line(why))
		}
		r.Pending = s.Pending(r.Tools, names)
		rs = append(rs, reviewed{Review: *r, reports: reports})
	}
	code := downstream.ReviewCode(started)
	pending := 0
	for _, r := range rs {
		pending += len(r.Pending)
	}
	approveCmd := fmt.Sprintf("%s --reviewed %s", downstream.ReviewCommand("approve", cfg.Path, opts.toolbox, opts.server, opts.tool), code)
	switch {
	case opts.verb == "diff":
		shown := showReview(stdout, rs)
		switch {
		case shown == 0 && failed == 0:
			fmt.Fprintln(stdout, "No changes: every tool is as it was pinned, and none is flagged.")
		case pending > 0:
			fmt.Fprintf(stdout, "\nApprove what is shown with: %s\n", approveCmd)
		}
	case pending == 0:
		if failed == 0 {
			fmt.Fprintln(stdout, "Nothing to approve: every tool is pinned as it is now.")
		}
	case opts.reviewed != "" && opts.reviewed != code:
		fmt.Fprintln(stdout, "Nothing approved: the servers do not list what that review showed (they changed since, or the code is another review's). What they list now:")
		showReview(stdout, rs)
		fmt.Fprintf(stdout, "\nApprove this with: %s\n", approveCmd)
		return &exitError{code: 1}
	case opts.reviewed == "":
		showReview(stdout, rs)
		fmt.Fprint(stdout, "\nApprove what is shown above? [y/N] ")
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintf(stdout, "\nNothing approved. To approve what is shown without the question: %s\n", approveCmd)
			return &exitError{code: 1}
		}
		fmt.Fprintln(stdout)
		fallthrough
	default: // approve what was shown: the definitions of this very review
		for _, r := range rs {
			done, err := r.Server.Approve(r.Tools, r.Pending)
			if err != nil {
				return fmt.Errorf("%s: %w", r.Label, err)
			}
			if len(done) > 0 {
				for i := range done {
					done[i] = pins.Line(done[i])
				}
				fmt.Fprintf(stdout, "%s: approved %s\n", r.Label, strings.Join(done, ", "))
			}
		}
	}
	if failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// showReview prints each tool of rs that is not pinned as it is, or that
// screening flags, with the diff from its pin, and returns how many.
func showReview(stdout io.Writer, rs []reviewed) int {
	shown := 0
	for _, rv := range rs {
		for _, r := range rv.reports {
			flags := rv.Tools.FlagsOf(r.Name)
			if r.Kind == pins.Same && len(flags) == 0 {
				continue
			}
			shown++
			head := fmt.Sprintf("%s/%s: %s", rv.Label, pins.Line(r.Name), r.Kind)
			if r.Kind == pins.Changed {
				head += " (" + strings.Join(r.What, ", ") + ")"
			}
			if why := rv.Tools.WithheldReason(r.Name); why != "" {
				head += "; withheld: " + pins.Line(why)
			}
			fmt.Fprintln(stdout, head)
			for _, f := range flags {
				fmt.Fprintf(stdout, "  flagged: %s\n", pins.Line(f))
			}
			if r.Kind != pins.Same {
				fmt.Fprint(stdout, indentLines(pins.Diff(r.Name, r.Old, r.New), "  "))
			}
		}
	}
	return shown
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
