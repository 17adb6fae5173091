package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
)

const loginUsage = `Usage: mcp-workbench login [--config PATH] [--timeout DURATION] TOOLBOX SERVER

Log in to a remote (http or sse) server that asks for OAuth: opens the
authorization page in the browser ($BROWSER if set, else the system's), and
prints its URL on stderr too; waits on 127.0.0.1 for the redirect (default
5m); stores the tokens in the user's configuration folder, where every
workbench process finds them. Servers that run the workbench refresh them
without you.

Flags:
  --timeout DURATION  how long to wait for the browser's redirect (default 5m)
` + globalFlagsHelp

// loginOptions is the parsed command line of mcp-workbench login.
type loginOptions struct {
	globalOptions
	timeout time.Duration
}

// remoteServer finds TOOLBOX SERVER, the positional arguments of command
// name, in the configuration g names.
func (e *env) remoteServer(name string, g globalOptions, positional []string) (*config.Config, *config.Toolbox, *config.Server, error) {
	if len(positional) != 2 {
		return nil, nil, nil, e.usageError(name, fmt.Errorf("%s needs TOOLBOX SERVER", name))
	}
	cfg, _, _, err := e.load(name, g)
	if err != nil {
		return nil, nil, nil, err
	}
	tb := cfg.Toolbox(positional[0])
	if tb == nil {
		fmt.Fprintf(e.stderr, "mcp-workbench %s: no toolbox %q in %s (toolboxes: %s)\n", name, positional[0], cfg.Path, strings.Join(cfg.ToolboxNames(), ", "))
		return nil, nil, nil, &exitError{code: 2}
	}
	s := tb.Server(positional[1])
	if s == nil {
		var names []string
		for _, s := range tb.Servers {
			names = append(names, s.Name)
		}
		fmt.Fprintf(e.stderr, "mcp-workbench %s: toolbox %q has no server %q (servers: %s)\n", name, tb.Name, positional[1], strings.Join(names, ", "))
		return nil, nil, nil, &exitError{code: 2}
	}
	return cfg, tb, s, nil
}

// runLogin runs the OAuth login of one server and reports what it got.
func runLogin(ctx context.Context, e *env, args []string) error {
	var opts loginOptions
	fs := e.flagSet("login", &opts.globalOptions)
	fs.DurationVar(&opts.timeout, "timeout", oauth.DefaultLoginTimeout, "")
	positional, err := parse(fs, args)
	if err != nil {
		return e.usageError("login", err)
	}
	cfg, tb, s, err := e.remoteServer("login", opts.globalOptions, positional)
	if err != nil {
		return err
	}
	timeout, stdout, stderr := opts.timeout, e.stdout, e.stderr
	toolbox := tb.Name
	res, err := oauth.Login(ctx, oauth.LoginOptions{
		ConfigPath: cfg.Path, Toolbox: toolbox, Server: s, Timeout: timeout,
		Show: func(_ context.Context, authURL string) error {
			fmt.Fprintf(stderr, "Log in to %s/%s in your browser. If it does not open, open this URL:\n\n  %s\n\nWaiting up to %v for the browser…\n", toolbox, s.Name, authURL, timeout)
			if err := oauth.OpenBrowser(authURL); err != nil {
				fmt.Fprintf(stderr, "(could not start a browser: %v)\n", err)
			}
			return nil
		},
	})
	if err != nil {
		fmt.Fprintln(stderr, "mcp-workbench login:", err)
		return &exitError{code: 1}
	}
	if res.NotNeeded {
		fmt.Fprintf(stdout, "%s/%s answered without asking for a login: nothing to do.\n", toolbox, s.Name)
		return nil
	}
	client := res.ClientID
	if res.Registered {
		client += " (registered for this login)"
	}
	expiry := "no expiry given"
	if !res.Expiry.IsZero() {
		expiry = res.Expiry.Local().Format(time.DateTime)
	}
	refresh := "no refresh token: log in again when it expires"
	if res.Refresh {
		refresh = "refreshed automatically"
	}
	scopes := strings.Join(res.Scopes, " ")
	if scopes == "" {
		scopes = "(none named)"
	}
	fmt.Fprintf(stdout, "Logged in to %s/%s.\n  issuer   %s\n  client   %s\n  scopes   %s\n  expires  %s (%s)\n  tokens   %s\n",
		toolbox, s.Name, res.Issuer, client, scopes, expiry, refresh, res.TokenFile)
	return nil
}
