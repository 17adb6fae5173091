package httpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// OAuth configures the OAuth 2.1 resource-server mode: JWT access tokens
// issued by one authorization server for this resource.
type OAuth struct {
	// Issuer is the authorization server's issuer identifier; tokens
	// must carry it as "iss", and its metadata is discovered from it.
	Issuer string
	// Audience is what tokens must carry in "aud"; "" for the resource's
	// own URL (Options.ResourceURL), as RFC 8707 resource indicators and
	// MCP's authorization spec have clients ask for it.
	Audience string
	// JWKSURL is where the issuer's signing keys are; "" to discover it
	// from the issuer's metadata.
	JWKSURL string
	// Scopes must all be granted by a token ("scope" or "scp").
	Scopes []string
	// SubjectClaim names the claim that is the user ("sub" if "").
	SubjectClaim string
	// GroupsClaim names the claim that lists the user's groups ("groups"
	// if ""); a token without it has no groups.
	GroupsClaim string
}

// Claims is what a verified access token says about its bearer.
type Claims struct {
	Subject string
	Groups  []string
	Scopes  []string
	Expiry  time.Time
}

// signingAlgs are the signatures accepted: the asymmetric ones only. A
// shared-secret (HS*) token could be made by anyone who holds the secret,
// and "none" is no signature at all.
var signingAlgs = []string{
	oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA,
}

// JWTVerifier checks JWT access tokens as a resource server must: the
// signature against the issuer's published keys (go-oidc's remote key set,
// which fetches them again when a token names a key it has not seen, so
// the issuer's key rotation needs no restart), then issuer, audience,
// expiry and not-before.
type JWTVerifier struct {
	opts     OAuth
	audience string
	verifier *oidc.IDTokenVerifier
	keys     *keysTransport
}

// ErrKeysUnavailable is a token that could not be checked because the
// issuer's keys could not be fetched: the server's trouble, not the
// client's, so it is no reason to ask the client for another token.
var ErrKeysUnavailable = errors.New("the issuer's signing keys could not be fetched")

// NewJWTVerifier makes the verifier for o. Without a JWKS URL the issuer's
// metadata is fetched now (RFC 8414 first, then OpenID Connect
// discovery), so a wrong issuer is a start-up error rather than a refusal
// of every request. resourceURL is the audience when o has none. client
// makes every request to the issuer (nil: one with a 30 s timeout).
func NewJWTVerifier(ctx context.Context, o OAuth, resourceURL string, client *http.Client) (*JWTVerifier, error) {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Issuer == "" {
		return nil, errors.New("oauth: \"issuer\" is missing")
	}
	if u, err := url.Parse(o.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("oauth: issuer %q is not an http(s) URL", o.Issuer)
	}
	aud := o.Audience
	if aud == "" {
		aud = resourceURL
	}
	if aud == "" {
		return nil, errors.New("oauth: no audience: set \"audience\", or the resource's public URL")
	}
	if o.SubjectClaim == "" {
		o.SubjectClaim = "sub"
	}
	if o.GroupsClaim == "" {
		o.GroupsClaim = "groups"
	}
	jwks := o.JWKSURL
	if jwks == "" {
		var err error
		if jwks, err = discoverJWKS(ctx, client, o.Issuer); err != nil {
			return nil, err
		}
	}
	next := client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	keysClient := *client
	kt := &keysTransport{next: next, url: jwks, now: time.Now}
	keysClient.Transport = kt
	keyCtx := oidc.ClientContext(context.WithoutCancel(ctx), &keysClient)
	keys := oidc.NewRemoteKeySet(keyCtx, jwks)
	v := oidc.NewVerifier(o.Issuer, keys, &oidc.Config{ClientID: aud, SupportedSigningAlgs: signingAlgs})
	return &JWTVerifier{opts: o, audience: aud, verifier: v, keys: kt}, nil
}

// Verify checks raw and returns its claims. Its errors say which check
// failed in words of their own, never quoting the token (go-oidc's
// messages quote claims, and a malformed token's parts): they go into
// 401 bodies and logs. Every refusal wraps auth.ErrInvalidToken but
// [ErrKeysUnavailable].
func (v *JWTVerifier) Verify(ctx context.Context, raw string) (*Claims, error) {
	tok, err := v.verifier.Verify(ctx, raw)
	if err != nil {
		return nil, classify(err)
	}
	var all map[string]any
	if err := tok.Claims(&all); err != nil {
		return nil, refused("its claims are not a JSON object")
	}
	sub, _ := all[v.opts.SubjectClaim].(string)
	if sub == "" {
		return nil, refused(fmt.Sprintf("it has no %q claim (the subject)", v.opts.SubjectClaim))
	}
	groups, ok := stringList(all[v.opts.GroupsClaim], false)
	if !ok {
		return nil, refused(fmt.Sprintf("its %q claim is not a list of strings", v.opts.GroupsClaim))
	}
	// RFC 9068 "scope" is a space-separated string; several servers send
	// "scp" as a list instead.
	scopes, ok := stringList(all["scope"], true)
	if !ok {
		return nil, refused("its \"scope\" claim is not a string")
	}
	if s, ok := stringList(all["scp"], true); ok {
		scopes = append(scopes, s...)
	}
	return &Claims{Subject: sub, Groups: groups, Scopes: scopes, Expiry: tok.Expiry}, nil
}

// stringList reads a claim that is a list of strings or one string (split
// at spaces when split is set). A missing claim is an empty list.
func stringList(v any, split bool) ([]string, bool) {
	switch v := v.(type) {
	case nil:
		return nil, true
	case string:
		if split {
			return strings.Fields(v), true
		}
		return []string{v}, true
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// refusal is a token refused, for a reason safe to show.
type refusal struct{ why string }

func (r *refusal) Error() string { return "invalid token: " + r.why }

// Is makes a refusal an auth.ErrInvalidToken, which the go-sdk's
// middleware answers with 401.
func (r *refusal) Is(target error) bool { return target == errInvalidToken }

func refused(why string) error { return &refusal{why: why} }

// classify turns go-oidc's error into a reason of our own. go-oidc has a
// type for expiry only; the others are told by their text, and anything
// not recognised is refused without a reason rather than quoted.
func classify(err error) error {
	var exp *oidc.TokenExpiredError
	if errors.As(err, &exp) {
		return refused("it has expired")
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "fetching keys"):
		return ErrKeysUnavailable
	case strings.HasPrefix(msg, "oidc: malformed jwt"):
		return refused("it is not a JWT signed with an accepted algorithm")
	case strings.HasPrefix(msg, "failed to verify signature"):
		return refused("its signature is not the issuer's")
	case strings.Contains(msg, "issued by a different provider"):
		return refused("it is from another issuer")
	case strings.Contains(msg, "expected audience"):
		return refused("it is for another audience")
	case strings.Contains(msg, "nbf"):
		return refused("it is not valid yet")
	}
	return refused("it did not verify")
}

// maxMetadata bounds an issuer's metadata document.
const maxMetadata = 1 << 20

// discoverJWKS finds the issuer's jwks_uri: RFC 8414 authorization server
// metadata (the well-known suffix inserted before the issuer's path), then
// OpenID Connect discovery (appended). The document must name the issuer
// itself (RFC 8414 section 3.3), or another server's keys could be taken.
func discoverJWKS(ctx context.Context, client *http.Client, issuer string) (string, error) {
	u, _ := url.Parse(issuer)
	path := strings.TrimSuffix(u.Path, "/")
	rfc8414 := *u
	rfc8414.Path = "/.well-known/oauth-authorization-server" + path
	oidcURL := strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"
	var problems []string
	for _, where := range []string{rfc8414.String(), oidcURL} {
		jwks, err := fetchJWKSURI(ctx, client, where, issuer)
		if err == nil {
			return jwks, nil
		}
		problems = append(problems, fmt.Sprintf("%s: %v", where, err))
	}
	return "", fmt.Errorf("oauth: discovering the keys of issuer %s (set \"jwksUrl\" to skip discovery): %s", issuer, strings.Join(problems, "; "))
}

func fetchJWKSURI(ctx context.Context, client *http.Client, where, issuer string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	if err != nil {
		return "", err
	}
	if len(body) > maxMetadata {
		return "", errors.New("the metadata is too large")
	}
	var meta struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(body, &meta); err != nil {
		return "", errors.New("the metadata is not a JSON object")
	}
	if meta.Issuer != issuer {
		return "", fmt.Errorf("the metadata names issuer %q, not %q", meta.Issuer, issuer)
	}
	if meta.JWKSURI == "" {
		return "", errors.New("the metadata has no \"jwks_uri\"")
	}
	return meta.JWKSURI, nil
}
