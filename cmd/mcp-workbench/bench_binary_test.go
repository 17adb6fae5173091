package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkStartupBinary measures what a host that starts the workbench
// over stdio pays, on the release binary (built from this tree as make
// build does, not this test binary, which links the tests' packages too):
// the time from spawning it to its initialize result, its resident set
// then, and its peak resident set over 1,000 use_tool calls to a server.
//
// WB_BENCH_BIN names other binaries to measure in the same run, beside
// this tree's: "path" or "label=path", comma-separated (say a build of an
// earlier commit: git worktree add /tmp/old COMMIT, then make build
// there). Every iteration starts each binary once, in an order that
// rotates, so that the load of a busy machine falls on all alike; the
// figures are the medians, reported per binary as LABEL-start-ms,
// LABEL-idle-RSS-MiB, LABEL-peak-RSS-MiB (the peak: the median of three
// runs of 1,000 calls each, after the timed loop), and LABEL-binary-MB.
func BenchmarkStartupBinary(b *testing.B) {
	bins := benchBinaries(b)
	cfg := workbenchCmd(b, oneToolbox(map[string]any{"s": fakeEntry("s")})).Args[2]
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-host", Version: "1"}, nil)
	start := func(bin benchBinary) (*mcp.ClientSession, int, time.Duration) {
		cmd := exec.Command(bin.path, "--config", cfg, "--log-level", "error")
		t0 := time.Now()
		cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		d := time.Since(t0)
		if err != nil {
			b.Fatalf("%s: %v", bin.label, err)
		}
		return cs, cmd.Process.Pid, d
	}
	starts := make([][]time.Duration, len(bins))
	idle := make([][]float64, len(bins))
	round := 0
	for b.Loop() {
		for j := range bins {
			i := (round + j) % len(bins)
			cs, pid, d := start(bins[i])
			b.StopTimer()
			starts[i] = append(starts[i], d)
			idle[i] = append(idle[i], pidStatus(pid, "VmRSS:"))
			cs.Close()
			b.StartTimer()
		}
		round++
	}
	b.StopTimer()
	peak := make([][]float64, len(bins))
	for run := range 3 {
		for j := range bins {
			i := (run + j) % len(bins)
			cs, pid, _ := start(bins[i])
			c := &caller{cs: cs, viaWB: true, payload: map[string]any{"text": strings.Repeat("x", 64)}}
			for range 1000 {
				if err := c.call(); err != nil {
					b.Fatalf("%s: %v", bins[i].label, err)
				}
			}
			peak[i] = append(peak[i], pidStatus(pid, "VmHWM:"))
			cs.Close()
		}
	}
	for i, bin := range bins {
		b.ReportMetric(float64(median(starts[i]))/1e6, bin.label+"-start-ms")
		b.ReportMetric(median(idle[i]), bin.label+"-idle-RSS-MiB")
		b.ReportMetric(median(peak[i]), bin.label+"-peak-RSS-MiB")
		if st, err := os.Stat(bin.path); err == nil {
			b.ReportMetric(float64(st.Size())/1e6, bin.label+"-binary-MB")
		}
	}
}

func median[T int64 | float64 | time.Duration](v []T) T {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

type benchBinary struct{ label, path string }

// benchBinaries returns this tree's release binary, labelled "this",
// then those WB_BENCH_BIN names.
func benchBinaries(b *testing.B) []benchBinary {
	treeBinary := filepath.Join(b.TempDir(), "mcp-workbench")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", treeBinary, "./cmd/mcp-workbench")
	cmd.Dir = fakeserver.RepoRoot(b)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building the workbench: %v\n%s", err, out)
	}
	bins := []benchBinary{{"this", treeBinary}}
	for _, f := range strings.Split(os.Getenv("WB_BENCH_BIN"), ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		label, path, ok := strings.Cut(f, "=")
		if !ok {
			label, path = filepath.Base(f), f
		}
		if _, err := os.Stat(path); err != nil {
			b.Fatalf("WB_BENCH_BIN: %v", err)
		}
		bins = append(bins, benchBinary{label, path})
	}
	return bins
}
