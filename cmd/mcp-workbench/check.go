package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
	"github.com/mcpworkbench/mcp-workbench/internal/pins"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tokens estimates the model tokens of a text: about four bytes each for
// English and JSON. It is a guide to size, not a tokenizer.
func tokens(n int) int { return (n + 3) / 4 }

const checkUsage = `Usage: mcp-workbench check [--config PATH] [TOOLBOX...]

Starts the servers of the named toolboxes (every toolbox if none) as
open_toolbox would, all in parallel, with progress on stderr (a package
runner's install, such as npx's, is said when it takes a while). Then
reports, for each toolbox, the size of what open_toolbox returns, in bytes
and about how many tokens, and for each server:
  - its status, tool count and start time, or why it could not start (for
    a remote server that needs a login, the login command);
  - its pins: how many tools are pinned, changed, new and removed since
    they were pinned, the tools withheld and what screening flags, with
    the command to review them (mcp-workbench tools diff);
  - with permission rules in the configuration, each tool's decision
    (allow, ask or deny) and the rule that makes it; rules that match no
    tool are warned of at the end.
Last, the size of the workbench's own two tools: what a host sees before
any toolbox is opened. The servers' tool lists refresh the tool catalog,
so that later opens and searches answer without starting them.
Exits 1 if any enabled server could not start.
` + globalFlagsHelp

// checkOptions is the parsed command line of mcp-workbench check.
type checkOptions struct {
	globalOptions
	toolboxes []string // the toolboxes to check; none for every one
}

func runCheck(ctx context.Context, e *env, args []string) error {
	var opts checkOptions
	fs := e.flagSet("check", &opts.globalOptions)
	positional, err := parse(fs, args)
	if err != nil {
		return e.usageError("check", err)
	}
	for _, n := range positional { // a toolbox named twice is checked once
		if !slices.Contains(opts.toolboxes, n) {
			opts.toolboxes = append(opts.toolboxes, n)
		}
	}
	cfg, log, logOut, err := e.load("check", opts.globalOptions)
	if err != nil {
		return err
	}
	for _, n := range opts.toolboxes {
		if cfg.Toolbox(n) == nil {
			return e.usageError("check", fmt.Errorf("no toolbox %q in %s (toolboxes: %s)", n, cfg.Path, strings.Join(cfg.ToolboxNames(), ", ")))
		}
	}
	names := opts.toolboxes
	if len(names) == 0 {
		names = cfg.ToolboxNames()
	}
	return check(ctx, cfg, names, log, logOut, e.stdout)
}

// check starts the servers of the named toolboxes as open_toolbox would,
// all in parallel, reports each server on stderr as it finishes, then
// prints a report: per server its status, tool count and start time; per
// toolbox the size of what open_toolbox returns. It fails if any enabled
// server could not start.
func check(ctx context.Context, cfg *config.Config, names []string, log *slog.Logger, logOut, stdout io.Writer) error {
	// Every tool list check gets is stored in the tool catalog when it
	// differs from the entry there: check refreshes the catalog, and never
	// answers from it.
	wb := workbench.New(cfg, workbench.Options{Version: Version(), Logger: log, Stderr: logOut, Catalog: front.OpenCatalog(log), CatalogStoreOnly: true, Pins: front.OpenPins(log)})
	defer wb.Close()

	// What each start produced: the report reads these, never the
	// servers' live state, which an idleTimeoutMs may have changed since.
	type outcome struct {
		took  time.Duration
		tools *downstream.ToolSet
		err   error
	}
	// The servers to start are counted before any starts: every progress
	// line reads the total.
	var servers []*downstream.Server
	for _, name := range names {
		for _, s := range wb.Servers(name) {
			if !s.Config().Disabled {
				servers = append(servers, s)
			}
		}
	}
	total := len(servers)
	fmt.Fprintf(logOut, "starting %d server(s) of %d toolbox(es) from %s…\n", total, len(names), cfg.Path)
	results := make(map[*downstream.Server]*outcome, total)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() {
			start := time.Now()
			stopWatch := watchInstall(s, start, logOut)
			tools, err := s.Connect(ctx)
			stopWatch()
			o := &outcome{took: time.Since(start), tools: tools, err: err}
			mu.Lock()
			results[s] = o
			done := len(results)
			mu.Unlock()
			if err != nil {
				fmt.Fprintf(logOut, "[%d/%d] %s/%s failed after %s: %s\n", done, total, s.Toolbox, s.Name, round(o.took), pins.Visible(err.Error()))
			} else {
				fmt.Fprintf(logOut, "[%d/%d] %s/%s started in %s\n", done, total, s.Toolbox, s.Name, round(o.took))
			}
		})
	}
	wg.Wait()

	failed := 0
	for i, name := range names {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		tb := cfg.Toolbox(name)
		// Rendered from the attempts above: opening the toolbox would
		// start each failed server again, with a second retry cycle.
		res := wb.RenderStarts(name, func(s *downstream.Server) (*downstream.ToolSet, error) {
			if o := results[s]; o != nil {
				return o.tools, o.err
			}
			return nil, nil
		})
		text := resultText(res)
		if res.IsError {
			fmt.Fprintf(stdout, "%s: could not open\n", name)
		} else {
			fmt.Fprintf(stdout, "%s — %s\n  open_toolbox returns %d bytes (≈ %d tokens)\n", name, tb.Description, len(text), tokens(len(text)))
		}
		for _, s := range wb.Servers(name) {
			o := results[s]
			switch {
			case s.Config().Disabled:
				fmt.Fprintf(stdout, "  %-20s disabled\n", s.Name)
			case o != nil && o.err == nil:
				fmt.Fprintf(stdout, "  %-20s connected  %3d tools  started in %s\n", s.Name, len(o.tools.Tools), round(o.took))
				for _, t := range o.tools.Tools {
					if t.Unchecked != "" {
						fmt.Fprintf(stdout, "  %-20s warning: tool '%s': %s\n", "", pins.Line(t.Name), pins.Line(t.Unchecked))
					}
				}
				pinLines(stdout, cfg.Path, s, o.tools)
				permissionLines(stdout, cfg, name, s, o.tools)
			default:
				failed++
				reason := "not started"
				if o != nil && o.err != nil {
					reason = o.err.Error()
				}
				fmt.Fprintf(stdout, "  %-20s error      %s\n", s.Name, pins.Visible(reason))
			}
			if o == nil || o.err != nil {
				// Its error says why: the login needed and the command, or
				// another reason, where a login hint would mislead.
				continue
			}
			if line := oauth.Status(cfg.Path, name, s.Config(), true); line != "" {
				fmt.Fprintf(stdout, "  %-20s login: %s\n", "", line)
			}
		}
	}
	listed := map[config.ServerID]*downstream.ToolSet{}
	for s, o := range results {
		if o.err == nil {
			listed[config.ServerID{Toolbox: s.Toolbox, Server: s.Name}] = o.tools
		}
	}
	unmatchedRules(stdout, cfg, listed)
	defs, _ := json.Marshal(wb.Tools())
	fmt.Fprintf(stdout, "\nBefore any toolbox is opened, a host sees the workbench's two tools: %d bytes (≈ %d tokens).\n", len(defs), tokens(len(defs)))
	if failed > 0 {
		fmt.Fprintf(stdout, "%d of %d server(s) failed to start.\n", failed, total)
		return &exitError{code: 1}
	}
	if total == 0 {
		fmt.Fprintln(stdout, "No server to start: every server is disabled.")
		return nil
	}
	fmt.Fprintf(stdout, "All %d server(s) started.\n", total)
	return nil
}

