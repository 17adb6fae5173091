//go:build unix

package userfile

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// MakePrivate makes the folder dir 0700. It opens dir without following a
// symbolic link in its last component and changes the mode of what it
// opened, so the mode of a folder elsewhere (a link planted in the cache,
// or one swapped in meanwhile) is never changed. A folder the user does not
// own is refused: its owner could read and replace the entries.
// what names the folder in errors ("catalog folder").
func MakePrivate(dir, what string) error {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		if fi, lerr := os.Lstat(dir); lerr == nil {
			switch {
			case fi.Mode()&os.ModeSymlink != 0:
				return fmt.Errorf("the %s %s is a symbolic link; it must be a folder of its own (remove the link)", what, dir)
			case !fi.IsDir():
				return fmt.Errorf("the %s %s is not a folder", what, dir)
			}
		}
		if errors.Is(err, syscall.ELOOP) {
			return fmt.Errorf("the %s %s is a symbolic link; it must be a folder of its own (remove the link)", what, dir)
		}
		if errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("the %s %s is not a folder", what, dir)
		}
		return fmt.Errorf("opening the %s: %w", what, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("opening the %s: %w", what, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("the %s %s belongs to another user (uid %d); it must be yours", what, dir, st.Uid)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := f.Chmod(0o700); err != nil {
			return fmt.Errorf("making the %s private: %w", what, err)
		}
	}
	return nil
}
