package front

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Serving over Streamable HTTP (serve --http). One endpoint, /mcp, two
// kinds of host behind it: a request of the 2026-07-28 protocol names its
// version and capabilities itself and is served without a session by the
// SDK's stateless handler (any replica answers it); a 2025 host gets a
// session (Mcp-Session-Id) of the SDK's stateful handler, with a
// workbench of its own, as a stdio host does. Every caller is a user (the
// authenticated subject; "" without authentication): each user has a
// pool of servers of their own, their own logins to remote servers, and
// sees the toolboxes whose "access" allows them. Around the MCP handler,
// one concern per middleware: Host and Origin checks, authentication,
// per-credential limits, metrics.

// Auth is what serving over HTTP needs of authentication
// (internal/httpauth): a middleware that refuses requests without valid
// credentials and puts the verified token in the request's context
// (auth.TokenInfoFromContext), and the protected-resource metadata.
type Auth interface {
	Middleware(next http.Handler) http.Handler
	// MetadataHandler serves RFC 9728 protected-resource metadata; nil
	// when no authorization server is configured.
	MetadataHandler() http.Handler
	// Caller is the user of a request Middleware let through.
	Caller(ctx context.Context) Caller
}

// Caller is who a request comes from.
type Caller struct {
	// Key tells users apart: everything a user has (servers, logins,
	// catalog, sessions) is kept under it. Two kinds of credential are
	// two namespaces: a static token named alice and a JWT whose subject
	// is alice are two users.
	Key string
	// Subject and Groups are what toolboxes' "access" names.
	Subject string
	Groups  []string
	// Valid, if set, reports whether the credential is still good (a
	// static token not revoked): a session whose credential is not ends,
	// its event stream with it.
	Valid func() bool
}

// HTTPOptions are what ServeHTTP runs with.
type HTTPOptions struct {
	Options
	// Addr is where to listen (serve --http); "" takes the configuration's
	// "http.listen".
	Addr string
	// Auth, if set, authenticates every MCP request; nil serves without
	// authentication, which ServeHTTP allows on loopback only.
	Auth Auth
	// Limits, if set, wraps the MCP handler inside Auth: per-credential
	// rates and concurrency.
	Limits func(http.Handler) http.Handler
	// Listening, if set, is told the address bound, once serving.
	Listening func(addr string)
	// StateKey signs request states (workbench.Options.StateKey); nil: the
	// process's own.
	StateKey []byte
}

// ErrNeedsAuth is returned for a non-loopback address without
// authentication.
var ErrNeedsAuth = errors.New("serving over HTTP on an address other than loopback needs authentication")

// ServeHTTP serves the configuration over Streamable HTTP until ctx ends,
// then shuts down gracefully: no new request is taken (readiness fails),
// requests in flight get up to the "shutdownMs" bound, then the servers
// stop.
func ServeHTTP(ctx context.Context, cfg *config.Config, o HTTPOptions) error {
	addr := cmpOr(o.Addr, cmpOr(cfg.HTTP.Listen, config.DefaultHTTPListen))
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("the address to serve on, %q, is not host:port (for example 127.0.0.1:8080)", addr)
	}
	if o.Auth == nil && !loopbackHost(host) {
		return fmt.Errorf("%w: %s is not a loopback address. Configure \"http.auth\" (static tokens: mcp-workbench token add NAME; or an OAuth authorization server), or listen on 127.0.0.1", ErrNeedsAuth, addr)
	}
	var certs []tls.Certificate
	if cfg.HTTP.CertFile != "" {
		c, err := tls.LoadX509KeyPair(cfg.HTTP.CertFile, cfg.HTTP.KeyFile)
		if err != nil {
			return fmt.Errorf("http.tls: the certificate %s and key %s: %w", cfg.HTTP.CertFile, cfg.HTTP.KeyFile, err)
		}
		certs = []tls.Certificate{c}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	if o.Auth == nil && !isLoopback(ln.Addr()) { // a name that resolved elsewhere
		ln.Close()
		return fmt.Errorf("%w: %s (%s) is not a loopback address", ErrNeedsAuth, addr, ln.Addr())
	}
	f := newHTTPFront(cfg, o, ln.Addr())
	defer f.close()
	limited := newConnLimit(ln, f.limits.MaxConnections)
	f.metrics.connections(limited)
	ln = limited
	scheme := "http"
	if certs != nil {
		scheme = "https"
		ln = tls.NewListener(ln, &tls.Config{Certificates: certs, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}})
	}
	srv := &http.Server{
		Handler:           deadlines(f.limits.ReadTimeout, f.limits.WriteTimeout, f.handler()),
		ReadHeaderTimeout: f.limits.ReadTimeout,
		IdleTimeout:       f.limits.IdleConnection,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	sweepCtx, stopSweep := context.WithCancel(ctx)
	defer stopSweep()
	go f.sweepUsers(sweepCtx, min(f.limits.SessionIdle/2, time.Minute), f.limits.SessionIdle)
	go f.watchSessions(sweepCtx, min(f.limits.SessionOrphan/4, time.Second), f.limits.SessionOrphan)
	o.Logger.Info("serving over HTTP", "addr", ln.Addr().String(), "url", scheme+"://"+ln.Addr().String()+"/mcp", "public", f.publicURL, "auth", o.Auth != nil)
	if o.Listening != nil {
		o.Listening(ln.Addr().String())
	}
	watcher, werr := config.Watch(ctx, cfg.Path, config.WatchOptions{Loaded: cfg}, func(next *config.Config, err error) {
		if err != nil {
			Reload(nil, nil, err, o.Logger)
			return
		}
		WarnConfig(o.Logger, next.Warnings)
		if !reflect.DeepEqual(next.HTTP, cfg.HTTP) {
			o.Logger.Warn("the configuration's \"http\" block changed: it takes effect when the workbench restarts; the toolboxes' edits apply now")
		}
		f.reload(next)
	})
	if werr != nil {
		o.Logger.Warn("not watching the configuration file: edits take effect when the workbench restarts", "error", werr)
	} else {
		defer watcher.Close()
	}
	select {
	case err := <-served:
		return fmt.Errorf("serving over HTTP: %w", err)
	case <-ctx.Done():
	}
	o.Logger.Info("shutting down: finishing the requests in flight", "reason", context.Cause(ctx), "bound", f.limits.Shutdown)
	f.draining.Store(true)
	f.waitIdle(f.limits.Shutdown)
	// Sessions closed end their event streams, which Shutdown would wait
	// for; the servers stop with them.
	f.close()
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// loopbackHost reports whether host names the loopback interface only:
// an empty host or a wildcard is every interface.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isLoopback(a net.Addr) bool {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	return false
}

