package oauth

import (
	"net/http"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
)

// SetFreshWindow shortens how long a just-issued token counts as fresh.
func SetFreshWindow(d time.Duration) func() {
	old := freshWindow
	freshWindow = d
	return func() { freshWindow = old }
}

// HTTPClientFor is the client of discovery and token requests of the
// server at serverURL, whose authorization server metadata is at
// metadataURL if that is set (oauth.authServerMetadataUrl).
func HTTPClientFor(serverURL, metadataURL string) *http.Client {
	s := &config.Server{URL: serverURL}
	if metadataURL != "" {
		s.OAuth = &config.OAuth{AuthServerMetadataURL: metadataURL}
	}
	return httpClientFor(s)
}
