package oauth

import "time"

// SetFreshWindow shortens how long a just-issued token counts as fresh.
func SetFreshWindow(d time.Duration) func() {
	old := freshWindow
	freshWindow = d
	return func() { freshWindow = old }
}

// HTTPClientFor is the client of discovery and token requests of a server.
var HTTPClientFor = httpClientFor
