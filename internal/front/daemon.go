package front

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
	"github.com/mcpworkbench/mcp-workbench/internal/shared"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errStopping refuses a session that came as the shared workbench began
// to stop: its client starts a new one.
var errStopping = errors.New("the shared workbench is stopping")

// DaemonOptions are [RunDaemon]'s.
type DaemonOptions struct {
	Options
	// PeerUID is the user whose connections the shared workbench serves:
	// 0 for its own. (Tests set another to see a connection refused.)
	PeerUID int
}

// RunDaemon runs the shared workbench of cfg (serve-shared): it listens
// at the socket of cfg's file and this version, serves each session
// relayed to it, and returns when its last session has left and the
// grace has passed, when ctx ends, or when stop-shared asks. If another
// shared workbench already listens there it returns nil at once.
func RunDaemon(ctx context.Context, cfg *config.Config, o DaemonOptions) error {
	log := o.Logger
	abs, err := filepath.Abs(cfg.Path)
	if err != nil {
		return err
	}
	dir, err := shared.Dir()
	if err != nil {
		return err
	}
	sock, err := shared.SocketPath(dir, abs, o.Version)
	if err != nil {
		return err
	}
	ln, err := shared.Listen(sock, shared.ListenOptions{UID: o.PeerUID, Refused: func(uid int, err error) {
		log.Warn("refused a connection from another user", "uid", uid, "error", err)
	}})
	if errors.Is(err, shared.ErrRunning) {
		log.Info("a shared workbench already runs for this configuration", "socket", sock)
		return nil
	}
	if err != nil {
		return err
	}
	// Each session's servers run in that session's folder: the shared
	// workbench holds on to none of them (the one it was started from may
	// be removed, or unmounted).
	if err := os.Chdir("/"); err != nil {
		log.Debug("staying in the folder it was started from", "error", err)
	}
	d := newDaemon(cfg, abs, sock, o.Options)
	log.Info("shared workbench serving", "config", abs, "socket", sock, "pid", os.Getpid(), "version", o.Version)
	stop := make(chan struct{})
	go keepLogSmall(shared.LogPath(sock), log, stop)
	err = d.serve(ctx, ln) // its socket is gone once it returns
	close(stop)
	shared.RemoveLocks(sock)
	return err
}

// logCheckEvery is how often a shared workbench checks the size of its
// log.
const logCheckEvery = 5 * time.Second

// keepLogSmall rotates the shared workbench's log (see
// [shared.RotateLog]) until stop closes.
func keepLogSmall(path string, log *slog.Logger, stop <-chan struct{}) {
	t := time.NewTicker(logCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			switch rotated, err := shared.RotateLog(path); {
			case err != nil:
				log.Warn("could not rotate the log", "error", err)
			case rotated:
				log.Info("log rotated", "previous", path+".1")
			}
		case <-stop:
			return
		}
	}
}

// daemon is the shared workbench: sessions, each a Workbench of its own,
// over one pool of servers.
type daemon struct {
	abs, sock string
	version   string
	log       *slog.Logger
	logOut    io.Writer
	started   time.Time
	grace     time.Duration
	pool      *downstream.Pool
	logins    *workbench.Logins // one login per server url, for every session
	watchdog  *proctree.Watchdog

	mu       sync.Mutex
	sessions map[int]*daemonSession
	nextID   int
	idle     *time.Timer // runs while no session is connected
	stop     chan struct{}
	stopOnce sync.Once
}

// daemonSession is one host session relayed to the shared workbench.
type daemonSession struct {
	id    int
	hello shared.Hello
	since time.Time
	conn  net.Conn
	wb    *workbench.Workbench
	log   *slog.Logger
}

func newDaemon(cfg *config.Config, abs, sock string, o Options) *daemon {
	log, logOut := o.Logger, o.LogOut
	wd := proctree.NewWatchdog(log)
	pool := downstream.NewPool(&downstream.Options{
		Logger:     log,
		Stderr:     logOut,
		Watchdog:   wd,
		ClientInfo: &mcp.Implementation{Name: workbench.Name, Version: o.Version},
		ConfigPath: abs,
		Catalog:    OpenCatalog(log),
		Pins:       OpenPins(log),
		Names:      &downstream.ToolNames{},
	})
	return &daemon{
		abs: abs, sock: sock, version: o.Version, log: log, logOut: logOut, started: time.Now(),
		grace: cfg.SharedGrace, pool: pool, logins: &workbench.Logins{}, watchdog: wd,
		sessions: map[int]*daemonSession{}, stop: make(chan struct{}),
	}
}

