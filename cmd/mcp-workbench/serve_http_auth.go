package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
	"github.com/mcpworkbench/mcp-workbench/internal/httpauth"
)

// httpAuth makes the authentication of "http.auth", for front.ServeHTTP.
func httpAuth(ctx context.Context, cfg *config.Config, log *slog.Logger) (front.Auth, error) {
	h := cfg.HTTP
	o := httpauth.Options{ResourceURL: h.PublicURL, Logger: log}
	if o.ResourceURL == "" {
		o.ResourceURL = "http://" + h.Listen + "/mcp"
	}
	if h.Tokens != "" || h.TokensDefault {
		p, err := httpauth.TokensPath(h.Tokens, os.Getenv)
		if err != nil {
			return nil, err
		}
		o.TokensPath = p
	}
	if oa := h.OAuth; oa != nil {
		o.OAuth = &httpauth.OAuth{Issuer: oa.Issuer, Audience: oa.Audience, JWKSURL: oa.JWKSURL, Scopes: oa.Scopes, SubjectClaim: oa.SubjectClaim, GroupsClaim: oa.GroupsClaim}
	}
	a, err := httpauth.New(ctx, o)
	if err != nil {
		return nil, err
	}
	return authenticator{a}, nil
}

// httpLimits bounds each credential by "http.limits" (without
// authentication, every caller is the one local user).
func httpLimits(cfg *config.Config) func(http.Handler) http.Handler {
	lim := cfg.HTTP.Limits.OrDefaults()
	return httpauth.NewLimiter(httpauth.Limits{CallsPerSecond: lim.CallsPerSecond, Burst: lim.Burst, ConcurrentCalls: lim.ConcurrentCalls, MaxBodyBytes: lim.MaxBodyBytes}).Middleware
}

// authenticator is an httpauth.Authenticator as the front door takes it.
type authenticator struct{ *httpauth.Authenticator }

// MetadataHandler is nil without an authorization server: the front door
// then serves no metadata path.
func (a authenticator) MetadataHandler() http.Handler {
	if len(a.MetadataPaths()) == 0 {
		return nil
	}
	return a.Authenticator.MetadataHandler()
}

// Caller is the request's user, under its credential's key: a static
// token named alice and a JWT whose subject is alice are two users.
func (a authenticator) Caller(ctx context.Context) front.Caller {
	u, _ := httpauth.UserOf(ctx)
	return front.Caller{Key: u.Credential, Subject: u.Subject, Groups: u.Groups, Valid: func() bool { return a.StillValid(u) }}
}
