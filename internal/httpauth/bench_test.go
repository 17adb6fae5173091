package httpauth

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/httpauth/issuertest"
)

// BenchmarkVerify measures what authentication adds to each request: a
// static token among 100 (a stat of the store, a hash, 100 constant-time
// compares), and a JWT (an RSA-2048 signature check and the issuertest.Claims).
func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	b.Run("static", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "tokens.json")
		s, err := OpenTokens(path)
		if err != nil {
			b.Fatal(err)
		}
		var tok string
		for i := range 100 {
			if tok, err = s.Add(ctx, fmt.Sprint("user-", i)); err != nil {
				b.Fatal(err)
			}
		}
		a, err := New(ctx, Options{TokensPath: path})
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for b.Loop() {
			if _, err := a.Verify(ctx, tok, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jwt", func(b *testing.B) {
		is := issuertest.New(b, "/.well-known/oauth-authorization-server")
		resource := "http://127.0.0.1:1/mcp"
		a, err := New(ctx, Options{OAuth: &OAuth{Issuer: is.URL}, ResourceURL: resource})
		if err != nil {
			b.Fatal(err)
		}
		tok := is.Token(b, issuertest.Claims{Issuer: is.URL, Audience: []string{resource}, Subject: "alice", Exp: time.Hour}, nil)
		b.ResetTimer()
		for b.Loop() {
			if _, err := a.Verify(ctx, tok, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLimiter measures the limiter's bookkeeping per request.
func BenchmarkLimiter(b *testing.B) {
	lim := NewLimiter(Limits{CallsPerSecond: 1e9, Burst: 1 << 30, ConcurrentCalls: 16})
	i := 0
	for b.Loop() {
		key := fmt.Sprint("sub:", i%1000)
		if _, why := lim.admit(key, true, 1); why != "" {
			b.Fatal(why)
		}
		lim.release(key, 1)
		i++
	}
}