// serve accepts sessions until the last one has left and the grace has
// passed, ctx ends, or stop-shared asks.
func (d *daemon) serve(ctx context.Context, ln net.Listener) error {
	d.mu.Lock()
	// The session that started it connects within its dial timeout.
	d.idle = time.AfterFunc(max(d.grace, sharedDialTimeout), d.idleFired)
	d.mu.Unlock()
	watcher, err := config.Watch(ctx, d.abs, config.WatchOptions{}, func(_ *config.Config, _ error) { d.reload() })
	if err != nil {
		d.log.Warn("not watching the configuration file: edits take effect when the shared workbench starts again", "error", err)
	}
	var wg sync.WaitGroup
	go func() {
		select {
		case <-ctx.Done():
			d.log.Info("shutting down", "reason", context.Cause(ctx))
		case <-d.stop:
		}
		ln.Close()
	}()
	for wait := time.Duration(0); ; {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				break
			}
			// Out of file descriptors, say: the sessions it has go on,
			// and it tries again.
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			d.log.Warn("accepting a session", "error", err, "retry_in", wait)
			time.Sleep(wait)
			continue
		}
		wait = 0
		wg.Go(func() { d.handle(ctx, conn) })
	}
	d.shutdown()
	if watcher != nil {
		watcher.Close()
	}
	d.mu.Lock()
	for _, s := range d.sessions {
		s.conn.Close()
	}
	d.mu.Unlock()
	wg.Wait()
	d.pool.Close()
	d.watchdog.Close()
	d.log.Info("shared workbench stopped")
	return nil
}

// shutdown makes serve end. Idempotent.
func (d *daemon) shutdown() { d.stopOnce.Do(func() { close(d.stop) }) }

func (d *daemon) idleFired() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.sessions) == 0 {
		d.log.Info("no session for sharedGraceMs: exiting", "grace", d.grace)
		d.shutdown()
	}
}

// handle serves one connection: a session, a status request or a stop.
func (d *daemon) handle(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	var h shared.Hello
	_ = conn.SetDeadline(time.Now().Add(sharedAnswerTimeout))
	if err := shared.ReadLine(br, &h); err != nil {
		d.log.Warn("a connection sent no hello", "error", err)
		return
	}
	_ = conn.SetDeadline(time.Time{})
	refuse := func(msg string) { _ = shared.WriteLine(conn, shared.Reply{Error: msg}) }
	switch {
	case h.Protocol != shared.Protocol:
		refuse(fmt.Sprintf("this shared workbench speaks protocol %d, not %d", shared.Protocol, h.Protocol))
		return
	case h.Kind == shared.KindStatus:
		// Any version may ask: status lists every shared workbench.
		st, _ := json.Marshal(d.status())
		_ = shared.WriteLine(conn, shared.Reply{OK: true, Status: st})
		return
	case h.Kind == shared.KindStop:
		d.log.Info("stopping: asked by mcp-workbench stop-shared", "pid", h.PID)
		_ = shared.WriteLine(conn, shared.Reply{OK: true})
		d.shutdown()
		return
	}
	if err := h.Check(d.version, d.abs); err != nil {
		refuse(err.Error())
		return
	}
	s, err := d.open(h, conn)
	if err != nil {
		_ = shared.WriteLine(conn, shared.Reply{Error: err.Error(), Retry: errors.Is(err, errStopping)})
		return
	}
	defer d.close(s)
	if err := shared.WriteLine(conn, shared.Reply{OK: true}); err != nil {
		return
	}
	ss, err := s.wb.Connect(ctx, br, conn)
	if err != nil {
		s.log.Error("serving the session", "error", err)
		return
	}
	err = ss.Wait()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		s.log.Debug("session ended", "error", err)
	}
	s.wb.Close()
	_ = ss.Close()
}

