package main

import (
	"context"
	"os"

	"github.com/mcpworkbench/mcp-workbench/internal/front"
)

const serveSharedUsage = `Usage: mcp-workbench serve-shared --config PATH [--log-level LEVEL]

Runs the shared workbench of the configuration at PATH: what serve starts,
detached, when the configuration (or --shared=true) turns sharing on. It
listens on a Unix socket in a private folder of the user's, serves each
session relayed to it as a host session of its own, runs a server once for
the sessions whose launch of it is the same, and exits when its last
session has left and sharedGraceMs have passed. There is no need to run it
by hand; see mcp-workbench status and mcp-workbench stop-shared.
` + globalFlagsHelp

// allowedPeer is the user whose connections the shared workbench serves:
// its own. (Tests set another to see a connection refused.)
var allowedPeer = os.Getuid

func runServeShared(ctx context.Context, e *env, args []string) error {
	var g globalOptions
	fs := e.flagSet("serve-shared", &g)
	positional, err := parse(fs, args)
	if err == nil {
		err = noArguments(positional)
	}
	if err != nil {
		return e.usageError("serve-shared", err)
	}
	cfg, log, logOut, err := e.load("serve-shared", g)
	if err != nil {
		return err
	}
	o := front.Options{Version: Version(), Logger: log, LogOut: logOut}
	return front.RunDaemon(ctx, cfg, front.DaemonOptions{Options: o, PeerUID: allowedPeer()})
}
