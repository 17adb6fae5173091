package config

import (
	"fmt"
	"math"
	"net/url"
	"path"
	"strings"
	"time"
)

// validator walks the decoded tree, collecting problems and warnings.
type validator struct {
	lookup   LookupFunc
	problems []Problem
	warnings []string
}

func (v *validator) problem(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) warn(path, format string, args ...any) {
	v.warnings = append(v.warnings, Problem{Path: path, Msg: fmt.Sprintf(format, args...)}.String())
}

// expand returns n with ${VAR} references expanded in every string and key.
func (v *validator) expand(n *node, p string) *node {
	switch n.kind {
	case kString:
		s, err := Expand(n.str, v.lookup)
		if err != nil {
			v.problem(p, "%v", err)
			return n
		}
		return &node{kind: kString, str: s}
	case kArray:
		out := &node{kind: kArray, vals: make([]*node, len(n.vals))}
		for i, c := range n.vals {
			out.vals[i] = v.expand(c, indexPath(p, i))
		}
		return out
	case kObject:
		out := &node{kind: kObject}
		seen := map[string]bool{}
		for i, rawKey := range n.keys {
			keyPath := joinPath(p, rawKey)
			key, err := Expand(rawKey, v.lookup)
			if err != nil {
				v.problem(keyPath, "in the key: %v", err)
				key = rawKey
			}
			childPath := joinPath(p, key)
			if seen[key] {
				v.problem(childPath, "duplicate key after expanding variables")
				continue
			}
			seen[key] = true
			out.keys = append(out.keys, key)
			out.vals = append(out.vals, v.expand(n.vals[i], childPath))
		}
		return out
	}
	return n
}

var (
	topKeys     = keySet("$schema", "toolboxes", "connectionTimeoutMs", "requestTimeoutMs", "maxRetries")
	toolboxKeys = keySet("description", "mcpServers")
	serverKeys  = keySet("command", "args", "env", "cwd", "url", "headers", "transport", "type",
		"toolFilters", "disabled", "enabled", "connectionTimeoutMs", "requestTimeoutMs", "maxRetries")
)

