package httpauth

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits bound what one credential may ask of the server, so that one
// user's runaway agent cannot take the workbench from the others. A zero
// field is no bound of that kind.
type Limits struct {
	// CallsPerSecond is the sustained rate of requests; Burst how many
	// may come at once above it (at least 1 when a rate is set).
	CallsPerSecond float64
	Burst          int
	// ConcurrentCalls bounds the POSTs (the calls) being served at once.
	// GETs and DELETEs are not counted: a GET is an SSE stream that may
	// stay open as long as the session, and would hold a slot forever.
	ConcurrentCalls int
}

// maxIdle bounds the credentials remembered at once, whatever their
// number: past it the least recently seen idle one is forgotten.
const maxIdle = 10000

// sweepEvery is how often forgotten-safe entries are dropped.
const sweepEvery = time.Minute

// Limiter applies [Limits] per credential ([UserOf]'s Credential; one
// shared key for requests without a user, as when serving on loopback
// without authentication). It remembers a credential only while it
// matters: an entry whose bucket is full again and that has no call in
// flight is the same as no entry, and is dropped at the next sweep.
type Limiter struct {
	limits Limits
	now    func() time.Time // time.Now; tests move it

	mu        sync.Mutex
	entries   map[string]*limitEntry
	lastSweep time.Time
}

type limitEntry struct {
	rate     *rate.Limiter // nil: no rate
	inflight int
	lastSeen time.Time
}

// NewLimiter makes the limiter of l.
func NewLimiter(l Limits) *Limiter {
	if l.CallsPerSecond > 0 && l.Burst < 1 {
		l.Burst = 1
	}
	return &Limiter{limits: l, now: time.Now, entries: make(map[string]*limitEntry)}
}

// anonymous is the credential of requests without a user.
const anonymous = "anonymous"

// Middleware refuses a request over its credential's limits with 429 Too
// Many Requests, a Retry-After header (whole seconds) and a JSON-RPC error
// body, which MCP clients show; others go on to next. It must run after
// [Authenticator.Middleware], whose user it counts.
func (l *Limiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := anonymous
		if u, ok := UserOf(r.Context()); ok {
			key = u.Credential
		}
		counted := r.Method == http.MethodPost && l.limits.ConcurrentCalls > 0
		wait, why := l.admit(key, counted)
		if why != "" {
			refuseBusy(w, wait, why)
			return
		}
		if counted {
			defer l.release(key)
		}
		next.ServeHTTP(w, r)
	})
}

// admit takes a token of key's bucket and, when counted, a slot of its
// calls in flight. It returns why not, and how long to wait before trying
// again: the bucket's own delay for a rate, a second for a full set of
// slots (no way to know when a call ends).
func (l *Limiter) admit(key string, counted bool) (time.Duration, string) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweepLocked(now)
	e := l.entries[key]
	if e == nil {
		e = &limitEntry{}
		if l.limits.CallsPerSecond > 0 {
			e.rate = rate.NewLimiter(rate.Limit(l.limits.CallsPerSecond), l.limits.Burst)
		}
		l.entries[key] = e
	}
	e.lastSeen = now
	if counted && e.inflight >= l.limits.ConcurrentCalls {
		return time.Second, fmt.Sprintf("too many calls at once for this credential (at most %d)", l.limits.ConcurrentCalls)
	}
	if e.rate != nil {
		res := e.rate.ReserveN(now, 1)
		if d := res.DelayFrom(now); d > 0 {
			res.CancelAt(now) // a refused request costs nothing
			return d, fmt.Sprintf("too many requests for this credential (at most %g a second, %d at once)", l.limits.CallsPerSecond, l.limits.Burst)
		}
	}
	if counted {
		e.inflight++
	}
	return 0, ""
}

func (l *Limiter) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.entries[key]; e != nil {
		e.inflight--
	}
}

// sweepLocked drops, once a sweepEvery or when the map is full, the
// entries that are as good as new: no call in flight and a bucket full
// again. If the map is still full, the least recently seen idle entry
// goes too (its bucket is forgotten early: a bound on memory wins over a
// few extra requests).
func (l *Limiter) sweepLocked(now time.Time) {
	if now.Sub(l.lastSweep) < sweepEvery && len(l.entries) < maxIdle {
		return
	}
	l.lastSweep = now
	for k, e := range l.entries {
		if e.inflight == 0 && (e.rate == nil || e.rate.TokensAt(now) >= float64(l.limits.Burst)) {
			delete(l.entries, k)
		}
	}
	if len(l.entries) < maxIdle {
		return
	}
	oldest, oldestKey := now, ""
	for k, e := range l.entries {
		if e.inflight == 0 && !e.lastSeen.After(oldest) {
			oldest, oldestKey = e.lastSeen, k
		}
	}
	if oldestKey != "" {
		delete(l.entries, oldestKey)
	}
}

// remembered is how many credentials the limiter holds, for tests.
func (l *Limiter) remembered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// refuseBusy answers 429 with Retry-After and a JSON-RPC error. The
// request's id is not known without reading its body, which a refusal
// must not pay for; JSON-RPC allows a null id for such errors.
func refuseBusy(w http.ResponseWriter, wait time.Duration, why string) {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	h := w.Header()
	h.Set("Retry-After", fmt.Sprint(secs))
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	body := map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
		"code": -32000, "message": fmt.Sprintf("%s; retry after %d s", why, secs)}}
	_ = json.NewEncoder(w).Encode(body)
}
