package httpauth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fixedClock stands still unless moved: rates are checked by arithmetic,
// never by how fast the machine is.
type fixedClock struct{ t time.Time }

func (c *fixedClock) now() time.Time { return c.t }

// staticUsers makes a protected server with static tokens and the
// limiter, and returns tokens for names.
func staticUsers(t *testing.T, lim *Limiter, hold <-chan struct{}, entered chan<- struct{}, names ...string) (*protected, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens.json")
	p := newProtected(t, Options{TokensPath: path}, lim, hold, entered)
	var toks []string
	for _, n := range names {
		tok, err := p.auth.tokens.Add(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	return p, toks
}

// Over the rate, a credential gets 429 with Retry-After (the bucket's own
// delay, in whole seconds) and a JSON-RPC error; another credential is
// not affected; once the clock has moved on, it passes again.
func TestRateLimit(t *testing.T) {
	clock := &fixedClock{t: time.Unix(1_000_000, 0)}
	lim := NewLimiter(Limits{CallsPerSecond: 0.5, Burst: 2})
	lim.now = clock.now
	p, toks := staticUsers(t, lim, nil, nil, "a", "b")
	for i := range 2 {
		if resp, body := p.do(t, http.MethodPost, toks[0]); resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d within the burst: %d %s", i, resp.StatusCode, body)
		}
	}
	resp, body := p.do(t, http.MethodPost, toks[0])
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("over the burst: %d %s, want 429", resp.StatusCode, body)
	}
	if got := resp.Header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After %q, want 2 (one token at 0.5 a second)", got)
	}
	var rpc struct {
		JSONRPC string `json:"jsonrpc"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &rpc); err != nil || rpc.JSONRPC != "2.0" || rpc.Error.Code != -32000 || !strings.Contains(rpc.Error.Message, "too many requests") {
		t.Errorf("the body %q (%v), want a JSON-RPC error", body, err)
	}
	if resp, body := p.do(t, http.MethodPost, toks[1]); resp.StatusCode != http.StatusOK {
		t.Errorf("another credential: %d %s", resp.StatusCode, body)
	}
	// A refusal costs nothing: two seconds on, exactly one call passes.
	clock.t = clock.t.Add(2 * time.Second)
	if resp, body := p.do(t, http.MethodPost, toks[0]); resp.StatusCode != http.StatusOK {
		t.Errorf("after Retry-After: %d %s", resp.StatusCode, body)
	}
	if resp, _ := p.do(t, http.MethodPost, toks[0]); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the next at once: %d, want 429", resp.StatusCode)
	}
	p.noSecretsLeft(t, toks...)
}

// A second call while the one allowed is in flight is refused with 429
// and Retry-After; a GET (an SSE stream) is not counted; other
// credentials are not affected.
func TestConcurrentCalls(t *testing.T) {
	lim := NewLimiter(Limits{ConcurrentCalls: 1})
	hold, entered := make(chan struct{}), make(chan struct{}, 4)
	p, toks := staticUsers(t, lim, hold, entered, "a", "b")
	first := make(chan int, 1)
	go func() {
		resp, _ := p.do(t, http.MethodPost, toks[0])
		first <- resp.StatusCode
	}()
	<-entered
	resp, body := p.do(t, http.MethodPost, toks[0])
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "at once") {
		t.Errorf("a second call in flight: %d %q %q, want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if resp, body := p.do(t, http.MethodGet, toks[0]); resp.StatusCode != http.StatusOK {
		t.Errorf("a GET beside a call: %d %s", resp.StatusCode, body)
	}
	go func() {
		resp, _ := p.do(t, http.MethodPost, toks[1])
		first <- resp.StatusCode
	}()
	<-entered // b's call got in while a's holds its slot
	close(hold)
	for range 2 {
		if code := <-first; code != http.StatusOK {
			t.Errorf("a held call: %d", code)
		}
	}
	if n := lim.inflight("token:a"); n != 0 {
		t.Errorf("%d calls still counted in flight", n)
	}
	p.noSecretsLeft(t, toks...)
}

// Memory is bounded: a credential whose bucket is full again and that has
// nothing in flight is forgotten at the next sweep; one with a call in
// flight is kept; the map never grows past maxIdle.
func TestLimiterForgets(t *testing.T) {
	clock := &fixedClock{t: time.Unix(1_000_000, 0)}
	lim := NewLimiter(Limits{CallsPerSecond: 1, Burst: 1, ConcurrentCalls: 4})
	lim.now = clock.now
	for i := range 100 {
		if _, why := lim.admit(fmt.Sprint("sub:", i), i == 0, 1); why != "" {
			t.Fatal(why)
		}
	}
	if n := lim.remembered(); n != 100 {
		t.Fatalf("%d remembered, want 100", n)
	}
	clock.t = clock.t.Add(sweepEvery)
	lim.admit("sub:new", false, 1)
	if n := lim.remembered(); n != 2 {
		t.Errorf("after a sweep %d remembered, want 2 (the one in flight and the new one)", n)
	}
	lim.release("sub:0", 1)

	for i := range maxIdle + 50 {
		lim.admit("many:"+strconv.Itoa(i), false, 1)
	}
	if n := lim.remembered(); n > maxIdle {
		t.Errorf("%d remembered, more than %d", n, maxIdle)
	}
}

// inflight is how many calls of key are counted, for tests.
func (l *Limiter) inflight(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.entries[key]; e != nil {
		return e.inflight
	}
	return 0
}
