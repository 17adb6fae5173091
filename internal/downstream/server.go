// Package downstream is the workbench's MCP client side: one [Server] per
// (toolbox, server) pair of the configuration, each with its own process
// (or HTTP session), started on first use, bounded by timeouts and retries,
// watched so that a death is noticed at once, and started again on the next
// use.
package downstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
	"github.com/mcpworkbench/mcp-workbench/internal/pins"
	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
	"github.com/mcpworkbench/mcp-workbench/internal/serverproc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProtocolVersion is the MCP version the workbench asks its servers for.
// Pinning it keeps the SDK from probing with server/discover first, which
// servers that do not know it ignore (hanging the connect) or die of.
const ProtocolVersion = "2025-11-25"

// Options are what every Server of a workbench shares.
type Options struct {
	Logger *slog.Logger
	// Stderr receives the servers' stderr, one prefixed line per write.
	Stderr io.Writer
	// Watchdog, if set, stops process groups left by a killed workbench.
	Watchdog   *proctree.Watchdog
	ClientInfo *mcp.Implementation
	// StopGrace is how long stopping a process waits at each step (after
	// closing stdin, after SIGTERM). Default 1s.
	StopGrace time.Duration
	// Backoff gives the wait before retry n (from 1). Default: 500ms
	// doubling, at most 8s.
	Backoff func(retry int) time.Duration
	// RetryAfter gives how long after its failures-th failed start in a
	// row a server is left alone by opens and searches (calls and
	// refreshes try at once). Default: 15s doubling, at most 5 minutes.
	RetryAfter func(failures int) time.Duration
	// InstallTimeout bounds the install of a package runner's start (npx,
	// uvx, …: see serverproc.PackageRunner), which connectionTimeoutMs
	// does not count. Default: [DefaultInstallTimeout].
	InstallTimeout time.Duration
	// ConfigPath is the configuration's file, named in login commands.
	ConfigPath string
	// OAuthStore, if set, keeps the logins of remote servers instead of
	// the user's default store: serving over HTTP, each user's own.
	OAuthStore *oauth.Store
	// Catalog, if set, keeps the tools each server lists (for servers whose
	// configuration allows it), so that a toolbox can be shown from it
	// while its servers start (see [Server.Cached]).
	Catalog *catalog.Catalog
	// Pins, if set, pins each server's tool definitions and withholds
	// changed ones (see pins.go); Names collects every server's tool names
	// for screening.
	Pins  *pins.Store
	Names *ToolNames
	// Host, if set, is the host session of every server made with these
	// options (see ask.go); the servers of a pool get it from their owner.
	Host Host
	// PinsChanged, if set, is called when a new live list of a running
	// server withholds, or serves changed, other tools than the list
	// before it (after notifications/tools/list_changed or a refresh).
	PinsChanged func(s *Server)
	// Changed, if set, is called when a server's [State] may have
	// changed (a start begins, installs, ends; a connection ends; a
	// close), sometimes under the server's lock: it must return at once
	// and not call back into the server (the web UI's state file pokes
	// a debounced writer with it).
	Changed func()

	// queueLimit bounds the bytes waiting to be written to one stdio
	// server; 0: defaultMaxQueued. Tests set it lower.
	queueLimit int
}

func (o *Options) maxQueued() int {
	if o.queueLimit > 0 {
		return o.queueLimit
	}
	return defaultMaxQueued
}

func (o *Options) stopGrace() time.Duration {
	if o.StopGrace > 0 {
		return o.StopGrace
	}
	return time.Second
}

func (o *Options) backoff(retry int) time.Duration {
	if o.Backoff != nil {
		return o.Backoff(retry)
	}
	const base, ceiling = 500 * time.Millisecond, 8 * time.Second
	if retry > 5 { // the shift would pass the ceiling, and overflow further on
		return ceiling
	}
	return min(base<<(retry-1), ceiling)
}

func (o *Options) retryAfter(failures int) time.Duration {
	if o.RetryAfter != nil {
		return o.RetryAfter(failures)
	}
	const base, ceiling = 15 * time.Second, 5 * time.Minute
	if failures > 5 {
		return ceiling
	}
	return min(base<<max(failures-1, 0), ceiling)
}

// DefaultInstallTimeout is how long a package runner may take to install
// its package before it starts the server: a cold npx of a server with a
// hundred dependencies takes a minute and more on a slow network or a
// busy machine.
const DefaultInstallTimeout = 5 * time.Minute

