package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// version is set at build time (-ldflags "-X main.version=v1.2.3").
var version string

// Version returns the build's version: the one set at build time, else the
// module version that go install recorded, else "dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

const usage = `mcp-workbench groups MCP servers into toolboxes behind two tools, open_toolbox and
use_tool, and starts a server only when its toolbox is opened.

Usage:
  mcp-workbench [--config PATH]             serve MCP on stdin/stdout: what a host runs
  mcp-workbench validate [--config PATH]    check the configuration and summarize it
  mcp-workbench check [--config PATH] [TOOLBOX...]
                                            start the toolboxes' servers as a host would, report
                                            each one, and exit 1 if any fails
  mcp-workbench call [--config PATH] [--json] TOOLBOX SERVER TOOL [JSON-ARGS]
                                            call one tool, as use_tool does (JSON-ARGS "-" reads stdin)
  mcp-workbench import HOST-CONFIG [--out FILE] [--force] [--toolbox NAME]
                                            turn a host's mcpServers into a workbench configuration
  mcp-workbench --version | help

Flags:
  --config PATH       the configuration (else $WORKBENCH_CONFIG, else ./workbench-config.json)
  --log-level LEVEL   debug, info, warn or error (else $WORKBENCH_LOG_LEVEL, else info); logs go to stderr

Start with:
  mcp-workbench import ~/Library/Application\ Support/Claude/claude_desktop_config.json
  mcp-workbench check
  mcp-workbench call knowledge memory read_graph
`

// run is the whole program, on the streams it is given.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "import":
		return importCommand(args, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	case "version":
		fmt.Fprintln(stdout, "mcp-workbench", Version())
		return nil
	case "", "validate", "check", "call":
	default:
		return usageError(stderr, fmt.Sprintf("unknown command %q", cmd))
	}
	fs := flag.NewFlagSet("mcp-workbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configPath := fs.String("config", "", "configuration file")
	logLevel := fs.String("log-level", "", "debug, info, warn or error")
	showVersion := fs.Bool("version", false, "print the version")
	help := fs.Bool("help", false, "show help")
	fs.BoolVar(help, "h", false, "show help")
	asJSON := false
	if cmd == "call" {
		fs.BoolVar(&asJSON, "json", false, "print the whole result as JSON")
	}
	positional, err := parseFlags(fs, args)
	if err != nil {
		return usageError(stderr, err.Error())
	}
	switch {
	case *help:
		fmt.Fprint(stdout, usage)
		return nil
	case *showVersion:
		fmt.Fprintln(stdout, "mcp-workbench", Version())
		return nil
	case (cmd == "" || cmd == "validate") && len(positional) > 0:
		return usageError(stderr, fmt.Sprintf("unexpected argument %q", positional[0]))
	case cmd == "call" && (len(positional) < 3 || len(positional) > 4):
		return usageError(stderr, "call needs TOOLBOX SERVER TOOL and, optionally, JSON-ARGS")
	}

	out := &syncWriter{w: stderr}
	log, err := newLogger(out, *logLevel)
	if err != nil {
		return usageError(stderr, err.Error())
	}
	path := config.ResolvePath(*configPath, os.LookupEnv)
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, "mcp-workbench:", err)
		return &exitError{code: 1}
	}
	for _, w := range cfg.Warnings {
		log.Warn("configuration: " + w)
	}

	switch cmd {
	case "validate":
		return validate(cfg, stdout)
	case "check":
		return check(ctx, cfg, positional, openCatalog(log), log, out, stdout)
	case "call":
		return call(ctx, cfg, positional, asJSON, openCatalog(log), log, out, stdin, stdout)
	}
	return serve(ctx, cfg, openCatalog(log), log, out, stdin, stdout)
}

// openCatalog opens the tool catalog in the user's cache folder. Without
// one (no cache folder, no permission) the workbench works as before:
// every open waits for its servers.
func openCatalog(log *slog.Logger) *catalog.Catalog {
	dir, err := catalog.DefaultDir()
	if err == nil {
		var cat *catalog.Catalog
		if cat, err = catalog.Open(dir); err == nil {
			return cat
		}
	}
	log.Warn("no tool catalog: open_toolbox will wait for servers to start", "error", err)
	return nil
}

