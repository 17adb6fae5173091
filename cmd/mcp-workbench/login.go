package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
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
`

const logoutUsage = `Usage: mcp-workbench logout [--config PATH] TOOLBOX SERVER

Remove the tokens a login stored for a server.
`

var errHelp = errors.New("help shown")

func helpIsNoError(err error) error {
	if err == errHelp {
		return nil
	}
	return err
}

// remoteServer loads the configuration and finds TOOLBOX SERVER in it.
func remoteServer(cmd string, args []string, usage string, stdout, stderr io.Writer, extra func(*flag.FlagSet)) (*config.Config, *config.Toolbox, *config.Server, error) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configPath := fs.String("config", "", "configuration file")
	if extra != nil {
		extra(fs)
	}
	pos, err := parseFlags(fs, args)
	if err == flag.ErrHelp {
		fmt.Fprint(stdout, usage)
		return nil, nil, nil, errHelp
	}
	if err == nil && len(pos) != 2 {
		err = fmt.Errorf("%s needs TOOLBOX SERVER", cmd)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcp-workbench %s: %v\n\n%s", cmd, err, usage)
		return nil, nil, nil, &exitError{code: 2}
	}
	cfg, err := config.Load(config.ResolvePath(*configPath, os.LookupEnv))
	if err != nil {
		fmt.Fprintln(stderr, "mcp-workbench:", err)
		return nil, nil, nil, &exitError{code: 1}
	}
	tb := cfg.Toolbox(pos[0])
	if tb == nil {
		fmt.Fprintf(stderr, "mcp-workbench %s: no toolbox %q in %s (toolboxes: %s)\n", cmd, pos[0], cfg.Path, strings.Join(cfg.ToolboxNames(), ", "))
		return nil, nil, nil, &exitError{code: 2}
	}
	s := tb.Server(pos[1])
	if s == nil {
		var names []string
		for _, s := range tb.Servers {
			names = append(names, s.Name)
		}
		fmt.Fprintf(stderr, "mcp-workbench %s: toolbox %q has no server %q (servers: %s)\n", cmd, tb.Name, pos[1], strings.Join(names, ", "))
		return nil, nil, nil, &exitError{code: 2}
	}
	return cfg, tb, s, nil
}

// login runs the OAuth login of one server and reports what it got.
func login(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	timeout := oauth.DefaultLoginTimeout
	cfg, tb, s, err := remoteServer("login", args, loginUsage, stdout, stderr, func(fs *flag.FlagSet) {
		fs.DurationVar(&timeout, "timeout", timeout, "how long to wait for the browser")
	})
	if err != nil {
		return helpIsNoError(err)
	}
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

// logout removes the stored tokens of one server.
func logout(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	_, _, s, err := remoteServer("logout", args, logoutUsage, stdout, stderr, nil)
	if err != nil {
		return helpIsNoError(err)
	}
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
