//go:build unix

package shared

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// The test binary re-executed with daemonVar=1 is a tiny shared daemon:
// it listens at $WB_TEST_SOCKET, appends "pid sid tree" to
// $WB_TEST_STATE/starts once it listens (tree: whether it inherited
// proctree's tag), and echoes each connection's bytes back.
const daemonVar = "WB_TEST_SHARED_DAEMON"

// treeVar is proctree's tag of a server's tree, as the processes carry it.
const treeVar = "MCP_WORKBENCH_TREE"

func TestMain(m *testing.M) {
	if os.Getenv(daemonVar) == "1" {
		os.Exit(daemon())
	}
	if os.Getenv(clientVar) == "1" {
		os.Exit(client())
	}
	if path := os.Getenv(rotateVar); path != "" {
		os.Exit(rotating(path))
	}
	os.Exit(m.Run())
}

func daemon() int {
	l, err := Listen(os.Getenv("WB_TEST_SOCKET"), ListenOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "daemon:", err)
		return 1
	}
	sid, _ := unix.Getsid(0)
	_, tree := os.LookupEnv(treeVar)
	f, err := os.OpenFile(filepath.Join(os.Getenv("WB_TEST_STATE"), "starts"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "daemon:", err)
		return 1
	}
	fmt.Fprintf(f, "%d %d %v\n", os.Getpid(), sid, tree)
	f.Close()
	fmt.Fprintln(os.Stderr, "daemon: listening")
	// Never outlive a test that failed to stop it by much.
	time.AfterFunc(2*time.Minute, func() { os.Exit(3) })
	for {
		c, err := l.Accept()
		if err != nil {
			return 2
		}
		go func() { _, _ = io.Copy(c, c); c.Close() }()
	}
}

// The test binary re-executed with clientVar=1 is a client that starts
// the daemon ($WB_TEST_SOCKET, with the rest of its environment), checks
// that it answers, and exits.
const clientVar = "WB_TEST_SHARED_CLIENT"

func client() int {
	path := os.Getenv("WB_TEST_SOCKET")
	env := append(os.Environ(), daemonVar+"=1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := DialOrStart(ctx, path, func() (<-chan error, error) {
		return StartDetached(os.Args[0], []string{"-test.run=^$"}, env, path+".log")
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 1
	}
	defer c.Close()
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		return 1
	}
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "ping\n" {
		fmt.Fprintln(os.Stderr, "client: echo:", line, err)
		return 1
	}
	return 0
}

// shortDir is a temporary folder with a path short enough for sockets.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// staleSocket leaves a socket file at path that nothing listens on, as a
// daemon that was killed does.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	if _, err := net.Dial("unix", path); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dialing the stale socket: %v, want connection refused", err)
	}
}

func TestListenReplacesStaleRefusesLive(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, "wb-t.sock")
	staleSocket(t, path)

	l, err := Listen(path, ListenOptions{})
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	defer l.Close()
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the socket file: %v, %v; want a socket, 0600", fi.Mode(), err)
	}
	if _, err := Listen(path, ListenOptions{}); !errors.Is(err, ErrRunning) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Listen over a live socket: %v, want ErrRunning naming the path", err)
	}
	// The live listener still serves after the refused one.
	accepted := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			c.Close()
		}
		accepted <- err
	}()
	c, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatalf("Dial after a refused Listen: %v", err)
	}
	c.Close()
	if err := <-accepted; err != nil {
		t.Fatalf("Accept: %v", err)
	}
	l.Close()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket file outlived its listener: %v", err)
	}

	// A file that is not a socket is left alone.
	if err := os.WriteFile(path, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(path, ListenOptions{}); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("Listen over a plain file: %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "mine" {
		t.Errorf("the plain file became %q", b)
	}
}

func TestDialErrors(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, "wb-none.sock")
	if _, err := Dial(context.Background(), path); !errors.Is(err, syscall.ENOENT) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "dial unix") {
		t.Errorf("Dial with no socket: %v", err)
	}
	staleSocket(t, path)
	if _, err := Dial(context.Background(), path); !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), path) {
		t.Errorf("Dial of a stale socket: %v", err)
	}
}

