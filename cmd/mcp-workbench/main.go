// Command mcp-workbench is an MCP server that groups other MCP servers
// into toolboxes: the host sees two tools, open_toolbox and use_tool, and a
// server's process starts only when its toolbox is opened.
package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"syscall"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
)

func main() {
	proctree.MaybeRun() // the re-executed watchdog never gets further
	os.Exit(mainExit())
}

// tuneGC trades a little memory for a lot of CPU. The MCP SDK allocates a
// fresh 32 KiB buffer for every JSON message it decodes, several per
// proxied call, while the workbench's live heap stays small: with the
// default GOGC the collector runs every few dozen calls. A higher GOGC
// with a soft memory limit keeps the process small and the collector
// mostly idle (make bench shows both). GOGC and GOMEMLIMIT, when set, win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		stopFollowing = followLiveHeap(baseMemoryLimit)
	}
}

// tuneGCForServing raises the soft memory limit for serve --http, unless
// GOMEMLIMIT is set: many hosts' requests at once allocate far more per
// second than one host's, and at the base limit the collector would take
// most of the CPU (make bench's HTTP replicas: 6 ms of CPU per call at
// 20 MiB, 1.2 ms at 768 MiB).
func tuneGCForServing() {
	if stopFollowing != nil {
		stopFollowing()
		stopFollowing = followLiveHeap(servingMemoryLimit)
	}
}

// stopFollowing ends tuneGC's following of the live heap; nil when
// GOMEMLIMIT rules.
var stopFollowing func()

// baseMemoryLimit is the soft memory limit of a workbench whose live heap
// is small, which is the common case: a few toolboxes open.
const baseMemoryLimit = 20 << 20

// servingMemoryLimit is the soft memory limit of serve --http: a replica
// under load allocates per request, not per host.
const servingMemoryLimit = 512 << 20

// followLiveHeap keeps the soft memory limit at base, or at twice the live
// heap when that is more, re-checked after every collection. A fixed limit
// below the live heap of a workbench holding many large toolboxes would
// make the collector run back to back. stop ends the following.
func followLiveHeap(base uint64) (stop func()) {
	var stopped atomic.Bool
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		// The cleanup runs after the collection that frees the sentinel.
		runtime.AddCleanup(new([64]byte), func(struct{}) {
			if stopped.Load() {
				return
			}
			metrics.Read(sample)
			limit := max(base, 2*sample[0].Value.Uint64())
			debug.SetMemoryLimit(int64(min(limit, math.MaxInt64)))
			arm()
		}, struct{}{})
	}
	debug.SetMemoryLimit(int64(base))
	arm()
	return func() { stopped.Store(true) }
}

// mainExit is the program after the watchdog check; tests re-execute
// themselves into it to run the real thing.
func mainExit() int {
	tuneGC()
	// On Linux, a server's descendant whose parent exits is re-parented to
	// the workbench, within reach of its stop, and reaped here. Best effort:
	// without it, such a process is found by its tag alone.
	_ = proctree.BecomeSubreaper()
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
	// A configuration that passed the schema check once is not checked
	// against the compiled schema again (see config.RememberChecks).
	if dir, err := config.DefaultChecksDir(); err == nil {
		config.RememberChecks(dir)
	}
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
