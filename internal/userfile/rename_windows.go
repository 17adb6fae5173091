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

// rename replaces newpath by oldpath so that a reader that has newpath
// open, sharing it for deletion as [Open] does, does not hold up the
// replace, which MoveFileEx (os.Rename) fails with "access denied" while
// any process has newpath open. First by a rename with POSIX semantics
// (NTFS on Windows 10 1709 and later, as Rust's std::fs::rename does),
// then by ReplaceFile, which replaces a file open with FILE_SHARE_DELETE
// where that fails (older systems, other file systems, wine 8, which
// answers the former STATUS_NOT_IMPLEMENTED), then by os.Rename (no
// newpath yet), whose error [Rename] sees: these ways never do worse than
// os.Rename alone.
func rename(oldpath, newpath string) error {
	if renamePOSIX(oldpath, newpath) == nil || replaceFile(oldpath, newpath) == nil {
		return nil
	}
	return os.Rename(oldpath, newpath)
}

var procReplaceFileW = windows.NewLazySystemDLL("kernel32.dll").NewProc("ReplaceFileW")

// replaceFile replaces the existing file newpath by oldpath with
// ReplaceFileW, no backup, ignoring errors of merging the old file's
// attributes and ACL into the new one (the folder's ACL decides).
func replaceFile(oldpath, newpath string) error {
	const replacefileIgnoreMergeErrors, replacefileIgnoreACLErrors = 0x2, 0x4
	replaced, err := windows.UTF16PtrFromString(newpath)
	if err != nil {
		return err
	}
	replacement, err := windows.UTF16PtrFromString(oldpath)
	if err != nil {
		return err
	}
	r, _, err := procReplaceFileW.Call(uintptr(unsafe.Pointer(replaced)), uintptr(unsafe.Pointer(replacement)), 0,
		replacefileIgnoreMergeErrors|replacefileIgnoreACLErrors, 0, 0)
	if r == 0 {
		return err
	}
	return nil
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
