package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ConfigDir returns os.UserConfigDir()/mcp-workbench/name: the folder of
// files the user would miss if they went (logins, tool pins).
func ConfigDir(name string) (string, error) {
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the user's configuration folder: %w", err)
	}
	return filepath.Join(base, "mcp-workbench", name), nil
}

// CacheDir returns os.UserCacheDir()/mcp-workbench/name ($XDG_CACHE_HOME or
// ~/.cache on Linux, ~/Library/Caches on macOS, %LocalAppData% on
// Windows): the folder of files that can be made again (the tool catalog).
func CacheDir(name string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user's cache folder: %w", err)
	}
	return filepath.Join(base, "mcp-workbench", name), nil
}

// MakeDir makes the folder dir (0700, parents too) if need be, and makes
// it private as [MakePrivate] does. what names it in errors ("pin folder").
func MakeDir(dir, what string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("making the %s: %w", what, err)
	}
	return MakePrivate(dir, what)
}

// ErrTooLarge is a file longer than its reader takes: not one the
// workbench wrote.
var ErrTooLarge = errors.New("too large")

// Read returns the content of the file at path, and its information, read
// from the file it opened. A missing file is an error that [errors.Is]
// [fs.ErrNotExist]; any other error's text says why the file cannot be
// used, for a log: "too large" ([ErrTooLarge]: longer than limit bytes,
// not read whole), or "unreadable: " and the cause. The file is opened by
// [Open]: on Windows, a file another process is replacing is waited for,
// and this reader does not hold up the next replace.
func Read(path string, limit int64) ([]byte, fs.FileInfo, error) {
	f, err := Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("unreadable: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, fmt.Errorf("unreadable: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, nil, ErrTooLarge
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("unreadable: %w", err)
	}
	return data, fi, nil
}

// Stamp identifies the regular file at path by its size and modification
// time, without reading it, or is "" when there is none. A file that
// [WriteAtomic] writes is replaced whole (a rename), so a file read under
// the same stamp is still the one there.
func Stamp(path string) string {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return fmt.Sprintf("%d-%d", fi.Size(), fi.ModTime().UnixNano())
}