func (o *Options) installTimeout() time.Duration {
	if o.InstallTimeout > 0 {
		return o.InstallTimeout
	}
	return DefaultInstallTimeout
}

// Status is a server's state as open_toolbox reports it.
type Status string

// The statuses of a server.
const (
	StatusIdle      Status = "idle" // configured, not started yet
	StatusConnected Status = "connected"
	StatusError     Status = "error"
	StatusDisabled  Status = "disabled"
	// StatusStarting: a start is under way; StatusInstalling: it is a
	// package runner's, still installing the package.
	StatusStarting   Status = "starting"
	StatusInstalling Status = "installing"
)

// errTrySSE ends a streamable HTTP attempt that the server refused, when
// the SSE transport may work instead.
var errTrySSE = errors.New("the server refused streamable HTTP")

// Errors of a server that cannot take calls. A disabled server is refused
// here, for every caller: it never starts, and a call to it is a refusal.
var (
	errDisabled = &RefusedError{Reason: "the server is disabled in the workbench configuration"}
	errClosed   = errors.New("workbench is shutting down")
)

// closedError is why a server was closed, when it was not the workbench
// shutting down: a reload removed or changed it. It counts as errClosed
// (errors.Is), so that nothing is retried or remembered as the server's
// own failure.
type closedError struct{ msg string }

func (e *closedError) Error() string        { return e.msg }
func (e *closedError) Is(target error) bool { return target == errClosed }

// Reasons to close a server on a reload of the configuration.
var (
	ErrRemoved = &closedError{"the server was removed from the workbench configuration"}
	ErrChanged = &closedError{"the server's definition changed in the workbench configuration; call again to use the new one"}
)

// Server is one downstream server of one toolbox. Its methods are safe for
// concurrent use.
type Server struct {
	Toolbox string
	Name    string
	cfg     *config.Server
	o       *Options
	log     *slog.Logger
	prefix  string // "[toolbox/server]" for its stderr lines
	query   string // the query of the server's url, hidden in messages
	userURL string // the server's url when it has userinfo, masked in messages

	ctx    context.Context // ends when the server is closed
	cancel context.CancelFunc

	// oauth logs in to a remote server that asks for it; nil for stdio
	// servers and those with an Authorization header.
	oauth *oauth.Client

	// speaksSSE is set once a server configured by url alone turned out to
	// speak the SSE transport rather than streamable HTTP.
	speaksSSE atomic.Bool

	// catalogKey is the server's key in o.Catalog; "" when the server
	// does not use the catalog.
	catalogKey string
	// pinKey is the server's identity in o.Pins (see [PinKeyOf]).
	pinKey        string
	pinMu         sync.Mutex // guards corruptWarned
	corruptWarned string
	catMu         sync.Mutex // guards cat
	cat           cachedEntry

	mu       sync.Mutex
	live     *conn // the current connection, nil if none
	dialing  *dial // the connect under way, shared by everyone waiting
	lastErr  error // why the last connect failed or the last connection ended
	closed   bool
	closeErr error // why it was closed: errClosed, ErrRemoved, ErrChanged
	// background counts the goroutines that handle a server's
	// notifications (a changed tool list): Close waits for them, so that
	// nothing of the server logs after it. Added to under mu, never once
	// closed.
	background sync.WaitGroup
	// views are what each viewer's last open_toolbox showed of the server
	// (see [Server.Shown]): a server of a shared workbench is seen by
	// every session that uses it, each through its own opens.
	views map[any]*view
	// failures counts the failed starts in a row, the last at failedAt:
	// opens and searches leave the server alone until
	// o.retryAfter(failures) has passed (see [State.NextTry]).
	failures int
	failedAt time.Time
	// openers counts the Connect and Refresh callers waiting for the
	// start under way (see [State.Awaited]).
	openers int
	// listedTools is the server's last live list, kept from the moment it
	// is listed (before the connection counts as live) until the next one.
	listedTools *ToolSet
	// installing is set while the start under way is a package runner's
	// install (see dialOnce).
	installing atomic.Bool
	// host is the host session the server belongs to (ask.go); nil: none.
	host Host
}

// OAuthStore is where the server's login is kept: the Options' store,
// else the user's default one; nil for a server without OAuth.
func (s *Server) OAuthStore() *oauth.Store {
	if s.oauth == nil {
		return nil
	}
	return s.oauth.Store()
}

