//go:build !unix

package live

import "os"

// Alive reports whether a process pid runs: on Windows, whether it can be
// opened (FindProcess opens a handle to it).
func Alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
