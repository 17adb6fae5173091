package downstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/serverproc"
)

// TestDeepResultFailsOnlyItsCall: a result nested 5,000,000 levels deep
// (it overflowed the parser's stack, ending the workbench) fails its call
// at once with what was wrong; the server's connection goes on, and so
// does another server.
func TestDeepResultFailsOnlyItsCall(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("deep", fakeserver.EnvDeepResult, "5000000")
	cfg.RequestTimeout = 10 * time.Minute // the failure must not wait for it
	s := h.server(cfg)
	other := h.server(h.config("other"))
	if _, err := other.Connect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	_, err := s.Call(ctxT(t), "deep", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "the server's answer nests objects and arrays deeper than 10000 levels") {
		t.Fatalf("err = %v", err)
	}
	if _, err := s.Call(ctxT(t), "echo", nil, nil); err != nil {
		t.Errorf("a call after, to the same server: %v", err)
	}
	if _, err := other.Call(ctxT(t), "echo", nil, nil); err != nil {
		t.Errorf("a call after, to another server: %v", err)
	}
	if n := len(h.lines(fakeserver.StartsFile)); n != 2 {
		t.Errorf("%d starts, want 2: the deep answer must not end the connection", n)
	}
}

// TestTooLongResultFailsAtOnce: an answer past the line limit fails its
// call as soon as the limit is passed, whether the line ends later or
// never, rather than after requestTimeoutMs with "no response".
func TestTooLongResultFailsAtOnce(t *testing.T) {
	want := fmt.Sprintf("the server's answer exceeded %d MiB", serverproc.MaxLine>>20)
	for _, pad := range []int{0, 8 << 10} {
		// An id after the first 4 KiB was seen only once the line ended.
		t.Run(fmt.Sprintf("never ends, id after %d bytes", pad), func(t *testing.T) {
			h := newHarness(t)
			cfg := h.config("endless", fakeserver.EnvEndless, strconv.Itoa(serverproc.MaxLine+1<<20), fakeserver.EnvEndlessPad, strconv.Itoa(pad))
			cfg.RequestTimeout = 10 * time.Minute
			s := h.server(cfg)
			_, err := s.Call(ctxT(t), "endless", nil, nil)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want %q", err, want)
			}
		})
	}
	t.Run("ends", func(t *testing.T) {
		// 6 MiB past the limit (issue 27's 70 MiB answer): the rest of the
		// line is skipped, not read as lines of its own.
		h := newHarness(t)
		cfg := h.config("big", fakeserver.EnvEndless, strconv.Itoa(serverproc.MaxLine+6<<20), fakeserver.EnvEndlessEnds, "1")
		cfg.RequestTimeout = 10 * time.Minute
		s := h.server(cfg)
		_, err := s.Call(ctxT(t), "endless", nil, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want %q", err, want)
		}
		// The connection reads on after the long line.
		if _, err := s.Call(ctxT(t), "echo", nil, nil); err != nil {
			t.Errorf("a call after: %v", err)
		}
		if n := len(h.lines(fakeserver.StartsFile)); n != 1 {
			t.Errorf("%d starts, want 1", n)
		}
		if strings.Contains(h.stderr.String(), "not JSON-RPC") {
			t.Errorf("the rest of the long line was read as lines: %s", h.stderr)
		}
	})
}

// TestHugeToolListIsRefused: a server listing 200,000 tools (about 50 MB)
// fails its start with the bound it passed, once (the same list would
// pass it again), and the memory it took goes back to the system without
// anything else collecting it (an idle workbench kept 196 MiB for
// minutes); a setting raises the bound.
func TestHugeToolListIsRefused(t *testing.T) {
	h := newHarness(t)
	base := heldMemory(true)
	cfg := h.config("huge", fakeserver.EnvHugeList, "200000")
	cfg.MaxTools, cfg.MaxToolListBytes = config.DefaultMaxTools, config.DefaultMaxToolListBytes
	cfg.MaxRetries = 2
	s := h.server(cfg)
	_, err := s.Connect(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "could not start (1 attempt): listing tools: the server's tool list is larger than 32 MiB (maxToolListBytes)") {
		t.Fatalf("err = %v", err)
	}
	if st := s.State(); st.Status != StatusError {
		t.Errorf("state = %+v", st)
	}
	if n := len(h.lines(fakeserver.StartsFile)); n != 1 {
		t.Errorf("%d starts, want 1: a list past its bound is not retried", n)
	}
	const slack = 40 << 20
	held := heldMemory(false)
	for deadline := time.Now().Add(30 * time.Second); held > base+slack && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		held = heldMemory(false)
	}
	if held > base+slack {
		t.Errorf("%d MiB held after the list was refused, %d before: want under %d MiB more", held>>20, base>>20, slack>>20)
	}

	cfg = h.config("many", fakeserver.EnvHugeList, "300")
	cfg.MaxTools, cfg.MaxToolListBytes = 100, config.DefaultMaxToolListBytes
	_, err = h.server(cfg).Connect(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "the server lists more than 100 tools (maxTools)") {
		t.Errorf("err = %v", err)
	}
	cfg = h.config("raised", fakeserver.EnvHugeList, "300")
	cfg.MaxTools, cfg.MaxToolListBytes = 300, 100<<10
	if ts, err := h.server(cfg).Connect(ctxT(t)); err != nil || len(ts.Tools) != 300 {
		t.Errorf("with the bounds raised: %v", err)
	}
}

// heldMemory returns the bytes the process holds from the system for its
// heap and runtime (mapped, not released), after a collection of its own
// when collect is set; without, only what the workbench itself collected
// and gave back counts.
func heldMemory(collect bool) uint64 {
	if collect {
		runtime.GC()
		debug.FreeOSMemory()
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

// TestQueueToAServerThatStopsReadingIsBounded: frames for a server that
// no longer reads its stdin queue up to a bound; past it the connection
// ends and the calls waiting fail with why, rather than the queue growing
// without end (calls sent after go to the server started again).
func TestQueueToAServerThatStopsReadingIsBounded(t *testing.T) {
	h := newHarness(t)
	h.opts.queueLimit = 1 << 20
	cfg := h.config("deaf", fakeserver.EnvStopReading, "1")
	cfg.RequestTimeout = 10 * time.Minute
	s := h.server(cfg)
	if _, err := s.Call(ctxT(t), "stop_reading", nil, nil); err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"a":1,"b":2,"pad":"` + strings.Repeat("p", 100<<10) + `"}`)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 40 { // 4 MiB: far more than the pipe and the bound hold
		wg.Go(func() {
			_, err := s.Call(ctxT(t), "add", args, nil)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		switch {
		case err == nil: // sent to the server started again after
		case errors.Is(err, context.DeadlineExceeded):
			t.Errorf("a call waited for its deadline: %v", err)
		case strings.Contains(err.Error(), "the server stopped reading its stdin (more than 1 MiB waits to be written to it)"):
			failed++
		default:
			t.Errorf("err = %v", err)
		}
	}
	if failed == 0 {
		t.Error("no call said why it failed")
	}
}
