//go:build !windows

package userfile

import "os"

// rename is os.Rename: elsewhere a file open in another process is
// replaced as any other.
func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