// parseFlags parses flags that may come before, between or after the
// positional arguments, as people type them either way, and returns the
// positional arguments in order.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func usageError(stderr io.Writer, msg string) error {
	fmt.Fprintf(stderr, "mcp-workbench: %s\n\n%s", msg, usage)
	return &exitError{code: 2}
}

// serve runs the MCP server on stdin/stdout until stdin ends or ctx is
// cancelled, then stops every downstream process.
func serve(ctx context.Context, cfg *config.Config, cat *catalog.Catalog, log *slog.Logger, logOut io.Writer, stdin io.Reader, stdout io.Writer) error {
	wb := workbench.New(cfg, workbench.Options{Version: Version(), Logger: log, Stderr: logOut, Catalog: cat})
	defer wb.Close()
	ss, err := wb.Connect(ctx, stdin, stdout)
	if err != nil {
		return err
	}
	log.Debug("serving", "config", cfg.Path, "toolboxes", len(cfg.Toolboxes))
	watcher, err := config.Watch(ctx, cfg.Path, config.WatchOptions{}, func(next *config.Config, err error) {
		reload(wb, next, err, log)
	})
	if err != nil {
		log.Warn("not watching the configuration file: edits take effect when the host restarts the workbench", "error", err)
	} else {
		defer watcher.Close()
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
		// stdin ended: the host is gone.
	case <-ctx.Done():
		log.Info("shutting down", "reason", context.Cause(ctx))
	}
	// Calls in flight are cancelled and servers stopped before the session
	// closes, so that nothing waits on a downstream server; no reload
	// starts anything meanwhile.
	if watcher != nil {
		watcher.Close()
	}
	wb.Close()
	_ = ss.Close()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		log.Debug("session ended", "error", err)
	}
	return nil
}

// reload applies an edit of the configuration file: a configuration that
// loaded replaces the one served; one that did not is logged, every
// problem with its JSON path, and the workbench keeps serving the one it
// has.
func reload(wb *workbench.Workbench, next *config.Config, err error, log *slog.Logger) {
	if err != nil {
		var ce *config.Error
		if !errors.As(err, &ce) {
			log.Error("configuration not reloaded; still serving the previous one", "error", err)
			return
		}
		log.Error("configuration not reloaded: the edited file is invalid; still serving the previous one", "file", ce.File, "problems", len(ce.Problems))
		for _, p := range ce.Problems {
			log.Error("configuration problem", "path", p.Path, "problem", p.Msg)
		}
		return
	}
	for _, w := range next.Warnings {
		log.Warn("configuration: " + w)
	}
	if ch := wb.Reload(next); ch.Empty() {
		log.Debug("configuration file saved; nothing to apply")
	}
}

// validate prints a summary of a configuration that loaded.
func validate(cfg *config.Config, stdout io.Writer) error {
	fmt.Fprintf(stdout, "%s: valid, %d toolbox(es)\n", cfg.Path, len(cfg.Toolboxes))
	for _, tb := range cfg.Toolboxes {
		fmt.Fprintf(stdout, "\n%s — %s\n", tb.Name, tb.Description)
		for _, s := range tb.Servers {
			target := s.URL
			if u, err := url.Parse(s.URL); err == nil && u.RawQuery != "" {
				u.RawQuery = "…" // where hosted servers take their keys
				target = u.String()
			}
			if s.Transport == config.Stdio {
				target = strings.TrimSpace(s.Command + " " + strings.Join(s.Args, " "))
			}
			state := ""
			if s.Disabled {
				state = " (disabled)"
			}
			filters := ""
			if s.ToolFilters != nil {
				filters = " tools: " + strings.Join(s.ToolFilters, ", ")
			}
			fmt.Fprintf(stdout, "  %-16s %-5s %s%s%s\n", s.Name, s.Transport, target, filters, state)
		}
	}
	return nil
}

func newLogger(out io.Writer, level string) (*slog.Logger, error) {
	if level == "" {
		level = os.Getenv("WORKBENCH_LOG_LEVEL")
	}
	var l slog.Level
	if level != "" {
		if err := l.UnmarshalText([]byte(level)); err != nil {
			return nil, fmt.Errorf("unknown log level %q (use debug, info, warn or error)", level)
		}
	}
	h := slog.NewTextHandler(out, &slog.HandlerOptions{
		Level: l,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{} // hosts stamp their logs themselves
			}
			return a
		},
	})
	return slog.New(h), nil
}

// syncWriter serializes writes from the logger and the servers' stderr
// forwarders, so that lines never interleave.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
