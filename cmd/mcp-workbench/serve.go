package main

import (
	"context"
	"errors"
	"io"

	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const serveUsage = `Usage: mcp-workbench [serve] [--config PATH] [--log-level LEVEL]

Serves MCP on stdin and stdout: what an MCP host runs. The host sees two
tools, open_toolbox and use_tool, and the toolboxes of the configuration;
a server starts only when its toolbox is opened. stdout carries only MCP;
logs and the servers' stderr go to stderr. Ends when stdin ends or on
SIGINT or SIGTERM, stopping every server it started.

Add it to a host's mcpServers:
  "workbench": {"command": "/path/to/mcp-workbench", "args": ["--config", "/path/to/workbench-config.json"]}
` + globalFlagsHelp

// serveOptions is the parsed command line of mcp-workbench [serve].
type serveOptions struct {
	globalOptions
}

func runServe(ctx context.Context, e *env, args []string) error {
	var opts serveOptions
	fs := e.flagSet("serve", &opts.globalOptions)
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

	wb := workbench.New(cfg, workbench.Options{Version: Version(), Logger: log, Stderr: logOut})
	defer wb.Close()
	ss, err := wb.Connect(ctx, e.stdin, e.stdout)
	if err != nil {
		return err
	}
	log.Debug("serving", "config", cfg.Path, "toolboxes", len(cfg.Toolboxes))
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
		// stdin ended: the host is gone.
	case <-ctx.Done():
		log.Info("shutting down", "reason", context.Cause(ctx))
	}
	// Calls in flight are cancelled and servers stopped before the session
	// closes, so that nothing waits on a downstream server.
	wb.Close()
	_ = ss.Close()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		log.Debug("session ended", "error", err)
	}
	return nil
}
