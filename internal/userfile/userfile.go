// Package userfile holds what the files the workbench keeps for the user
// (the tool catalog, login tokens, tool pins) have in common: they are
// private, written whole or not at all, and shared by every workbench
// process of the user under a lock.
package userfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// WriteAtomic writes data to path: a new file (mode 0600) in path's folder,
// named by tempPattern (as os.CreateTemp takes it), synced, then renamed
// over path, and the folder synced so that the rename lasts. A reader sees
// the old file or the new one, never a part. On Windows the rename waits,
// for a bounded time, while another process reads or replaces path
// ([Rename]).
func WriteAtomic(path, tempPattern string, data []byte) error {
	return WriteAtomicMode(path, tempPattern, data, 0o600)
}

// WriteAtomicMode is [WriteAtomic] with the file's mode perm: a file the
// user had (another program's configuration) keeps its own.
func WriteAtomicMode(path, tempPattern string, data []byte, perm os.FileMode) error {
	tmp, err := writeTemp(path, tempPattern, data, perm)
	if err != nil {
		return err
	}
	if err := Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// WriteNew writes data to path as [WriteAtomic] does, but only if no file
// is there: the error then [errors.Is] [fs.ErrExist], even when another
// process made it a moment before, since the whole file is linked into
// place, which fails on a name that is taken.
func WriteNew(path, tempPattern string, data []byte) error {
	tmp, err := writeTemp(path, tempPattern, data, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err // "link a b: file exists" names our temporary file
		}
		return &fs.PathError{Op: "create", Path: path, Err: err}
	}
	syncDir(filepath.Dir(path))
	return nil
}

// writeTemp writes data to a new file in path's folder, synced, and
// returns its name.
func writeTemp(path, tempPattern string, data []byte, perm os.FileMode) (name string, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), tempPattern) // mode 0600
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if perm != 0o600 {
		if err := tmp.Chmod(perm); err != nil {
			return "", err
		}
	}
	if _, err := tmp.Write(data); err != nil {
		return "", fmt.Errorf("writing: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return "", fmt.Errorf("syncing: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return tmp.Name(), nil
}

// Lock takes the lock file at path (made, mode 0600, if need be), waiting
// for another process that holds it until ctx ends, and returns its
// release. The lock is the operating system's (flock, LockFileEx): it goes
// with the process, so a workbench that dies holds nothing.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	f, err := lockFile(ctx, path)
	if err != nil {
		return nil, err
	}
	return func() { unlockFile(f); f.Close() }, nil
}

// LockRemovable is [Lock] for a lock file that its holder may remove, so
// that it leaves nothing behind: once locked, it checks that path still
// names the file it locked (a holder may have removed it meanwhile), and
// takes the new one if not. Every process that takes the lock must take
// it so. release unlocks; with remove set it removes the file first.
func LockRemovable(ctx context.Context, path string) (release func(remove bool), err error) {
	for {
		f, err := lockFile(ctx, path)
		if err != nil {
			return nil, err
		}
		held, err1 := f.Stat()
		named, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, named) {
			return func(remove bool) {
				if remove {
					_ = os.Remove(path)
				}
				unlockFile(f)
				f.Close()
			}, nil
		}
		unlockFile(f)
		f.Close()
	}
}

// lockFile opens the lock file at path (made, mode 0600, if need be) and
// takes its lock, waiting until ctx ends.
func lockFile(ctx context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		if ok {
			return f, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
