// Command benchtable turns the output of the workbench's benchmarks
// (go test -bench ./cmd/mcp-workbench) into the table that make bench
// prints: the workbench beside the same server called directly, and the
// ratios; then, if BenchmarkShared ran, sessions sharing their servers
// beside sessions running their own; then, if BenchmarkHTTPReplicas ran,
// three workbenches serving HTTP behind haproxy.
//
//	go test -run '^$' -bench . ./cmd/mcp-workbench | benchtable
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

func main() {
	results, machine, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if len(results) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no benchmark results on stdin")
		os.Exit(1)
	}
	if len(machine) > 0 {
		fmt.Printf("Machine: %s\n\n", strings.Join(machine, ", "))
	}
	write(os.Stdout, results)
	writeShared(os.Stdout, results)
	writeHTTP(os.Stdout, results)
}

// results maps a benchmark name (without the -GOMAXPROCS suffix) to its
// metrics by unit ("ns/op", "calls/s", …).
type results map[string]map[string]float64

var line = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+\d+\s+(.*)$`)

// parse reads benchmark lines, and the goos, goarch and cpu lines that
// describe the machine (with the GOMAXPROCS the names carry).
func parse(r io.Reader) (out results, machine []string, err error) {
	out = results{}
	seen := map[string]bool{}
	procs := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		text := sc.Text()
		for _, prefix := range []string{"goos: ", "goarch: ", "cpu: "} {
			if strings.HasPrefix(text, prefix) && !seen[text] {
				seen[text] = true
				machine = append(machine, strings.TrimPrefix(text, prefix))
			}
		}
		m := line.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		if procs == "" && m[2] != "" {
			procs = strings.TrimPrefix(m[2], "-")
			machine = append(machine, "GOMAXPROCS "+procs)
		}
		f := strings.Fields(m[3])
		metrics := map[string]float64{}
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: bad value %q", m[1], f[i])
			}
			metrics[f[i+1]] = v
		}
		out[strings.TrimPrefix(m[1], "Benchmark")] = metrics
	}
	return out, machine, sc.Err()
}

func (r results) get(name, unit string) (float64, bool) {
	v, ok := r[name][unit]
	return v, ok
}

func write(w io.Writer, r results) {
	// The header only above rows: a run of the sharing or HTTP
	// benchmarks alone has none here.
	headed := false
	row := func(measure, direct, relay, wb, ratio string) {
		if !headed {
			headed = true
			fmt.Fprintln(w, "| Measure | Direct | Byte relay (the floor) | Workbench | Workbench vs direct |")
			fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: |")
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", measure, direct, relay, wb, ratio)
	}
	// opt formats a metric that may be missing.
	opt := func(name, unit, format string, scale float64) string {
		if v, ok := r.get(name, unit); ok {
			return fmt.Sprintf(format, v*scale)
		}
		return ""
	}
	if d, ok1 := r.get("Call/direct", "server-cpu-µs/call"); ok1 {
		if x, ok2 := r.get("Call/workbench", "server-cpu-µs/call"); ok2 {
			row("CPU per call of the process the host talks to", fmt.Sprintf("%.0f µs (the server)", d),
				opt("Call/relay", "server-cpu-µs/call", "%.0f µs", 1), fmt.Sprintf("%.0f µs", x), fmt.Sprintf("%.2f× the server's", x/d))
		}
	}
	for _, q := range []struct{ unit, label string }{{"p50-µs", "median"}, {"p99-µs", "99th percentile"}} {
		d, ok1 := r.get("Call/direct", q.unit)
		x, ok2 := r.get("Call/workbench", q.unit)
		if ok1 && ok2 {
			relay := ""
			if rl, ok := r.get("Call/relay", q.unit); ok {
				relay = fmt.Sprintf("%.0f µs (%+.0f µs)", rl, rl-d)
			}
			row("Call latency, "+q.label, fmt.Sprintf("%.0f µs", d), relay, fmt.Sprintf("%.0f µs", x), fmt.Sprintf("%+.0f µs", x-d))
		}
	}
	if d, ok1 := r.get("CallLarge/direct", "p50-µs"); ok1 {
		if x, ok2 := r.get("CallLarge/workbench", "p50-µs"); ok2 {
			row("Call latency, median, 64 KiB each way", fmt.Sprintf("%.1f ms", d/1e3), opt("CallLarge/relay", "p50-µs", "%.1f ms", 1e-3), fmt.Sprintf("%.1f ms", x/1e3), fmt.Sprintf("%+.1f ms", (x-d)/1e3))
		}
	}
	if d, ok1 := r.get("CallLarge/direct", "server-cpu-µs/call"); ok1 {
		if x, ok2 := r.get("CallLarge/workbench", "server-cpu-µs/call"); ok2 {
			ratio := ""
			if rl, ok := r.get("CallLarge/relay", "server-cpu-µs/call"); ok && rl > 0 {
				ratio = fmt.Sprintf("%.2f× the relay's", x/rl)
			}
			row("CPU per call, 64 KiB each way", fmt.Sprintf("%.0f µs (the server)", d), opt("CallLarge/relay", "server-cpu-µs/call", "%.0f µs", 1), fmt.Sprintf("%.0f µs", x), ratio)
		}
	}
	for _, n := range []string{"1", "16", "64"} {
		d, ok1 := r.get("Throughput/inflight="+n+"/direct", "calls/s")
		x, ok2 := r.get("Throughput/inflight="+n+"/workbench", "calls/s")
		if ok1 && ok2 {
			relay := ""
			if rl, ok := r.get("Throughput/inflight="+n+"/relay", "calls/s"); ok {
				relay = fmt.Sprintf("%.0f calls/s (%.2f×)", rl, rl/d)
			}
			row("Throughput, "+n+" in flight", fmt.Sprintf("%.0f calls/s", d), relay, fmt.Sprintf("%.0f calls/s", x), fmt.Sprintf("%.2f×", x/d))
		}
	}
	if a, ok := r.get("Relay", "allocs/op"); ok {
		bytes, _ := r.get("Relay", "B/op")
		row("Workbench allocations per proxied call", "", "", fmt.Sprintf("%.0f (%.0f bytes)", a, bytes), "")
		h0, _ := r.get("Relay", "heap-MiB-at-start")
		h1, _ := r.get("Relay", "heap-MiB-at-25%")
		h2, _ := r.get("Relay", "heap-MiB-at-end")
		g0, _ := r.get("Relay", "goroutines-at-start")
		g1, _ := r.get("Relay", "goroutines-at-end")
		row("Workbench heap and goroutines over the run", "", "", fmt.Sprintf("heap %.2f → %.2f → %.2f MiB", h0, h1, h2), fmt.Sprintf("goroutines %.0f → %.0f", g0, g1))
	}
	for _, n := range []string{"16", "64"} {
		if peak, ok := r.get("Throughput/inflight="+n+"/workbench", "peak-RSS-MiB"); ok {
			early, _ := r.get("Throughput/inflight="+n+"/workbench", "RSS-at-25%-MiB")
			end, _ := r.get("Throughput/inflight="+n+"/workbench", "RSS-at-end-MiB")
			row("Workbench memory, "+n+" in flight", "", "", fmt.Sprintf("%.1f MiB peak", peak), fmt.Sprintf("resident %.1f → %.1f MiB from 25%% to 100%% of calls", early, end))
		}
	}
	for _, bound := range []string{"maxToolListBytes", "maxTools"} {
		name := "RefusedToolList/bound=" + bound
		if after, ok := r.get(name, "RSS-5s-after-MiB"); ok {
			before, _ := r.get(name, "RSS-before-MiB")
			peak, _ := r.get(name, "peak-RSS-MiB")
			row("Workbench memory, a 200,000-tool list refused by "+bound, "", "", fmt.Sprintf("%.1f MiB peak", peak), fmt.Sprintf("resident %.1f MiB before, %.1f MiB 5 s after", before, after))
		}
	}
	if v, ok := r.get("Startup", "ns/op"); ok {
		row("Start to initialize result", "", "", fmt.Sprintf("%.1f ms", v/1e6), "")
	}
	for _, n := range []string{"1", "10", "50"} {
		if v, ok := r.get("Open/servers="+n, "ns/op"); ok {
			slow, _ := r.get("Open/servers="+n, "slowest-server-ms")
			row("Open a toolbox of "+n+" server(s)", fmt.Sprintf("slowest server %.0f ms", slow), "", fmt.Sprintf("%.0f ms", v/1e6), fmt.Sprintf("%.2f× the slowest", v/1e6/slow))
		}
	}
	for _, m := range []string{"cold", "warm"} {
		if v, ok := r.get("OpenCatalog/"+m, "ns/op"); ok {
			start, _ := r.get("OpenCatalog/"+m, "server-start-ms")
			row("Open a toolbox of 3 servers, tool catalog "+m, fmt.Sprintf("each server starts in %.0f ms", start), "", fmt.Sprintf("%.1f ms", v/1e6), fmt.Sprintf("%.3f× a start", v/1e6/start))
		}
	}
	cold, okCold := r.get("OpenCatalog/npx-cold", "ns/op")
	warm, okWarm := r.get("OpenCatalog/npx-warm", "ns/op")
	if okCold && okWarm {
		row("Open the 3 official servers started by npx, tool catalog cold", "", "", fmt.Sprintf("%.0f ms", cold/1e6), "")
		row("Open the 3 official servers started by npx, tool catalog warm", "", "", fmt.Sprintf("%.1f ms", warm/1e6), fmt.Sprintf("%.3f× the cold open", warm/cold))
	}
	if v, ok := r.get("Context/tools-list", "bytes"); ok {
		row("Workbench tools/list", "", "", fmt.Sprintf("%.0f bytes", v), "")
	}
	for _, s := range []string{"memory", "filesystem", "everything"} {
		name := "Context/open=" + s
		list, ok1 := r.get(name, "server-tools-list-bytes")
		open, ok2 := r.get(name, "open-toolbox-bytes")
		if ok1 && ok2 {
			row("open_toolbox result, "+s+" server", fmt.Sprintf("%.0f bytes (its tools/list)", list), "", fmt.Sprintf("%.0f bytes", open), fmt.Sprintf("%.2f×", open/list))
		}
	}
}

// writeShared prints BenchmarkShared's figures: n host sessions each
// running their own servers ("shared": false) beside the same sessions
// sharing one workbench, and use_tool's latency through the relay.
func writeShared(w io.Writer, r results) {
	own, shared := "", ""
	for name := range r {
		if n, ok := strings.CutPrefix(name, "Shared/sessions="); ok {
			if v, ok := strings.CutSuffix(n, "/own"); ok {
				own, shared = name, "Shared/sessions="+v+"/shared"
			}
		}
	}
	_, okCall := r["Shared/call"]
	if _, ok := r[shared]; !ok && !okCall {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| Sharing | Own servers per session | Shared workbench | Shared vs own |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
	row := func(measure, o, s, ratio string) {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", measure, o, s, ratio)
	}
	if _, ok := r[shared]; ok {
		n := strings.TrimSuffix(strings.TrimPrefix(shared, "Shared/sessions="), "/shared")
		o, s := r[own], r[shared]
		row(n+" sessions: server processes", fmt.Sprintf("%.0f", o["server-procs"]), fmt.Sprintf("%.0f", s["server-procs"]), fmt.Sprintf("%.2f×", s["server-procs"]/o["server-procs"]))
		row(n+" sessions: workbench processes (and watchdogs)", fmt.Sprintf("%.0f", o["workbench-procs"]), fmt.Sprintf("%.0f", s["workbench-procs"]), "")
		for _, m := range []struct{ unit, label string }{
			{"total-RSS-MiB", "resident memory, all"}, {"workbench-RSS-MiB", "resident memory, workbench processes"}, {"servers-RSS-MiB", "resident memory, servers"},
			{"total-PSS-MiB", "proportional memory (shared pages shared out), all"},
		} {
			if _, ok := o[m.unit]; !ok {
				continue
			}
			row(n+" sessions: "+m.label, fmt.Sprintf("%.0f MiB", o[m.unit]), fmt.Sprintf("%.0f MiB", s[m.unit]), fmt.Sprintf("%.2f×", s[m.unit]/o[m.unit]))
		}
		start := fmt.Sprintf(" (each server starts in %.0f ms)", o["server-start-ms"])
		for _, m := range []struct{ unit, label string }{
			{"open-p50-ms", "open_toolbox, median"}, {"open-max-ms", "open_toolbox, slowest"},
			{"first-result-p50-ms", "open_toolbox to a call's result, median"}, {"first-result-max-ms", "open_toolbox to a call's result, slowest"},
		} {
			row("Sessions 2–"+n+": "+m.label+start, fmt.Sprintf("%.1f ms", o[m.unit]), fmt.Sprintf("%.1f ms", s[m.unit]), fmt.Sprintf("%+.1f ms", s[m.unit]-o[m.unit]))
		}
	}
	if c, ok := r["Shared/call"]; ok {
		for _, q := range []struct{ unit, label string }{{"p50", "median"}, {"p99", "99th percentile"}} {
			o, s := c["own-"+q.unit+"-µs"], c["relayed-"+q.unit+"-µs"]
			hop := ""
			if h, ok := c["byte-relay-"+q.unit+"-µs"]; ok {
				hop = fmt.Sprintf(" (a byte relay in front: %+.0f µs)", h-o)
			}
			row("use_tool latency, "+q.label, fmt.Sprintf("%.0f µs", o), fmt.Sprintf("%.0f µs", s), fmt.Sprintf("%+.0f µs", s-o)+hop)
		}
		if rl, ok := c["relay-cpu-µs/call"]; ok {
			sw := c["shared-workbench-cpu-µs/call"]
			hop := ""
			if h, ok := c["byte-relay-cpu-µs/call"]; ok {
				hop = fmt.Sprintf("a byte relay: %.0f µs", h)
			}
			row("CPU per call, workbench processes", fmt.Sprintf("%.0f µs", c["own-workbench-cpu-µs/call"]), fmt.Sprintf("%.0f µs relay + %.0f µs shared", rl, sw), hop)
		}
	}
}

// writeHTTP prints BenchmarkHTTPReplicas's figures: hosts calling three
// workbenches behind haproxy, one of them killed halfway.
func writeHTTP(w io.Writer, r results) {
	m, ok := r["HTTPReplicas"]
	if !ok {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| HTTP: 3 replicas behind haproxy, one killed halfway | |")
	fmt.Fprintln(w, "| --- | ---: |")
	row := func(measure, value string) { fmt.Fprintf(w, "| %s | %s |\n", measure, value) }
	row("Hosts at once (half 2026-07-28 stateless, half 2025-11-25 sessions)", fmt.Sprintf("%.0f", m["hosts"]))
	row("Calls (use_tool), all answered", fmt.Sprintf("%.0f", m["calls"]))
	row("Call latency, median", fmt.Sprintf("%.1f ms", m["p50-µs"]/1e3))
	row("Call latency, 99th percentile", fmt.Sprintf("%.1f ms", m["p99-µs"]/1e3))
	if v, ok := m["uncut-p50-µs"]; ok {
		row("Call latency without the calls cut by the kill, median / 99th percentile", fmt.Sprintf("%.1f ms / %.1f ms", v/1e3, m["uncut-p99-µs"]/1e3))
	}
	if v, ok := m["session-first-p50-µs"]; ok {
		row("Call latency, a session's first call (starts the session's own server), median / 99th percentile", fmt.Sprintf("%.1f ms / %.1f ms", v/1e3, m["session-first-p99-µs"]/1e3))
		row("Call latency, every other call, median / 99th percentile", fmt.Sprintf("%.1f ms / %.1f ms", m["others-p50-µs"]/1e3, m["others-p99-µs"]/1e3))
	}
	if v, ok := m["server-procs-at-kill"]; ok {
		row("Server processes of the three replicas at the kill", fmt.Sprintf("%.0f", v))
	}
	if v, ok := m["begin-p50-µs"]; ok {
		row("A host's start (discover, or initialize and its session), all at once: median / 99th percentile", fmt.Sprintf("%.1f ms / %.1f ms", v/1e3, m["begin-p99-µs"]/1e3))
	}
	through := fmt.Sprintf("%.0f calls/s", m["calls/s"])
	if v, ok := m["http-requests/s"]; ok {
		through += fmt.Sprintf(" (%.0f HTTP requests/s through haproxy)", v)
	}
	row("Throughput", through)
	if v, ok := m["replicas-cpu-µs/call"]; ok {
		row("CPU per call: the replicas / haproxy / the hosts (the benchmark's process)", fmt.Sprintf("%.0f µs / %.0f µs / %.0f µs", v, m["haproxy-cpu-µs/call"], m["hosts-cpu-µs/call"]))
	}
	var shares []string
	for i := 1; ; i++ {
		v, ok := m[fmt.Sprintf("stateless-%%-replica-%d", i)]
		if !ok {
			break
		}
		shares = append(shares, fmt.Sprintf("%.0f%%", v))
	}
	if len(shares) > 0 {
		row("Stateless calls per replica", strings.Join(shares, " / "))
	}
	row("Sessions on the killed replica → begun again after a 404", fmt.Sprintf("%.0f → %.0f (%.0f 404s)", m["sessions-on-killed"], m["sessions-restarted"], m["404s"]))
	row("Calls cut by the kill, sent again", fmt.Sprintf("%.0f (%.0f tries again in all, %.0f after a timeout)", m["calls-cut-by-kill"], m["calls-retried"], m["tries-timed-out"]))
	row("Calls lost / answered twice", fmt.Sprintf("%.0f / %.0f", m["lost"], m["answered-twice"]))
}
