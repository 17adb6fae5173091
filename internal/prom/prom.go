// Package prom is the little of a Prometheus client that /metrics needs:
// counters, gauges and histograms, with labels, in a registry, written in
// Prometheus's text format (version 0.0.4), and the Go runtime's and the
// process's usual metrics. Its names follow client_golang's, whose subset
// it is, so that code written for one reads as the other.
//
// It exists so that the workbench started over stdio, which never serves
// /metrics, does not pay for a full client: client_golang and the
// protobuf runtime it brings made the binary 2.3 MB larger and its
// resident set 2 MiB larger, and registered collectors at start.
package prom

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Collector is anything a [Registry] writes.
type Collector interface {
	// write appends the collector's metric families to b.
	write(b *bytes.Buffer)
	// name is the collector's name (or its families' prefix), by which
	// the registry orders them.
	name() string
}

// Registry holds collectors and writes them, by name.
type Registry struct {
	mu         sync.Mutex
	collectors []Collector
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// MustRegister adds collectors; a name registered twice panics, as it is
// a mistake of the program's.
func (r *Registry) MustRegister(cs ...Collector) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range cs {
		for _, have := range r.collectors {
			if have.name() == c.name() {
				panic("prom: " + c.name() + " registered twice")
			}
		}
		r.collectors = append(r.collectors, c)
	}
	slices.SortStableFunc(r.collectors, func(a, b Collector) int { return strings.Compare(a.name(), b.name()) })
}

// Write returns the text exposition of every collector.
func (r *Registry) Write() []byte {
	r.mu.Lock()
	cs := slices.Clone(r.collectors)
	r.mu.Unlock()
	var b bytes.Buffer
	for _, c := range cs {
		c.write(&b)
	}
	return b.Bytes()
}

// HandlerOpts is kept for client_golang's signature; it has no options.
type HandlerOpts struct{}

// HandlerFor serves the registry's metrics in the text format.
func HandlerFor(r *Registry, _ HandlerOpts) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(r.Write())
	})
}

// Opts name a metric and say what it is.
type Opts struct {
	Name string
	Help string
}

// CounterOpts, GaugeOpts: see [Opts].
type (
	CounterOpts = Opts
	GaugeOpts   = Opts
)

// HistogramOpts are a histogram's [Opts] and its buckets' upper bounds.
type HistogramOpts struct {
	Name    string
	Help    string
	Buckets []float64
}

// ExponentialBuckets returns count upper bounds, from start, each factor
// times the one before.
func ExponentialBuckets(start, factor float64, count int) []float64 {
	b := make([]float64, count)
	for i := range b {
		b[i] = start
		start *= factor
	}
	return b
}

// value is a float64 updated atomically.
type value struct{ bits atomic.Uint64 }

func (v *value) add(d float64) {
	for {
		old := v.bits.Load()
		if v.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

func (v *value) get() float64 { return math.Float64frombits(v.bits.Load()) }

// Counter counts up.
type Counter struct{ v value }

// Inc adds 1.
func (c *Counter) Inc() { c.v.add(1) }

// Add adds d, which must not be negative.
func (c *Counter) Add(d float64) {
	if d < 0 {
		panic("prom: a counter cannot go down")
	}
	c.v.add(d)
}

// Gauge goes up and down.
type Gauge interface {
	Collector
	Inc()
	Dec()
	Add(float64)
	Set(float64)
}

type gauge struct {
	opts Opts
	v    value
}

// NewGauge returns a gauge at 0.
func NewGauge(opts GaugeOpts) Gauge { return &gauge{opts: opts} }

func (g *gauge) Inc()          { g.v.add(1) }
func (g *gauge) Dec()          { g.v.add(-1) }
func (g *gauge) Add(d float64) { g.v.add(d) }
func (g *gauge) Set(x float64) { g.v.bits.Store(math.Float64bits(x)) }
func (g *gauge) name() string  { return g.opts.Name }
func (g *gauge) write(b *bytes.Buffer) {
	header(b, g.opts.Name, g.opts.Help, "gauge")
	sample(b, g.opts.Name, "", g.v.get())
}

type gaugeFunc struct {
	opts Opts
	f    func() float64
}

// NewGaugeFunc returns a gauge whose value f gives when it is written.
func NewGaugeFunc(opts GaugeOpts, f func() float64) Collector { return &gaugeFunc{opts, f} }

func (g *gaugeFunc) name() string { return g.opts.Name }
func (g *gaugeFunc) write(b *bytes.Buffer) {
	header(b, g.opts.Name, g.opts.Help, "gauge")
	sample(b, g.opts.Name, "", g.f())
}

// vec keeps one child per set of label values.
type vec[T any] struct {
	names    []string
	order    []int // names' indexes, sorted by name: labels are written so
	newChild func() *T
	mu       sync.Mutex
	children map[string]*T
	labels   map[string]string // key → the labels as written
}

func newVec[T any](names []string, newChild func() *T) vec[T] {
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	return vec[T]{names: names, order: order, newChild: newChild, children: map[string]*T{}, labels: map[string]string{}}
}

func (v *vec[T]) with(values []string) *T {
	if len(values) != len(v.names) {
		panic(fmt.Sprintf("prom: %d label values for %d labels", len(values), len(v.names)))
	}
	key := strings.Join(values, "\xff")
	v.mu.Lock()
	defer v.mu.Unlock()
	c := v.children[key]
	if c == nil {
		c = v.newChild()
		v.children[key] = c
		var b strings.Builder
		for j, i := range v.order {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(v.names[i])
			b.WriteString(`="`)
			b.WriteString(escapeLabel(values[i]))
			b.WriteByte('"')
		}
		v.labels[key] = b.String()
	}
	return c
}

// each calls f with every child and its labels, in the labels' order.
func (v *vec[T]) each(f func(labels string, c *T)) {
	v.mu.Lock()
	keys := make([]string, 0, len(v.children))
	for k := range v.children {
		keys = append(keys, k)
	}
	type entry struct {
		labels string
		c      *T
	}
	entries := make([]entry, len(keys))
	for i, k := range keys {
		entries[i] = entry{v.labels[k], v.children[k]}
	}
	v.mu.Unlock()
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.labels, b.labels) })
	for _, e := range entries {
		f(e.labels, e.c)
	}
}

