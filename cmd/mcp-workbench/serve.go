package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
	"github.com/mcpworkbench/mcp-workbench/internal/shared"
)

const serveUsage = `Usage: mcp-workbench [serve] [--shared=true|false] [--config PATH] [--log-level LEVEL]
       mcp-workbench serve --http ADDR [--config PATH] [--log-level LEVEL]

Serves MCP on stdin and stdout: what an MCP host runs. The host sees two
tools, open_toolbox and use_tool, and the toolboxes of the configuration;
a server starts only when its toolbox is opened. stdout carries only MCP;
logs and the servers' stderr go to stderr. Ends when stdin ends or on
SIGINT or SIGTERM, stopping every server it started.

With sharing on (the configuration's "shared": true, or --shared=true,
which wins over it), the session goes to the shared workbench of the
configuration, started in the background if none runs, whose servers run
once for every session; see mcp-workbench status.

With --http ADDR (host:port, e.g. 127.0.0.1:8080; the configuration's
"http" block sets the rest), it serves MCP's Streamable HTTP transport at
/mcp instead, for web hosts, remote agents and teams: 2026-07-28 requests
without a session, 2025 hosts with one. On an address other than loopback
it needs "http.auth". /healthz, /readyz and /metrics are served beside.
Ends on SIGINT or SIGTERM, after the requests in flight.

Add it to a host's mcpServers:
  "workbench": {"command": "/path/to/mcp-workbench", "args": ["--config", "/path/to/workbench-config.json"]}
` + globalFlagsHelp

// serveOptions is the parsed command line of mcp-workbench [serve].
type serveOptions struct {
	globalOptions
	shared boolFlag // --shared: given, it wins over the configuration's "shared"
	http   string   // --http: serve Streamable HTTP on this address
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
	fs.StringVar(&opts.http, "http", "", "")
	positional, err := parse(fs, args)
	if err == nil {
		err = noArguments(positional)
	}
	if err != nil {
		return e.usageError("serve", err)
	}
	cfg, log, logOut, err := e.loadQuiet("serve", opts.globalOptions)
	if err != nil {
		return err
	}

	o := front.Options{Version: Version(), Logger: log, LogOut: logOut}
	if opts.http != "" {
		return serveHTTP(ctx, cfg, o, opts) // warns in its log's format
	}
	front.WarnConfig(log, cfg.Warnings)
	if opts.sharing(cfg) {
		start := func(sock, config string) (<-chan error, error) {
			return startSharedDaemon(sock, config, opts.globalOptions)
		}
		err := front.ServeShared(ctx, cfg, front.SharedOptions{Options: o, Start: start}, e.stdin, e.stdout)
		if !errors.Is(err, front.ErrNotShared) {
			return err
		}
		// Logged by ServeShared: this session runs its servers itself.
	}
	return front.ServeLocal(ctx, cfg, o, e.stdin, e.stdout)
}

// startSharedDaemon starts serve-shared for the configuration at config,
// detached, its log next to its socket sock.
func startSharedDaemon(sock, config string, g globalOptions) (<-chan error, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the workbench's own executable: %w", err)
	}
	args := []string{"serve-shared", "--config", config}
	if g.logLevel != "" {
		args = append(args, "--log-level", g.logLevel)
	}
	return shared.StartDetached(exe, args, os.Environ(), shared.LogPath(sock))
}
