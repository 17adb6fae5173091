package main

import (
	"context"
	"fmt"

	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
)

const logoutUsage = `Usage: mcp-workbench logout [--config PATH] TOOLBOX SERVER

Remove the tokens a login stored for a server.
` + globalFlagsHelp

// logoutOptions is the parsed command line of mcp-workbench logout.
type logoutOptions struct {
	globalOptions
}

// runLogout removes the stored tokens of one server.
func runLogout(ctx context.Context, e *env, args []string) error {
	var opts logoutOptions
	fs := e.flagSet("logout", &opts.globalOptions)
	positional, err := parse(fs, args)
	if err != nil {
		return e.usageError("logout", err)
	}
	_, _, s, err := e.remoteServer("logout", opts.globalOptions, positional)
	if err != nil {
		return err
	}
	stdout, stderr := e.stdout, e.stderr
	store, err := oauth.DefaultStore()
	if err != nil {
		return err
	}
	had, err := oauth.Logout(ctx, store, s.URL)
	if err != nil {
		fmt.Fprintln(stderr, "mcp-workbench logout:", err)
		return &exitError{code: 1}
	}
	if !had {
		fmt.Fprintf(stdout, "No login was stored for %s.\n", s.Name)
		return nil
	}
	fmt.Fprintf(stdout, "Logged out of %s: its tokens are removed.\n", s.Name)
	return nil
}