// NewServer returns a Server for cfg in toolbox. Nothing starts until the
// first [Server.Connect] or [Server.Call].
func NewServer(toolbox string, cfg *config.Server, o *Options) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	var query, userURL string
	if u, err := url.Parse(cfg.URL); err == nil && cfg.URL != "" {
		query = u.RawQuery
		if u.User != nil {
			userURL = cfg.URL
		}
	}
	var key string
	if o.Catalog != nil && cfg.Catalog {
		key = catalog.Key(cfg, ProtocolVersion)
	}
	var oc *oauth.Client
	if oauth.Applies(cfg) {
		oc = oauth.NewClient(o.ConfigPath, toolbox, cfg)
		if o.OAuthStore != nil {
			oc.WithStore(o.OAuthStore)
		}
	}
	return &Server{
		pinKey:     PinKeyOf(toolbox, cfg),
		oauth:      oc,
		catalogKey: key,
		query:      query,
		userURL:    userURL,
		Toolbox:    toolbox,
		Name:       cfg.Name,
		cfg:        cfg,
		o:          o,
		log:        o.Logger.With("toolbox", toolbox, "server", cfg.Name),
		prefix:     "[" + toolbox + "/" + cfg.Name + "]",
		ctx:        ctx,
		cancel:     cancel,
		host:       o.Host,
	}
}

// changed tells [Options.Changed] that the server's state may have changed.
func (s *Server) changed() {
	if f := s.o.Changed; f != nil {
		f()
	}
}

// Config returns the server's configuration.
func (s *Server) Config() *config.Server { return s.cfg }

// State is a snapshot of a server.
type State struct {
	Status Status
	Tools  *ToolSet // nil unless connected
	// Err is why the last start failed: set when Status is StatusError,
	// and while a start after a failed one is under way.
	Err error
	// Since is when the start under way began (starting, installing).
	Since time.Time
	// FailedAt is when the last start failed, after Failures failed
	// starts in a row; opens and searches leave the server alone until
	// NextTry. Both are zero for a failure that waits for nothing but the
	// user (a login).
	FailedAt, NextTry time.Time
	Failures          int
	// Awaited is set while a start is under way and a Connect or Refresh
	// waits for it (an open, a search, check): another open joins that
	// wait rather than answering without the server, while a start nobody
	// waits for any longer goes on in the background.
	Awaited bool
}

// State reports the server's current state.
func (s *Server) State() State {
	if s.cfg.Disabled {
		return State{Status: StatusDisabled}
	}
	s.mu.Lock()
	live, lastErr, d, awaited := s.live, s.lastErr, s.dialing, s.openers > 0
	st := State{Failures: s.failures}
	if s.failures > 0 {
		st.FailedAt = s.failedAt
		st.NextTry = s.failedAt.Add(s.o.retryAfter(s.failures))
	}
	s.mu.Unlock()
	switch {
	case live != nil:
		// Outside s.mu: recheck may read the pin store, under listMu.
		return State{Status: StatusConnected, Tools: live.recheck()}
	case d != nil:
		st.Status, st.Since, st.Err, st.Awaited = StatusStarting, d.started, lastErr, awaited
		if s.installing.Load() {
			st.Status = StatusInstalling
		}
	case lastErr != nil:
		st.Status, st.Err = StatusError, lastErr
	default:
		st.Status = StatusIdle
	}
	return st
}

// Connect makes sure the server is connected, starting it if needed, and
// returns its tools. Concurrent callers share one attempt; a failed attempt
// is forgotten, so the next call tries again. ctx bounds only the wait: the
// attempt itself goes on for the others.
func (s *Server) Connect(ctx context.Context) (*ToolSet, error) {
	defer s.awaiting()()
	c, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	return c.recheck(), nil
}

// Refresh lists the server's tools again. A server that was not running
// is started, which lists them.
func (s *Server) Refresh(ctx context.Context) (*ToolSet, error) {
	defer s.awaiting()()
	s.mu.Lock()
	running := s.live != nil
	s.mu.Unlock()
	c, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	if !running {
		return c.recheck(), nil // listed by the start this call waited for
	}
	lctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	if err := c.listTools(lctx); err != nil {
		return nil, err
	}
	return c.recheck(), nil
}