// installNoteAfter is how long a package runner's install goes on before
// check says so: a package that is installed already takes the runner a
// moment to find, which is not worth a line (nor a "for 0s").
var installNoteAfter = 5 * time.Second

// watchInstall says on w when s's start is a package runner's install
// that has taken installNoteAfter or more (again, every half minute that
// it goes on), and when it has installed, until the returned stop.
func watchInstall(s *downstream.Server, start time.Time, w io.Writer) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		var said time.Time // when "installing" was said last; zero: not installing
		look := func(now time.Time) {
			st := s.State().Status
			switch {
			case st == downstream.StatusInstalling && now.Sub(start) >= installNoteAfter && (said.IsZero() || now.Sub(said) >= 30*time.Second):
				fmt.Fprintf(w, "%s/%s installing its package (%s) for %s; connectionTimeoutMs counts once it is installed\n", s.Toolbox, s.Name, s.PackageRunner(), now.Sub(start).Truncate(time.Second))
				said = now
			case st != downstream.StatusInstalling && !said.IsZero():
				// Whatever came next (starting, started, failed), the
				// install is over: said once, even when the start that
				// followed it ended between two looks.
				fmt.Fprintf(w, "%s/%s: the install ended after %s\n", s.Toolbox, s.Name, round(now.Sub(start)))
				said = time.Time{}
			}
		}
		for {
			select {
			case <-done:
				look(time.Now())
				return
			case now := <-tick.C:
				look(now)
			}
		}
	}()
	return func() { close(done); <-ended }
}

func round(d time.Duration) time.Duration {
	if d > time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Microsecond)
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

// pinLines reports a server's tools against their pins: how many are
// pinned, changed, new and removed, what is withheld, what screening
// flags, and the command to review.
func pinLines(stdout io.Writer, configPath string, s *downstream.Server, ts *downstream.ToolSet) {
	if cur := s.State().Tools; cur != nil {
		ts = cur // screened again now that every server has listed its tools
	}
	reports, state, why := s.PinReport(ts)
	if reports == nil && state == pins.Missing {
		return // no pin store
	}
	count := map[pins.Kind][]string{}
	for _, r := range reports {
		count[r.Kind] = append(count[r.Kind], pins.Line(r.Name))
	}
	line := fmt.Sprintf("pins: %d pinned, %d changed, %d new, %d removed", len(count[pins.Same]), len(count[pins.Changed]), len(count[pins.New]), len(count[pins.Removed]))
	for _, k := range []pins.Kind{pins.Changed, pins.New, pins.Removed} {
		if len(count[k]) > 0 {
			line += fmt.Sprintf("; %s: %s", k, strings.Join(count[k], ", "))
		}
	}
	fmt.Fprintf(stdout, "  %-20s %s\n", "", line)
	if state == pins.Corrupt {
		fmt.Fprintf(stdout, "  %-20s the pin file is damaged or was edited (%s): nothing in it is trusted\n", "", pins.Line(why))
	}
	for _, w := range ts.Withheld {
		fmt.Fprintf(stdout, "  %-20s withheld: tool '%s': %s\n", "", pins.Line(w.Name), pins.Line(w.Reason))
	}
	for _, t := range ts.Defs() {
		for _, f := range ts.FlagsOf(t.Name) {
			fmt.Fprintf(stdout, "  %-20s flagged: tool '%s': %s\n", "", pins.Line(t.Name), pins.Line(f))
		}
	}
	if len(count[pins.Changed])+len(count[pins.New])+len(count[pins.Removed]) > 0 || len(ts.Withheld) > 0 || state == pins.Corrupt {
		fmt.Fprintf(stdout, "  %-20s review: %s\n", "", downstream.ReviewCommand("diff", configPath, s.Toolbox, s.Name, ""))
	}
}
