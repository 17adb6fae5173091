package downstream

import (
	"net/http"
	"sync/atomic"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/serverproc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// transport makes the MCP transport for a connect attempt; for stdio it
// starts the process.
func (s *Server) transport(c *conn) (mcp.Transport, error) {
	transport := s.cfg.Transport
	if transport == config.HTTP && s.speaksSSE.Load() {
		transport = config.SSE
	}
	switch transport {
	case config.HTTP:
		c.probe = newStatusProbe(httpClient(s.cfg.Headers).Transport)
		c.trySSE = s.cfg.TransportInferred
		c.bound = &listBound{base: c.probe, max: s.cfg.MaxToolListBytes}
		t := &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: &http.Client{Transport: c.bound}}
		if s.oauth != nil {
			s.oauth.Reload() // a login since the last attempt counts
			t.OAuthHandler = s.oauth
		}
		return t, nil
	case config.SSE:
		c.cap = newCapture(s.cfg.MaxTools, s.cfg.MaxToolListBytes)
		c.probe = newStatusProbe(httpClient(s.cfg.Headers).Transport)
		client := &http.Client{Transport: c.probe}
		if s.oauth != nil {
			// The SSE transport has no OAuthHandler: the token goes in
			// through the client instead.
			s.oauth.Reload()
			client = s.oauth.HTTPClient(c.probe)
		}
		return &captureTransport{
			Transport: &mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: client},
			cap:       c.cap,
		}, nil
	default:
		p, err := serverproc.Start(s.cfg, s.prefix, s.o.Stderr, s.o.Watchdog)
		if err != nil {
			return nil, err
		}
		if f := p.FoundElsewhere(); f.Dir != "" {
			s.log.Info("the command is not in the workbench's PATH (a host started from the desktop has a short one); found it in "+f.From+" and put its folder first in the server's PATH", "command", s.cfg.Command, "folder", f.Dir)
		}
		c.proc = p
		c.stdio = newStdioConn(c, p)
		c.cap = c.stdio.cap
		return &stdioTransport{conn: c.stdio}, nil
	}
}

// httpClient returns a client that adds the configured headers to every
// request. Header values are secrets: they are never logged.
func httpClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return http.DefaultClient
	}
	return &http.Client{Transport: &headerTransport{base: http.DefaultTransport, headers: headers}}
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}

// statusProbe notes the HTTP statuses a remote server answers with: a POST
// refused with a client error, the sign of a server that does not speak
// streamable HTTP (authorization and rate limit refusals do not count: the
// SSE transport would meet them too), and the last failure, which the SDK's
// error gives only as a bare status text.
type statusProbe struct {
	base    http.RoundTripper
	refused atomic.Bool
	failed  atomic.Int32 // the last status >= 400
}

func newStatusProbe(base http.RoundTripper) *statusProbe {
	if base == nil {
		base = http.DefaultTransport
	}
	return &statusProbe{base: base}
}

func (p *statusProbe) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.base.RoundTrip(req)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	p.failed.Store(int32(resp.StatusCode))
	if req.Method == http.MethodPost && resp.StatusCode < 500 {
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		default:
			p.refused.Store(true)
		}
	}
	return resp, err
}
