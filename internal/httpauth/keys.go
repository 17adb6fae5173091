package httpauth

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// keysEvery is the least time between two fetches of the issuer's keys.
const keysEvery = 10 * time.Second

// maxKeys bounds a JWKS document: a few keys take a few kilobytes.
const maxKeys = 1 << 20

// keysTransport stands between go-oidc's remote key set and the issuer.
// The key set fetches the keys again whenever a token's signature matches
// none it holds — so every forged token would cost the issuer a request
// and the caller a round trip. Within keysEvery of the last fetch, the
// last answer is given again instead (the forged token then fails against
// the same keys: 401), and a failed fetch is not tried again before then.
// A rotation is still seen: a new key is fetched at most keysEvery after
// it is first used.
type keysTransport struct {
	next http.RoundTripper
	url  string           // the JWKS URL; other requests pass through
	now  func() time.Time // time.Now; tests move it

	mu     sync.Mutex
	last   time.Time // of the last fetch; zero: none yet
	body   []byte    // its answer, if it was 200
	header http.Header
	err    error // or why it failed
}

func (k *keysTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.String() != k.url {
		return k.next.RoundTrip(req)
	}
	k.mu.Lock()
	defer k.mu.Unlock() // one fetch at a time: go-oidc makes one anyway
	if now := k.now(); !k.last.IsZero() && now.Sub(k.last) < keysEvery {
		if k.err != nil {
			return nil, k.err
		}
		return k.answer(req), nil
	}
	k.last = k.now()
	k.body, k.err = nil, nil
	resp, err := k.next.RoundTrip(req)
	if err != nil {
		k.err = fmt.Errorf("%w (not tried again for %s)", err, keysEvery)
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeys+1))
	switch {
	case err != nil:
		k.err = fmt.Errorf("reading the keys: %w", err)
	case len(body) > maxKeys:
		k.err = errors.New("the keys document is too large")
	case resp.StatusCode != http.StatusOK:
		k.err = fmt.Errorf("the keys URL answered HTTP %d", resp.StatusCode)
	}
	if k.err != nil {
		return nil, k.err
	}
	k.body, k.header = body, resp.Header.Clone()
	return k.answer(req), nil
}

// answer is the last good answer, for req.
func (k *keysTransport) answer(req *http.Request) *http.Response {
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: k.header.Clone(), Body: io.NopCloser(bytes.NewReader(k.body)),
		ContentLength: int64(len(k.body)), Request: req,
	}
}
