//go:build !windows

package hostconfig

// shortPath is p: only Windows has 8.3 short names.
func shortPath(p string) string { return p }
