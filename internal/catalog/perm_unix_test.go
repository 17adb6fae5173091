//go:build unix

package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPermissions checks that the folder is 0700 (made so if it was not)
// and every entry 0600, whatever the umask.
func TestPermissions(t *testing.T) {
	old := syscall.Umask(0) // the loosest umask: modes must come from the code
	defer syscall.Umask(old)

	base := t.TempDir()
	dir := filepath.Join(base, "mcp-workbench", "catalog")
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want 0700", d, fi.Mode().Perm())
		}
	}
	key := Key(testServer(), "2025-11-25")
	if err := c.Put(key, []json.RawMessage{json.RawMessage(`{"name":"a"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(c.path(key))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("entry: mode %v, want 0600", fi.Mode().Perm())
	}

	// A folder someone made readable by others is made private again.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	fi, err = os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("reopened folder: mode %v, want 0700", fi.Mode().Perm())
	}
}
