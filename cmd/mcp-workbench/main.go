// Command mcp-workbench is an MCP server that groups other MCP servers
// into toolboxes: the host sees two tools, open_toolbox and use_tool, and a
// server's process starts only when its toolbox is opened.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
)

func main() {
	proctree.MaybeRun() // the re-executed watchdog never gets further
	os.Exit(mainExit())
}

func mainExit() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A second signal during shutdown ends the process at once; the
	// watchdog then stops what is left.
	go func() {
		<-ctx.Done()
		stop()
	}()
	// A host that closes our stdout must not kill us with SIGPIPE before
	// clean-up: let the write fail instead.
	signal.Ignore(syscall.SIGPIPE)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	return exitCode(err, os.Stderr)
}

// exitError carries an exit status; its message, if any, is already printed.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func exitCode(err error, stderr *os.File) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintln(stderr, "mcp-workbench:", err)
	return 1
}
