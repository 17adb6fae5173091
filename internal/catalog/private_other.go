//go:build !unix

package catalog

import (
	"fmt"
	"os"
)

// makePrivate checks that dir is a folder of its own, not a link to one.
// Unix modes mean nothing here (a folder under %LocalAppData% is the
// user's own by its ACL), so nothing is changed.
func makePrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("opening the catalog folder: %w", err)
	}
	switch {
	case fi.Mode()&(os.ModeSymlink|os.ModeIrregular) != 0:
		return fmt.Errorf("the catalog folder %s is a link; it must be a folder of its own (remove the link)", dir)
	case !fi.IsDir():
		return fmt.Errorf("the catalog folder %s is not a folder", dir)
	}
	return nil
}
