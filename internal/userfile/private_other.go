//go:build !unix

package userfile

import (
	"fmt"
	"os"
)

// MakePrivate checks that dir is a folder of its own, not a link to one.
// Unix modes mean nothing here (a folder under %LocalAppData% is the
// user's own by its ACL), so nothing is changed.
// what names the folder in errors ("catalog folder").
func MakePrivate(dir, what string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("opening the %s: %w", what, err)
	}
	switch {
	case fi.Mode()&(os.ModeSymlink|os.ModeIrregular) != 0:
		return fmt.Errorf("the %s %s is a link; it must be a folder of its own (remove the link)", what, dir)
	case !fi.IsDir():
		return fmt.Errorf("the %s %s is not a folder", what, dir)
	}
	return nil
}
