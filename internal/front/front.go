// Package front holds the workbench's front doors: where a host's session
// comes in and is served. [ServeLocal] serves a session on the host's own
// stdin and stdout with servers of its own; [ServeShared] relays it to the
// shared workbench of its configuration (a [Daemon], the same binary run
// as serve-shared), which serves every session relayed to it with one
// [workbench.Workbench] each over one pool of servers. The command line
// (cmd/mcp-workbench) parses flags and calls in here.
package front

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/pins"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options are what every front door runs with.
type Options struct {
	Version string       // the binary's version, as mcp-workbench version prints it
	Logger  *slog.Logger // the one logger of the run
	// LogOut is what the logger writes to; the servers' stderr lines go
	// there too (one writer, so that lines never interleave).
	LogOut io.Writer
}

// ServeLocal serves one host session on in and out with servers of its
// own: what serve does without sharing, and what a session does when the
// shared workbench cannot be reached.
func ServeLocal(ctx context.Context, cfg *config.Config, o Options, in io.Reader, out io.Writer) error {
	log := o.Logger
	wb := workbench.New(cfg, workbench.Options{Version: o.Version, Logger: log, Stderr: o.LogOut, Catalog: OpenCatalog(log), Pins: OpenPins(log)})
	defer wb.Close()
	ss, err := wb.Connect(ctx, in, out)
	if err != nil {
		return err
	}
	log.Debug("serving", "config", cfg.Path, "toolboxes", len(cfg.Toolboxes))
	watcher, err := config.Watch(ctx, cfg.Path, config.WatchOptions{Loaded: cfg}, func(next *config.Config, err error) {
		Reload(wb, next, err, log)
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

// Reload applies an edit of the configuration file: a configuration that
// loaded replaces the one served; one that did not is logged, every
// problem with its JSON path, and the workbench keeps serving the one it
// has.
func Reload(wb *workbench.Workbench, next *config.Config, err error, log *slog.Logger) {
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
	WarnConfig(log, next.Warnings)
	if ch := wb.Reload(next); ch.Empty() {
		log.Debug("configuration file saved; nothing to apply")
	}
}

// WarnConfig logs the warnings of a configuration: the one printer of
// validate, import, serve (at start and on a reload) and the others.
func WarnConfig(log *slog.Logger, warnings []string) {
	for _, w := range warnings {
		log.Warn("configuration: " + w)
	}
}

// OpenCatalog opens the tool catalog in the user's cache folder. Without
// one (no cache folder, no permission) the workbench works as before:
// every open waits for its servers.
func OpenCatalog(log *slog.Logger) *catalog.Catalog {
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

// OpenPins opens the pin store in the user's configuration folder.
// Without one the workbench cannot pin: it says so and serves as before.
func OpenPins(log *slog.Logger) *pins.Store {
	return openUserStore(log, pins.DefaultDir, pins.Open, "no pin store: tool definitions are not pinned, and changed tools are not withheld")
}
