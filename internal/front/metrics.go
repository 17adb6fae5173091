package front

import (
	"net/http"
	"strconv"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// httpMetrics are what /metrics shows of HTTP serving, in a registry of
// the process's own. Labels are bounded by the configuration (toolbox,
// server), HTTP's methods and the handful of outcomes and status codes:
// never a value a client chose.
type httpMetrics struct {
	f           *httpFront
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec   // by method and status code
	latency     *prometheus.HistogramVec // by method
	calls       *prometheus.CounterVec   // by toolbox, server, outcome
	callLatency *prometheus.HistogramVec // by toolbox, server
	sessions    prometheus.Gauge
}

func newHTTPMetrics(f *httpFront) *httpMetrics {
	m := &httpMetrics{f: f, reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcp_workbench_http_requests_total", Help: "HTTP requests answered, by method and status code.",
	}, []string{"method", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mcp_workbench_http_request_duration_seconds", Help: "How long HTTP requests took to answer (event streams: until they ended).",
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
	}, []string{"method"})
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcp_workbench_tool_calls_total", Help: "use_tool calls, by toolbox, server and outcome (ok, tool_error, input_required, error, cancelled).",
	}, []string{"toolbox", "server", "outcome"})
	m.callLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mcp_workbench_tool_call_duration_seconds", Help: "How long use_tool calls took, by toolbox and server.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
	}, []string{"toolbox", "server"})
	m.sessions = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcp_workbench_sessions", Help: "Sessions of 2025 hosts open.",
	})
	running := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mcp_workbench_servers_running", Help: "Downstream servers connected, over every user.",
	}, func() float64 {
		f.mu.Lock()
		users := make([]*httpUser, 0, len(f.users))
		for _, u := range f.users {
			users = append(users, u)
		}
		f.mu.Unlock()
		n := 0
		for _, u := range users {
			for _, e := range u.pool.Entries() {
				if e.State.Status == downstream.StatusConnected {
					n++
				}
			}
		}
		return float64(n)
	})
	usersG := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mcp_workbench_users", Help: "Users with servers or workbenches of their own.",
	}, func() float64 {
		f.mu.Lock()
		defer f.mu.Unlock()
		return float64(len(f.users))
	})
	m.reg.MustRegister(m.requests, m.latency, m.calls, m.callLatency, m.sessions, running, usersG,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// connections adds the gauge of the connections l holds open.
func (m *httpMetrics) connections(l *connLimit) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mcp_workbench_http_connections", Help: "HTTP connections open (at most http.limits.maxConnections).",
	}, func() float64 { return float64(l.open.Load()) }))
}

func (m *httpMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// count measures every request.
func (m *httpMetrics) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(sw, r)
		method, code := methodLabel(r.Method), "other"
		if sw.code >= 100 && sw.code <= 599 {
			code = strconv.Itoa(sw.code)
		}
		m.requests.WithLabelValues(method, code).Inc()
		m.latency.WithLabelValues(method).Observe(time.Since(start).Seconds())
	})
}

// methodLabel is a request's method as a label: one of the methods HTTP
// defines, else "other". The method is the client's to choose, and a
// label of any value it sends would let anyone grow the metrics (and the
// memory they take) without bound.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodHead, http.MethodOptions,
		http.MethodPut, http.MethodPatch, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// call records a use_tool call's end. A toolbox or server the
// configuration does not have is counted as "unknown": labels are never
// what a caller made up. A toolbox with "access" is counted as
// "(restricted)", its server too: /metrics answers without credentials,
// and must not tell who cannot see a toolbox that it exists, what its
// servers are or how much they are used.
func (m *httpMetrics) call(toolbox, server, outcome string, took time.Duration) {
	known, restricted := false, false
	for _, tb := range m.f.cfg.Load().Toolboxes {
		if tb.Name == toolbox {
			restricted = tb.Access != nil
			for _, s := range tb.Servers {
				known = known || s.Name == server
			}
		}
	}
	switch {
	case !known:
		toolbox, server = "unknown", "unknown"
	case restricted:
		toolbox, server = restrictedLabel, restrictedLabel
	}
	m.calls.WithLabelValues(toolbox, server, outcome).Inc()
	m.callLatency.WithLabelValues(toolbox, server).Observe(took.Seconds())
}

// restrictedLabel stands for the toolbox and server of a call of a
// toolbox with "access" (a toolbox named so, against all sense, is
// counted with them).
const restrictedLabel = "(restricted)"

// statusWriter notes the status code written; it passes Flush on, which
// event streams need.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
