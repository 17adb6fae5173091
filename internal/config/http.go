package config

import (
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// The defaults of the "http" block's "limits".
const (
	DefaultHTTPListen         = "127.0.0.1:8080"
	DefaultMaxBodyBytes       = 4 << 20
	DefaultMaxSessions        = 1000
	DefaultSessionIdle        = 30 * time.Minute
	DefaultHTTPRequestTimeout = 5 * time.Minute
	DefaultCallsPerSecond     = 20
	DefaultBurst              = 40
	DefaultConcurrentCalls    = 16
	DefaultShutdown           = 30 * time.Second
	DefaultMaxConnections     = 1024
	DefaultMaxSessionsPerUser = 100
	DefaultSessionOrphan      = time.Minute
	DefaultReadTimeout        = 30 * time.Second
	DefaultWriteTimeout       = 30 * time.Second
	DefaultIdleConnection     = time.Minute
)

// Serving is the top-level "http": how mcp-workbench serve --http serves.
// Every field has its default filled in, so that a configuration without
// the block serves on loopback with the defaults.
type Serving struct {
	// Listen is host:port ("listen"); the command line's --http wins.
	Listen string
	// PublicURL is the URL hosts reach the MCP endpoint at ("publicUrl");
	// empty: http://Listen/mcp, which the server fills in once bound.
	PublicURL      string
	AllowedOrigins []string
	AllowedHosts   []string
	// CertFile and KeyFile ("tls"), relative ones taken from the
	// configuration file's folder; empty: plain HTTP.
	CertFile, KeyFile string
	// Tokens is the static token file ("auth.tokens"), as CertFile; empty:
	// no static tokens. TokensDefault: "tokens": true, the default file.
	Tokens        string
	TokensDefault bool
	// OAuth is "auth.oauth"; nil: no OAuth tokens accepted.
	OAuth *HTTPOAuth
	// StateKey signs the request states handed to hosts ("stateKey"): the
	// same on every replica. Empty: a key of the process's own. A secret:
	// never shown.
	StateKey string
	Limits   HTTPLimits
	// JSONLogs is "logFormat": "json".
	JSONLogs bool
}

// HTTPOAuth is "auth.oauth": the authorization server whose JWT access
// tokens are accepted.
type HTTPOAuth struct {
	Issuer, Audience, JWKSURL string
	Scopes                    []string
	SubjectClaim, GroupsClaim string
}

// HTTPLimits are the "limits" of serving over HTTP.
type HTTPLimits struct {
	MaxBodyBytes    int64
	MaxSessions     int
	SessionIdle     time.Duration
	RequestTimeout  time.Duration
	CallsPerSecond  float64
	Burst           int
	ConcurrentCalls int
	Shutdown        time.Duration
	// MaxConnections bounds the connections open at once; ReadTimeout
	// bounds the arrival of a request's headers, then of its body;
	// WriteTimeout each write of an answer; IdleConnection a connection
	// between requests.
	MaxConnections int
	// MaxSessionsPerUser bounds one user's sessions (at most MaxSessions);
	// SessionOrphan ends a session whose host went (its event stream
	// closed, nothing since).
	MaxSessionsPerUser int
	SessionOrphan      time.Duration
	ReadTimeout        time.Duration
	WriteTimeout       time.Duration
	IdleConnection     time.Duration
}

// HasAuth reports whether some credential is required.
func (h *Serving) HasAuth() bool { return h.Tokens != "" || h.TokensDefault || h.OAuth != nil }

// Access is a toolbox's "access": who may see and use it over HTTP.
type Access struct {
	Subjects, Groups []string
}

// Allows reports whether a caller with subject and groups may use the
// toolbox. A nil Access allows everyone.
func (a *Access) Allows(subject string, groups []string) bool {
	if a == nil {
		return true
	}
	if slices.Contains(a.Subjects, subject) {
		return true
	}
	for _, g := range groups {
		if slices.Contains(a.Groups, g) {
			return true
		}
	}
	return false
}

// defaultHTTP is what serving over HTTP uses without an "http" block.
func defaultHTTP() Serving {
	return Serving{Listen: DefaultHTTPListen, Limits: HTTPLimits{}.OrDefaults()}
}

// OrDefaults returns l with each limit left at zero set to its default.
func (l HTTPLimits) OrDefaults() HTTPLimits {
	set := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	setD := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.CallsPerSecond == 0 {
		l.CallsPerSecond = DefaultCallsPerSecond
	}
	set(&l.MaxSessions, DefaultMaxSessions)
	set(&l.Burst, DefaultBurst)
	set(&l.ConcurrentCalls, DefaultConcurrentCalls)
	setD(&l.SessionIdle, DefaultSessionIdle)
	setD(&l.RequestTimeout, DefaultHTTPRequestTimeout)
	setD(&l.Shutdown, DefaultShutdown)
	set(&l.MaxConnections, DefaultMaxConnections)
	set(&l.MaxSessionsPerUser, DefaultMaxSessionsPerUser)
	l.MaxSessionsPerUser = min(l.MaxSessionsPerUser, l.MaxSessions)
	setD(&l.SessionOrphan, DefaultSessionOrphan)
	setD(&l.ReadTimeout, DefaultReadTimeout)
	setD(&l.WriteTimeout, DefaultWriteTimeout)
	setD(&l.IdleConnection, DefaultIdleConnection)
	return l
}

// http reads the top-level "http" at p; the schema checked the types.
func (v *validator) http(n *node, info *schemaInfo) Serving {
	h := defaultHTTP()
	if n == nil || n.kind != kObject {
		return h
	}
	const p = "http"
	v.checkUnknown(n, p, info.http[""], "http")
	if l := n.get("listen"); l != nil && l.kind == kString {
		if _, port, err := net.SplitHostPort(l.str); err != nil || port == "" {
			v.problem(JoinPath(p, "listen"), "%q is not host:port (for example 127.0.0.1:8080, or 0.0.0.0:8080 for every interface)", l.shown())
		} else {
			h.Listen = l.str
		}
	}
	if u := n.get("publicUrl"); u != nil && u.kind == kString {
		if pu, err := url.Parse(u.str); err != nil || pu.Host == "" || (pu.Scheme != "http" && pu.Scheme != "https") {
			v.problem(JoinPath(p, "publicUrl"), "%q is not an http(s) URL with a host", u.shown())
		} else {
			h.PublicURL = u.str
		}
	}
	h.AllowedOrigins = strs(n.get("allowedOrigins"))
	if o := n.get("allowedOrigins"); o != nil && o.kind == kArray {
		for i, e := range o.vals {
			if u, err := url.Parse(e.str); e.kind == kString && (err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/")) {
				v.problem(JoinPath(p, "allowedOrigins", strconv.Itoa(i)), "%q is not an origin: scheme://host[:port], as a browser's Origin header names it", e.shown())
			}
		}
	}
	h.AllowedHosts = strs(n.get("allowedHosts"))
	if t := n.get("tls"); t != nil && t.kind == kObject {
		v.checkUnknown(t, JoinPath(p, "tls"), info.http["tls"], "tls")
		h.CertFile, h.KeyFile = str(t.get("certFile")), str(t.get("keyFile"))
	}
	if a := n.get("auth"); a != nil && a.kind == kObject {
		ap := JoinPath(p, "auth")
		v.checkUnknown(a, ap, info.http["auth"], "auth")
		if t := a.get("tokens"); t != nil {
			switch t.kind {
			case kString:
				h.Tokens = t.str
			case kBool:
				h.TokensDefault = t.b
			}
		}
		if o := a.get("oauth"); o != nil && o.kind == kObject {
			op := JoinPath(ap, "oauth")
			v.checkUnknown(o, op, info.http["auth.oauth"], "oauth")
			for _, k := range []string{"issuer", "jwksUrl"} {
				if u := o.get(k); u != nil && u.kind == kString {
					if pu, err := url.Parse(u.str); err != nil || pu.Host == "" || (pu.Scheme != "http" && pu.Scheme != "https") {
						v.problem(JoinPath(op, k), "%q is not an http(s) URL with a host", u.shown())
					}
				}
			}
			h.OAuth = &HTTPOAuth{
				Issuer:       str(o.get("issuer")),
				Audience:     str(o.get("audience")),
				JWKSURL:      str(o.get("jwksUrl")),
				Scopes:       strs(o.get("scopes")),
				SubjectClaim: str(o.get("subjectClaim")),
				GroupsClaim:  str(o.get("groupsClaim")),
			}
			if h.OAuth.Audience == "" && h.PublicURL == "" {
				v.problem(op, "OAuth tokens are checked for their audience: set \"audience\" here, or the block's \"publicUrl\" (the URL hosts reach the workbench at)")
			}
		}
	}
	if k := n.get("stateKey"); k != nil && k.kind == kString {
		// A key from a variable not set where the file is looked at
		// (validate, import) is only a placeholder: the warning says so.
		if len(k.str) < 32 && !v.unsetAt[JoinPath(p, "stateKey")] {
			v.problem(JoinPath(p, "stateKey"), "the key is %d characters; a state key needs at least 32 (for example: openssl rand -base64 32), the same on every replica", len(k.str))
		}
		h.StateKey = k.str
	}
	if l := n.get("limits"); l != nil && l.kind == kObject {
		v.checkUnknown(l, JoinPath(p, "limits"), info.http["limits"], "limits")
		lim := &h.Limits
		if i, ok := integer(l.get("maxBodyBytes")); ok {
			lim.MaxBodyBytes = i
		}
		if i, ok := integer(l.get("maxSessions")); ok {
			lim.MaxSessions = int(i)
		}
		if i, ok := integer(l.get("sessionIdleMs")); ok {
			lim.SessionIdle = time.Duration(i) * time.Millisecond
		}
		if i, ok := integer(l.get("requestTimeoutMs")); ok {
			lim.RequestTimeout = time.Duration(i) * time.Millisecond
		}
		if r := l.get("callsPerSecond"); r != nil && r.kind == kNumber {
			if f, err := r.num.Float64(); err == nil {
				lim.CallsPerSecond = f
			}
		}
		if i, ok := integer(l.get("burst")); ok {
			lim.Burst = int(i)
		}
		if i, ok := integer(l.get("concurrentCalls")); ok {
			lim.ConcurrentCalls = int(i)
		}
		if i, ok := integer(l.get("shutdownMs")); ok {
			lim.Shutdown = time.Duration(i) * time.Millisecond
		}
		if i, ok := integer(l.get("maxConnections")); ok {
			lim.MaxConnections = int(i)
		}
		if i, ok := integer(l.get("maxSessionsPerUser")); ok {
			lim.MaxSessionsPerUser = int(i)
		}
		if i, ok := integer(l.get("sessionOrphanMs")); ok {
			lim.SessionOrphan = time.Duration(i) * time.Millisecond
		}
		for key, d := range map[string]*time.Duration{"readTimeoutMs": &lim.ReadTimeout, "writeTimeoutMs": &lim.WriteTimeout, "idleConnectionMs": &lim.IdleConnection} {
			if i, ok := integer(l.get(key)); ok {
				*d = time.Duration(i) * time.Millisecond
			}
		}
	}
	h.JSONLogs = str(n.get("logFormat")) == "json"
	return h
}

// resolve makes the relative file names of h relative to dir, the
// configuration file's folder.
func (h *Serving) resolve(dir string) {
	for _, f := range []*string{&h.CertFile, &h.KeyFile, &h.Tokens} {
		if *f != "" && !filepath.IsAbs(*f) {
			*f = filepath.Join(dir, *f)
		}
	}
}

// access reads a toolbox's "access" at p.
func (v *validator) access(n *node, p string, info *schemaInfo) *Access {
	if n == nil || n.kind != kObject {
		return nil
	}
	v.checkUnknown(n, p, info.access, "access")
	return &Access{Subjects: strs(n.get("subjects")), Groups: strs(n.get("groups"))}
}

// ForUser returns the configuration as a caller with subject and groups
// sees it over HTTP: the toolboxes whose "access" allows them. The
// servers are cfg's own.
func (c *Config) ForUser(subject string, groups []string) *Config {
	out := *c
	out.Toolboxes = nil
	for _, tb := range c.Toolboxes {
		if tb.Access.Allows(subject, groups) {
			out.Toolboxes = append(out.Toolboxes, tb)
		}
	}
	return &out
}