func keySet(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// warnUnknown warns about keys the workbench does not read. They are not
// errors: host configs carry keys of their own.
func (v *validator) warnUnknown(n *node, p string, known map[string]bool, what string) {
	for _, k := range n.keys {
		if !known[k] {
			v.warn(joinPath(p, k), "unknown %s key, ignored", what)
		}
	}
}

// limits are the three numbers a server may set, inherited from the top level.
type limits struct {
	connect, request time.Duration
	retries          int
}

func (v *validator) config(root *node) *Config {
	cfg := &Config{}
	if root.kind != kObject {
		v.problem("", "the file must hold a JSON object with \"toolboxes\", not a JSON %s", root.kind)
		return cfg
	}
	v.warnUnknown(root, "", topKeys, "top-level")
	def := v.limits(root, "", limits{DefaultConnectionTimeout, DefaultRequestTimeout, DefaultMaxRetries})

	tbs := root.get("toolboxes")
	switch {
	case tbs == nil:
		v.problem("toolboxes", "required: an object mapping each toolbox name to {\"description\", \"mcpServers\"}")
		return cfg
	case tbs.kind != kObject:
		v.problem("toolboxes", "must be an object mapping toolbox names to toolboxes, not a %s", tbs.kind)
		return cfg
	}
	for i, name := range tbs.keys {
		tp := joinPath("toolboxes", name)
		if strings.TrimSpace(name) == "" {
			v.problem(tp, "a toolbox name must not be empty")
			continue
		}
		if tb := v.toolbox(name, tbs.vals[i], tp, def); tb != nil {
			cfg.Toolboxes = append(cfg.Toolboxes, tb)
		}
	}
	return cfg
}

func (v *validator) toolbox(name string, n *node, p string, def limits) *Toolbox {
	if n.kind != kObject {
		v.problem(p, "must be an object with \"description\" and \"mcpServers\", not a %s", n.kind)
		return nil
	}
	v.warnUnknown(n, p, toolboxKeys, "toolbox")
	tb := &Toolbox{Name: name}
	switch d := n.get("description"); {
	case d == nil:
		v.problem(joinPath(p, "description"), "required: a non-empty string saying what the toolbox is for (the model reads it to choose a toolbox)")
	case d.kind != kString:
		v.problem(joinPath(p, "description"), "must be a string, not a %s", d.kind)
	case strings.TrimSpace(d.str) == "":
		v.problem(joinPath(p, "description"), "must not be empty: say what the toolbox is for (the model reads it to choose a toolbox)")
	default:
		tb.Description = d.str
	}
	sp := joinPath(p, "mcpServers")
	servers := n.get("mcpServers")
	switch {
	case servers == nil:
		v.problem(sp, "required: an object with at least one server, in the usual mcpServers format")
		return tb
	case servers.kind != kObject:
		v.problem(sp, "must be an object mapping server names to servers, not a %s", servers.kind)
		return tb
	case len(servers.keys) == 0:
		v.problem(sp, "must hold at least one server")
		return tb
	}
	for i, sname := range servers.keys {
		spath := joinPath(sp, sname)
		if strings.TrimSpace(sname) == "" {
			v.problem(spath, "a server name must not be empty")
			continue
		}
		if s := v.server(sname, servers.vals[i], spath, def); s != nil {
			tb.Servers = append(tb.Servers, s)
		}
	}
	return tb
}

func (v *validator) server(name string, n *node, p string, def limits) *Server {
	if n.kind != kObject {
		v.problem(p, "must be an object with \"command\" (stdio) or \"url\" (http/sse), not a %s", n.kind)
		return nil
	}
	v.warnUnknown(n, p, serverKeys, "server")
	s := &Server{Name: name}
	lim := v.limits(n, p, def)
	s.ConnectionTimeout, s.RequestTimeout, s.MaxRetries = lim.connect, lim.request, lim.retries

	s.Command = v.optString(n, p, "command", true)
	s.URL = v.optString(n, p, "url", true)
	s.Cwd = v.optString(n, p, "cwd", true)
	s.Args = v.stringList(n, p, "args")
	s.Env = v.stringMap(n, p, "env")
	s.Headers = v.stringMap(n, p, "headers")
	s.Transport = v.transport(n, p, s)
	s.ToolFilters = v.toolFilters(n, p)
	s.Disabled = v.disabled(n, p)

	switch s.Transport {
	case Stdio:
		if s.URL != "" {
			v.warn(joinPath(p, "url"), "ignored: this is a stdio server (it has \"command\")")
		}
		if n.get("headers") != nil {
			v.warn(joinPath(p, "headers"), "ignored: this is a stdio server")
		}
	case HTTP, SSE:
		if s.URL == "" {
			v.problem(joinPath(p, "url"), "required for a %s server", s.Transport)
		} else if err := checkURL(s.URL); err != nil {
			v.problem(joinPath(p, "url"), "%v", err)
		}
		for _, k := range []string{"command", "args", "env", "cwd"} {
			if n.get(k) != nil {
				v.warn(joinPath(p, k), "ignored: this is a %s server (it has \"url\")", s.Transport)
			}
		}
	}
	return s
}

// transport reads "transport" or its synonym "type" (Claude Code's name), or
// infers it: "command" means stdio, "url" alone means streamable HTTP.
func (v *validator) transport(n *node, p string, s *Server) Transport {
	var t Transport
	var from string
	for _, key := range []string{"transport", "type"} {
		raw := v.optString(n, p, key, true)
		if raw == "" {
			continue
		}
		var got Transport
		switch strings.ToLower(raw) {
		case "stdio":
			got = Stdio
		case "http", "streamable-http", "streamablehttp", "streamable_http":
			got = HTTP
		case "sse":
			got = SSE
		default:
			v.problem(joinPath(p, key), "unknown transport %q: use \"stdio\", \"http\" (or \"streamable-http\") or \"sse\"", raw)
			return ""
		}
		if t != "" && got != t {
			v.problem(joinPath(p, key), "says %q but %q says %q: give one", raw, from, t)
			return ""
		}
		t, from = got, key
	}
	switch {
	case t == Stdio && s.Command == "":
		v.problem(p, "a stdio server needs \"command\"")
	case t != "":
	case s.Command != "" && s.URL != "":
		v.problem(p, "has both \"command\" and \"url\": keep one, or say which with \"transport\"")
	case s.Command != "":
		t = Stdio
	case s.URL != "":
		t = HTTP
	default:
		v.problem(p, "needs \"command\" (a server the workbench starts) or \"url\" (an http or sse server)")
	}
	return t
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a valid URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("must be an http:// or https:// URL, got %q", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("has no host: %q", raw)
	}
	return nil
}

func (v *validator) toolFilters(n *node, p string) []string {
	f := n.get("toolFilters")
	if f == nil {
		return nil
	}
	fp := joinPath(p, "toolFilters")
	if f.kind != kArray {
		v.problem(fp, "must be an array of tool names or glob patterns, such as [\"read_*\", \"list_directory\"], not a %s", f.kind)
		return nil
	}
	out := make([]string, 0, len(f.vals))
	for i, e := range f.vals {
		ep := indexPath(fp, i)
		switch {
		case e.kind != kString:
			v.problem(ep, "must be a string (a tool name or glob pattern), not a %s", e.kind)
		case e.str == "":
			v.problem(ep, "must not be empty")
		default:
			if _, err := path.Match(e.str, ""); err != nil {
				v.problem(ep, "bad glob pattern %q: %v", e.str, err)
				continue
			}
			out = append(out, e.str)
		}
	}
	if len(f.vals) == 0 {
		v.warn(fp, "empty: no tool of this server will be offered (leave it out to offer every tool)")
	}
	return out
}

func (v *validator) disabled(n *node, p string) bool {
	d, dok := v.optBool(n, p, "disabled")
	e, eok := v.optBool(n, p, "enabled")
	if dok && eok && d == e {
		v.problem(p, "\"disabled\": %v and \"enabled\": %v contradict each other: keep one", d, e)
	}
	return (dok && d) || (eok && !e)
}

func (v *validator) limits(n *node, p string, def limits) limits {
	out := def
	if d, ok := v.millis(n, p, "connectionTimeoutMs"); ok {
		out.connect = d
	}
	if d, ok := v.millis(n, p, "requestTimeoutMs"); ok {
		out.request = d
	}
	if r := n.get("maxRetries"); r != nil {
		if i, err := integer(r, 0, 100); err != nil {
			v.problem(joinPath(p, "maxRetries"), "must be a whole number of retries from 0 to 100, %v", err)
		} else {
			out.retries = int(i)
		}
	}
	return out
}

// maxMillis bounds the timeouts (about 24 days) so durations cannot overflow.
const maxMillis = math.MaxInt32

func (v *validator) millis(n *node, p, key string) (time.Duration, bool) {
	m := n.get(key)
	if m == nil {
		return 0, false
	}
	i, err := integer(m, 1, maxMillis)
	if err != nil {
		v.problem(joinPath(p, key), "must be a positive whole number of milliseconds, %v", err)
		return 0, false
	}
	return time.Duration(i) * time.Millisecond, true
}

func integer(n *node, lo, hi int64) (int64, error) {
	if n.kind != kNumber {
		if n.kind == kString {
			return 0, fmt.Errorf("got the string %q (write the number without quotes)", n.str)
		}
		return 0, fmt.Errorf("got a %s", n.kind)
	}
	f, err := n.num.Float64()
	if err != nil || f != math.Trunc(f) {
		return 0, fmt.Errorf("got %s", n.num)
	}
	if f < float64(lo) || f > float64(hi) {
		return 0, fmt.Errorf("got %s", n.num)
	}
	return int64(f), nil
}

// optString reads an optional string field; nonEmpty rejects "".
func (v *validator) optString(n *node, p, key string, nonEmpty bool) string {
	s := n.get(key)
	if s == nil {
		return ""
	}
	kp := joinPath(p, key)
	switch {
	case s.kind != kString:
		v.problem(kp, "must be a string, not a %s", s.kind)
	case nonEmpty && strings.TrimSpace(s.str) == "":
		v.problem(kp, "must not be empty (leave the key out instead)")
	default:
		return s.str
	}
	return ""
}

func (v *validator) optBool(n *node, p, key string) (value, present bool) {
	b := n.get(key)
	if b == nil {
		return false, false
	}
	if b.kind != kBool {
		v.problem(joinPath(p, key), "must be true or false, not a %s", b.kind)
		return false, false
	}
	return b.b, true
}

func (v *validator) stringList(n *node, p, key string) []string {
	a := n.get(key)
	if a == nil {
		return nil
	}
	kp := joinPath(p, key)
	if a.kind != kArray {
		v.problem(kp, "must be an array of strings, not a %s", a.kind)
		return nil
	}
	out := make([]string, 0, len(a.vals))
	for i, e := range a.vals {
		if e.kind != kString {
			v.problem(indexPath(kp, i), "must be a string, not a %s%s", e.kind, quoteHint(e))
			continue
		}
		out = append(out, e.str)
	}
	return out
}

func (v *validator) stringMap(n *node, p, key string) map[string]string {
	m := n.get(key)
	if m == nil {
		return nil
	}
	kp := joinPath(p, key)
	if m.kind != kObject {
		v.problem(kp, "must be an object of string values, not a %s", m.kind)
		return nil
	}
	out := make(map[string]string, len(m.keys))
	for i, k := range m.keys {
		e := m.vals[i]
		if k == "" {
			v.problem(kp, "has an empty name")
			continue
		}
		if e.kind != kString {
			v.problem(joinPath(kp, k), "must be a string, not a %s%s", e.kind, quoteHint(e))
			continue
		}
		out[k] = e.str
	}
	return out
}

// quoteHint suggests the fix for the common mistake of an unquoted number or
// boolean where a string is required.
func quoteHint(n *node) string {
	switch n.kind {
	case kNumber:
		return fmt.Sprintf(" (write \"%s\")", n.num)
	case kBool:
		return fmt.Sprintf(" (write \"%v\")", n.b)
	}
	return ""
}
