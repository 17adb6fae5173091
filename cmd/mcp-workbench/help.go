package main

import (
	"context"
	"fmt"
	"strings"
)

// mainUsage is what mcp-workbench help prints: what the program is, its
// commands, and where to start.
func mainUsage() string {
	return `mcp-workbench groups MCP servers into toolboxes behind two tools, open_toolbox and
use_tool, and starts a server only when its toolbox is opened.

Usage:
  mcp-workbench [COMMAND] [FLAGS] [ARGUMENTS]

Commands:
` + commandList() + globalFlagsHelp + `
mcp-workbench --version prints the version, as mcp-workbench version does.

Run mcp-workbench help COMMAND (or COMMAND --help) for a command's flags and arguments.

Start with:
  mcp-workbench import HOST-CONFIG --out workbench-config.json
      a workbench configuration of your host's servers, one toolbox each;
      HOST-CONFIG is the host's file, such as ~/.claude.json (Claude Code),
      ~/.cursor/mcp.json (Cursor) or claude_desktop_config.json (Claude Desktop)
  mcp-workbench check
      starts every server of ./workbench-config.json as a host would and
      reports each one: its toolbox, status and number of tools
  mcp-workbench call TOOLBOX SERVER TOOL '{"NAME": "VALUE"}'
      calls one tool, as the model does through use_tool; a TOOL the server
      does not have is refused with the names of those it has
`
}

const helpUsage = `Usage: mcp-workbench help [COMMAND]

Prints the help of mcp-workbench, or of COMMAND: what it does, its flags and
its arguments. mcp-workbench COMMAND --help prints the same.
` + globalFlagsHelp

// helpOptions is the parsed command line of mcp-workbench help.
type helpOptions struct {
	globalOptions
	command string // the command to explain; "" for the program
}

func runHelp(_ context.Context, e *env, args []string) error {
	var opts helpOptions
	fs := e.flagSet("help", &opts.globalOptions)
	positional, err := parse(fs, args)
	if err == nil && len(positional) > 1 {
		err = fmt.Errorf("unexpected argument %q (help explains one command)", positional[1])
	}
	if err != nil {
		return e.usageError("help", err)
	}
	if len(positional) == 0 {
		fmt.Fprint(e.stdout, mainUsage())
		return nil
	}
	opts.command = positional[0]
	c := lookup(opts.command)
	if c == nil {
		return e.usageError("help", fmt.Errorf("unknown command %q (the commands: %s)", opts.command, commandNames()))
	}
	fmt.Fprint(e.stdout, c.usage)
	return nil
}

func commandNames() string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}