// httpFront is the state of HTTP serving.
type httpFront struct {
	o         HTTPOptions
	log       *slog.Logger
	cfg       atomic.Pointer[config.Config]
	publicURL string
	hosts     []string // Host header values answered; empty: any
	loopback  bool     // bound to a loopback address
	origins   []string
	limits    config.HTTPLimits

	stateless, stateful *mcp.StreamableHTTPHandler
	versions            *mcp.Server // answers the SDK's question of versions, never connected
	metrics             *httpMetrics
	watchdog            *proctree.Watchdog

	draining atomic.Bool
	inflight sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	users    map[string]*httpUser
	sessions int              // 2025 sessions open
	slots    map[string]*slot // 2025 sessions, by id
}

// httpUser is what one user has: servers, logins, workbenches.
type httpUser struct {
	key, subject string
	groups       []string // of the requests without a session
	pool         *downstream.Pool
	logins       *workbench.Logins
	// wbs are the user's workbenches, each with the groups it sees: one
	// per session, and one for the requests that come without one (open:
	// its host).
	wbs      map[*workbench.Workbench][]string
	sessions int // open
	open     *workbench.HTTPHost
	wb       *workbench.Workbench // open's
	// active counts the user's requests in progress; seen is when the
	// latest began. A user with neither sessions nor requests for
	// sessionIdle is let go (sweepUsers).
	active int
	seen   time.Time
}

func newHTTPFront(cfg *config.Config, o HTTPOptions, bound net.Addr) *httpFront {
	f := &httpFront{o: o, log: o.Logger, users: map[string]*httpUser{}, slots: map[string]*slot{}, limits: cfg.HTTP.Limits.OrDefaults(), origins: cfg.HTTP.AllowedOrigins}
	f.cfg.Store(cfg)
	f.publicURL = cfg.HTTP.PublicURL
	if f.publicURL == "" {
		scheme := "http"
		if cfg.HTTP.CertFile != "" {
			scheme = "https"
		}
		f.publicURL = scheme + "://" + bound.String() + "/mcp"
	}
	f.hosts = allowedHosts(cfg, bound, f.publicURL)
	f.loopback = isLoopback(bound)
	f.watchdog = proctree.NewWatchdog(o.Logger)
	f.versions = mcp.NewServer(&mcp.Implementation{Name: workbench.Name, Version: o.Version}, nil)
	f.metrics = newHTTPMetrics(f)
	common := mcp.StreamableHTTPOptions{
		Logger:              downstream.SDKLogger(o.Logger),
		MaxRequestBodyBytes: f.limits.MaxBodyBytes,
		// The Host checks are this front's own (allowedHosts), for every
		// address.
		DisableLocalhostProtection: true,
	}
	sl := common
	sl.Stateless = true
	sl.PropagateRequestCancellation = true
	f.stateless = mcp.NewStreamableHTTPHandler(f.statelessServer, &sl)
	sf := common
	sf.SessionTimeout = f.limits.SessionIdle
	f.stateful = mcp.NewStreamableHTTPHandler(f.sessionServer, &sf)
	return f
}

