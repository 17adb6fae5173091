package userfile

import (
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"syscall"
	"time"
)

// On Windows a file that another process has open cannot be replaced or
// removed unless every opener allowed it, and a file that another process
// is replacing cannot be opened for a moment. Several workbench processes
// per user is the normal case there (sharing one process does not run on
// Windows), and they all read and replace the same catalog, pins, tokens
// and approvals. So, as Go's own cmd/go/internal/robustio does, [Rename],
// [Remove] and [Open] retry for a bounded time the errors such a handle
// causes; elsewhere they are the plain calls.

// retryFor bounds how long one operation is retried: long enough to
// outlast another process's read or replace of a small file, short enough
// that a file held open for good (an editor, a virus scanner's lock) is
// reported soon.
const retryFor = 2 * time.Second

// missingFor bounds how long [Open] waits for a file that is not there on
// Windows: ReplaceFile, which [Rename] uses there, leaves the name empty
// between its two steps, and a reader must not take that for a file never
// written. A file that is really missing costs this much once.
const missingFor = 50 * time.Millisecond

// maxWait bounds one wait between attempts, so that a writer gets many
// chances within [retryFor] to find no reader holding the file: with
// MoveFileEx any reader's handle fails the replace, and readers that
// follow each other closely leave only short gaps.
const maxWait = 20 * time.Millisecond

// The Windows system error codes of a file that another process holds
// (winerror.h). They are plain numbers so that [transient] can be tested
// on every system.
const (
	errAccessDenied     = 5  // ERROR_ACCESS_DENIED: replace or remove of a file open without FILE_SHARE_DELETE, or pending deletion
	errSharingViolation = 32 // ERROR_SHARING_VIOLATION: open of a file that another process is replacing
	errFileNotFound     = 2  // ERROR_FILE_NOT_FOUND: also the moment inside another process's ReplaceFile
)

// transient reports whether err, from a file operation on the system goos
// (as runtime.GOOS names it), is one that another process's open handle
// causes and that goes away when it closes. Only Windows has such errors:
// elsewhere a file can be replaced and removed while open, and the same
// numbers mean other things.
func transient(goos string, err error) bool {
	if goos != "windows" {
		return false
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	return errno == errAccessDenied || errno == errSharingViolation
}

// missingNow reports whether err, from opening a file on the system goos,
// may be another process's replace in progress rather than a missing
// file: ERROR_FILE_NOT_FOUND on Windows (not ERROR_PATH_NOT_FOUND, a
// missing folder, which no replace makes).
func missingNow(goos string, err error) bool {
	var errno syscall.Errno
	return goos == "windows" && errors.As(err, &errno) && errno == errFileNotFound
}

// retrier runs an operation again while it fails with an error that
// again accepts, until bound has passed; its clock is a field so that the
// bound can be tested without waiting.
type retrier struct {
	bound time.Duration
	now   func() time.Time
	sleep func(time.Duration)
}

var (
	plainRetrier   = retrier{bound: retryFor, now: time.Now, sleep: time.Sleep}
	missingRetrier = retrier{bound: missingFor, now: time.Now, sleep: time.Sleep}
)

// do runs op until it succeeds, fails with an error that again rejects,
// or bound has passed; it returns op's last error. The waits between
// attempts grow from a millisecond, each by a random part of itself up
// to maxWait, so that processes that met once do not meet again in step.
func (r retrier) do(op func() error, again func(error) bool) error {
	var start time.Time
	wait := time.Millisecond
	for {
		err := op()
		if err == nil || !again(err) {
			return err
		}
		if start.IsZero() {
			start = r.now()
		} else if r.now().Sub(start)+wait >= r.bound {
			return err
		}
		r.sleep(wait)
		wait = min(wait+rand.N(wait), maxWait)
	}
}

func transientHere(err error) bool { return transient(runtime.GOOS, err) }

// Rename is os.Rename, retried on Windows while another process holds
// newpath open or is replacing it.
func Rename(oldpath, newpath string) error {
	return plainRetrier.do(func() error { return rename(oldpath, newpath) }, transientHere)
}

// Remove is os.Remove, retried on Windows while another process holds the
// file open.
func Remove(path string) error {
	return plainRetrier.do(func() error { return os.Remove(path) }, transientHere)
}

// Open opens the file at path for reading, retried on Windows while
// another process is replacing it. On Windows the file is opened so that
// another process may replace or remove it meanwhile (FILE_SHARE_DELETE,
// which os.Open does not give): a reader does not hold up a writer. A
// missing file is waited for only briefly (missingFor), on Windows only:
// it is the usual case of a file not written yet.
func Open(path string) (*os.File, error) {
	var f *os.File
	open := func() (err error) {
		f, err = openShared(path)
		return err
	}
	err := plainRetrier.do(open, transientHere)
	if missingNow(runtime.GOOS, err) {
		err = missingRetrier.do(open, func(err error) bool {
			return transientHere(err) || missingNow(runtime.GOOS, err)
		})
	}
	return f, err
}