// A peer of another user is closed before Accept yields it, and told to
// Refused with its uid; the same user's peer is yielded.
func TestListenChecksPeerUser(t *testing.T) {
	if !Supported() {
		t.Skip("no peer check on this system")
	}
	dir := shortDir(t)
	path := filepath.Join(dir, "wb-peer.sock")
	type refusal struct {
		uid int
		err error
	}
	refused := make(chan refusal, 1)
	l, err := Listen(path, ListenOptions{UID: os.Getuid() + 1, Refused: func(uid int, err error) { refused <- refusal{uid, err} }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	type accept struct {
		c   net.Conn
		err error
	}
	accepted := make(chan accept, 1)
	go func() { c, err := l.Accept(); accepted <- accept{c, err} }()

	c, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case r := <-refused:
		if r.uid != os.Getuid() || r.err == nil || !strings.Contains(r.err.Error(), "uid "+strconv.Itoa(os.Getuid())) {
			t.Errorf("Refused(%d, %v); want our uid %d and an error naming it", r.uid, r.err, os.Getuid())
		}
	case a := <-accepted:
		t.Fatalf("Accept yielded a peer of another user: %v, %v", a.c, a.err)
	case <-time.After(20 * time.Second):
		t.Fatal("no refusal")
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || (err != io.EOF && !errors.Is(err, syscall.ECONNRESET)) {
		t.Errorf("the refused client read %d, %v; want its connection closed", n, err)
	}
	l.Close()
	if a := <-accepted; a.err == nil {
		a.c.Close()
		t.Fatal("Accept yielded a connection from another user")
	}

	// The same user is served.
	os.Remove(path)
	l2, err := Listen(path, ListenOptions{Refused: func(uid int, err error) { t.Errorf("refused our own uid: %d, %v", uid, err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	go func() { c, err := l2.Accept(); accepted <- accept{c, err} }()
	c2, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	a := <-accepted
	if a.err != nil {
		t.Fatalf("Accept of our own user: %v", a.err)
	}
	// And the conversation works both ways past the check.
	go func() { _ = WriteLine(a.c, Reply{OK: true}); a.c.Close() }()
	var r Reply
	if err := ReadLine(bufio.NewReader(c2), &r); err != nil || !r.OK {
		t.Errorf("reply through the checked connection: %+v, %v", r, err)
	}
}

// daemonSetup returns where a test daemon listens, its state folder, and a
// start function that starts one detached, counting the calls.
func daemonSetup(t *testing.T) (path, state string, start func() (<-chan error, error), starts *atomic.Int32) {
	t.Helper()
	dir := shortDir(t)
	path = filepath.Join(dir, "wb-d.sock")
	state = filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), daemonVar+"=1", "WB_TEST_SOCKET="+path, "WB_TEST_STATE="+state, treeVar+"=starter-tag.1")
	starts = new(atomic.Int32)
	start = func() (<-chan error, error) {
		starts.Add(1)
		return StartDetached(exe, []string{"-test.run=^$"}, env, filepath.Join(dir, "daemon.log"))
	}
	t.Cleanup(func() {
		stopDaemons(t, state)
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "daemon.log"))
			t.Logf("the daemons' log:\n%s", b)
		}
	})
	return path, state, start, starts
}

type daemonStart struct {
	pid, sid int
	tree     bool
}

func daemonStarts(t *testing.T, state string) []daemonStart {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(state, "starts"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []daemonStart
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var s daemonStart
		if _, err := fmt.Sscanf(line, "%d %d %t", &s.pid, &s.sid, &s.tree); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// stopDaemons kills every daemon the test started and waits until each is
// gone (this process reaps them: StartDetached waits for its children).
func stopDaemons(t *testing.T, state string) {
	for _, s := range daemonStarts(t, state) {
		_ = syscall.Kill(s.pid, syscall.SIGKILL)
		deadline := time.Now().Add(20 * time.Second)
		for alive(s.pid) {
			if time.Now().After(deadline) {
				t.Errorf("daemon %d still runs after SIGKILL", s.pid)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// echo checks that c reaches a live test daemon.
func echo(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || got != msg+"\n" {
		t.Fatalf("echo of %q: %q, %v", msg, got, err)
	}
}

// Clients that find no daemon at once start one between them, and each
// gets a connection to it. The daemon runs detached: a session of its own,
// without the starter's process-tree tag, its output in the log.
func TestDialOrStartStartsOneDaemon(t *testing.T) {
	path, state, start, starts := daemonSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const clients = 6
	var wg sync.WaitGroup
	conns := make([]net.Conn, clients)
	errs := make([]error, clients)
	for i := range clients {
		wg.Go(func() { conns[i], errs[i] = DialOrStart(ctx, path, start) })
	}
	wg.Wait()
	for i, c := range conns {
		if errs[i] != nil {
			t.Fatalf("client %d: %v", i, errs[i])
		}
		defer c.Close()
		echo(t, c, fmt.Sprint("client ", i))
	}
	ds := daemonStarts(t, state)
	if n := starts.Load(); n != 1 || len(ds) != 1 {
		t.Fatalf("start called %d times, %d daemons listened; want 1 and 1", n, len(ds))
	}
	if d := ds[0]; d.sid != d.pid || d.tree {
		t.Errorf("the daemon: pid %d, session %d, starter's tree tag inherited %v; want a session of its own, no tag", d.pid, d.sid, d.tree)
	}
	if d := ds[0]; d.pid == os.Getpid() {
		t.Fatal("the daemon is this process")
	}
	log := filepath.Join(filepath.Dir(path), "daemon.log")
	if fi, err := os.Stat(log); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the log: %v, %v; want 0600", fi, err)
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "daemon: listening") {
		t.Errorf("the log holds %q, want the daemon's stderr", b)
	}

	// Once it runs, a client dials it without starting anything.
	c, err := DialOrStart(ctx, path, func() (<-chan error, error) { t.Error("start called with a daemon running"); return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echo(t, c, "again")
}

// A daemon that died leaves its socket file; the next client starts a new
// daemon, which replaces the file.
func TestDialOrStartReplacesDeadDaemon(t *testing.T) {
	path, state, start, starts := daemonSetup(t)
	staleSocket(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := DialOrStart(ctx, path, start)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echo(t, c, "new")
	if n, ds := starts.Load(), daemonStarts(t, state); n != 1 || len(ds) != 1 {
		t.Fatalf("start called %d times, %d daemons listened; want 1 and 1", n, len(ds))
	}

	// Killed in turn, it is replaced again.
	stopDaemons(t, state)
	c2, err := DialOrStart(ctx, path, start)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	echo(t, c2, "newer")
	if n, ds := starts.Load(), daemonStarts(t, state); n != 2 || len(ds) != 2 || ds[0].pid == ds[1].pid {
		t.Fatalf("after the daemon was killed: start called %d times, daemons %v; want a second one", n, ds)
	}
}

// A start that fails, or a daemon that never answers, ends DialOrStart with
// an error that says which, and where.
func TestDialOrStartFailures(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, "wb-f.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := DialOrStart(ctx, path, func() (<-chan error, error) { return nil, errors.New("no such program") })
	if err == nil || !strings.Contains(err.Error(), "starting the shared workbench") || !strings.Contains(err.Error(), "no such program") || !strings.Contains(err.Error(), path) {
		t.Errorf("a failed start: %v", err)
	}

	short, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	_, err = DialOrStart(short, path, func() (<-chan error, error) { return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "did not answer in time") || !strings.Contains(err.Error(), path) {
		t.Errorf("a daemon that never answers: %v", err)
	}

	// A client waiting for another's start gives up when its time is up.
	unlock, err := userfileLock(path + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	short3, cancel3 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel3()
	_, err = DialOrStart(short3, path, func() (<-chan error, error) { t.Error("start called without the lock"); return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "another mcp-workbench is starting") {
		t.Errorf("waiting for the lock: %v", err)
	}
}

// A daemon that exits without answering ends DialOrStart when it exits,
// with its exit status and the end of its log, not when ctx ends.
func TestDialOrStartDaemonExitsAtOnce(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, "wb-x.sock")
	if err := os.WriteFile(path, []byte("not a socket"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), daemonVar+"=1", "WB_TEST_SOCKET="+path)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, err := DialOrStart(ctx, path, func() (<-chan error, error) {
		return StartDetached(os.Args[0], []string{"-test.run=^$"}, env, filepath.Join(dir, "daemon.log"))
	})
	for _, want := range []string{"ended without answering", "exit status 1", "is not a socket", path} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a daemon that exits at once: %v; want %q", err, want)
		}
	}
	if ctx.Err() != nil {
		t.Error("DialOrStart waited for its context to end")
	}
}

// The test binary re-executed with rotateVar set to its log's path writes
// "started", WB_TEST_LOG_BYTES bytes of x, rotates its log and writes
// "after" to stdout and stderr.
const rotateVar = "WB_TEST_ROTATE"

func rotating(path string) int {
	fmt.Fprintln(os.Stderr, "started")
	n, _ := strconv.Atoi(os.Getenv("WB_TEST_LOG_BYTES"))
	if _, err := os.Stderr.Write(bytes.Repeat([]byte("x"), n)); err != nil {
		return 1
	}
	if _, err := RotateLog(path); err != nil {
		fmt.Fprintln(os.Stderr, "rotate:", err)
		return 1
	}
	fmt.Fprintln(os.Stdout, "after")
	fmt.Fprintln(os.Stderr, "after")
	return 0
}

// A daemon's log stays under MaxLog: a log past it is moved aside when the
// next daemon starts, and a running daemon's RotateLog moves it aside and
// goes on writing to a new one, losing no line.
func TestDaemonLogIsRotated(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, "wb-r.log")
	run := func(logBytes int) {
		t.Helper()
		env := append(os.Environ(), rotateVar+"="+path, "WB_TEST_LOG_BYTES="+strconv.Itoa(logBytes))
		exited, err := StartDetached(os.Args[0], []string{"-test.run=^$"}, env, path)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case why := <-exited:
			if !strings.Contains(why.Error(), "status 0") {
				t.Fatalf("the logging process: %v", why)
			}
		case <-time.After(5 * time.Minute):
			t.Fatal("the logging process did not exit")
		}
	}
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	old := strings.Repeat("o", MaxLog+1)
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	run(10) // small: it does not rotate itself
	if got := read(path); got != "started\n"+strings.Repeat("x", 10)+"after\nafter\n" {
		t.Errorf("the log after a start with a big old one: %.100q", got)
	}
	if got := read(path + ".1"); got != old {
		t.Errorf("the old log was not moved aside: %d bytes", len(got))
	}
	run(MaxLog + 1) // past MaxLog: it rotates
	if got := read(path); got != "after\nafter\n" {
		t.Errorf("the new log: %.100q", got)
	}
	if got, want := read(path+".1"), "started\n"+strings.Repeat("x", 10)+"after\nafter\nstarted\n"+strings.Repeat("x", MaxLog+1); got != want {
		t.Errorf("the rotated log: %d bytes, want %d", len(got), len(want))
	}
}

// A runtime folder of another user is refused (needs root to make one).
func TestDirRefusesAnotherUsersFolder(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making a folder of another user needs root")
	}
	rt := t.TempDir()
	if err := os.Mkdir(filepath.Join(rt, "mcp-workbench"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(rt, "mcp-workbench"), 12345, 12345); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", rt)
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), "another user") {
		t.Errorf("Dir() on another user's folder: %v, want a refusal", err)
	}
}

func userfileLock(path string) (func(), error) {
	return userfile.Lock(context.Background(), path)
}

// alive reports whether pid runs. A zombie (an orphan whose parent, PID 1
// here, does not reap) does not count once all its threads are gone: a Go
// process's leader shows as a zombie while its other threads still exit,
// holding its files (its listener) open.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	if runtime.GOOS != "linux" {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X') {
		return true
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	return len(tasks) > 1
}

// The daemon outlives the client that started it: another client, later,
// finds it running.
func TestDaemonOutlivesItsStarter(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, "wb-o.sock")
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopDaemons(t, state) })
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), clientVar+"=1", "WB_TEST_SOCKET="+path, "WB_TEST_STATE="+state)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the starting client: %v\n%s", err, out)
	}
	ds := daemonStarts(t, state)
	if len(ds) != 1 || !alive(ds[0].pid) {
		t.Fatalf("after its starter exited, daemons %v; want one, running", ds)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := DialOrStart(ctx, path, func() (<-chan error, error) { t.Error("start called with a daemon running"); return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echo(t, c, "still there")
}
