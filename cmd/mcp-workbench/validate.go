package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
)

const validateUsage = `Usage: mcp-workbench validate [--config PATH]

Checks the configuration as the workbench loads it, without starting any
server, and prints a summary of its toolboxes and servers. Every problem is
listed on stderr with its JSON path; exits 1 if the configuration cannot be
used. Warnings (unknown keys, descriptions still marked TODO) do not fail it.
` + globalFlagsHelp

// validateOptions is the parsed command line of mcp-workbench validate.
type validateOptions struct {
	globalOptions
}

func runValidate(_ context.Context, e *env, args []string) error {
	var opts validateOptions
	fs := e.flagSet("validate", &opts.globalOptions)
	positional, err := parse(fs, args)
	if err == nil {
		err = noArguments(positional)
	}
	if err != nil {
		return e.usageError("validate", err)
	}
	cfg, _, _, err := e.load("validate", opts.globalOptions)
	if err != nil {
		return err
	}
	printSummary(cfg, e.stdout)
	return nil
}

// printSummary prints a summary of a configuration that loaded.
func printSummary(cfg *config.Config, stdout io.Writer) {
	fmt.Fprintf(stdout, "%s: valid, %d toolbox(es)\n", cfg.Path, len(cfg.Toolboxes))
	for _, tb := range cfg.Toolboxes {
		fmt.Fprintf(stdout, "\n%s — %s\n", tb.Name, tb.Description)
		for _, s := range tb.Servers {
			target := s.Shown
			if q := strings.IndexByte(target, '?'); q >= 0 && s.Transport != config.Stdio {
				target = target[:q] + "?…" // where hosted servers take their keys
			}
			state := ""
			if s.Disabled {
				state = " (disabled)"
			}
			filters := ""
			if s.ShownFilters != nil {
				filters = " tools: " + strings.Join(s.ShownFilters, ", ")
			}
			fmt.Fprintf(stdout, "  %-16s %-5s %s%s%s\n", s.Name, s.Transport, target, filters, state)
			if line := oauth.Status(cfg.Path, tb.Name, s, false); line != "" && !s.Disabled {
				fmt.Fprintf(stdout, "  %-16s       %s\n", "", line)
			}
		}
	}
}
