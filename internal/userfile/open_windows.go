//go:build windows

package userfile

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// openShared opens path for reading as os.Open does, but shares it for
// deletion too, so that another process can rename a new file over it (or
// remove it) while this one reads. FILE_FLAG_BACKUP_SEMANTICS opens a
// folder as os.Open does, so that reading one fails as elsewhere.
func openShared(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}
