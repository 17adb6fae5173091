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
