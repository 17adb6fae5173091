//go:build unix

package hostconfig

import (
	"io/fs"
	"syscall"
)

// hardLinks returns the number of names the file of info has.
func hardLinks(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
