package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// A server entry's oauth.authServerMetadataUrl names its authorization
// server's metadata outright, as Claude Code's entries do, for servers
// whose discovery does not work (no protected resource metadata, or
// metadata at an address no discovery rule finds). The SDK's handler
// always discovers, so the login gives it an HTTP client that answers the
// discovery requests itself: the protected resource metadata names the
// configured authorization server, and that server's metadata is the
// document read from the configured URL. The SDK still checks that
// document (issuer, PKCE, endpoint schemes) and runs the rest of the flow;
// every other request goes out unchanged.

// pinDiscovery returns hc's replacement for the login of the server at
// serverURL, whose authorization server's metadata is at metadataURL, and
// that server's issuer.
func pinDiscovery(ctx context.Context, hc *http.Client, serverURL, metadataURL string) (*http.Client, string, error) {
	body, issuer, err := pinnedMetadata(ctx, hc, metadataURL)
	if err != nil {
		return nil, "", err
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	pd, err := newPinnedDiscovery(base, serverURL, issuer, body)
	if err != nil {
		return nil, "", err
	}
	return &http.Client{Transport: pd, Timeout: hc.Timeout}, issuer, nil
}

// pinnedMetadata reads the authorization server metadata at metadataURL and
// returns it with its issuer.
func pinnedMetadata(ctx context.Context, hc *http.Client, metadataURL string) (body []byte, issuer string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metadataURL, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "application/json")
	// The configured URL is trusted; where its server sends us is not.
	noRedirect := *hc
	noRedirect.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		to := *req.URL
		to.RawQuery, to.User = "", nil
		return fmt.Errorf("it redirects to %s: give that address instead, if it is the one meant", to.String())
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		return nil, "", redactURLError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, "", fmt.Errorf("not JSON (Content-Type %q)", resp.Header.Get("Content-Type"))
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, "", err
	}
	var meta oauthex.AuthServerMeta
	if err := json.Unmarshal(body, &meta); err != nil {
		return nil, "", errors.New("not a JSON object of authorization server metadata (RFC 8414)")
	}
	if meta.Issuer == "" {
		return nil, "", errors.New(`it has no "issuer"`)
	}
	return body, meta.Issuer, nil
}

// pinnedDiscovery is the transport that answers the SDK's discovery
// requests for a server with a configured authorization server.
type pinnedDiscovery struct {
	base     http.RoundTripper
	prm      []byte // protected resource metadata naming the issuer
	metadata []byte // the authorization server's metadata
	issuer   *url.URL
}

func newPinnedDiscovery(base http.RoundTripper, serverURL, issuer string, metadata []byte) (*pinnedDiscovery, error) {
	iu, err := url.Parse(issuer)
	if err != nil {
		return nil, fmt.Errorf("issuer %q: %v", issuer, err)
	}
	prm, err := json.Marshal(&oauthex.ProtectedResourceMetadata{Resource: serverURL, AuthorizationServers: []string{issuer}})
	if err != nil {
		return nil, err
	}
	return &pinnedDiscovery{base: base, prm: prm, metadata: metadata, issuer: iu}, nil
}

func (p *pinnedDiscovery) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet {
		switch path := req.URL.Path; {
		case strings.Contains(path, "/.well-known/oauth-protected-resource"):
			return p.answer(req, p.prm), nil
		case req.URL.Host == p.issuer.Host &&
			(strings.Contains(path, "/.well-known/oauth-authorization-server") || strings.Contains(path, "/.well-known/openid-configuration")):
			return p.answer(req, p.metadata), nil
		}
	}
	return p.base.RoundTrip(req)
}

func (p *pinnedDiscovery) answer(req *http.Request, body []byte) *http.Response {
	if req.Body != nil {
		req.Body.Close()
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
