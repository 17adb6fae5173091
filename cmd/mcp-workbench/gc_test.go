package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestMemoryLimitFollowsTheLiveHeap checks that the soft memory limit
// rises above a large live heap, so the collector never runs back to back,
// and returns to its base once the heap is small again.
func TestMemoryLimitFollowsTheLiveHeap(t *testing.T) {
	const base = 20 << 20
	stop := followLiveHeap(base)
	defer func() {
		stop()
		debug.SetMemoryLimit(math.MaxInt64)
	}()
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	waitFor := func(what string, ok func(int64) bool) {
		t.Helper()
		for i := 0; i < 200 && !ok(limit()); i++ {
			runtime.GC() // the limit is revised after each collection
			time.Sleep(5 * time.Millisecond)
		}
		if !ok(limit()) {
			t.Fatalf("%s: limit is %d MiB", what, limit()>>20)
		}
	}
	big := make([][]byte, 40)
	for i := range big {
		big[i] = make([]byte, 1<<20)
	}
	waitFor("with 40 MiB live, the limit should be at least 80 MiB", func(l int64) bool { return l >= 80<<20 })
	runtime.KeepAlive(big)
	big = nil
	waitFor("with the heap freed, the limit should be back at its base", func(l int64) bool { return l == base })
}
