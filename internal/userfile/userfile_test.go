package userfile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestWriteAtomicReplacesWholeAndPrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for _, data := range []string{"first", "second, longer"} {
		if err := WriteAtomic(path, ".tmp-*", []byte(data)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
	}
	if fi, err := os.Stat(path); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := WriteAtomic(filepath.Join(dir, "no-such-folder", "f"), ".tmp-*", nil); err == nil {
		t.Error("a write into a missing folder succeeded")
	}
}

// A lock held is waited for until the context ends, and taken once it is
// released.
func TestLockExcludesUntilReleased(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second Lock while the first is held: %v, want the context's deadline", err)
	}
	unlock()
	unlock2, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatalf("Lock after the release: %v", err)
	}
	unlock2()
}

// MakeDir makes a private folder (parents too); Read takes a file whole up
// to its limit and tells a missing one and a longer one; Stamp changes
// when WriteAtomic replaces the file, and is "" without one.
func TestFolderReadAndStamp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "pins")
	if err := MakeDir(dir, "pin folder"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700) {
		t.Fatalf("the folder: %v, %v; want a 0700 folder", fi, err)
	}
	path := filepath.Join(dir, "k.json")
	if _, _, err := Read(path, 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a missing file: %v, want fs.ErrNotExist", err)
	}
	if s := Stamp(path); s != "" {
		t.Errorf("Stamp of a missing file = %q", s)
	}
	if err := WriteAtomic(path, ".tmp-*", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	data, fi, err := Read(path, 10)
	if err != nil || string(data) != "0123456789" || fi.Size() != 10 {
		t.Errorf("Read at the limit: %q, %v, %v", data, fi, err)
	}
	if _, _, err := Read(path, 9); !errors.Is(err, ErrTooLarge) || err.Error() != "too large" {
		t.Errorf("Read past the limit: %v, want ErrTooLarge", err)
	}
	if _, _, err := Read(dir, 10); err == nil || !strings.HasPrefix(err.Error(), "unreadable: ") {
		t.Errorf("Read of a folder: %v, want it unreadable", err)
	}
	first := Stamp(path)
	if err := WriteAtomic(path, ".tmp-*", []byte("01234567890")); err != nil {
		t.Fatal(err)
	}
	if second := Stamp(path); first == "" || second == "" || first == second {
		t.Errorf("stamps before and after a write: %q, %q", first, second)
	}
	if s := Stamp(dir); s != "" {
		t.Errorf("Stamp of a folder = %q, want none", s)
	}
	if err := MakeDir(path, "pin folder"); err == nil || !strings.Contains(err.Error(), "pin folder") {
		t.Errorf("MakeDir of a file: %v", err)
	}
}

// A holder of a removable lock removes it as it releases it: the process
// that waited for the lock then holds the file the path names, so that a
// third one still waits. (Holding the removed file, it would not exclude
// the third, which makes a new one.)
func TestLockRemovableStaysExclusive(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot be removed on Windows; sharing, which removes its locks, does not run there")
	}
	path := filepath.Join(t.TempDir(), "k.lock")
	first, err := LockRemovable(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		release func(bool)
		err     error
	}
	second := make(chan result, 1)
	waiting := make(chan struct{})
	go func() {
		close(waiting)
		r, err := LockRemovable(context.Background(), path)
		second <- result{r, err}
	}()
	<-waiting
	// The second has opened the file, or will open the new one: either
	// way it must end up holding the file path names.
	first(true)
	r := <-second
	if r.err != nil {
		t.Fatal(r.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := LockRemovable(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a third LockRemovable while the second holds the lock: %v, want the context's deadline", err)
	}
	r.release(true)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file after a release that removes it: %v", err)
	}
}
