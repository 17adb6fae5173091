package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
)

// serveHTTP is serve --http: the configuration's "http" block, the
// authentication it names, then front.ServeHTTP.
func serveHTTP(ctx context.Context, cfg *config.Config, o front.Options, opts serveOptions) error {
	tuneGCForServing()
	if cfg.HTTP.JSONLogs {
		level := slog.LevelInfo
		for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
			if o.Logger.Enabled(ctx, l) {
				level = l
				break
			}
		}
		o.Logger = slog.New(slog.NewJSONHandler(o.LogOut, &slog.HandlerOptions{Level: level}))
		// The servers' stderr lines too: each a record of its own.
		o.LogOut = stderrRecords{o.Logger}
	}
	front.WarnConfig(o.Logger, cfg.Warnings)
	ho := front.HTTPOptions{Options: o, Addr: opts.http}
	if cfg.HTTP.StateKey != "" {
		ho.StateKey = []byte(cfg.HTTP.StateKey)
	}
	if cfg.HTTP.HasAuth() {
		a, err := httpAuth(ctx, cfg, o.Logger)
		if err != nil {
			return fmt.Errorf("serving over HTTP: %w", err)
		}
		ho.Auth = a
	}
	ho.Limits = httpLimits(cfg)
	return front.ServeHTTP(ctx, cfg, ho)
}

// stderrRecords logs each line the servers write to stderr (one per
// Write, with its [toolbox/server] prefix) as a record of its own.
type stderrRecords struct{ log *slog.Logger }

func (w stderrRecords) Write(p []byte) (int, error) {
	w.log.Info("server stderr", "line", strings.TrimRight(string(p), "\r\n"))
	return len(p), nil
}
