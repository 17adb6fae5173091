package oauth

import "time"

// SetFreshWindow shortens how long a just-issued token counts as fresh.
func SetFreshWindow(d time.Duration) func() {
	old := freshWindow
	freshWindow = d
	return func() { freshWindow = old }
}
