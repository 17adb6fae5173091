package main

import (
	"strings"
	"testing"
)

// BenchmarkShared's lines make a table of their own, after the main one;
// without them there is none.
func TestSharedTable(t *testing.T) {
	in := `cpu: Some CPU
BenchmarkCall/direct-2         	    2000	   616929 ns/op	       270.3 p50-µs	      5715 p99-µs
BenchmarkCall/workbench-2      	    2000	  1019100 ns/op	       672.2 p50-µs	      5720 p99-µs
BenchmarkShared/sessions=10/own-2         	       3	7146274326 ns/op	       826.4 first-result-max-ms	       523.8 first-result-p50-ms	        58.01 open-max-ms	        16.28 open-p50-ms	        30.00 server-procs	       300.0 server-start-ms	       491.5 servers-RSS-MiB	       841.3 total-RSS-MiB	       349.8 workbench-RSS-MiB	        20.00 workbench-procs
BenchmarkShared/sessions=10/shared-2      	       3	1890342071 ns/op	        20.81 first-result-max-ms	         7.611 first-result-p50-ms	        12.91 open-max-ms	         4.815 open-p50-ms	         3.000 server-procs	       300.0 server-start-ms	        51.95 servers-RSS-MiB	       256.3 total-RSS-MiB	       204.3 workbench-RSS-MiB	        12.00 workbench-procs
BenchmarkShared/call-2         	   10000	   4649715 ns/op	       369.0 byte-relay-cpu-µs/call	      1009 byte-relay-p50-µs	      7469 byte-relay-p99-µs	       833.5 own-p50-µs	      6377 own-p99-µs	       435.0 own-workbench-cpu-µs/call	       457.0 relay-cpu-µs/call	      1309 relayed-p50-µs	      9722 relayed-p99-µs	       389.0 shared-workbench-cpu-µs/call
`
	r, _, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	writeShared(&out, r)
	for _, want := range []string{
		"| Sharing | Own servers per session | Shared workbench | Shared vs own |",
		"| 10 sessions: server processes | 30 | 3 | 0.10× |",
		"| 10 sessions: resident memory, all | 841 MiB | 256 MiB | 0.30× |",
		"| Sessions 2–10: open_toolbox to a call's result, median (each server starts in 300 ms) | 523.8 ms | 7.6 ms | -516.2 ms |",
		"| use_tool latency, median | 834 µs | 1309 µs | +476 µs (a byte relay in front: +176 µs) |",
		"| CPU per call, workbench processes | 435 µs | 457 µs relay + 389 µs shared | a byte relay: 369 µs |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "proportional") {
		t.Errorf("a row for a metric the run did not report:\n%s", out.String())
	}

	r, _, _ = parse(strings.NewReader("BenchmarkCall/direct-2  10  5 ns/op  1 p50-µs\n"))
	out.Reset()
	writeShared(&out, r)
	if out.Len() != 0 {
		t.Errorf("a sharing table without BenchmarkShared:\n%s", out.String())
	}
}

// BenchmarkHTTPReplicas's line makes a table of its own, last; without it
// there is none.
func TestHTTPTable(t *testing.T) {
	in := "BenchmarkHTTPReplicas-2 \t1\t31000000000 ns/op\t 10000 calls\t 3400 calls/s\t 8000 session-first-p50-µs\t 20000 session-first-p99-µs\t 1500 others-p50-µs\t 9000 others-p99-µs\t 103 server-procs-at-kill\t 5000 begin-p50-µs\t 9000 begin-p99-µs\t 3600 http-requests/s\t 12.5 calls-cut-by-kill\t 40 calls-retried\t 200 hosts\t 0 lost\t 0 answered-twice\t 38 404s\t 2100 p50-µs\t 48000 p99-µs\t 1900 uncut-p50-µs\t 30000 uncut-p99-µs\t 0 tries-timed-out\t 900 replicas-cpu-µs/call\t 80 haproxy-cpu-µs/call\t 400 hosts-cpu-µs/call\t 33 sessions-on-killed\t 33 sessions-restarted\t 36.0 stateless-%-replica-1\t 33.5 stateless-%-replica-2\t 30.5 stateless-%-replica-3\n"
	r, _, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	writeHTTP(&out, r)
	for _, want := range []string{
		"| HTTP: 3 replicas behind haproxy, one killed halfway | |",
		"| Hosts at once (half 2026-07-28 stateless, half 2025-11-25 sessions) | 200 |",
		"| Call latency, median | 2.1 ms |",
		"| Call latency, 99th percentile | 48.0 ms |",
		"| A host's start (discover, or initialize and its session), all at once: median / 99th percentile | 5.0 ms / 9.0 ms |",
		"| Call latency, every other call, median / 99th percentile | 1.5 ms / 9.0 ms |",
		"| Server processes of the three replicas at the kill | 103 |",
		"| Throughput | 3400 calls/s (3600 HTTP requests/s through haproxy) |",
		"| Call latency without the calls cut by the kill, median / 99th percentile | 1.9 ms / 30.0 ms |",
		"| Calls cut by the kill, sent again | 12 (40 tries again in all, 0 after a timeout) |",
		"| Stateless calls per replica | 36% / 34% / 30% |",
		"| CPU per call: the replicas / haproxy / the hosts (the benchmark's process) | 900 µs / 80 µs / 400 µs |",
		"| Sessions on the killed replica → begun again after a 404 | 33 → 33 (38 404s) |",
		"| Calls lost / answered twice | 0 / 0 |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
	out.Reset()
	write(&out, r)
	if out.Len() != 0 {
		t.Errorf("the direct-vs-workbench table without its benchmarks:\n%s", out.String())
	}
	r, _, _ = parse(strings.NewReader("BenchmarkCall/direct-2  10  5 ns/op  1 p50-µs\n"))
	out.Reset()
	writeHTTP(&out, r)
	if out.Len() != 0 {
		t.Errorf("an HTTP table without BenchmarkHTTPReplicas:\n%s", out.String())
	}
}
