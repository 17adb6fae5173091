//go:build unix

package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// TestOpenRefusesLinkAndForeignFolder: a catalog folder that is a symbolic
// link is refused and the mode of the folder it points at stays as it was;
// a folder of another user's is refused (checked where the test may give a
// folder away, as root).
func TestOpenRefusesLinkAndForeignFolder(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "catalog")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	_, err := Open(link)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), link) {
		t.Errorf("Open of a link: %v", err)
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the folder behind the link changed mode: %v %v", fi.Mode(), err)
	}

	if os.Geteuid() != 0 {
		return // only root can give a folder away
	}
	foreign := filepath.Join(base, "foreign")
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(foreign, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err = Open(foreign)
	if err == nil || !strings.Contains(err.Error(), "another user") {
		t.Errorf("Open of another user's folder: %v", err)
	}
	if fi, err := os.Stat(foreign); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("another user's folder changed mode: %v %v", fi.Mode(), err)
	}
}
