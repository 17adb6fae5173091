package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/httpauth"
)

const tokenUsage = `Usage: mcp-workbench token add    [--store FILE] NAME
       mcp-workbench token list   [--store FILE]
       mcp-workbench token revoke [--store FILE] NAME

Manage the static bearer tokens that let clients in when the workbench
serves over HTTP (serve --http). The store keeps only a hash of each token.

add makes a token named NAME and prints it once, alone on stdout: it cannot
be shown again (revoke it and add another if it is lost). Clients send it as
"Authorization: Bearer TOKEN". NAME is the user: 1 to 64 letters, digits,
'.', '_' or '-', starting with a letter or digit.

list prints the tokens' names and creation times, never the tokens.

revoke removes the token named NAME. A workbench serving from the same
store (any replica reading the file) refuses it from its next request on.

Flags:
  --store FILE   the token store (else the file the configuration's
                 "http": {"auth": {"tokens": ...}} names, when --config or
                 $WORKBENCH_CONFIG gives one; else $MCP_WORKBENCH_TOKENS, else
                 tokens.json in the http folder of the user's configuration
                 folder), as serve --http finds it.
` + globalFlagsHelp

// tokenOptions is the parsed command line of mcp-workbench token.
type tokenOptions struct {
	globalOptions
	store  string // --store; "" for $MCP_WORKBENCH_TOKENS, else the default
	action string // add, list or revoke
	name   string // the token's name (add, revoke)
}

// runToken adds, lists or revokes static bearer tokens.
func runToken(ctx context.Context, e *env, args []string) error {
	var opts tokenOptions
	fs := e.flagSet("token", &opts.globalOptions)
	fs.StringVar(&opts.store, "store", "", "")
	positional, err := parse(fs, args)
	if err != nil {
		return e.usageError("token", err)
	}
	// Nothing is logged, but a bad --log-level is a mistake all the same.
	if _, _, err := e.logger("token", opts.globalOptions); err != nil {
		return err
	}
	if len(positional) == 0 {
		return e.usageError("token", errors.New(`needs "add", "list" or "revoke"`))
	}
	opts.action, positional = positional[0], positional[1:]
	switch opts.action {
	case "add", "revoke":
		if len(positional) != 1 {
			return e.usageError("token", fmt.Errorf("%s needs one NAME", opts.action))
		}
		opts.name = positional[0]
		if err := httpauth.CheckName(opts.name); err != nil {
			return e.usageError("token", err)
		}
	case "list":
		if err := noArguments(positional); err != nil {
			return e.usageError("token", err)
		}
	default:
		return e.usageError("token", fmt.Errorf("unknown action %q (want add, list or revoke)", opts.action))
	}
	store := opts.store
	if store == "" && (opts.configPath != "" || os.Getenv("WORKBENCH_CONFIG") != "") {
		// The file the configuration's "http.auth.tokens" names, as
		// serve --http reads it.
		cfg, err := config.Load(config.ResolvePath(opts.configPath, os.LookupEnv))
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-workbench token:", err)
			return &exitError{code: 1}
		}
		store = cfg.HTTP.Tokens
	}
	path, err := httpauth.TokensPath(store, os.Getenv)
	if err != nil {
		fmt.Fprintln(e.stderr, "mcp-workbench token:", err)
		return &exitError{code: 1}
	}
	tokens, err := httpauth.OpenTokens(path)
	if err != nil {
		fmt.Fprintln(e.stderr, "mcp-workbench token:", err)
		return &exitError{code: 1}
	}
	switch opts.action {
	case "add":
		tok, err := tokens.Add(ctx, opts.name)
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-workbench token:", err)
			return &exitError{code: 1}
		}
		// The token alone on stdout, so that a script can take it
		// (TOKEN=$(mcp-workbench token add ci)); the words on stderr.
		fmt.Fprintf(e.stderr, "Added token %q to %s. It is not shown again: copy it now.\nClients send it as \"Authorization: Bearer TOKEN\".\n", opts.name, path)
		fmt.Fprintln(e.stdout, tok)
	case "revoke":
		if err := tokens.Revoke(ctx, opts.name); err != nil {
			fmt.Fprintln(e.stderr, "mcp-workbench token:", err)
			return &exitError{code: 1}
		}
		fmt.Fprintf(e.stdout, "Revoked token %q in %s: a workbench serving from this store refuses it from its next request on.\n", opts.name, path)
	case "list":
		list, err := tokens.List()
		if err != nil {
			fmt.Fprintln(e.stderr, "mcp-workbench token:", err)
			return &exitError{code: 1}
		}
		if len(list) == 0 {
			fmt.Fprintf(e.stdout, "No tokens in %s (add one with mcp-workbench token add NAME).\n", path)
			return nil
		}
		fmt.Fprintf(e.stdout, "Tokens in %s:\n", path)
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAME\tCREATED")
		for _, t := range list {
			fmt.Fprintf(tw, "  %s\t%s\n", t.Name, t.Created.UTC().Format(time.RFC3339))
		}
		tw.Flush()
	}
	return nil
}
