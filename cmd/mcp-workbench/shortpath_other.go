//go:build !windows

package main

// shortPath is p: only Windows has 8.3 short names.
func shortPath(p string) string { return p }
