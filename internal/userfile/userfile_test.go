package userfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
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
