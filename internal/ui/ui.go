// Package ui is mcp-workbench ui: a web page on 127.0.0.1 that shows the
// user's running workbenches (Now), searches and calls tools (Try),
// approves changed tool definitions (Review), lists the calls made
// (Activity), answers the permission questions hosts cannot ask
// (Questions), and signs in to remote servers or out of them (Logins). The page's assets are embedded; every
// request needs the secret token printed with the
// address (as Jupyter does), its Host must name the loopback address it
// listens on (DNS rebinding), and a state change is a POST from the page's
// own origin (CSRF). Nothing here runs in a workbench that serves a host:
// they only write the small files internal/live reads.
package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/live"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
)

//go:embed assets
var assets embed.FS

// CookieName is the cookie that carries the token after the first load;
// HeaderName the request header that may carry it instead.
const (
	CookieName = "mcp_workbench_ui"
	HeaderName = "X-Workbench-Token"
)

// maxBody bounds a request's body (a tool call's arguments, a search).
const maxBody = 1 << 20

// Options configure a UI server.
type Options struct {
	// ConfigPath is the configuration file whose toolboxes the page shows.
	ConfigPath string
	Version    string
	Logger     *slog.Logger
	// Token is the secret every request needs; "" makes a random one.
	Token string
	// NewWorkbench makes the workbench the Try page searches and calls
	// through (the call command's); nil: a plain one.
	NewWorkbench func(*config.Config) *workbench.Workbench
	// Poll is how often the Now page's stream looks at the state files;
	// 0: every second.
	Poll time.Duration
}

// Server is the web UI: an http.Handler bound to the address it listens
// on (see [Server.Serve]).
type Server struct {
	o     Options
	log   *slog.Logger
	token string
	hosts map[string]bool // the Host values a request may name
	mux   *http.ServeMux

	// ctx ends when the server does: the sign-ins it started end with it.
	ctx    context.Context
	cancel context.CancelFunc
	logins logins

	wbMu  sync.Mutex
	wb    *workbench.Workbench // the Try page's, made on first use
	wbCfg *config.Config
}

// New returns a UI server; it listens once [Server.Serve] is called.
func New(o Options) (*Server, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.NewWorkbench == nil {
		o.NewWorkbench = func(cfg *config.Config) *workbench.Workbench {
			return workbench.New(cfg, workbench.Options{Version: o.Version, Logger: o.Logger})
		}
	}
	s := &Server{o: o, log: o.Logger, token: o.Token, logins: logins{busy: map[string]bool{}, last: map[string]string{}}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.token == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		s.token = hex.EncodeToString(b)
	}
	s.routes()
	return s, nil
}

// Token is the secret the page's address carries.
func (s *Server) Token() string { return s.token }

// Listen listens on addr, which must be a loopback address (127.0.0.1:0
// picks a free port).
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %v (want 127.0.0.1:PORT)", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("--listen %q: the page serves only on a loopback address such as 127.0.0.1, since it can call tools and approve them", addr)
	}
	return net.Listen("tcp", addr)
}

// URL is the page's address on ln, with the token.
func (s *Server) URL(ln net.Listener) string {
	return "http://" + ln.Addr().String() + "/?token=" + s.token
}

// Serve serves the page on ln until ctx ends, then shuts down.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.allowHosts(ln)
	// Workbenches whose host cannot ask put permission questions here.
	if unmark, err := live.MarkUI(); err == nil {
		defer unmark()
	} else {
		s.log.Warn("permission questions cannot come to the page", "error", err)
	}
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		s.closeWorkbench()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	<-done
	s.closeWorkbench()
	return err
}

// allowHosts makes the Host values that name ln's address the only ones
// taken: 127.0.0.1:PORT (or [::1]:PORT) and localhost:PORT. A page of
// another site whose name a DNS rebinding points at 127.0.0.1 sends its
// own name.
func (s *Server) allowHosts(ln net.Listener) {
	addr := ln.Addr().(*net.TCPAddr)
	port := strconv.Itoa(addr.Port)
	s.hosts = map[string]bool{
		net.JoinHostPort(addr.IP.String(), port): true,
		net.JoinHostPort("localhost", port):      true,
	}
}

func (s *Server) closeWorkbench() {
	s.cancel()
	s.wbMu.Lock()
	defer s.wbMu.Unlock()
	if s.wb != nil {
		s.wb.Close()
		s.wb = nil
	}
}

// ServeHTTP checks the request (Host, token, Origin, method, size) before
// the page's routes see it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if !s.hosts[r.Host] {
		refuse(w, http.StatusMisdirectedRequest, "the Host header must name the page's own loopback address (127.0.0.1 or localhost and its port)")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		refuse(w, http.StatusForbidden, "requests from another origin are refused")
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/" && r.URL.Query().Has("token") {
		s.login(w, r)
		return
	}
	if !s.hasToken(r) {
		refuse(w, http.StatusUnauthorized, "the page needs its token: open the address mcp-workbench ui printed, with its ?token=")
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost:
		// A state change: only the page's own script, which sends its
		// origin (a form of another site cannot send this one).
		if r.Header.Get("Origin") == "" {
			refuse(w, http.StatusForbidden, "a change needs the page's Origin")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	default:
		refuse(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	s.mux.ServeHTTP(w, r)
}

// login takes the token from the address once: a right one becomes a
// cookie of this origin only, and the page is loaded again without it, so
// that the token stays out of the history and of what the page shows.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !s.tokenIs(r.URL.Query().Get("token")) {
		refuse(w, http.StatusUnauthorized, "wrong token: open the address mcp-workbench ui printed")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) hasToken(r *http.Request) bool {
	if v := r.Header.Get(HeaderName); v != "" {
		return s.tokenIs(v)
	}
	c, err := r.Cookie(CookieName)
	return err == nil && s.tokenIs(c.Value)
}

func (s *Server) tokenIs(v string) bool {
	return subtle.ConstantTimeCompare([]byte(v), []byte(s.token)) == 1
}

func refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}

func (s *Server) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	m.Handle("GET /{$}", files)
	m.Handle("GET /app.js", files)
	m.Handle("GET /app.css", files)
	m.HandleFunc("GET /api/now", s.handleNow)
	m.HandleFunc("GET /api/events", s.handleEvents)
	m.HandleFunc("POST /api/search", s.handleSearch)
	m.HandleFunc("POST /api/call", s.handleCall)
	m.HandleFunc("GET /api/tools", s.handleTools)
	m.HandleFunc("GET /api/review", s.handleReview)
	m.HandleFunc("POST /api/approve", s.handleApprove)
	m.HandleFunc("GET /api/activity", s.handleActivity)
	m.HandleFunc("POST /api/answer", s.handleAnswer)
	m.HandleFunc("GET /api/logins", s.handleLogins)
	m.HandleFunc("POST /api/login", s.handleLogin)
	m.HandleFunc("POST /api/logout", s.handleLogout)
	s.mux = m
}

var errNoConfig = errors.New("the configuration cannot be loaded (see Now)")
