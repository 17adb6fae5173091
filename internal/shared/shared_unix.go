//go:build unix

package shared

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// Listen makes the daemon's listener at path. A socket file there that
// nothing answers on (a daemon that died) is removed first; if a daemon
// answers, Listen returns [ErrRunning]. The check and the bind happen under
// the lock path+".listen.lock", so two daemons starting at once never take
// each other's socket. The socket file is made 0600, and Accept yields only
// connections whose peer runs as opts.UID: any other is closed at once and
// told to opts.Refused.
func Listen(path string, opts ListenOptions) (net.Listener, error) {
	uid := opts.UID
	if uid == 0 {
		uid = os.Getuid()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	release, err := userfile.LockRemovable(ctx, path+".listen.lock")
	if err != nil {
		return nil, fmt.Errorf("taking the lock %s: %w", path+".listen.lock", err)
	}
	defer release(false)
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s is not a socket; remove it to share a workbench there", path)
		}
		c, err := Dial(ctx, path)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("%w: %s", ErrRunning, path)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, err
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("removing the stale socket %s: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%w: %s", ErrRunning, path)
		}
		return nil, fmt.Errorf("listening at %s: %w", path, cause(err))
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("making the socket %s private: %w", path, err)
	}
	return &peerListener{l: l, uid: uid, refused: opts.Refused}, nil
}

// peerListener yields only connections from one user. It wraps rather
// than embeds the UnixListener, whose AcceptUnix would skip the check.
type peerListener struct {
	l       *net.UnixListener
	uid     int
	refused func(uid int, err error)
}

func (p *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := p.l.AcceptUnix()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && uid == p.uid {
			return c, nil
		}
		c.Close()
		if err != nil {
			uid, err = -1, fmt.Errorf("refused a connection: reading its user: %w", err)
		} else {
			err = fmt.Errorf("refused a connection from uid %d: the shared workbench serves uid %d only", uid, p.uid)
		}
		if p.refused != nil {
			p.refused(uid, err)
		}
	}
}

func (p *peerListener) Close() error   { return p.l.Close() }
func (p *peerListener) Addr() net.Addr { return p.l.Addr() }

// peerUID returns the uid of the process at the other end of c, as the
// kernel saw it when c connected.
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid := -1
	var uerr error
	if err := raw.Control(func(fd uintptr) { uid, uerr = fdPeerUID(int(fd)) }); err != nil {
		return -1, err
	}
	return uid, uerr
}

// Dial connects to the daemon at path, bounded by ctx. Its error holds the
// system's reason (ENOENT: no socket; ECONNREFUSED: nothing listens).
func Dial(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("connecting to the shared workbench at %s: %w", path, cause(err))
	}
	return c, nil
}

// cause is the system's error under a net error, which says it in the
// system's words without the Go call that failed.
func cause(err error) error {
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}

// StartDetached starts exe with args and env (nil: this process's) as a
// background process: a session of its own (no terminal, no signal meant
// for the starter's process group), stdin /dev/null, stdout and stderr
// appended to logPath (made 0600; a log past [MaxLog] is first moved to
// logPath+".1", replacing the one there). It returns once the process has
// started, and reaps it on a goroutine so that it leaves no zombie while
// the starter lives. exited gets one error when the process ends: its
// exit status and the end of what it wrote to the log, which say why a
// daemon that should have kept running did not.
func StartDetached(exe string, args, env []string, logPath string) (exited <-chan error, err error) {
	if fi, err := os.Lstat(logPath); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxLog {
		if err := os.Rename(logPath, logPath+".1"); err != nil {
			return nil, fmt.Errorf("moving the log %s aside: %w", logPath, err)
		}
	}
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the log %s: %w", logPath, err)
	}
	defer log.Close()
	if err := log.Chmod(0o600); err != nil {
		return nil, fmt.Errorf("making the log %s private: %w", logPath, err)
	}
	var from int64 // where this process's lines begin
	if fi, err := log.Stat(); err == nil {
		from = fi.Size()
	}
	if env == nil {
		env = os.Environ()
	}
	cmd := exec.Command(exe, args...)
	// A daemon outlives the client that started it: a stop of the server
	// tree that client may belong to must not reach it.
	cmd.Env = proctree.Untagged(env)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", exe, err)
	}
	ch := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		status := "it exited with status 0"
		if err != nil {
			status = "it exited: " + err.Error()
		}
		if tail := logTail(logPath, from); tail != "" {
			status += "; its log ends: " + tail
		}
		ch <- errors.New(status)
	}()
	return ch, nil
}

// logTail is the last lines written to the log at path from offset from
// on, at most 2 KiB, on one line.
func logTail(path string, from int64) string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() <= from {
		return ""
	}
	const limit = 2 << 10
	from = max(from, fi.Size()-limit)
	b := make([]byte, fi.Size()-from)
	n, _ := f.ReadAt(b, from)
	return strings.Join(strings.Fields(string(b[:n])), " ")
}

// RotateLog keeps the log of a daemon started by [StartDetached] under
// [MaxLog]: when this process's stderr is the file at path and it has
// grown past MaxLog, the file moves to path+".1" (replacing the one there)
// and stdout and stderr go to a new file at path from then on. Every line
// lands in one file or the other: the move is a rename, the switch dup2.
// It reports whether it rotated.
func RotateLog(path string) (bool, error) {
	fi, err := os.Stderr.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= MaxLog {
		return false, nil
	}
	if li, err := os.Lstat(path); err != nil || !os.SameFile(fi, li) {
		return false, nil // its output goes elsewhere
	}
	if err := os.Rename(path, path+".1"); err != nil {
		return false, fmt.Errorf("moving the log %s aside: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return false, fmt.Errorf("opening a new log %s: %w", path, err)
	}
	defer f.Close()
	for _, fd := range []int{1, 2} {
		if err := unix.Dup2(int(f.Fd()), fd); err != nil {
			return false, fmt.Errorf("writing to the new log %s: %w", path, err)
		}
	}
	return true, nil
}
