package downstream

import (
	"net/http"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// transport makes the MCP transport for a connect attempt; for stdio it
// starts the process.
func (s *Server) transport(c *conn) (mcp.Transport, error) {
	switch s.cfg.Transport {
	case config.HTTP:
		return &mcp.StreamableClientTransport{
			Endpoint:   s.cfg.URL,
			HTTPClient: httpClient(s.cfg.Headers),
		}, nil
	case config.SSE:
		c.pages = newRawPages()
		return &captureTransport{
			Transport: &mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: httpClient(s.cfg.Headers)},
			pages:     c.pages,
		}, nil
	default:
		p, err := startProcess(s.cfg, s.prefix, s.o)
		if err != nil {
			return nil, err
		}
		c.proc = p
		c.pages = newRawPages()
		return &captureTransport{
			// The reader drops oversized lines itself, so the SDK's own
			// frame limit would only duplicate it.
			Transport: &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin, MaxLineLength: -1},
			pages:     c.pages,
		}, nil
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
