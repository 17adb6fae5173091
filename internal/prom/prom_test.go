package prom

import (
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// TestExposition: the text format as client_golang writes it (families by
// name, labels by name, series by labels, cumulative buckets, escapes).
func TestExposition(t *testing.T) {
	r := NewRegistry()
	calls := NewCounterVec(CounterOpts{Name: "x_calls_total", Help: "Calls, by \\ and\nlines."}, []string{"toolbox", "outcome"})
	lat := NewHistogramVec(HistogramOpts{Name: "x_seconds", Help: "Latency.", Buckets: ExponentialBuckets(0.5, 4, 2)}, []string{"method"})
	g := NewGauge(GaugeOpts{Name: "x_sessions", Help: "Sessions."})
	r.MustRegister(calls, lat, g, NewGaugeFunc(GaugeOpts{Name: "a_users", Help: "Users."}, func() float64 { return 3 }))
	calls.WithLabelValues("tb", "ok").Inc()
	calls.WithLabelValues("tb", "ok").Add(2)
	calls.WithLabelValues(`q"\`+"\n", "error").Inc()
	for _, x := range []float64{0.1, 0.5, 1, 9} {
		lat.WithLabelValues("POST").Observe(x)
	}
	g.Inc()
	g.Inc()
	g.Dec()
	want := `# HELP a_users Users.
# TYPE a_users gauge
a_users 3
# HELP x_calls_total Calls, by \\ and\nlines.
# TYPE x_calls_total counter
x_calls_total{outcome="error",toolbox="q\"\\\n"} 1
x_calls_total{outcome="ok",toolbox="tb"} 3
# HELP x_seconds Latency.
# TYPE x_seconds histogram
x_seconds_bucket{method="POST",le="0.5"} 2
x_seconds_bucket{method="POST",le="2"} 3
x_seconds_bucket{method="POST",le="+Inf"} 4
x_seconds_sum{method="POST"} 10.6
x_seconds_count{method="POST"} 4
# HELP x_sessions Sessions.
# TYPE x_sessions gauge
x_sessions 1
`
	if got := string(r.Write()); got != want {
		t.Errorf("exposition:\n%s\nwant:\n%s", got, want)
	}
	rec := httptest.NewRecorder()
	HandlerFor(r, HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" || rec.Body.String() != want {
		t.Errorf("handler: %s\n%s", ct, rec.Body)
	}
}

// TestRuntimeCollectors: the Go runtime's and the process's metrics, by
// client_golang's names, each a sample line after its HELP and TYPE.
func TestRuntimeCollectors(t *testing.T) {
	r := NewRegistry()
	r.MustRegister(NewGoCollector(), NewProcessCollector(ProcessCollectorOpts{}))
	out := string(r.Write())
	want := []string{"go_goroutines ", "go_gc_duration_seconds_count ", `go_info{version="` + runtime.Version() + `"} 1`, "go_memstats_heap_inuse_bytes ", "go_threads "}
	if runtime.GOOS == "linux" {
		want = append(want, "process_cpu_seconds_total ", "process_resident_memory_bytes ", "process_open_fds ", "process_max_fds ", "process_start_time_seconds ", "process_virtual_memory_bytes ")
	}
	for _, w := range want {
		if !strings.Contains(out, "\n"+w) {
			t.Errorf("no %q line in:\n%s", w, out)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || f[1] == "NaN" {
			t.Errorf("sample line %q", line)
		}
	}
}

func TestRegisteringANameTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	r := NewRegistry()
	r.MustRegister(NewGauge(GaugeOpts{Name: "a"}), NewGauge(GaugeOpts{Name: "a"}))
}
