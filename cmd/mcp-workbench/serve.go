package main

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"

	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const serveUsage = `Usage: mcp-workbench [serve] [--shared=true|false] [--config PATH] [--log-level LEVEL]

Serves MCP on stdin and stdout: what an MCP host runs. The host sees two
tools, open_toolbox and use_tool, and the toolboxes of the configuration;
a server starts only when its toolbox is opened. stdout carries only MCP;
logs and the servers' stderr go to stderr. Ends when stdin ends or on
SIGINT or SIGTERM, stopping every server it started.

With sharing on (the configuration's "shared": true, or --shared=true,
which wins over it), the session goes to the shared workbench of the
configuration, started in the background if none runs, whose servers run
once for every session; see mcp-workbench status.

Add it to a host's mcpServers:
  "workbench": {"command": "/path/to/mcp-workbench", "args": ["--config", "/path/to/workbench-config.json"]}
` + globalFlagsHelp

// serveOptions is the parsed command line of mcp-workbench [serve].
type serveOptions struct {
	globalOptions
	shared boolFlag // --shared: given, it wins over the configuration's "shared"
}

// sharing reports whether this session relays to the shared workbench:
// --shared if given, else the configuration's "shared".
func (o *serveOptions) sharing(cfg *config.Config) bool {
	if o.shared.set {
		return o.shared.on
	}
	return cfg.Shared
}

func runServe(ctx context.Context, e *env, args []string) error {
	var opts serveOptions
	fs := e.flagSet("serve", &opts.globalOptions)
	opts.shared = e.shared
	fs.Var(&opts.shared, "shared", "")
	positional, err := parse(fs, args)
	if err == nil {
		err = noArguments(positional)
	}
	if err != nil {
		return e.usageError("serve", err)
	}
	cfg, log, logOut, err := e.load("serve", opts.globalOptions)
	if err != nil {
		return err
	}

	if opts.sharing(cfg) {
		err := serveShared(ctx, cfg, log, logOut, opts.globalOptions, e.stdin, e.stdout)
		if !errors.Is(err, errNotShared) {
			return err
		}
		// Logged by serveShared: this session runs its servers itself.
	}
	return serveLocal(ctx, cfg, log, logOut, e.stdin, e.stdout)
}

// serveLocal serves one host session on in and out with servers of its
// own: what serve does without sharing, and what a session does when the
// shared workbench cannot be reached.
func serveLocal(ctx context.Context, cfg *config.Config, log *slog.Logger, logOut io.Writer, in io.Reader, out io.Writer) error {
	wb := workbench.New(cfg, workbench.Options{Version: Version(), Logger: log, Stderr: logOut, Catalog: openCatalog(log), Pins: openPins(log)})
	defer wb.Close()
	ss, err := wb.Connect(ctx, in, out)
	if err != nil {
		return err
	}
	log.Debug("serving", "config", cfg.Path, "toolboxes", len(cfg.Toolboxes))
	watcher, err := config.Watch(ctx, cfg.Path, config.WatchOptions{Loaded: cfg}, func(next *config.Config, err error) {
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
	warnConfig(log, next.Warnings)
	if ch := wb.Reload(next); ch.Empty() {
		log.Debug("configuration file saved; nothing to apply")
	}
}

// openCatalog opens the tool catalog in the user's cache folder. Without
// one (no cache folder, no permission) the workbench works as before:
// every open waits for its servers.
func openCatalog(log *slog.Logger) *catalog.Catalog {
	return openUserStore(log, catalog.DefaultDir, catalog.Open, "no tool catalog: open_toolbox will wait for servers to start")
}

// openUserStore opens a store kept for the user (the catalog, the pins) in
// its folder; without one it logs why and what the workbench does
// without it (missing), and returns nil.
func openUserStore[S any](log *slog.Logger, dir func() (string, error), open func(string) (*S, error), missing string) *S {
	d, err := dir()
	if err == nil {
		var s *S
		if s, err = open(d); err == nil {
			return s
		}
	}
	log.Warn(missing, "error", err)
	return nil
}