// open makes the workbench of a session: the configuration as that
// session's environment expands it, its servers from the pool.
func (d *daemon) open(h shared.Hello, conn net.Conn) (*daemonSession, error) {
	cfg, err := loadForSession(d.abs, h)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	select {
	case <-d.stop:
		return nil, errStopping
	default:
	}
	d.nextID++
	s := &daemonSession{id: d.nextID, hello: h, since: time.Now(), conn: conn}
	s.log = d.log.With("session", s.id)
	s.wb = workbench.New(cfg, workbench.Options{Version: d.version, Logger: s.log, Stderr: d.logOut, Pool: d.pool, Logins: d.logins})
	d.sessions[s.id] = s
	d.idle.Stop()
	s.log.Info("session started", "pid", h.PID, "cwd", h.Cwd, "sessions", len(d.sessions))
	return s, nil
}

// close forgets a session that ended; the last one starts the grace.
func (d *daemon) close(s *daemonSession) {
	s.wb.Close()
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.sessions, s.id)
	s.log.Info("session ended", "sessions", len(d.sessions))
	if len(d.sessions) == 0 {
		d.idle.Reset(d.grace)
	}
}

// reload applies an edit of the configuration file to every session, each
// with its own environment.
func (d *daemon) reload() {
	d.mu.Lock()
	sessions := make([]*daemonSession, 0, len(d.sessions))
	for _, s := range d.sessions {
		sessions = append(sessions, s)
	}
	d.mu.Unlock()
	for _, s := range sessions {
		next, err := loadForSession(d.abs, s.hello)
		Reload(s.wb, next, err, s.log)
	}
}

// loadForSession loads the configuration as the session's environment
// expands it, adapted to the session (see [config.Config.ForSession]).
func loadForSession(path string, h shared.Hello) (*config.Config, error) {
	env := map[string]string{}
	for _, kv := range h.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	cfg, err := config.LoadWith(path, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return nil, err
	}
	if h.ShareAll {
		cfg.ShareAll()
	}
	cfg.ForSession(h.Env, h.Cwd)
	return cfg, nil
}

// Status is what mcp-workbench status shows of a shared workbench.
type Status struct {
	PID      int             `json:"pid"`
	Version  string          `json:"version"`
	Config   string          `json:"config"`
	Started  time.Time       `json:"started"`
	Sessions []SessionStatus `json:"sessions"`
	Servers  []ServerStatus  `json:"servers"`
}

// SessionStatus is one session of a shared workbench.
type SessionStatus struct {
	ID    int       `json:"id"`
	PID   int       `json:"pid"`
	Cwd   string    `json:"cwd"`
	Since time.Time `json:"since"`
}

// ServerStatus is one server a shared workbench runs.
type ServerStatus struct {
	Toolbox string `json:"toolbox"`
	Server  string `json:"server"`
	Status  string `json:"status"`
	Users   int    `json:"sessions"`
	Shared  bool   `json:"shared"`
	// IdleMs is how long the server has had no call, while running.
	IdleMs int64 `json:"idleMs,omitempty"`
	StartSchedule
}

func (d *daemon) status() Status {
	st := Status{PID: os.Getpid(), Version: d.version, Config: d.abs, Started: d.started}
	d.mu.Lock()
	for _, s := range d.sessions {
		st.Sessions = append(st.Sessions, SessionStatus{ID: s.id, PID: s.hello.PID, Cwd: s.hello.Cwd, Since: s.since})
	}
	d.mu.Unlock()
	sort.Slice(st.Sessions, func(i, j int) bool { return st.Sessions[i].ID < st.Sessions[j].ID })
	for _, e := range d.pool.Entries() {
		ps := ServerStatus{Toolbox: e.Toolbox, Server: e.Server, Status: string(e.State.Status), Users: e.Users, Shared: e.Shared}
		if e.IdleFor > 0 {
			ps.IdleMs = e.IdleFor.Milliseconds()
		}
		ps.StartSchedule = ScheduleOf(e.State, time.Now())
		st.Servers = append(st.Servers, ps)
	}
	return st
}