// allowedHosts are the Host header values the workbench answers to: the
// configured ones, else the listen address's and the public URL's hosts
// (with loopback's names for a loopback address); none (any) for a
// wildcard address without a public URL.
func allowedHosts(cfg *config.Config, bound net.Addr, public string) []string {
	if len(cfg.HTTP.AllowedHosts) > 0 {
		return cfg.HTTP.AllowedHosts
	}
	ta, _ := bound.(*net.TCPAddr)
	if ta == nil {
		return nil
	}
	var hosts []string
	if cfg.HTTP.PublicURL != "" {
		if u, err := url.Parse(cfg.HTTP.PublicURL); err == nil {
			hosts = append(hosts, u.Hostname())
		}
	}
	switch {
	case ta.IP.IsLoopback():
		hosts = append(hosts, "localhost", "127.0.0.1", "::1")
	case ta.IP.IsUnspecified():
		if len(hosts) == 0 {
			return nil
		}
	default:
		hosts = append(hosts, ta.IP.String())
	}
	return hosts
}

// handler is every path the workbench serves.
func (f *httpFront) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if f.draining.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	})
	// The probes answer whatever Host they name (a kubelet names the
	// pod's address, haproxy's checks none): they tell nothing. The
	// metrics name toolboxes and servers: on loopback, where a page
	// rebound to it could read them, they are Host-checked too.
	metrics := f.metrics.handler()
	if f.loopback {
		metrics = f.checkHost(metrics)
	}
	mux.Handle("GET /metrics", metrics)
	if f.o.Auth != nil {
		if md := f.o.Auth.MetadataHandler(); md != nil {
			mux.Handle("/.well-known/oauth-protected-resource", md)
			mux.Handle("/.well-known/oauth-protected-resource/", md)
		}
	}
	var mcpH http.Handler = http.HandlerFunc(f.serveMCP)
	if f.o.Limits != nil {
		mcpH = f.o.Limits(mcpH)
	}
	if f.o.Auth != nil {
		mcpH = f.o.Auth.Middleware(mcpH)
	}
	mcpH = f.checkHost(f.checkOrigin(mcpH))
	mux.Handle("/mcp", mcpH)
	return f.metrics.count(mux)
}

// jsonError answers with a JSON-RPC error body (no id: the request was not
// read) and status.
func jsonError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": msg}})
	_, _ = w.Write(append(b, '\n'))
}

