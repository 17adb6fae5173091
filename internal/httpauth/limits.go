package httpauth

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
	// MaxBodyBytes bounds what is read of a request's body to count the
	// calls of a JSON-RPC batch (0: 4 MiB); a larger body is passed on,
	// for the MCP handler to refuse.
	MaxBodyBytes int64
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
		n := 1
		if r.Method == http.MethodPost {
			n = l.calls(r)
		}
		counted := r.Method == http.MethodPost && l.limits.ConcurrentCalls > 0
		wait, why := l.admit(key, counted, n)
		if why != "" {
			refuseBusy(w, wait, why)
			return
		}
		if counted {
			defer l.release(key, n)
		}
		next.ServeHTTP(w, r)
	})
}

// calls is how many calls a POST carries: the requests of a JSON-RPC
// batch (which hosts of 2025-03-26 and before may send), else 1. Each
// counts against the rate and the calls at once, as it would alone. The
// body is read (up to MaxBodyBytes) only when it begins with '['; r.Body
// is left to read again from its start.
func (l *Limiter) calls(r *http.Request) int {
	if r.Body == nil {
		return 1
	}
	br := bufio.NewReader(r.Body)
	r.Body = readCloser{br, r.Body}
	for {
		b, err := br.Peek(1)
		if err != nil {
			return 1
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = br.ReadByte()
			continue
		}
		if b[0] != '[' {
			return 1
		}
		break
	}
	limit := l.limits.MaxBodyBytes
	if limit <= 0 {
		limit = 4 << 20
	}
	body, err := io.ReadAll(io.LimitReader(br, limit+1))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), br), r.Body}
	if err != nil || int64(len(body)) > limit {
		return 1
	}
	var batch []struct {
		Method *string          `json:"method"`
		ID     *json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &batch) != nil {
		return 1
	}
	n := 0
	for _, m := range batch {
		if m.Method != nil && m.ID != nil {
			n++
		}
	}
	return max(n, 1)
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// admit takes n tokens of key's bucket and, when counted, n slots of its
// calls in flight. It returns why not, and how long to wait before trying
// again: the bucket's own delay for a rate, a second for a full set of
// slots (no way to know when a call ends).
func (l *Limiter) admit(key string, counted bool, n int) (time.Duration, string) {
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
	if counted && n > l.limits.ConcurrentCalls {
		return time.Second, fmt.Sprintf("a batch of %d calls is more than this credential may make at once (at most %d); send fewer in one request", n, l.limits.ConcurrentCalls)
	}
	if counted && e.inflight+n > l.limits.ConcurrentCalls {
		return time.Second, fmt.Sprintf("too many calls at once for this credential (at most %d)", l.limits.ConcurrentCalls)
	}
	if e.rate != nil {
		if n > l.limits.Burst {
			return time.Second, fmt.Sprintf("a batch of %d calls is more than this credential may make at once (at most %d); send fewer in one request", n, l.limits.Burst)
		}
		res := e.rate.ReserveN(now, n)
		if d := res.DelayFrom(now); d > 0 {
			res.CancelAt(now) // a refused request costs nothing
			return d, fmt.Sprintf("too many requests for this credential (at most %g a second, %d at once)", l.limits.CallsPerSecond, l.limits.Burst)
		}
	}
	if counted {
		e.inflight += n
	}
	return 0, ""
}

func (l *Limiter) release(key string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.entries[key]; e != nil {
		e.inflight -= n
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
