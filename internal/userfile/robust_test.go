package userfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// Only the errors another process's handle causes on Windows are retried:
// access denied and a sharing violation, however wrapped; never a missing
// file, and never on another system, where the same numbers mean other
// things (5 is EIO on Linux, 32 EPIPE).
func TestTransient(t *testing.T) {
	denied := &os.LinkError{Op: "rename", Old: `C:\a\.tmp-1`, New: `C:\a\k.json`, Err: syscall.Errno(5)}
	sharing := &fs.PathError{Op: "open", Path: `C:\a\k.json`, Err: syscall.Errno(32)}
	for _, tc := range []struct {
		goos string
		err  error
		want bool
	}{
		{"windows", denied, true},
		{"windows", sharing, true},
		{"windows", syscall.Errno(32), true},
		{"windows", &fs.PathError{Op: "open", Path: `C:\a\k.json`, Err: syscall.Errno(2)}, false}, // ERROR_FILE_NOT_FOUND
		{"windows", &fs.PathError{Op: "open", Path: `C:\a\k.json`, Err: syscall.Errno(3)}, false}, // ERROR_PATH_NOT_FOUND
		{"windows", fs.ErrNotExist, false},
		{"windows", errors.New("access denied"), false},
		{"windows", nil, false},
		{"linux", denied, false},
		{"linux", sharing, false},
		{"darwin", sharing, false},
	} {
		if got := transient(tc.goos, tc.err); got != tc.want {
			t.Errorf("transient(%s, %v) = %v, want %v", tc.goos, tc.err, got, tc.want)
		}
	}
}

// Only Windows' ERROR_FILE_NOT_FOUND can be another process's replace in
// the middle (ReplaceFile's two steps); a missing folder cannot.
func TestMissingNow(t *testing.T) {
	notFound := &fs.PathError{Op: "open", Path: `C:\a\k.json`, Err: syscall.Errno(2)}
	for _, tc := range []struct {
		goos string
		err  error
		want bool
	}{
		{"windows", notFound, true},
		{"windows", &fs.PathError{Op: "open", Path: `C:\a\k.json`, Err: syscall.Errno(3)}, false},
		{"windows", &fs.PathError{Op: "open", Path: `C:\a\k.json`, Err: syscall.Errno(32)}, false},
		{"windows", nil, false},
		{"linux", notFound, false}, // ENOENT: missing, and never a replace (rename is atomic)
		{"darwin", notFound, false},
	} {
		if got := missingNow(tc.goos, tc.err); got != tc.want {
			t.Errorf("missingNow(%s, %v) = %v, want %v", tc.goos, tc.err, got, tc.want)
		}
	}
}

// fakeClock is a retrier's clock whose sleeps pass at once.
type fakeClock struct {
	at     time.Time
	slept  time.Duration
	sleeps int
}

func (c *fakeClock) retrier(bound time.Duration) retrier {
	c.at = time.Unix(1e9, 0)
	return retrier{bound: bound, now: func() time.Time { return c.at }, sleep: func(d time.Duration) {
		c.at = c.at.Add(d)
		c.slept += d
		c.sleeps++
	}}
}

func TestRetrier(t *testing.T) {
	busy := &fs.PathError{Op: "open", Path: "k.json", Err: syscall.Errno(32)}
	isBusy := func(err error) bool { return errors.Is(err, syscall.Errno(32)) }

	t.Run("a held file is waited for until it is free", func(t *testing.T) {
		var c fakeClock
		calls := 0
		err := c.retrier(retryFor).do(func() error {
			if calls++; calls <= 3 {
				return busy
			}
			return nil
		}, isBusy)
		if err != nil || calls != 4 || c.sleeps != 3 {
			t.Errorf("err %v after %d calls and %d sleeps; want success at the 4th call", err, calls, c.sleeps)
		}
	})
	t.Run("another error is returned at once", func(t *testing.T) {
		var c fakeClock
		calls := 0
		other := &fs.PathError{Op: "open", Path: "k.json", Err: fs.ErrNotExist}
		err := c.retrier(retryFor).do(func() error { calls++; return other }, isBusy)
		if err != other || calls != 1 || c.sleeps != 0 {
			t.Errorf("err %v after %d calls and %d sleeps; want the error itself at once", err, calls, c.sleeps)
		}
	})
	t.Run("a file held for good is given up within the bound", func(t *testing.T) {
		var c fakeClock
		calls := 0
		err := c.retrier(retryFor).do(func() error {
			if calls++; calls > 10000 {
				t.Fatal("still retrying after 10000 calls")
			}
			return busy
		}, isBusy)
		if err != busy {
			t.Errorf("err %v, want the last error", err)
		}
		if c.slept >= retryFor || calls < 5 {
			t.Errorf("%d calls, %v slept; want several calls within %v", calls, c.slept, retryFor)
		}
		// The waits grow: far fewer calls than the bound in milliseconds.
		if calls > 200 {
			t.Errorf("%d calls within %v; want the waits to grow", calls, retryFor)
		}
	})
}

// Rename replaces, Remove removes and Open reads as the plain calls do,
// their errors unchanged: a missing file is not waited for on any system.
func TestRobustCallsAsPlain(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Rename(a, b); err != nil {
		t.Fatal(err)
	}
	f, err := Open(b)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	n, _ := f.Read(buf)
	f.Close()
	if string(buf[:n]) != "new" {
		t.Errorf("read %q after the rename, want new", buf[:n])
	}
	if err := Remove(b); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := Open(b); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a removed file: %v, want fs.ErrNotExist", err)
	}
	if err := Remove(b); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Remove of a removed file: %v, want fs.ErrNotExist", err)
	}
	var le *os.LinkError
	if err := Rename(a, b); !errors.As(err, &le) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Rename of a missing file: %v, want an *os.LinkError for a missing file", err)
	}
	// Not a timed assertion of speed: a missing file that was retried
	// would take retryFor at least, three times over.
	if d := time.Since(start); d >= retryFor {
		t.Errorf("the missing-file errors took %v: retried", d)
	}
}

// A file that a reader holds open is replaced and removed meanwhile: on
// Windows only because Open shares it for deletion, which os.Open does not.
func TestOpenReaderDoesNotHoldUpWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.json")
	if err := WriteAtomic(path, ".tmp-*", []byte("first")); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	held := plainRetrier
	plainRetrier.bound = 0 // no waiting: the reader holds the file throughout
	defer func() { plainRetrier = held }()
	if err := WriteAtomic(path, ".tmp-*", []byte("second")); err != nil {
		t.Fatalf("replacing a file open in a reader (%s): %v", runtime.GOOS, err)
	}
	buf := make([]byte, 16)
	if n, _ := f.Read(buf); string(buf[:n]) != "first" {
		t.Errorf("the reader read %q, want the file it opened (first)", buf[:n])
	}
	if data, _, err := Read(path, 16); err != nil || string(data) != "second" {
		t.Errorf("Read after the replace: %q, %v", data, err)
	}
}