// CounterVec is a counter per set of label values.
type CounterVec struct {
	opts Opts
	vec[Counter]
}

// NewCounterVec returns a counter vector with the given label names.
func NewCounterVec(opts CounterOpts, labels []string) *CounterVec {
	return &CounterVec{opts: opts, vec: newVec(labels, func() *Counter { return new(Counter) })}
}

// WithLabelValues returns the counter of those values, in the order of
// the label names.
func (v *CounterVec) WithLabelValues(values ...string) *Counter { return v.with(values) }

func (v *CounterVec) name() string { return v.opts.Name }
func (v *CounterVec) write(b *bytes.Buffer) {
	header(b, v.opts.Name, v.opts.Help, "counter")
	v.each(func(labels string, c *Counter) { sample(b, v.opts.Name, labels, c.v.get()) })
}

// Histogram counts observations in buckets.
type Histogram struct {
	bounds []float64
	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative
	count  uint64
	sum    float64
}

// Observe adds one observation.
func (h *Histogram) Observe(x float64) {
	i, _ := slices.BinarySearch(h.bounds, x) // the first bound ≥ x
	h.mu.Lock()
	if i < len(h.counts) {
		h.counts[i]++
	}
	h.count++
	h.sum += x
	h.mu.Unlock()
}

// HistogramVec is a histogram per set of label values.
type HistogramVec struct {
	opts HistogramOpts
	vec[Histogram]
}

// NewHistogramVec returns a histogram vector with the given label names.
func NewHistogramVec(opts HistogramOpts, labels []string) *HistogramVec {
	bounds := slices.Clone(opts.Buckets)
	slices.Sort(bounds)
	return &HistogramVec{opts: opts, vec: newVec(labels, func() *Histogram {
		return &Histogram{bounds: bounds, counts: make([]uint64, len(bounds))}
	})}
}

// WithLabelValues returns the histogram of those values, in the order of
// the label names.
func (v *HistogramVec) WithLabelValues(values ...string) *Histogram { return v.with(values) }

func (v *HistogramVec) name() string { return v.opts.Name }
func (v *HistogramVec) write(b *bytes.Buffer) {
	header(b, v.opts.Name, v.opts.Help, "histogram")
	v.each(func(labels string, h *Histogram) {
		h.mu.Lock()
		counts, count, sum := slices.Clone(h.counts), h.count, h.sum
		h.mu.Unlock()
		sep := ""
		if labels != "" {
			sep = ","
		}
		var cum uint64
		for i, bound := range h.bounds {
			cum += counts[i]
			sample(b, v.opts.Name+"_bucket", labels+sep+`le="`+formatFloat(bound)+`"`, float64(cum))
		}
		sample(b, v.opts.Name+"_bucket", labels+sep+`le="+Inf"`, float64(count))
		sample(b, v.opts.Name+"_sum", labels, sum)
		sample(b, v.opts.Name+"_count", labels, float64(count))
	})
}

func header(b *bytes.Buffer, name, help, kind string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, escapeHelp(help), name, kind)
}

func sample(b *bytes.Buffer, name, labels string, x float64) {
	b.WriteString(name)
	if labels != "" {
		b.WriteByte('{')
		b.WriteString(labels)
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(formatFloat(x))
	b.WriteByte('\n')
}

func formatFloat(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "+Inf"
	case math.IsInf(x, -1):
		return "-Inf"
	case math.IsNaN(x):
		return "NaN"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }
