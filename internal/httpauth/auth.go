// Package httpauth decides who is calling when the workbench serves MCP
// over HTTP, and how much they may call. Two kinds of credential are
// accepted, either or both: static bearer tokens kept hashed in a private
// file ([TokenStore], managed by `mcp-workbench token`), and JWT access
// tokens of an OAuth 2.1 authorization server ([JWTVerifier]), with the
// RFC 9728 metadata that lets an MCP client find that server. The go-sdk's
// auth middleware does the HTTP part (401 with WWW-Authenticate, scopes);
// this package verifies and names the user ([UserOf]), whom [Limiter]
// then bounds.
//
// Nothing of a presented token is logged, returned in an error or written
// in a response: every message is this package's own words.
package httpauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// errInvalidToken is the go-sdk's sentinel for a token refused (401).
var errInvalidToken = auth.ErrInvalidToken

// Options configures an [Authenticator]: TokensPath, OAuth, or both.
type Options struct {
	// TokensPath is the static token store; "" for none.
	TokensPath string
	// OAuth configures JWT access tokens; nil for none.
	OAuth *OAuth
	// ResourceURL is this server's public MCP endpoint URL (the
	// configuration's "publicUrl"): the tokens' default audience and the
	// "resource" of the protected resource metadata. Needed with OAuth.
	ResourceURL string
	// Logger receives refusals (debug) and trouble with the token store
	// or the issuer (error); nil for none.
	Logger *slog.Logger
	// HTTPClient makes the requests to the issuer; nil for one with a
	// 30 s timeout.
	HTTPClient *http.Client
}

// User is who an authenticated request comes from.
type User struct {
	// Subject is the user, as toolbox access rules name them: a static
	// token's name, or a JWT's subject claim.
	Subject string
	// Groups are the JWT's groups claim (none for a static token).
	Groups []string
	// Credential is a stable key of the credential, for per-credential
	// limits and session ownership: "token:NAME" or "sub:SUBJECT". The
	// two kinds never collide, whatever the names.
	Credential string
	// tokenHash is a static token's SHA-256, for [Authenticator.StillValid].
	tokenHash []byte
}

// userKey is where the [User] rides in auth.TokenInfo.Extra, which the
// go-sdk hands to tool handlers as req.Extra.TokenInfo.
const userKey = "mcp-workbench/user"

// Authenticator verifies bearer tokens of both kinds and serves what MCP
// clients need to find out how to get one.
type Authenticator struct {
	tokens      *TokenStore  // nil: no static tokens
	jwt         *JWTVerifier // nil: no OAuth
	issuer      string
	scopes      []string
	resourceURL string
	metadataURL string // "" without OAuth: no metadata to point at
	log         *slog.Logger
	require     http.Handler // the go-sdk's middleware around passOn
}

// New makes the authenticator that o configures. With OAuth and no JWKS
// URL it fetches the issuer's metadata now (see [NewJWTVerifier]); a
// token store that is missing is empty, one that cannot be read is an
// error.
func New(ctx context.Context, o Options) (*Authenticator, error) {
	if o.TokensPath == "" && o.OAuth == nil {
		return nil, errors.New("no authentication configured: give a token store, OAuth, or both")
	}
	a := &Authenticator{resourceURL: o.ResourceURL, log: o.Logger}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if o.TokensPath != "" {
		s, err := OpenTokens(o.TokensPath)
		if err != nil {
			return nil, err
		}
		if _, statErr := os.Stat(o.TokensPath); errors.Is(statErr, fs.ErrNotExist) {
			a.log.Warn("the token store does not exist yet: no static token is accepted until one is added with mcp-workbench token add", "store", o.TokensPath)
		}
		a.tokens = s
	}
	if o.OAuth != nil {
		if o.ResourceURL == "" {
			return nil, errors.New("oauth needs the server's public URL (\"publicUrl\"): it is the tokens' audience and the metadata's resource")
		}
		mu, err := metadataURL(o.ResourceURL)
		if err != nil {
			return nil, err
		}
		v, err := NewJWTVerifier(ctx, *o.OAuth, o.ResourceURL, o.HTTPClient)
		if err != nil {
			return nil, err
		}
		a.jwt, a.issuer, a.scopes, a.metadataURL = v, o.OAuth.Issuer, slices.Clone(o.OAuth.Scopes), mu
	}
	a.require = auth.RequireBearerToken(a.Verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: a.metadataURL,
		Scopes:              a.scopes,
		// Static tokens do not expire (they are revoked); a JWT without
		// "exp" never gets this far, go-oidc refuses it as expired.
		AllowMissingExpiration: true,
	})(http.HandlerFunc(passOn))
	return a, nil
}

// metadataURL is where RFC 9728 section 3.1 puts the metadata of resource:
// the well-known path inserted between the host and the resource's path.
func metadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("the public URL %q is not an http(s) URL", resource)
	}
	m := url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/")}
	return m.String(), nil
}

// MetadataURL is the URL of the protected resource metadata that 401
// answers point at, or "" without OAuth.
func (a *Authenticator) MetadataURL() string { return a.metadataURL }

// MetadataPaths are the paths to serve [Authenticator.MetadataHandler] at:
// RFC 9728's (the well-known prefix before the resource's path, where
// MetadataURL points) and, when the resource has a path, the bare
// well-known path that some clients try first. None without OAuth.
func (a *Authenticator) MetadataPaths() []string {
	if a.metadataURL == "" {
		return nil
	}
	u, _ := url.Parse(a.metadataURL)
	const root = "/.well-known/oauth-protected-resource"
	if u.Path == root {
		return []string{root}
	}
	return []string{u.Path, root}
}

// MetadataHandler serves the RFC 9728 protected resource metadata: this
// resource, its authorization server, the scopes it wants. Without OAuth
// there is nothing to discover, and it answers 404.
func (a *Authenticator) MetadataHandler() http.Handler {
	if a.jwt == nil {
		return http.NotFoundHandler()
	}
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               a.resourceURL,
		AuthorizationServers:   []string{a.issuer},
		ScopesSupported:        a.scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "MCP Workbench",
	})
}

// Verify is an auth.TokenVerifier: a token beginning with [TokenPrefix] is
// looked up in the token store, anything else is checked as a JWT. A
// refusal wraps auth.ErrInvalidToken (401); a store that cannot be read or
// an issuer whose keys cannot be fetched is the server's trouble (500),
// logged in full and answered without detail.
func (a *Authenticator) Verify(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
	remote := ""
	if req != nil {
		remote = req.RemoteAddr
	}
	isStatic := strings.HasPrefix(token, TokenPrefix)
	if isStatic && a.tokens != nil {
		name, ok, err := a.tokens.lookup(token)
		if err != nil {
			a.log.Error("refusing every static token: the token store cannot be read", "err", err)
			return nil, errors.New("the token store cannot be read; the server's log says why")
		}
		if !ok {
			a.log.Debug("bearer token refused", "why", "not a stored token (unknown or revoked)", "remote", remote)
			return nil, refused("it is not a stored token (unknown or revoked)")
		}
		sum := sha256.Sum256([]byte(token))
		u := User{Subject: name, Credential: "token:" + name, tokenHash: sum[:]}
		// A static token stands for full access: it is granted the
		// scopes that OAuth tokens must carry.
		return &auth.TokenInfo{Scopes: slices.Clone(a.scopes), UserID: u.Credential, Extra: map[string]any{userKey: u}}, nil
	}
	if a.jwt == nil || isStatic {
		a.log.Debug("bearer token refused", "why", "not a token of this server", "remote", remote)
		return nil, refused("it is not a token of this server")
	}
	c, err := a.jwt.Verify(ctx, token)
	if errors.Is(err, ErrKeysUnavailable) {
		a.log.Error("cannot check access tokens", "err", err, "issuer", a.issuer)
		return nil, err
	}
	if err != nil {
		a.log.Debug("bearer token refused", "why", err.Error(), "remote", remote)
		return nil, err
	}
	u := User{Subject: c.Subject, Groups: c.Groups, Credential: "sub:" + c.Subject}
	return &auth.TokenInfo{Scopes: c.Scopes, Expiration: c.Expiry, UserID: u.Credential, Extra: map[string]any{userKey: u}}, nil
}

// StillValid reports whether the credential u was verified with is still
// good: a static token not revoked since (the store read again if its file
// changed). The serving front asks it of every session each second or so:
// one look at the token file, at most every half second, answers them all.
// A JWT cannot be revoked here (the authorization server does not say), and
// one that expires is refused at the next request: it is still valid for
// what it opened.
func (a *Authenticator) StillValid(u User) bool {
	if u.tokenHash == nil || a.tokens == nil {
		return true
	}
	_, ok, err := a.tokens.lookupHash(u.tokenHash, recheckShared)
	return ok && err == nil
}

// UserOf returns the user of a request that passed [Authenticator.Middleware].
func UserOf(ctx context.Context) (User, bool) {
	return UserOfToken(auth.TokenInfoFromContext(ctx))
}

// UserOfToken returns the user of a verified token, as tool handlers see
// it in req.Extra.TokenInfo.
func UserOfToken(ti *auth.TokenInfo) (User, bool) {
	if ti == nil {
		return User{}, false
	}
	u, ok := ti.Extra[userKey].(User)
	return u, ok
}

// Middleware lets through requests with a token that [Authenticator.Verify]
// accepts and that carries the required scopes, with the token's
// information in the request's context ([UserOf]). Others are answered as
// MCP's authorization spec and RFC 6750 ask: 401 with WWW-Authenticate
// naming the resource metadata, 403 with error="insufficient_scope".
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &challengeWriter{ResponseWriter: w, next: next, a: a, hadToken: r.Header.Get("Authorization") != ""}
		if !cw.hadToken {
			// Refused by the go-sdk's middleware, which logs nothing: the
			// refusals of tokens presented are logged in Verify.
			a.log.Debug("request refused", "why", "no bearer token", "remote", r.RemoteAddr)
		}
		a.require.ServeHTTP(cw, r)
	})
}

// passOn is what the go-sdk's middleware calls for an accepted request:
// the next handler, on the original writer, so that it keeps everything
// the server's writer can do (flushing an SSE stream, above all).
func passOn(w http.ResponseWriter, r *http.Request) {
	cw := w.(*challengeWriter)
	cw.next.ServeHTTP(cw.ResponseWriter, r)
}

// challengeWriter completes the go-sdk's refusals: its WWW-Authenticate
// names no error code, and is absent when there is no metadata URL.
// RFC 6750 section 3 wants the header on every 401, with
// error="invalid_token" when a token was presented, and
// error="insufficient_scope" on a 403 for scopes, which MCP clients read
// to ask for more.
type challengeWriter struct {
	http.ResponseWriter
	next     http.Handler
	a        *Authenticator
	hadToken bool
}

func (cw *challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		var params []string
		switch {
		case code == http.StatusForbidden:
			params = append(params, `error="insufficient_scope"`)
		case cw.hadToken:
			params = append(params, `error="invalid_token"`)
		}
		if cw.a.metadataURL != "" {
			params = append(params, fmt.Sprintf("resource_metadata=%q", cw.a.metadataURL))
		}
		if len(cw.a.scopes) > 0 {
			params = append(params, fmt.Sprintf("scope=%q", strings.Join(cw.a.scopes, " ")))
		}
		challenge := "Bearer"
		if len(params) > 0 {
			challenge += " " + strings.Join(params, ", ")
		}
		cw.Header().Set("WWW-Authenticate", challenge)
	}
	cw.ResponseWriter.WriteHeader(code)
}
