package prom

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// goCollector writes the Go runtime's usual metrics, by client_golang's
// names: goroutines, threads, the version, memory statistics and
// collection pauses.
type goCollector struct{}

// NewGoCollector returns the collector of the Go runtime's metrics.
func NewGoCollector() Collector { return goCollector{} }

func (goCollector) name() string { return "go_" }

func (goCollector) write(b *bytes.Buffer) {
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	header(b, "go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", "summary")
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		sample(b, "go_gc_duration_seconds", `quantile="`+q+`"`, gc.PauseQuantiles[i].Seconds())
	}
	sample(b, "go_gc_duration_seconds_sum", "", gc.PauseTotal.Seconds())
	sample(b, "go_gc_duration_seconds_count", "", float64(gc.NumGC))

	gauge1(b, "go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	header(b, "go_info", "Information about the Go environment.", "gauge")
	sample(b, "go_info", `version="`+escapeLabel(runtime.Version())+`"`, 1)

	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	for _, s := range []struct {
		name, help string
		v          uint64
		counter    bool
	}{
		{"go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use.", m.Alloc, false},
		{"go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already.", m.TotalAlloc, true},
		{"go_memstats_frees_total", "Total number of heap objects frees.", m.Frees, true},
		{"go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use.", m.HeapAlloc, false},
		{"go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used.", m.HeapIdle, false},
		{"go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.", m.HeapInuse, false},
		{"go_memstats_heap_objects", "Number of currently allocated objects.", m.HeapObjects, false},
		{"go_memstats_heap_released_bytes", "Number of heap bytes released to OS.", m.HeapReleased, false},
		{"go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system.", m.HeapSys, false},
		{"go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", 0, false},
		{"go_memstats_mallocs_total", "Total number of heap objects allocated.", m.Mallocs, true},
		{"go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", m.NextGC, false},
		{"go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments.", m.StackInuse, false},
		{"go_memstats_sys_bytes", "Number of bytes obtained from system.", m.Sys, false},
	} {
		kind := "gauge"
		if s.counter {
			kind = "counter"
		}
		header(b, s.name, s.help, kind)
		v := float64(s.v)
		if s.name == "go_memstats_last_gc_time_seconds" {
			v = float64(m.LastGC) / 1e9
		}
		sample(b, s.name, "", v)
	}
	n, _ := runtime.ThreadCreateProfile(nil)
	gauge1(b, "go_threads", "Number of OS threads created.", float64(n))
}

func gauge1(b *bytes.Buffer, name, help string, v float64) {
	header(b, name, help, "gauge")
	sample(b, name, "", v)
}

// processCollector writes the process's usual metrics from /proc (Linux;
// elsewhere it writes nothing), by client_golang's names.
type processCollector struct{}

// ProcessCollectorOpts is kept for client_golang's signature; it has no
// options.
type ProcessCollectorOpts struct{}

// NewProcessCollector returns the collector of the process's metrics.
func NewProcessCollector(ProcessCollectorOpts) Collector { return processCollector{} }

func (processCollector) name() string { return "process_" }

// clockTicks is USER_HZ, the unit of /proc's times: 100 on every Linux
// the workbench runs on.
const clockTicks = 100

func (processCollector) write(b *bytes.Buffer) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return
	}
	// The fields after the command, which is in parentheses and may hold
	// spaces: state is field 3, utime 14, stime 15, starttime 22, vsize 23,
	// rss 24 (in pages).
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 22 {
		return
	}
	num := func(i int) float64 { v, _ := strconv.ParseFloat(f[i-3], 64); return v }
	header(b, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter")
	sample(b, "process_cpu_seconds_total", "", (num(14)+num(15))/clockTicks)
	if limits, err := os.ReadFile("/proc/self/limits"); err == nil {
		for _, line := range strings.Split(string(limits), "\n") {
			if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
				if fs := strings.Fields(rest); len(fs) > 0 {
					if v, err := strconv.ParseFloat(fs[0], 64); err == nil {
						gauge1(b, "process_max_fds", "Maximum number of open file descriptors.", v)
					}
				}
			}
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		gauge1(b, "process_open_fds", "Number of open file descriptors.", float64(len(fds)))
	}
	gauge1(b, "process_resident_memory_bytes", "Resident memory size in bytes.", num(24)*float64(os.Getpagesize()))
	if boot := bootTime(); boot > 0 {
		gauge1(b, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", boot+num(22)/clockTicks)
	}
	gauge1(b, "process_virtual_memory_bytes", "Virtual memory size in bytes.", num(23))
}

// bootTime is when the system started, in seconds since 1970, or 0.
func bootTime() float64 {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "btime "); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v
		}
	}
	return 0
}