// awaiting counts a Connect or Refresh caller among those waiting for
// the server, until the returned func.
func (s *Server) awaiting() func() {
	s.mu.Lock()
	s.openers++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.openers--
		s.mu.Unlock()
	}
}

// dial is a connect attempt (with its retries) that callers wait on.
type dial struct {
	started time.Time
	done    chan struct{}
	conn    *conn
	err     error
}

func (s *Server) connect(ctx context.Context) (*conn, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, s.closeErr
	}
	if c := s.live; c != nil {
		s.mu.Unlock()
		return c, nil
	}
	d := s.startDialLocked()
	s.mu.Unlock()
	select {
	case <-d.done:
		return d.conn, d.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// startDialLocked returns the connect under way, starting one if there is
// none. s.mu is held. Every start goes through it, so it is where a
// disabled server is refused: its dial has ended with errDisabled.
func (s *Server) startDialLocked() *dial {
	if s.cfg.Disabled {
		d := &dial{done: make(chan struct{}), err: errDisabled}
		close(d.done)
		return d
	}
	d := s.dialing
	if d == nil {
		d = &dial{started: time.Now(), done: make(chan struct{})}
		s.dialing = d
		go s.runDial(d)
		s.changed()
	}
	return d
}

// Join starts the server if it is neither running nor starting, and
// returns a wait for that start: the running server's tools, or the
// outcome of the start under way when Join was called, shared with every
// other caller of it, even one that waits after it ended.
func (s *Server) Join() func(context.Context) (*ToolSet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		err := s.closeErr
		return func(context.Context) (*ToolSet, error) { return nil, err }
	}
	if c := s.live; c != nil {
		return func(context.Context) (*ToolSet, error) { return c.recheck(), nil }
	}
	d := s.startDialLocked()
	return func(ctx context.Context) (*ToolSet, error) {
		select {
		case <-d.done:
			if d.err != nil {
				return nil, d.err
			}
			return d.conn.recheck(), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// StartInBackground starts the server if it is neither running nor
// starting, and returns at once. A failed start is forgotten, as any
// other: the next call or open tries again.
func (s *Server) StartInBackground() {
	s.mu.Lock()
	if !s.closed && s.live == nil {
		s.startDialLocked()
	}
	s.mu.Unlock()
}

func (s *Server) runDial(d *dial) {
	c, err := s.dialWithRetries()
	s.mu.Lock()
	s.dialing = nil
	if s.closed && (err == nil || errors.Is(err, errClosed)) {
		err = s.closeErr
	}
	var retryIn time.Duration
	if err == nil {
		s.live, s.lastErr, s.failures = c, nil, 0
	} else if !errors.Is(err, errClosed) {
		s.lastErr = err
		var loginErr *oauth.Error
		if errors.As(err, &loginErr) && !loginErr.Transient {
			s.failures = 0 // the user's turn: nothing to wait for
		} else {
			s.failures++
			s.failedAt = time.Now()
			retryIn = s.o.retryAfter(s.failures)
		}
	}
	s.mu.Unlock()
	s.installing.Store(false)
	s.changed()
	if err != nil && !errors.Is(err, errClosed) {
		var ce *connectError
		attempts, why := 1, err
		if errors.As(err, &ce) {
			attempts, why = ce.Attempts, ce.Err
		}
		if retryIn > 0 { // when opens and searches try it again
			s.log.Warn("could not start", "attempts", attempts, "next_try_in", retryIn, "error", why)
		} else {
			s.log.Warn("could not start", "attempts", attempts, "error", why)
		}
	}
	if c != nil {
		if err != nil {
			c.end(err, true)
			c = nil
		} else {
			c.startIdle()
			go c.watch()
		}
	}
	d.conn, d.err = c, err
	close(d.done)
}

// connectError is a connect that failed after every attempt.
type connectError struct {
	Attempts int
	Err      error
}

func (e *connectError) Error() string {
	if e.Attempts == 1 {
		return fmt.Sprintf("could not start (1 attempt): %v", e.Err)
	}
	return fmt.Sprintf("could not start (%d attempts): %v", e.Attempts, e.Err)
}

func (e *connectError) Unwrap() error { return e.Err }

// brokenCacheError is a start that failed for a broken npx cache entry.
type brokenCacheError struct {
	entry string
	err   error
}

func (e *brokenCacheError) Error() string { return e.err.Error() }
func (e *brokenCacheError) Unwrap() error { return e.err }

func (s *Server) dialWithRetries() (*conn, error) {
	repaired := false
	for attempt := 1; ; attempt++ {
		c, err := s.dialOnce()
		if errors.Is(err, errTrySSE) {
			s.log.Info("the server refused streamable HTTP; trying the SSE transport at the same url")
			s.speaksSSE.Store(true)
			c, err = s.dialOnce()
		}
		var loginErr *oauth.Error
		if errors.As(err, &loginErr) {
			// The SDK's wrapping only hides what it says (the command to run).
			err = loginErr
			if !loginErr.Transient { // retrying cannot help
				return nil, &connectError{Attempts: attempt, Err: loginErr}
			}
		}
		err = s.redact(err)
		if err == nil {
			if attempt > 1 {
				s.log.Info("connected", "attempts", attempt, "tools", len(c.tools.Load().Tools))
			} else {
				s.log.Debug("connected", "tools", len(c.tools.Load().Tools), "took", c.connectTime)
			}
			return c, nil
		}
		if s.ctx.Err() != nil {
			return nil, errClosed
		}
		var broken *brokenCacheError
		if errors.As(err, &broken) && !repaired {
			// Once per start: a package whose own files are missing a
			// module fails again after a fresh install.
			repaired = true
			if rerr := serverproc.RemoveNPXEntry(broken.entry); rerr != nil {
				s.log.Warn("npx's cache entry of the server looks broken, but it could not be removed", "entry", broken.entry, "error", rerr)
			} else {
				s.log.Warn("npx's cache entry of the server was broken (a module missing from it, as an install stopped half-way leaves it): removed it; starting again, which installs the package afresh",
					"entry", broken.entry, "error", err)
				attempt--
				continue
			}
		}
		var se *serverproc.StartError
		var bound *boundError // the same list would pass it again
		if errors.As(err, &se) || errors.As(err, &bound) || attempt > s.cfg.MaxRetries {
			return nil, &connectError{Attempts: attempt, Err: err}
		}
		wait := s.o.backoff(attempt)
		s.log.Warn("start failed, retrying", "attempt", attempt, "retry_in", wait, "error", err)
		select {
		case <-time.After(wait):
		case <-s.ctx.Done():
			return nil, errClosed
		}
	}
}

// redact makes an error fit to show: the query of the server's url hidden
// (remote servers often take an API key there, and Go's HTTP errors quote
// the whole url), and the SDK's decoding errors in JSON terms, without
// Go's type names.
func (s *Server) redact(err error) error {
	if err == nil {
		return nil
	}
	msg := frame.ExplainError(err)
	if s.userURL != "" {
		msg = strings.ReplaceAll(msg, s.userURL, config.MaskURL(s.userURL))
	}
	if s.query != "" {
		msg = strings.ReplaceAll(msg, s.query, "…")
	}
	if msg == err.Error() {
		return err
	}
	return &redactedError{err: err, msg: msg}
}

type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Close stops the server and everything it started, and waits until that
// is done. Calls in flight end with an error. Close is idempotent.
func (s *Server) Close() { s.CloseFor(errClosed) }

// CloseFor is Close with the reason calls in flight and later calls are
// given: errClosed (the workbench is shutting down), ErrRemoved or
// ErrChanged (a reload). The first reason given stays.
func (s *Server) CloseFor(reason error) {
	s.mu.Lock()
	if !s.closed {
		s.closed, s.closeErr = true, reason
	}
	reason = s.closeErr
	c, d := s.live, s.dialing
	s.live = nil
	s.mu.Unlock()
	s.cancel()
	if d != nil {
		<-d.done // it notices s.closed and cleans up after itself
	}
	if c != nil {
		c.end(reason, true)
	}
	s.changed()
	s.background.Wait()
	s.o.Names.forget(s) // its tools are no other server's concern now
}

// conn is one live connection to a server: an MCP session and, for stdio,
// the process tree behind it.
type conn struct {
	s      *Server
	cs     *mcp.ClientSession
	proc   *serverproc.Process // stdio only
	stdio  *stdioConn          // stdio only: the relay's connection
	cap    *capture            // raw tools/list pages (and SSE call results); nil for streamable HTTP
	bound  *listBound          // streamable HTTP: the tool list's bytes, bounded as they come
	probe  *statusProbe        // http and sse
	client *mcp.Client
	// caps are the client capabilities the server was told (ask.go);
	// asking counts its requests waiting for the host.
	caps   *mcp.ClientCapabilities
	asking atomic.Int32
	trySSE bool // http inferred from a url alone: a refused POST means try SSE

	ctx    context.Context // ends with the connection: bounds its start and listings
	cancel context.CancelFunc

	callsMu sync.Mutex
	calls   map[string]*inflight // by progress token; nil once ended or stopping for idleness
	// idle stops the connection after idleTimeoutMs without calls; nil
	// when the server has no idle timeout. idleSince is when the last call
	// ended (or the connection started). Both are guarded by callsMu.
	idle      *time.Timer
	idleSince time.Time

	tools       atomic.Pointer[ToolSet]
	listMu      sync.Mutex // one tools/list walk at a time
	connectTime time.Duration

	ready   chan struct{} // closed once connected and first listed
	endOnce sync.Once
	done    chan struct{} // closed when the connection has ended
	endErr  error         // why; set before done closes
	stopped chan struct{} // closed when the process tree is gone too
}

// dialOnce makes one connect attempt, bounded by connectionTimeoutMs:
// start, initialize, list tools.
func (s *Server) dialOnce() (*conn, error) {
	start := time.Now()
	c := &conn{s: s, ready: make(chan struct{}), done: make(chan struct{}), stopped: make(chan struct{}), calls: map[string]*inflight{}}
	c.ctx, c.cancel = context.WithCancel(s.ctx)

	transport, err := s.transport(c)
	if err != nil {
		c.cancel()
		return nil, err
	}
	info := s.o.ClientInfo
	if info == nil {
		info = &mcp.Implementation{Name: "mcp-workbench", Version: "dev"}
	}
	opts := &mcp.ClientOptions{
		Logger: SDKLogger(s.log),
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.closed {
				s.background.Go(c.toolsChanged)
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.relayProgress(req.Params)
		},
	}
	// Roots, sampling and elicitation as the host declared them (ask.go).
	c.clientOptions(opts)
	client := mcp.NewClient(info, opts)
	client.AddReceivingMiddleware(c.rootsMiddleware)
	c.client = client

	// A start that times out has its process tree stopped as any other:
	// stdin closed, then SIGTERM, then SIGKILL after the grace period. A
	// first `npx -y` is still installing then, and SIGKILL at once would
	// leave npm's cache with stale locks and half-installed packages. The
	// stop also ends the SDK's Connect, which waits for the server's stdout
	// to end. A server closed while it starts (a workbench shutting down
	// during a background start) is stopped the same way. c.proc is set by
	// s.transport above, before either can fire.
	stopStart := func() {
		if c.proc != nil {
			c.proc.Stop(s.o.stopGrace())
		}
	}
	var timedOut atomic.Bool
	timer := time.AfterFunc(s.cfg.ConnectionTimeout, func() {
		timedOut.Store(true)
		c.cancel()
		stopStart()
	})
	// A package runner's install does not count (see installClock).
	var install *installClock
	if runner := s.PackageRunner(); runner != "" && c.proc != nil {
		install = s.startInstallClock(c, runner, timer)
	}
	stopOnClose := context.AfterFunc(s.ctx, stopStart)
	cs, err := client.Connect(c.ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err == nil {
		c.cs = cs
		err = c.listTools(c.ctx)
	}
	stopOnClose()
	stillInstalling := install.stop()
	s.installing.Store(false)
	if !timer.Stop() && err == nil {
		err = errors.New("timed out") // fired just as the connect finished
	}
	if err != nil {
		if c.trySSE && c.probe.refused.Load() && !timedOut.Load() {
			err = errTrySSE
		} else {
			err = c.explainStartFailure(err, timedOut.Load(), stillInstalling)
		}
		if c.proc != nil {
			if entry := c.proc.BrokenNPXEntry(); entry != "" {
				err = &brokenCacheError{entry: entry, err: err}
			}
		}
		c.end(err, true)
		return nil, err
	}
	c.connectTime = time.Since(start)
	close(c.ready)
	return c, nil
}

// lastWordsWait bounds the wait for the end of the stderr of a server that
// died during start-up, once its tree is stopped (see explainStartFailure).
const lastWordsWait = 5 * time.Second

// explainStartFailure says why a start-up failed, in the user's terms.
func (c *conn) explainStartFailure(err error, timedOut bool, installing string) error {
	if c.proc != nil {
		// A process that died explains itself best: wait a moment for it.
		select {
		case <-c.proc.Exited():
		case <-time.After(200 * time.Millisecond):
		}
		// Unless it ended well because the start had failed already: a
		// server whose answer to initialize was refused is told to stop.
		if c.proc.HasExited() && !timedOut && !(c.proc.ExitedCleanly() && !lostConnection(err)) {
			msg := c.proc.ExitDescription() + " during start-up"
			// Its last words may still be on their way through the pipe:
			// stop what is left of its tree, so that stderr ends, and read
			// them to the end.
			c.proc.Stop(c.s.o.stopGrace())
			if words := c.proc.FinalWords(lastWordsWait); words != "" {
				msg += ": " + words
			}
			return errors.New(msg)
		}
	}
	if timedOut && installing != "" {
		return fmt.Errorf("%s was still installing the server's package after %v, the time given to installs; it was stopped: check the network, or run the command once in a terminal to install it", installing, c.s.o.installTimeout())
	}
	if timedOut {
		return fmt.Errorf("no answer within %v (connectionTimeoutMs) while starting", c.s.cfg.ConnectionTimeout)
	}
	// The SDK says an HTTP failure as the status's bare text.
	if c.probe != nil {
		if code := int(c.probe.failed.Load()); code != 0 && strings.HasSuffix(err.Error(), http.StatusText(code)) {
			return fmt.Errorf("the server answered HTTP %d %s: check that url is the server's MCP endpoint, and what it needs (headers)", code, http.StatusText(code))
		}
	}
	return err
}

// lostConnection reports whether err is the end of the server's stream,
// not something it said.
func lostConnection(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, mcp.ErrConnectionClosed)
}

// listTools walks every page of tools/list and installs the result.
func (c *conn) listTools(ctx context.Context) error {
	c.listMu.Lock()
	defer c.listMu.Unlock()
	s := c.s
	if caps := c.cs.InitializeResult().Capabilities; caps == nil || caps.Tools == nil {
		c.tools.Store(&ToolSet{byName: map[string]*Tool{}, filtered: map[string]bool{}})
		return nil // a server without tools is odd, not broken
	}
	if c.cap != nil {
		c.cap.takePages()
	}
	if c.bound != nil {
		c.bound.reset()
	}
	const maxPages = 1000
	var typed []*mcp.Tool
	params := &mcp.ListToolsParams{}
	for page := 0; ; page++ {
		if page == maxPages {
			return fmt.Errorf("listing tools: more than %d pages (is the server repeating a cursor?)", maxPages)
		}
		res, err := c.cs.ListTools(ctx, params)
		if err != nil {
			switch { // the bound it passed, for dialWithRetries
			case c.cap != nil && c.cap.refusal() != nil:
				err = c.cap.refusal()
			case c.bound != nil && c.bound.refusal() != nil:
				err = c.bound.refusal()
			}
			return fmt.Errorf("listing tools: %w", err)
		}
		typed = append(typed, res.Tools...)
		if max := s.cfg.MaxTools; max > 0 && len(typed) > max { // what no capture bounded
			return fmt.Errorf("listing tools: %w", tooManyTools(max))
		}
		if res.NextCursor == "" || res.NextCursor == params.Cursor {
			break
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	var raw, pages []json.RawMessage
	if c.cap != nil {
		pages = c.cap.takePages()
		for _, p := range pages {
			var page struct {
				Tools []json.RawMessage `json:"tools"`
			}
			if err := json.Unmarshal(p, &page); err != nil {
				return fmt.Errorf("listing tools: %w", err)
			}
			raw = append(raw, page.Tools...)
		}
	}
	ts, kept, err := buildToolSet(raw, typed, s.cfg.ToolFilters, s.Toolbox, s.Name, s.log)
	if err != nil {
		return err
	}
	ts = s.guard(ts, true)
	c.tools.Store(ts)
	if c.cs.InitializeResult().ProtocolVersion < hintProtocol {
		// Caching hints are part of the protocol from 2026-07-28 only;
		// earlier, a ttlMs is not the server's word (go-sdk v1.8.0
		// servers send "ttlMs":0 on every list, whatever the version).
		pages = nil
	}
	s.listed(ts, kept, pages)
	return nil
}

// hintProtocol is the first protocol version whose list results carry
// caching hints (ttlMs, cacheScope) that the catalog honours.
const hintProtocol = "2026-07-28"

// toolsChanged handles notifications/tools/list_changed: list again.
// Servers may announce a change while the connection is still starting
// (some do during initialize): the listing then waits for the first one.
func (c *conn) toolsChanged() {
	select {
	case <-c.ready:
	case <-c.done:
		return
	}
	s := c.s
	before := c.tools.Load()
	ctx, cancel := context.WithTimeout(c.ctx, s.cfg.RequestTimeout)
	defer cancel()
	if err := c.listTools(ctx); err != nil {
		if c.ctx.Err() == nil {
			s.log.Warn("tool list changed, but listing it again failed; keeping the old list", "error", s.redact(err))
		}
		return
	}
	after := c.tools.Load()
	if verdict(before) != verdict(after) {
		s.log.Warn("tool definitions changed", "withheld", len(after.Withheld), "review", ReviewCommand("diff", s.o.ConfigPath, s.Toolbox, s.Name, ""))
		if s.o.PinsChanged != nil {
			s.o.PinsChanged(s)
		}
	}
	if !sameTools(before, after) {
		s.log.Info("tool list changed", "tools", len(after.Tools))
	} else {
		// Servers announce changes that change nothing, many at every start.
		s.log.Debug("tool list announced as changed, but the same tools are listed", "tools", len(after.Tools))
	}
}

// watch waits for the connection to end on its own — the process exited or
// the session broke — and records why, at once rather than at the next call.
func (c *conn) watch() {
	sessionDone := make(chan struct{})
	go func() {
		_ = c.cs.Wait()
		close(sessionDone)
	}()
	var exited <-chan struct{}
	if c.proc != nil {
		exited = c.proc.Exited()
	}
	select {
	case <-sessionDone:
	case <-exited:
	case <-c.done:
		return // ended deliberately
	}
	var reason error
	switch {
	case c.proc != nil && c.proc.HasExited():
		reason = errors.New("server process " + c.proc.ExitDescription())
	case c.proc != nil:
		// The session ended first; the process usually follows at once.
		select {
		case <-c.proc.Exited():
			reason = errors.New("server process " + c.proc.ExitDescription())
		case <-time.After(200 * time.Millisecond):
			reason = errors.New("server closed its connection")
		}
	default:
		reason = errors.New("connection to the server was lost")
	}
	if c.end(reason, false) {
		c.s.log.Warn("server stopped; it will be started again on next use", "reason", reason)
	}
}

// end closes the connection for reason, once: calls in flight are
// cancelled, the session closed, the process tree stopped. deliberate marks
// a close the workbench chose, which is not remembered as the server's
// error. It reports whether this call did the ending.
func (c *conn) end(reason error, deliberate bool) bool {
	did := false
	c.endOnce.Do(func() {
		did = true
		s := c.s
		s.mu.Lock()
		if s.live == c {
			s.live = nil
			if !deliberate {
				s.lastErr = reason
			}
		}
		s.mu.Unlock()
		s.changed()
		c.endErr = reason
		c.cancel()
		// Calls first: closing the session waits for calls in flight.
		c.callsMu.Lock()
		calls := c.calls
		c.calls = nil
		if c.idle != nil {
			c.idle.Stop()
		}
		c.callsMu.Unlock()
		for key, call := range calls {
			if call.done == nil {
				call.cancel(reason)
				continue
			}
			call.timer.Stop()
			c.sendCancel(key, "the server's connection is closing")
			call.finish(nil, &lostError{reason: reason})
		}
		close(c.done)
		grace := s.o.stopGrace()
		if c.stdio != nil {
			// What is queued for the server (cancellations) goes out
			// before its stdin closes.
			c.stdio.out.close()
			select {
			case <-c.stdio.out.done:
			case <-time.After(grace):
			}
		}
		// A process is stopped before its session closes: closing stdin
		// asks it to exit, and the session keeps reading its stdout
		// meanwhile, so that what it writes on the way out does not meet
		// a closed pipe (node servers die of EPIPE noisily).
		if c.proc != nil {
			c.proc.Stop(grace)
		}
		if c.cs != nil {
			_ = c.cs.Close()
		}
		close(c.stopped)
	})
	if !did {
		<-c.stopped
	}
	return did
}
