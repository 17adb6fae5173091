//go:build windows

package userfile

import (
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// fileRenameInformationEx is NtSetInformationFile's class of a rename
// with flags (FILE_INFORMATION_CLASS; Windows 10 1709 and later).
const fileRenameInformationEx = 65

// rename replaces newpath by oldpath with POSIX semantics where the
// system has them (NTFS on Windows 10 1709 and later, as Rust's
// std::fs::rename does): the name is replaced even while other processes
// have the old file open, if they opened it sharing deletion, as [Open]
// does. Where that fails (older systems, other file systems, wine 8,
// which answers STATUS_NOT_IMPLEMENTED) it is os.Rename (MoveFileEx),
// which fails while any reader has newpath open, and [Rename] retries.
func rename(oldpath, newpath string) error {
	if renamePOSIX(oldpath, newpath) == nil {
		return nil
	}
	// Not supported here, or failed: MoveFileEx's answer is the one that
	// counts, so that this way can never do worse than os.Rename.
	return os.Rename(oldpath, newpath)
}

func renamePOSIX(oldpath, newpath string) error {
	nt, ok := ntPath(newpath)
	if !ok {
		return windows.ERROR_BAD_PATHNAME
	}
	name, err := windows.UTF16FromString(nt)
	if err != nil {
		return err
	}
	name = name[:len(name)-1] // without the terminating zero
	from, err := windows.UTF16PtrFromString(oldpath)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(from, windows.DELETE|windows.SYNCHRONIZE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	// FILE_RENAME_INFORMATION: Flags, RootDirectory, FileNameLength (in
	// bytes), then the name; in 8-byte words, for the handle's alignment.
	type info struct {
		Flags          uint32
		RootDirectory  windows.Handle
		FileNameLength uint32
		FileName       [1]uint16
	}
	size := int(unsafe.Offsetof(info{}.FileName)) + 2*len(name)
	buf := make([]uint64, (size+7)/8)
	fi := (*info)(unsafe.Pointer(&buf[0]))
	fi.Flags = windows.FILE_RENAME_REPLACE_IF_EXISTS | windows.FILE_RENAME_POSIX_SEMANTICS
	fi.FileNameLength = uint32(2 * len(name))
	copy(unsafe.Slice(&fi.FileName[0], len(name)), name)
	var iosb windows.IO_STATUS_BLOCK
	return windows.NtSetInformationFile(h, &iosb, (*byte)(unsafe.Pointer(&buf[0])), uint32(size), fileRenameInformationEx)
}

// ntPath returns the NT name of the absolute path p (`\??\C:\…`,
// `\??\UNC\server\share\…`), or false for a name it does not make.
func ntPath(p string) (string, bool) {
	switch {
	case strings.HasPrefix(p, `\\?\`):
		return `\??\` + p[4:], true
	case strings.HasPrefix(p, `\\.\`):
		return "", false
	case strings.HasPrefix(p, `\\`):
		return `\??\UNC\` + p[2:], true
	case len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/'):
		return `\??\` + filepath.Clean(p), true
	}
	return "", false
}
