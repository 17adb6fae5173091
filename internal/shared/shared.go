// Package shared lets many hosts share one workbench, as gopls'
// -remote=auto does: the process a host starts relays its MCP stream over a
// Unix socket to a background workbench (the same binary), one per user and
// configuration, started detached by the first client that finds none. This
// package holds what both ends agree on: where the socket is, the lock that
// makes two clients start one daemon, the check that a peer is the same user,
// and the one-line handshake before the MCP stream.
package shared

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// Protocol is the handshake's version number; a daemon refuses another.
const Protocol = 1

// Kinds of [Hello].
const (
	KindSession = "session" // the host's MCP stream follows the reply
	KindStatus  = "status"  // the reply's Status answers; the connection closes
	KindStop    = "stop"    // the daemon replies, then leaves
)

// MaxLine bounds a handshake line (the JSON and its newline): a hello
// carries a session's environment, which is large but never this large.
const MaxLine = 1 << 20

// MaxLog is the size past which a shared workbench's log is moved aside
// (to its name with ".1") when the next one starts, and which a running
// one keeps its log under (see the daemon's log rotation).
const MaxLog = 4 << 20

// maxSocketPath keeps a margin below the longest path a Unix socket
// takes: 104 bytes on macOS and the BSDs, 108 on Linux, the terminating
// NUL included.
const maxSocketPath = 100

// Hello is the first line (JSON, newline-terminated, at most [MaxLine]) a
// client writes after it connects.
type Hello struct {
	Protocol int      `json:"mcpWorkbenchShared"`
	Version  string   `json:"version"`
	Config   string   `json:"config"` // absolute path
	Kind     string   `json:"kind"`   // KindSession, KindStatus or KindStop
	Cwd      string   `json:"cwd,omitempty"`
	Env      []string `json:"env,omitempty"` // KEY=VALUE, the session's environment
	PID      int      `json:"pid,omitempty"` // the relaying process
	// ShareAll asks the shared workbench to share the session's servers as
	// if the configuration said "shared": true (serve's --shared).
	ShareAll bool `json:"shareAll,omitempty"`
}

// Check says why a daemon of binary version serving the configuration file
// config must refuse h, or nil. The socket's name already holds version and
// config, so a mismatch is a client that reached the wrong socket.
func (h *Hello) Check(version, config string) error {
	switch {
	case h.Protocol != Protocol:
		return fmt.Errorf("the client speaks sharing protocol %d, this shared workbench %d", h.Protocol, Protocol)
	case h.Version != version:
		return fmt.Errorf("the client is mcp-workbench %s, this shared workbench %s", h.Version, version)
	case h.Config != config:
		return fmt.Errorf("the client's configuration is %s, this shared workbench's %s", h.Config, config)
	case !slices.Contains([]string{KindSession, KindStatus, KindStop}, h.Kind):
		return fmt.Errorf("unknown kind of connection %q (want %q, %q or %q)", h.Kind, KindSession, KindStatus, KindStop)
	}
	return nil
}

// Reply is the daemon's one-line answer to a [Hello]. Error set means
// refused: the connection closes after it. Status holds the answer to a
// "status" hello (the daemon's own JSON).
type Reply struct {
	OK     bool            `json:"ok"`
	Error  string          `json:"error,omitempty"`
	Status json.RawMessage `json:"status,omitempty"`
	// Retry is set on a refusal from a shared workbench that is stopping:
	// the client starts a new one once this one has gone.
	Retry bool `json:"retry,omitempty"`
}

// ErrRunning is what [Listen] returns (wrapped, with the path) when a
// daemon already answers at its path.
var ErrRunning = errors.New("a shared workbench already listens there")

// ListenOptions are [Listen]'s.
type ListenOptions struct {
	// UID is the user allowed to connect; 0 means os.Getuid() (root's own
	// daemon allows root, which is the same). Tests set another one to see
	// a refusal.
	UID int
	// Refused, if set, is told of each peer refused: its uid (-1 if it
	// could not be read) and why.
	Refused func(uid int, err error)
}

// Dir returns the private per-user runtime folder for sockets and the
// daemon's log: $XDG_RUNTIME_DIR/mcp-workbench when XDG_RUNTIME_DIR is set,
// else <user cache folder>/mcp-workbench/run; made if need be, and made
// 0700 by userfile.MakePrivate, which refuses a link or another user's
// folder.
func Dir() (string, error) {
	var dir string
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
		if !filepath.IsAbs(rt) {
			return "", fmt.Errorf("XDG_RUNTIME_DIR is %q, not an absolute path", rt)
		}
		dir = filepath.Join(rt, "mcp-workbench")
	} else {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("finding the user's cache folder: %w", err)
		}
		dir = filepath.Join(base, "mcp-workbench", "run")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("making the runtime folder: %w", err)
	}
	if err := userfile.MakePrivate(dir, "runtime folder"); err != nil {
		return "", err
	}
	return dir, nil
}

