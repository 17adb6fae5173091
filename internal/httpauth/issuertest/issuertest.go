// Package issuertest is a real OAuth authorization server on 127.0.0.1, as
// far as a resource server sees one, for tests: metadata (RFC 8414 or
// OpenID Connect discovery), a JWKS, and the key that signs its tokens.
package issuertest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is a real OAuth authorization server on 127.0.0.1, as far as a
// resource server sees one: metadata (RFC 8414, or OpenID Connect
// discovery) and a JWKS, and the private key that signs its tokens.
type Issuer struct {
	srv *httptest.Server
	URL string

	mu       sync.Mutex // key and kid change when keys rotate
	key      *rsa.PrivateKey
	kid      string
	keyFetch int // how many times the JWKS was fetched
}

// Rotate makes the issuer sign with a new key under a new kid, and
// publish only that one.
func (is *Issuer) Rotate(t testing.TB, kid string) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.key, is.kid = key, kid
}

// Fetches counts the fetches of the JWKS.
func (is *Issuer) Fetches() int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.keyFetch
}

// New starts an issuer serving its metadata at metadataPath
// ("/.well-known/oauth-authorization-server" or
// "/.well-known/openid-configuration"; "" for none).
func New(t testing.TB, metadataPath string) *Issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &Issuer{key: key, kid: "k1"}
	mux := http.NewServeMux()
	if metadataPath != "" {
		mux.HandleFunc("GET "+metadataPath, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{
				"issuer":                                is.URL,
				"jwks_uri":                              is.URL + "/jwks",
				"authorization_endpoint":                is.URL + "/authorize",
				"token_endpoint":                        is.URL + "/token",
				"response_types_supported":              []string{"code"},
				"code_challenge_methods_supported":      []string{"S256"},
				"token_endpoint_auth_methods_supported": []string{"none"},
			})
		})
	}
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		defer is.mu.Unlock()
		is.keyFetch++
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: &is.key.PublicKey, KeyID: is.kid, Algorithm: string(jose.RS256), Use: "sig"},
		}})
	})
	is.srv = httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(is.srv.Close)
	is.URL = is.srv.URL
	return is
}

// Claims are a token's; Exp is relative to now.
type Claims struct {
	Issuer   string
	Audience []string
	Subject  string
	Groups   []string
	Scope    string
	Exp      time.Duration
	NoExp    bool
	Extra    map[string]any
}

// Token signs c with key (the issuer's own unless given) under kid.
func (is *Issuer) Token(t testing.TB, c Claims, key *rsa.PrivateKey) string {
	t.Helper()
	is.mu.Lock()
	kid := is.kid
	if key == nil {
		key = is.key
	}
	is.mu.Unlock()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	std := jwt.Claims{Issuer: c.Issuer, Subject: c.Subject, Audience: c.Audience, IssuedAt: jwt.NewNumericDate(now)}
	if !c.NoExp {
		std.Expiry = jwt.NewNumericDate(now.Add(c.Exp))
	}
	extra := map[string]any{}
	for k, v := range c.Extra {
		extra[k] = v
	}
	if c.Groups != nil {
		extra["groups"] = c.Groups
	}
	if c.Scope != "" {
		extra["scope"] = c.Scope
	}
	raw, err := jwt.Signed(sig).Claims(std).Claims(extra).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Unsigned is a JWT with "alg": "none" and the claims of a good token.
func Unsigned(t testing.TB, c Claims) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none", "typ": "at+jwt"}) + "." +
		enc(map[string]any{"iss": c.Issuer, "aud": c.Audience, "sub": c.Subject, "exp": time.Now().Add(c.Exp).Unix()}) + "."
}

// HMACSigned is a token signed with HS256 and a key anyone could know
// (the confusion of a public key used as an HMAC secret).
func HMACSigned(t testing.TB, c Claims, secret []byte) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(sig).Claims(jwt.Claims{Issuer: c.Issuer, Subject: c.Subject, Audience: c.Audience,
		Expiry: jwt.NewNumericDate(time.Now().Add(c.Exp))}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// PublicKeyBytes is the signing key's public modulus: a secret anyone could
// know, to forge an HMAC-signed token with.
func (is *Issuer) PublicKeyBytes() []byte {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.key.PublicKey.N.Bytes()
}