// checkHost refuses a Host header the workbench does not answer to: a
// browser led to it by DNS rebinding names another host.
func (f *httpFront) checkHost(next http.Handler) http.Handler {
	if len(f.hosts) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		if !slices.Contains(f.hosts, host) && !slices.Contains(f.hosts, r.Host) {
			jsonError(w, http.StatusMisdirectedRequest, fmt.Sprintf("this workbench does not answer to host %q (see \"http.allowedHosts\")", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses a browser's request from an origin not allowed: the
// configured ones, or the workbench's own.
func (f *httpFront) checkOrigin(next http.Handler) http.Handler {
	own := ""
	if u, err := url.Parse(f.publicURL); err == nil {
		own = u.Scheme + "://" + u.Host
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && o != own && !slices.Contains(f.origins, o) {
			jsonError(w, http.StatusForbidden, fmt.Sprintf("requests from origin %q are not allowed (see \"http.allowedOrigins\")", o))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// newProtocol is the first protocol version whose requests carry their
// own version and capabilities, and are served without a session.
const newProtocol = "2026-07-28"

// serveMCP sends a request to the stateless or the stateful handler.
func (f *httpFront) serveMCP(w http.ResponseWriter, r *http.Request) {
	if f.draining.Load() {
		w.Header().Set("Retry-After", "5")
		jsonError(w, http.StatusServiceUnavailable, "the workbench is shutting down; retry, another replica may answer")
		return
	}
	if r.Method == http.MethodPost {
		// Calls; a session's event stream (GET) lasts as long as the
		// session, and shutting down ends it.
		f.inflight.Add(1)
		defer f.inflight.Done()
	}
	if f.limits.RequestTimeout > 0 && r.Method == http.MethodPost {
		// A use_tool call is bounded by its host (CallTimeout), which
		// answers it with a tool error; the request itself, a moment
		// later, whatever it is.
		ctx, cancel := context.WithTimeout(r.Context(), f.limits.RequestTimeout+requestGrace)
		defer cancel()
		r = r.WithContext(ctx)
	}
	c := f.caller(r)
	sessionless := f.sessionless(r)
	if sid := r.Header.Get("Mcp-Session-Id"); !sessionless && (r.Method != http.MethodPost || sid != "") {
		// A session's request: its user is known. The session is the
		// SDK's to find (404) and to keep from other users (403).
		if s := f.enterSession(sid, c, r.Method == http.MethodGet); s != nil {
			defer f.leaveSession(s, r.Method == http.MethodGet)
		}
		f.stateful.ServeHTTP(w, r)
		return
	}
	u := f.user(c)
	if u == nil {
		jsonError(w, http.StatusServiceUnavailable, "the workbench is shutting down")
		return
	}
	defer f.release(u)
	r = r.WithContext(context.WithValue(r.Context(), userKey{}, u))
	if sessionless {
		f.stateless.ServeHTTP(w, keepInputResponses(r, f.limits.MaxBodyBytes))
		return
	}
	f.newSession(w, r, u, c)
}

// requestGrace is how much longer than requestTimeoutMs a request may
// take: time for the timed-out call's answer to be written.
const requestGrace = 5 * time.Second

// userKey keys the caller's *httpUser in a request's context.
type userKey struct{}

// sessionless reports whether r is a request of the 2026-07-28 protocol:
// its MCP-Protocol-Version header says so, or, without a session, its
// _meta names the version.
func (f *httpFront) sessionless(r *http.Request) bool {
	if v := r.Header.Get("MCP-Protocol-Version"); v != "" {
		return v >= newProtocol
	}
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || r.Body == nil {
		return false
	}
	body, err := bufferBody(r, f.limits.MaxBodyBytes)
	if err != nil {
		return false
	}
	var m struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	var v string
	_ = json.Unmarshal(m.Params.Meta[mcp.MetaKeyProtocolVersion], &v)
	return v >= newProtocol
}

// keepInputResponses gives the workbench the inputResponses of a
// 2026-07-28 use_tool retry as the host wrote them
// (workbench.WithInputResponses): the SDK's types drop what is empty or
// missing, and an answer must be judged as it was written.
func keepInputResponses(r *http.Request, limit int64) *http.Request {
	if r.Method != http.MethodPost || r.Body == nil {
		return r
	}
	body, err := bufferBody(r, limit)
	if err != nil || int64(len(body)) > limit || !bytes.Contains(body, []byte(`"inputResponses"`)) {
		return r
	}
	var m frame.Message
	if frame.Parse(body, &m) != nil || m.Method != "tools/call" {
		return r
	}
	var p struct {
		InputResponses json.RawMessage `json:"inputResponses"`
	}
	if frame.Unmarshal(m.Params, &p) != nil || len(p.InputResponses) == 0 {
		return r
	}
	return r.WithContext(workbench.WithInputResponses(r.Context(), bytes.Clone(p.InputResponses)))
}

// bufferBody returns the first limit+1 bytes of r's body, read once: the
// body is put back as a reader of those bytes (followed by the rest, when
// there is more, for the SDK to refuse at its own bound), and a later
// call returns the same bytes without reading or copying them again.
func bufferBody(r *http.Request, limit int64) ([]byte, error) {
	if b, ok := r.Body.(*bufferedBody); ok && b.limit == limit {
		return b.data, b.err
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	b := &bufferedBody{data: data, err: err, limit: limit, src: r.Body}
	b.r.Reset(data)
	if err == nil && int64(len(data)) <= limit {
		b.rest = http.NoBody // the body ended: nothing more to read from it
	} else {
		b.rest = r.Body
	}
	r.Body = b
	return data, err
}

// bufferedBody is a request body bufferBody read: its first bytes, then
// what is left of it.
type bufferedBody struct {
	data  []byte
	err   error
	limit int64
	r     bytes.Reader
	rest  io.Reader
	src   io.ReadCloser
}

func (b *bufferedBody) Read(p []byte) (int, error) {
	if b.r.Len() > 0 {
		return b.r.Read(p)
	}
	return b.rest.Read(p)
}

func (b *bufferedBody) Close() error { return b.src.Close() }

// caller is the user a request comes from: the zero Caller without
// authentication (one user, the local one).
func (f *httpFront) caller(r *http.Request) Caller {
	if f.o.Auth == nil {
		return Caller{}
	}
	return f.o.Auth.Caller(r.Context())
}

// user returns the caller's state, made on first use, with a request of
// theirs in progress (release ends it); nil once closed.
func (f *httpFront) user(c Caller) *httpUser {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	u := f.users[c.Key]
	if u == nil {
		do := &downstream.Options{
			Logger:     f.log,
			Stderr:     f.o.LogOut,
			Watchdog:   f.watchdog,
			ClientInfo: &mcp.Implementation{Name: workbench.Name, Version: f.o.Version},
			Catalog:    userCatalog(c.Key, f.log),
			Pins:       OpenPins(f.log),
			ConfigPath: f.cfg.Load().Path,
			Names:      &downstream.ToolNames{},
			OAuthStore: userOAuthStore(c.Key, f.log),
		}
		u = &httpUser{key: c.Key, subject: c.Subject, groups: slices.Clone(c.Groups), pool: downstream.NewPool(do), logins: &workbench.Logins{}, wbs: map[*workbench.Workbench][]string{}}
		f.users[c.Key] = u
	}
	u.active++
	u.seen = time.Now()
	// The latest request's groups rule the requests without a session:
	// a token renewed with other groups sees other toolboxes from then
	// on (reloaded outside the lock: a reload waits for the servers it
	// stops). A session's workbench follows its own requests' tokens
	// (enterSession).
	if !slices.Equal(u.groups, c.Groups) {
		u.groups = slices.Clone(c.Groups)
		if wb := u.wb; wb != nil {
			u.wbs[wb] = u.groups
			cfg := f.cfg.Load().ForUser(u.subject, u.groups)
			f.mu.Unlock()
			wb.Reload(cfg)
			f.mu.Lock()
		}
	}
	return u
}

// workbenchesLocked returns u's workbenches; f.mu is held.
func (u *httpUser) workbenchesLocked() []*workbench.Workbench {
	wbs := make([]*workbench.Workbench, 0, len(u.wbs))
	for wb := range u.wbs {
		wbs = append(wbs, wb)
	}
	return wbs
}

// userCatalog is the tool catalog of a user: what servers listed for one
// user (a remote server may list other tools for another) is never shown
// to another. Without authentication, the user's own catalog.
func userCatalog(key string, log *slog.Logger) *catalog.Catalog {
	if key == "" {
		return OpenCatalog(log)
	}
	return openUserStore(log, func() (string, error) {
		d, err := catalog.DefaultDir()
		return filepath.Join(d, "users", userDir(key)), err
	}, catalog.Open, "no tool catalog: open_toolbox will wait for servers to start")
}

// userDir names a user's folder in a store: a hash of the user's key,
// which may hold any character.
func userDir(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:12])
}

// release ends a request of u's.
func (f *httpFront) release(u *httpUser) {
	f.mu.Lock()
	u.active--
	f.mu.Unlock()
}

// sweepUsers lets go, every period until ctx ends, of the users with no
// session, no request and no call waiting for their answers for idle:
// their servers stop, and their next request starts anew.
func (f *httpFront) sweepUsers(ctx context.Context, period, idle time.Duration) {
	every(ctx, period, func() {
		var gone []*httpUser
		f.mu.Lock()
		for key, u := range f.users {
			// A held call (2026-07-28) waits up to its documented 10
			// minutes for the user's answer, idle or not.
			if u.active == 0 && u.sessions == 0 && time.Since(u.seen) > idle && (u.open == nil || u.open.Waiting() == 0) {
				delete(f.users, key)
				gone = append(gone, u)
			}
		}
		f.mu.Unlock()
		for _, u := range gone {
			f.log.Debug("user idle: their servers stop", "idle", idle)
			if u.wb != nil {
				u.wb.Close()
			}
			u.pool.Close()
		}
	})
}

// every calls fn each period until ctx ends.
func every(ctx context.Context, period time.Duration, fn func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

// userOAuthStore is where a user's logins to remote servers are kept: the
// user's own folder of the default store; the default store itself when
// serving without authentication (the one user is the local one).
func userOAuthStore(key string, log *slog.Logger) *oauth.Store {
	st, err := oauth.DefaultStore()
	if err != nil {
		log.Warn("no store for logins to remote servers", "error", err)
		return nil
	}
	if key == "" {
		return st
	}
	return &oauth.Store{Dir: filepath.Join(st.Dir, "users", userDir(key))}
}

// newWorkbench makes a workbench of u's for a caller with groups, over u's
// pool; the caller holds f.mu.
func (f *httpFront) newWorkbenchLocked(u *httpUser, groups []string) *workbench.Workbench {
	wb := workbench.New(f.cfg.Load().ForUser(u.subject, groups), workbench.Options{
		Version: f.o.Version, Logger: f.log, Stderr: f.o.LogOut,
		Pool: u.pool, Logins: u.logins, StateKey: f.o.StateKey,
	})
	u.wbs[wb] = slices.Clone(groups)
	return wb
}

// statelessServer is the SDK's server for a request without a session:
// the caller's, one for all of the user's such requests.
func (f *httpFront) statelessServer(r *http.Request) *mcp.Server {
	u, _ := r.Context().Value(userKey{}).(*httpUser)
	if u == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if u.open == nil {
		u.wb = f.newWorkbenchLocked(u, u.groups)
		u.open = u.wb.NewHTTPHost(cmpOr(u.key, "local"))
		u.open.OnCall = f.metrics.call
		u.open.CallTimeout = f.limits.RequestTimeout
	}
	return u.open.Server()
}

// slotKey keys a new session's slot in its first request's context.
type slotKey struct{}

// slot is a session of a 2025 host: the workbench its first request
// made (the SDK asks for the server more than once per request), and
// what the session's requests tell of it.
type slot struct {
	u    *httpUser
	wb   *workbench.Workbench
	host *workbench.HTTPHost
	// The rest is guarded by the front's mu.
	sid     string             // the session's id, once the SDK gave it one
	ss      *mcp.ServerSession // nil until the SDK made it
	groups  []string           // the groups wb sees
	valid   func() bool        // the latest request's credential still good
	active  int                // requests in progress, event streams included
	streams int                // event streams (GET) open
	// hadStream: the host held an event stream, so that one gone with no
	// request since means the host went (sessionOrphan).
	hadStream bool
	seen      time.Time // the latest request's start or end
	ended     bool
}

// sessionServer is the SDK's server for a request of the stateful
// handler: a new session's own (made once per request), or, for a
// request of a session the handler knows, one that only names versions.
func (f *httpFront) sessionServer(r *http.Request) *mcp.Server {
	s, _ := r.Context().Value(slotKey{}).(*slot)
	if s == nil {
		return f.versions
	}
	if s.host == nil {
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return nil
		}
		s.wb = f.newWorkbenchLocked(s.u, s.groups)
		f.mu.Unlock()
		s.host = s.wb.NewHTTPHost("")
		s.host.OnCall = f.metrics.call
		s.host.CallTimeout = f.limits.RequestTimeout
	}
	return s.host.Server()
}

// newSession serves a request that starts a session: its workbench lives
// as long as the session the SDK made, if it made one. Two rules make
// room (roomLocked): a user at their "maxSessionsPerUser" gives up their
// least recently used session that has no request or stream in progress
// (a host that went without DELETE); at "maxSessions", the user who
// holds the most sessions gives one up to a user who holds fewer. With
// no room, the new one is refused.
func (f *httpFront) newSession(w http.ResponseWriter, r *http.Request, u *httpUser, c Caller) {
	f.mu.Lock()
	victim, refusal := f.roomLocked(u)
	// active: its initialize is a request in progress (see sessionStart).
	s := &slot{u: u, groups: slices.Clone(c.Groups), valid: c.Valid, seen: time.Now(), active: 1}
	if refusal == "" {
		if victim != nil {
			// Counted out now, under the lock, so that two new sessions
			// never make room with the same one.
			f.endLocked(victim)
		}
		f.sessions++
		u.sessions++
	}
	f.mu.Unlock()
	if refusal != "" {
		w.Header().Set("Retry-After", "30")
		jsonError(w, http.StatusServiceUnavailable, refusal)
		return
	}
	if victim != nil {
		if victim.u == u {
			f.log.Debug("a user's session ends to make room for their new one", "idle", time.Since(victim.seen).Round(time.Second))
		} else {
			f.log.Info("the workbench is at its \"http.limits.maxSessions\": the session of the user holding the most ends to make room for another user's", "idle", time.Since(victim.seen).Round(time.Second))
		}
		f.closeSession(victim)
	}
	f.stateful.ServeHTTP(&sessionStart{ResponseWriter: w, f: f, s: s}, r.WithContext(context.WithValue(r.Context(), slotKey{}, s)))
	var ss *mcp.ServerSession
	if s.host != nil {
		for x := range s.host.Server().Sessions() {
			ss = x
		}
	}
	f.mu.Lock()
	s.active--
	counted := s.sid != ""
	if ss == nil || ss.ID() != s.sid {
		f.mu.Unlock()
		if counted {
			f.metrics.sessions.Dec()
		}
		f.endSession(s)
		if ss != nil {
			_ = ss.Close()
		}
		return
	}
	s.ss = ss
	s.seen = time.Now()
	ended := s.ended
	f.mu.Unlock()
	if ended { // made room for another while its initialize was answered
		_ = ss.Close()
	}
	go func() {
		_ = ss.Wait()
		f.metrics.sessions.Dec()
		f.endSession(s)
	}()
}

// sessionStart is the response writer of a request that starts a
// session: the session is known to the front (its requests counted, its
// event stream watched) from the moment its id is in the response's
// header, before the host can read it and send the session's next
// request, which would otherwise race the end of the initialize.
type sessionStart struct {
	http.ResponseWriter
	f    *httpFront
	s    *slot
	done bool
}

func (w *sessionStart) register() {
	if w.done {
		return
	}
	w.done = true
	sid := w.Header().Get("Mcp-Session-Id")
	if sid == "" {
		return
	}
	w.f.mu.Lock()
	if w.s.ended || w.f.slots[sid] != nil {
		w.f.mu.Unlock()
		return
	}
	w.s.sid = sid
	w.s.seen = time.Now()
	w.f.slots[sid] = w.s
	w.f.mu.Unlock()
	w.f.metrics.sessions.Inc()
}

func (w *sessionStart) WriteHeader(code int) {
	w.register()
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionStart) Write(b []byte) (int, error) {
	w.register()
	return w.ResponseWriter.Write(b)
}

func (w *sessionStart) Flush() {
	w.register()
	if fl, ok := w.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

func (w *sessionStart) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// roomLocked decides whether user u may open a new session, and which
// session, if any, ends to make room for it; refusal, if not empty, is
// why not. f.mu is held.
//
// At maxSessionsPerUser, u's own least recently used session with no
// request or stream in progress makes room. At maxSessions, a session of
// the user who holds the most makes room when that user holds at least
// two more than u (after the move they still hold as many as u): one
// user's sessions, however many the limits allow them, never keep
// another user out, and two users never take sessions from each other
// back and forth. The session given up is, of that user's, the least
// recently used with no request in progress, preferring one without an
// event stream. When nobody holds two more than u, u's own least recently
// used idle session makes room. A session with a request in progress
// never ends to make room: with no candidate, the new session is refused.
func (f *httpFront) roomLocked(u *httpUser) (victim *slot, refusal string) {
	l := f.limits
	if u.sessions >= l.MaxSessionsPerUser {
		victim = f.lruLocked(func(s *slot) bool { return s.u == u && s.active == 0 })
		if victim == nil {
			return nil, fmt.Sprintf("you have %d sessions open, each with a request in progress: the workbench's \"http.limits.maxSessionsPerUser\"; end one (DELETE) or retry later", l.MaxSessionsPerUser)
		}
		return victim, "" // one of u's own for u's new one: the count stays
	}
	if f.sessions < l.MaxSessions {
		return nil, ""
	}
	most := 0
	for _, s := range f.slots {
		if !s.ended && s.u != u && s.u.sessions >= u.sessions+2 && s.active == s.streams {
			most = max(most, s.u.sessions)
		}
	}
	if most > 0 {
		victim = f.lruLocked(func(s *slot) bool {
			return s.u != u && s.u.sessions == most && s.active == s.streams
		})
	}
	if victim == nil && u.sessions > 0 {
		// Nobody holds two more than u: u holds the most, or as many as
		// anyone. u's own idle session may make room for u's new one.
		victim = f.lruLocked(func(s *slot) bool { return s.u == u && s.active == 0 })
	}
	if victim == nil {
		return nil, fmt.Sprintf("the workbench has %d sessions open, its \"http.limits.maxSessions\", and no user holds more than their share; retry later", l.MaxSessions)
	}
	return victim, ""
}

// lruLocked returns the session that ok accepts which was used least
// recently, one without an event stream before one with; nil if none.
// f.mu is held.
func (f *httpFront) lruLocked(ok func(*slot) bool) *slot {
	var best *slot
	for _, s := range f.slots {
		if s.ended || !ok(s) {
			continue
		}
		switch {
		case best == nil:
			best = s
		case (s.streams == 0) != (best.streams == 0):
			if s.streams == 0 {
				best = s
			}
		case s.seen.Before(best.seen):
			best = s
		}
	}
	return best
}

// enterSession notes a request of session sid by c (isStream: an event
// stream) and returns its slot; nil if the session is not known or is
// another user's (the SDK answers those). The session's workbench sees
// the toolboxes that the groups of the token the request carries allow:
// a token renewed without a group loses its toolboxes at once.
func (f *httpFront) enterSession(sid string, c Caller, isStream bool) *slot {
	f.mu.Lock()
	s := f.slots[sid]
	if s == nil || s.ended || s.u.key != c.Key {
		f.mu.Unlock()
		return nil
	}
	s.active++
	if isStream {
		s.streams++
		s.hadStream = true
	}
	s.seen = time.Now()
	if c.Valid != nil {
		s.valid = c.Valid
	}
	var cfg *config.Config
	if !slices.Equal(s.groups, c.Groups) {
		s.groups = slices.Clone(c.Groups)
		s.u.wbs[s.wb] = s.groups
		cfg = f.cfg.Load().ForUser(s.u.subject, s.groups)
	}
	f.mu.Unlock()
	if cfg != nil {
		s.wb.Reload(cfg) // before the request is served
	}
	return s
}

// leaveSession notes the end of a request enterSession noted.
func (f *httpFront) leaveSession(s *slot, isStream bool) {
	f.mu.Lock()
	s.active--
	if isStream {
		s.streams--
	}
	s.seen = time.Now()
	f.mu.Unlock()
}

// watchSessions ends, every period until ctx ends, the sessions whose
// credential is no longer good (a static token revoked: its event stream
// closes, rather than go on hearing of the user's toolboxes) and the ones
// whose host went: it held an event stream, and since that stream closed
// there has been no request and no stream for orphan. Claude Code, among
// others, ends a run without DELETE; its session would otherwise hold its
// servers for sessionIdleMs.
func (f *httpFront) watchSessions(ctx context.Context, period, orphan time.Duration) {
	every(ctx, period, func() {
		type check struct {
			s     *slot
			valid func() bool
		}
		var checks []check
		var orphans []*slot
		f.mu.Lock()
		for _, s := range f.slots {
			switch {
			case s.ended:
			case s.hadStream && s.active == 0 && time.Since(s.seen) > orphan:
				orphans = append(orphans, s)
			case s.valid != nil:
				checks = append(checks, check{s, s.valid})
			}
		}
		f.mu.Unlock()
		for _, s := range orphans {
			f.log.Debug("a session's host went (its event stream closed, no request since): the session ends", "after", orphan)
			f.closeSession(s)
		}
		for _, c := range checks {
			if !c.valid() {
				f.log.Info("a session's credential was revoked: the session ends")
				f.closeSession(c.s)
			}
		}
	})
}

// closeSession ends a session the workbench gives up: its host gets 404
// at its next request, and starts a new one.
func (f *httpFront) closeSession(s *slot) {
	f.endSession(s)
	if s.ss != nil {
		_ = s.ss.Close()
	}
}

// endSession counts a session out (once) and closes its workbench
// (Workbench.Close is idempotent: a session counted out by endLocked to
// make room comes here too, through closeSession).
func (f *httpFront) endSession(s *slot) {
	f.mu.Lock()
	f.endLocked(s)
	f.mu.Unlock()
	if s.wb != nil {
		s.wb.Close()
	}
}

// endLocked counts a session out, once: it no longer holds a place of
// maxSessions or of its user's. f.mu is held.
func (f *httpFront) endLocked(s *slot) {
	if s.ended {
		return
	}
	s.ended = true
	f.sessions--
	s.u.sessions--
	if s.sid != "" && f.slots[s.sid] == s {
		delete(f.slots, s.sid)
	}
	if s.wb != nil {
		delete(s.u.wbs, s.wb)
	}
}

// reload applies an edit of the configuration to every workbench, each
// for the groups it sees.
func (f *httpFront) reload(next *config.Config) {
	f.cfg.Store(next)
	type job struct {
		wb  *workbench.Workbench
		cfg *config.Config
	}
	var jobs []job
	f.mu.Lock()
	for _, u := range f.users {
		for wb, groups := range u.wbs {
			jobs = append(jobs, job{wb, next.ForUser(u.subject, groups)})
		}
	}
	f.mu.Unlock()
	for _, j := range jobs {
		j.wb.Reload(j.cfg)
	}
}

// waitIdle waits for the requests in flight, at most bound.
func (f *httpFront) waitIdle(bound time.Duration) {
	done := make(chan struct{})
	go func() { f.inflight.Wait(); close(done) }()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		f.log.Warn("requests still in flight at the shutdown bound; they end with an error", "bound", bound)
	}
}

// close stops every workbench and server; idempotent.
func (f *httpFront) close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	users := f.users
	live := make([]*mcp.ServerSession, 0, len(f.slots))
	for _, s := range f.slots {
		if s.ss != nil { // else its initialize is being answered: closed below with its workbench
			live = append(live, s.ss)
		}
	}
	f.mu.Unlock()
	for _, ss := range live {
		_ = ss.Close() // its host gets 404 and starts again, elsewhere
	}
	var wg sync.WaitGroup
	for _, u := range users {
		wg.Go(func() {
			f.mu.Lock()
			wbs := u.workbenchesLocked()
			f.mu.Unlock()
			for _, wb := range wbs {
				wb.Close()
			}
			u.pool.Close()
		})
	}
	wg.Wait()
	f.watchdog.Close()
}
