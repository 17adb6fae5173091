//go:build !windows

package userfile

import "os"

// openShared is os.Open: elsewhere an open file never holds up another
// process's rename or remove.
func openShared(path string) (*os.File, error) { return os.Open(path) }