// SocketPath returns the socket of the shared workbench for the
// configuration file at the absolute path config, run by binary version:
// dir/wb-<16 hex digits of sha256(config NUL version)>.sock. A different
// version never meets another's socket. A path too long for a Unix socket
// is an error (the caller then runs without sharing).
func SocketPath(dir, config, version string) (string, error) {
	if !filepath.IsAbs(config) {
		return "", fmt.Errorf("the configuration file %q is not an absolute path", config)
	}
	sum := sha256.Sum256([]byte(config + "\x00" + version))
	path := filepath.Join(dir, "wb-"+hex.EncodeToString(sum[:8])+".sock")
	if len(path) > maxSocketPath {
		return "", fmt.Errorf("the socket path %s is %d bytes long, longer than the %d a Unix socket takes here; set XDG_RUNTIME_DIR to a shorter folder of your own", path, len(path), maxSocketPath)
	}
	return path, nil
}

// LogPath is the log of the shared workbench listening at sock: its name
// with .log for .sock, beside it.
func LogPath(sock string) string {
	return strings.TrimSuffix(sock, filepath.Ext(sock)) + ".log"
}

// Sockets lists the wb-*.sock files in dir, sorted.
func Sockets(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "wb-*.sock"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	return paths, nil
}

// WriteLine writes v as one JSON line in a single write. A line longer
// than [MaxLine] is refused before anything is written.
func WriteLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding the handshake: %s", frame.ExplainError(err))
	}
	if len(b)+1 > MaxLine {
		return fmt.Errorf("the handshake line is %d bytes long, past the %d-byte (1 MiB) limit", len(b)+1, MaxLine)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadLine reads one line, at most [MaxLine] bytes, from r and decodes it
// into v. Only the line is consumed: the bytes after it stay in r, since
// they belong to the MCP stream that follows. A peer that closes before
// writing anything gives io.EOF. ReadLine does not bound the wait: set a
// deadline on the connection.
func ReadLine(r *bufio.Reader, v any) error {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			return fmt.Errorf("the handshake line is longer than the %d-byte (1 MiB) limit", MaxLine)
		}
		line = append(line, chunk...)
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(line) == 0 {
				return io.EOF
			}
			return fmt.Errorf("the connection closed in the middle of the handshake line (%d bytes, no newline)", len(line))
		}
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("reading the handshake: %s", frame.ExplainError(err))
	}
	return nil
}

// DialOrStart connects to the daemon at path. If none answers it takes the
// lock path+".lock" (so that two clients start one daemon), dials again in
// case another client started one meanwhile, and if still none answers
// calls start once, then dials with a short back-off until the daemon
// answers. start returns a channel that gets an error when the process it
// started ends (nil: it cannot tell): a daemon that exits without
// answering (its configuration turned invalid, its socket path taken)
// ends the wait at once, with why. Every wait is bounded by ctx.
func DialOrStart(ctx context.Context, path string, start func() (exited <-chan error, err error)) (net.Conn, error) {
	if c, err := Dial(ctx, path); err == nil || !absent(err) {
		return c, err
	}
	release, err := userfile.LockRemovable(ctx, path+".lock")
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("another mcp-workbench is starting the shared workbench at %s, and it did not answer in time", path)
		}
		return nil, fmt.Errorf("taking the lock %s: %w", path+".lock", err)
	}
	defer release(false)
	if c, err := Dial(ctx, path); err == nil || !absent(err) {
		return c, err
	}
	exited, err := start()
	if err != nil {
		return nil, fmt.Errorf("starting the shared workbench for %s: %w", path, err)
	}
	wait := 5 * time.Millisecond
	var last error
	for {
		c, err := Dial(ctx, path)
		if err == nil {
			return c, nil
		}
		if ctx.Err() == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the shared workbench started for %s did not answer in time (%v)", path, cmp.Or(last, err))
		case why := <-exited:
			// It may have left because another one answers there.
			if c, err := Dial(ctx, path); err == nil {
				return c, nil
			}
			return nil, fmt.Errorf("the shared workbench started for %s ended without answering: %w", path, why)
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// RemoveLocks removes the lock files of the daemon at path that no one
// holds: what a daemon does as it exits, so that it leaves nothing behind
// but its log. (Each lock is taken with [userfile.LockRemovable], which
// copes with a holder removing it.)
func RemoveLocks(path string) {
	for _, lock := range []string{path + ".listen.lock", path + ".lock"} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		release, err := userfile.LockRemovable(ctx, lock)
		cancel()
		if err == nil {
			release(true)
		}
	}
}

// absent tells a dial that found no daemon (no socket file, or a socket
// nothing listens on) from one that failed otherwise.
func absent(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// Supported reports whether sharing works on this system: Linux, macOS
// and FreeBSD, where a Unix socket's peer can be checked. Elsewhere
// (Windows) each host's workbench runs its own servers, as before.
func Supported() bool { return supported }
