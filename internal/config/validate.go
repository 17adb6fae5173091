package config

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
)

// validator turns the decoded tree into a Config. The shape of the
// document — required keys, types, ranges — is the schema's business
// (schema.go); the validator checks what a schema cannot say well, reads
// the values, and collects warnings. Where the schema already found a
// problem at or under a server, the validator only reads what it can.
type validator struct {
	lookup   LookupFunc
	problems []Problem
	warnings []string
	// unsetWarns makes a ${VAR} that lookup does not know a warning, not a
	// problem (see [LoadUnsetAsWarnings]).
	unsetWarns bool
	// rulesStrict keeps an unset ${VAR} an error, with unsetWarns, in
	// what the permission rules read: names and "permissions" ([LoadRules]).
	// at is the path (keys as written) of the value being expanded.
	rulesStrict bool
	at          []string
	// unsetAt holds the paths whose value named an unset variable (with
	// unsetWarns): the value there is a placeholder, not to be judged.
	unsetAt   map[string]bool
	topShared bool // the top-level "shared", for warnings
	// anyPermissions is set when some level has a "permissions" object.
	anyPermissions bool
	// renamed are the object keys written with a ${VAR}: the path of each
	// after expansion, and as the file writes it. Once expanded is set,
	// every path a problem or warning names is written so ([shownPath]):
	// a key name is quoted as written, as values are ([node.shown]).
	renamed  []renamedKey
	expanded bool
}

type renamedKey struct{ path, written string }

// shownPath is path, found in the expanded document, as the file writes
// it: the longest prefix that is a renamed key's path replaced by that
// key's written path. Paths of expansion's own problems are written so
// already; they are left as they are.
func (v *validator) shownPath(path string) string {
	if !v.expanded {
		return path
	}
	best := -1
	for i, r := range v.renamed {
		if strings.HasPrefix(path, r.path) && (len(path) == len(r.path) || path[len(r.path)] == '.' || path[len(r.path)] == '[') &&
			(best < 0 || len(r.path) > len(v.renamed[best].path)) {
			best = i
		}
	}
	if best < 0 {
		return path
	}
	return v.renamed[best].written + path[len(v.renamed[best].path):]
}

// expandAt is [expandVars] of s, found at path p. With unsetWarns an unset
// variable is a warning, and stands for its own name in the value: a
// placeholder that any string, command or host name takes.
func (v *validator) expandAt(s, p string) (string, error) {
	if !v.unsetWarns || v.rulesStrict && rulesRead(v.at) {
		return expandVars(s, v.lookup)
	}
	return expand(s, v.lookup, func(name string) string {
		v.warn(p, "%s", UnsetVarWarning(name))
		if v.unsetAt == nil {
			v.unsetAt = map[string]bool{}
		}
		v.unsetAt[p] = true
		return name
	})
}

// rulesRead reports whether the permission rules read the value (or key)
// at path: a toolbox's or server's name, or anything in a "permissions"
// object.
func rulesRead(path []string) bool {
	switch {
	case len(path) > 0 && path[0] == "permissions":
		return true
	case len(path) < 2 || path[0] != "toolboxes":
		return false
	case len(path) == 2, path[2] == "permissions":
		return true
	}
	return path[2] == "mcpServers" && (len(path) == 4 || len(path) > 4 && path[4] == "permissions")
}

// UnsetVarWarning is the warning for a ${VAR} without a default that is
// not set where the file is looked at (validate, import): the one wording
// of both.
func UnsetVarWarning(name string) string {
	return fmt.Sprintf("environment variable %s is not set here: set it where the host starts the workbench (its \"env\" for the workbench), or write ${%s:-default}", name, name)
}

func (v *validator) problem(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: v.shownPath(path), Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) warn(path, format string, args ...any) {
	v.warnings = append(v.warnings, Problem{Path: v.shownPath(path), Msg: fmt.Sprintf(format, args...)}.String())
}

// hasProblemUnder reports whether a problem was found at p or below it.
func (v *validator) hasProblemUnder(p string) bool {
	p = v.shownPath(p)
	for _, pr := range v.problems {
		if pr.Path == p || strings.HasPrefix(pr.Path, p+".") || strings.HasPrefix(pr.Path, p+"[") {
			return true
		}
	}
	return false
}

// addSchemaProblems keeps the schema's problems, except those at a place
// that already has one (a ${VAR} that did not expand is not also a bad URL).
func (v *validator) addSchemaProblems(ps []Problem) {
	for _, p := range ps {
		p.Path = v.shownPath(p.Path)
		dup := false
		for _, q := range v.problems {
			if q.Path == p.Path {
				dup = true
				break
			}
		}
		if !dup {
			v.problems = append(v.problems, p)
		}
	}
}

// expand returns n with ${VAR} references expanded in every string and
// key. p is n's path as the file writes it (its problems name that), to
// the path after expansion (expandedPath) noted in v.renamed for each key
// written with a ${VAR}.
func (v *validator) expand(n *node, p, expandedPath string) *node {
	switch n.kind {
	case kString:
		s, err := v.expandAt(n.str, p)
		if err != nil {
			v.problem(p, "%v", err)
			return n
		}
		out := &node{kind: kString, str: s}
		if s != n.str {
			out.written = n.str
		}
		return out
	case kArray:
		out := &node{kind: kArray, vals: make([]*node, len(n.vals))}
		for i, c := range n.vals {
			out.vals[i] = v.expand(c, indexPath(p, i), indexPath(expandedPath, i))
		}
		return out
	case kObject:
		out := &node{kind: kObject}
		seen := map[string]bool{}
		for i, rawKey := range n.keys {
			keyPath := JoinPath(p, rawKey)
			v.at = append(v.at, rawKey)
			key, err := v.expandAt(rawKey, keyPath)
			if err != nil {
				v.problem(keyPath, "in the key: %v", err)
				key = rawKey
			}
			if seen[key] {
				v.problem(keyPath, "duplicate key after expanding variables")
				v.at = v.at[:len(v.at)-1]
				continue
			}
			seen[key] = true
			childPath := JoinPath(expandedPath, key)
			if key != rawKey {
				v.renamed = append(v.renamed, renamedKey{path: childPath, written: keyPath})
			}
			out.keys = append(out.keys, key)
			out.vals = append(out.vals, v.expand(n.vals[i], keyPath, childPath))
			v.at = v.at[:len(v.at)-1]
		}
		return out
	}
	return n
}

// checkUnknown reports keys the schema does not define: a near miss of a
// known key is an error ([nearMiss]); any other is a warning, since host
// configs carry keys of their own.
func (v *validator) checkUnknown(n *node, p string, known map[string]string, what string) {
	for _, k := range n.keys {
		if _, ok := known[k]; ok {
			continue
		}
		if m := nearMiss(k, known); m != "" {
			v.problem(JoinPath(p, k), "unknown %s key: did you mean %q?", what, m)
		} else {
			v.warn(JoinPath(p, k), "unknown %s key, ignored", what)
		}
	}
}

// checkNames reports the empty names of an object of named things
// (toolboxes, servers, variables, headers). The schema says the same, but
// the schema library reports such problems at an unreliable place.
func (v *validator) checkNames(n *node, p string) {
	if n == nil || n.kind != kObject {
		return
	}
	for _, k := range n.keys {
		if k == "" {
			v.problem(JoinPath(p, k), "a name must not be empty")
		}
	}
}

// isTODO reports whether a description is still a placeholder, such as the
// drafts mcp-workbench import writes ("Draft: …").
func isTODO(description string) bool {
	d := strings.TrimSpace(description)
	return strings.HasPrefix(d, "TODO") || strings.HasPrefix(d, "Draft:")
}

// limits are the settings a server may take from the top level: the three
// numbers of the contract, idleTimeoutMs and catalog.
type limits struct {
	connect, request time.Duration
	retries          int
	idle             time.Duration
	catalog          bool
	toolChanges      string
	blockFlagged     bool
	approveNew       bool
	maxTools         int
	maxToolBytes     int
	// shared is whether the servers below may be shared: the top-level
	// "shared", turned off by a toolbox's "shared": false. Unlike the
	// others, a server cannot turn it back on.
	shared bool
	// optedOut: a toolbox above says "shared": false.
	optedOut bool
}

func (v *validator) config(root *node, info *schemaInfo) *Config {
	cfg := &Config{OpenResultMaxChars: DefaultOpenResultMaxChars, OpenTimeout: DefaultOpenTimeout, SearchTimeout: DefaultSearchTimeout, SharedGrace: DefaultSharedGrace}
	if root.kind != kObject {
		return cfg
	}
	v.checkUnknown(root, "", info.top, "top-level")
	if n, ok := integer(root.get("openResultMaxChars")); ok {
		cfg.OpenResultMaxChars = int(n)
	}
	if ms, ok := integer(root.get("openTimeoutMs")); ok {
		cfg.OpenTimeout = time.Duration(ms) * time.Millisecond
	}
	if ms, ok := integer(root.get("searchTimeoutMs")); ok {
		cfg.SearchTimeout = time.Duration(ms) * time.Millisecond
	}
	if ms, ok := integer(root.get("sharedGraceMs")); ok {
		cfg.SharedGrace = time.Duration(ms) * time.Millisecond
	}
	def := readLimits(root, limits{
		connect:      DefaultConnectionTimeout,
		request:      DefaultRequestTimeout,
		retries:      DefaultMaxRetries,
		catalog:      true,
		toolChanges:  ToolChangesBlock,
		maxTools:     DefaultMaxTools,
		maxToolBytes: DefaultMaxToolListBytes,
	})
	cfg.Permissions = v.permissions(root.get("permissions"), "permissions", true, info)
	cfg.Shared = boolean(root.get("shared"), false)
	cfg.HTTP = v.http(root.get("http"), info)
	def.shared, v.topShared = cfg.Shared, cfg.Shared
	tbs := root.get("toolboxes")
	v.checkNames(tbs, "toolboxes")
	if tbs == nil || tbs.kind != kObject {
		return cfg
	}
	for i, name := range tbs.keys {
		if tb := v.toolbox(name, tbs.vals[i], JoinPath("toolboxes", name), def, info); tb != nil {
			cfg.Toolboxes = append(cfg.Toolboxes, tb)
		}
	}
	cfg.AnyPermissions = v.anyPermissions
	return cfg
}

func (v *validator) toolbox(name string, n *node, p string, def limits, info *schemaInfo) *Toolbox {
	if n.kind != kObject {
		return nil
	}
	v.checkUnknown(n, p, info.toolbox, "toolbox")
	tb := &Toolbox{Name: name, Description: str(n.get("description"))}
	tb.Permissions = v.permissions(n.get("permissions"), JoinPath(p, "permissions"), true, info)
	tb.Access = v.access(n.get("access"), JoinPath(p, "access"), info)
	if isTODO(tb.Description) {
		v.warn(JoinPath(p, "description"), "still a TODO or a draft: say what the toolbox is for, then remove \"TODO\" or \"Draft:\"; the model reads it to choose a toolbox")
	}
	def.shared = v.shared(n, p, def.shared, "")
	def.optedOut = def.optedOut || saysNotShared(n)
	servers := n.get("mcpServers")
	v.checkNames(servers, JoinPath(p, "mcpServers"))
	if servers == nil || servers.kind != kObject {
		return tb
	}
	for i, sname := range servers.keys {
		if s := v.server(sname, servers.vals[i], JoinPath(p, "mcpServers", sname), def, info); s != nil {
			tb.Servers = append(tb.Servers, s)
		}
	}
	if len(tb.Servers) > 0 && tb.EnabledServers() == 0 {
		v.warn(JoinPath(p, "mcpServers"), "every server is disabled: opening the toolbox offers no tool (enable one, or remove the toolbox)")
	}
	return tb
}

func (v *validator) server(name string, n *node, p string, def limits, info *schemaInfo) *Server {
	if n.kind != kObject {
		return nil
	}
	v.checkUnknown(n, p, info.server, "server")
	v.checkNames(n.get("env"), JoinPath(p, "env"))
	v.checkNames(n.get("headers"), JoinPath(p, "headers"))
	lim := readLimits(n, def)
	s := &Server{
		Name:              name,
		Command:           str(n.get("command")),
		Args:              strs(n.get("args")),
		Env:               strMap(n.get("env")),
		Cwd:               str(n.get("cwd")),
		URL:               str(n.get("url")),
		Headers:           strMap(n.get("headers")),
		OAuth:             v.oauth(n.get("oauth"), JoinPath(p, "oauth"), info),
		ToolFilters:       strs(n.get("toolFilters")),
		Disabled:          boolean(n.get("disabled"), false) || !boolean(n.get("enabled"), true),
		ConnectionTimeout: lim.connect,
		RequestTimeout:    lim.request,
		MaxRetries:        lim.retries,
		Catalog:           lim.catalog,
		IdleTimeout:       lim.idle,
		ToolChanges:       lim.toolChanges,
		BlockFlagged:      lim.blockFlagged,
		ApproveNewTools:   lim.approveNew,
		MaxTools:          lim.maxTools,
		MaxToolListBytes:  lim.maxToolBytes,
		Shared:            v.shared(n, p, def.shared, "its toolbox"),
		OptedOut:          def.optedOut || saysNotShared(n),
		Permissions:       v.permissions(n.get("permissions"), JoinPath(p, "permissions"), false, info),
	}
	// Below, each check runs only where the schema found nothing wrong, so
	// that no problem is reported twice.
	if d, e := n.get("disabled"), n.get("enabled"); d != nil && e != nil && d.kind == kBool && e.kind == kBool && d.b == e.b {
		v.problem(p, "\"disabled\": %v and \"enabled\": %v contradict each other: keep one", d.b, e.b)
	}
	v.checkFilters(n.get("toolFilters"), JoinPath(p, "toolFilters"))
	for _, k := range []string{"command", "url", "transport", "type"} {
		if v.hasProblemUnder(JoinPath(p, k)) {
			return s
		}
	}
	for _, pr := range v.problems {
		if pr.Path == p {
			return s // e.g. neither command nor url
		}
	}
	s.Transport = v.transport(n, p, s)
	s.Shown = shownTarget(n, s.Transport)
	if f := n.get("toolFilters"); f != nil && f.kind == kArray {
		s.ShownFilters = make([]string, 0, len(f.vals))
		for _, e := range f.vals {
			if e.kind == kString {
				s.ShownFilters = append(s.ShownFilters, e.shown())
			}
		}
	}
	switch s.Transport {
	case Stdio:
		if s.URL != "" {
			v.warn(JoinPath(p, "url"), "ignored: this is a stdio server (it has \"command\")")
		}
		if n.get("headers") != nil {
			v.warn(JoinPath(p, "headers"), "ignored: this is a stdio server")
		}
		if n.get("oauth") != nil {
			v.warn(JoinPath(p, "oauth"), "ignored: this is a stdio server")
		}
	case HTTP, SSE:
		if s.URL == "" {
			v.problem(JoinPath(p, "url"), "required for a %s server", s.Transport)
		} else if err := checkURL(n.get("url")); err != nil {
			v.problem(JoinPath(p, "url"), "%v", err)
		}
		for _, k := range []string{"command", "args", "env", "cwd"} {
			if n.get(k) != nil {
				v.warn(JoinPath(p, k), "ignored: this is a %s server (it has \"url\")", s.Transport)
			}
		}
		if s.OAuth != nil && s.AuthorizationHeader() {
			v.warn(JoinPath(p, "oauth"), "ignored: the server's Authorization header is sent instead of a login")
		}
	}
	return s
}

// shared reads the "shared" of the toolbox or server n at p, given
// whether what holds it is shared: false turns sharing off; true only
// inherits, and is pointless (a warning) where sharing is off above.
// holder names what turned it off when it is not the top level.
func (v *validator) shared(n *node, p string, above bool, holder string) bool {
	sh := n.get("shared")
	if sh == nil || sh.kind != kBool {
		return above
	}
	if sh.b && !above {
		why := "the top-level \"shared\" is not true"
		if holder != "" && v.topShared {
			why = holder + " says \"shared\": false"
		}
		v.warn(JoinPath(p, "shared"), "true has no effect: %s, and a server is shared only when everything above it is", why)
	}
	return above && sh.b
}

// saysNotShared reports whether the toolbox or server n says "shared": false.
func saysNotShared(n *node) bool {
	sh := n.get("shared")
	return sh != nil && sh.kind == kBool && !sh.b
}

// shownTarget is [Server.Shown] of the server n.
func shownTarget(n *node, t Transport) string {
	if t != Stdio {
		if u := n.get("url"); u != nil && u.kind == kString {
			return u.shown()
		}
		return ""
	}
	var parts []string
	if c := n.get("command"); c != nil && c.kind == kString {
		parts = append(parts, c.shown())
	}
	if a := n.get("args"); a != nil && a.kind == kArray {
		for _, e := range a.vals {
			if e.kind == kString {
				parts = append(parts, e.shown())
			}
		}
	}
	return strings.Join(parts, " ")
}

// oauth reads a server's "oauth" object. The schema checks the types; this
// checks what goes together. clientSecret is never quoted.
func (v *validator) oauth(n *node, p string, info *schemaInfo) *OAuth {
	if n == nil || n.kind != kObject {
		return nil
	}
	v.checkUnknown(n, p, info.oauth, "oauth")
	o := &OAuth{
		ClientID:              str(n.get("clientId")),
		ClientSecret:          str(n.get("clientSecret")),
		AuthServerMetadataURL: str(n.get("authServerMetadataUrl")),
		Scopes:                strings.Join(strings.Fields(str(n.get("scopes"))), " "),
	}
	if port, ok := integer(n.get("callbackPort")); ok {
		o.CallbackPort = int(port)
	}
	if n.get("clientSecret") != nil && n.get("clientId") == nil && !v.hasProblemUnder(JoinPath(p, "clientSecret")) {
		v.problem(JoinPath(p, "clientSecret"), "needs \"clientId\": a secret belongs to a client registered beforehand")
	}
	if u := o.AuthServerMetadataURL; u != "" && !v.hasProblemUnder(JoinPath(p, "authServerMetadataUrl")) {
		if err := checkURL(n.get("authServerMetadataUrl")); err != nil {
			v.problem(JoinPath(p, "authServerMetadataUrl"), "%v", err)
		} else if pu, _ := url.Parse(u); pu == nil || !strings.EqualFold(pu.Scheme, "https") {
			v.problem(JoinPath(p, "authServerMetadataUrl"), "must be an https:// URL, got %q", n.get("authServerMetadataUrl").shown())
		}
	}
	return o
}

// transport reads "transport" or its synonym "type" (Claude Code's name), or
// infers it: "command" means stdio, "url" alone means streamable HTTP.
func (v *validator) transport(n *node, p string, s *Server) Transport {
	var t Transport
	var from string
	for _, key := range []string{"transport", "type"} {
		raw := str(n.get(key))
		if raw == "" {
			continue
		}
		shown := n.get(key).shown()
		got := Stdio
		switch raw {
		case "http", "streamable-http", "streamableHttp":
			got = HTTP
		case "sse":
			got = SSE
		}
		if t != "" && got != t {
			v.problem(JoinPath(p, key), "says %q but %q says %q: give one", shown, from, t)
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
	default:
		t = HTTP
		s.TransportInferred = true
	}
	return t
}

// checkURL checks the URL string at n. Its messages quote the URL as the
// file writes it ([node.shown]); the parser's own words, which quote parts
// of the value, only when no variable went into it.
func checkURL(n *node) error {
	u, err := url.Parse(n.str)
	if err != nil {
		var ue *url.Error
		switch {
		case n.expanded():
			return fmt.Errorf("not a valid URL once its variables are expanded: %q", n.shown())
		case errors.As(err, &ue):
			return fmt.Errorf("not a valid URL: %q: %v", n.shown(), MaskURL(ue.Err.Error()))
		}
		return fmt.Errorf("not a valid URL: %q", n.shown())
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("must be an http:// or https:// URL, got %q", n.shown())
	}
	if u.Host == "" {
		return fmt.Errorf("has no host: %q", n.shown())
	}
	return nil
}

// checkFilters checks that each toolFilters entry is a valid glob.
func (v *validator) checkFilters(f *node, p string) {
	if f == nil || f.kind != kArray {
		return
	}
	for i, e := range f.vals {
		if e.kind != kString {
			continue
		}
		if _, err := path.Match(e.str, ""); err != nil {
			v.problem(indexPath(p, i), "bad glob pattern %q: %v", e.shown(), err)
		}
	}
	if len(f.vals) == 0 {
		v.warn(p, "empty: no tool of this server will be offered (leave it out to offer every tool)")
	}
}

// The readers below take what is there and ignore what is not of the
// expected kind: the schema has reported that already.

func readLimits(n *node, def limits) limits {
	out := def
	if ms, ok := integer(n.get("connectionTimeoutMs")); ok {
		out.connect = time.Duration(ms) * time.Millisecond
	}
	if ms, ok := integer(n.get("requestTimeoutMs")); ok {
		out.request = time.Duration(ms) * time.Millisecond
	}
	if r, ok := integer(n.get("maxRetries")); ok {
		out.retries = int(r)
	}
	if ms, ok := integer(n.get("idleTimeoutMs")); ok {
		out.idle = time.Duration(ms) * time.Millisecond
	}
	out.catalog = boolean(n.get("catalog"), out.catalog)
	if m := str(n.get("toolChanges")); m != "" {
		out.toolChanges = m
	}
	out.blockFlagged = boolean(n.get("blockFlaggedTools"), out.blockFlagged)
	out.approveNew = boolean(n.get("approveNewTools"), out.approveNew)
	if m, ok := integer(n.get("maxTools")); ok {
		out.maxTools = int(m)
	}
	if m, ok := integer(n.get("maxToolListBytes")); ok {
		out.maxToolBytes = int(m)
	}
	return out
}

func integer(n *node) (int64, bool) {
	if n == nil || n.kind != kNumber {
		return 0, false
	}
	i, err := n.num.Int64()
	return i, err == nil
}

func str(n *node) string {
	if n == nil || n.kind != kString {
		return ""
	}
	return n.str
}

func boolean(n *node, def bool) bool {
	if n == nil || n.kind != kBool {
		return def
	}
	return n.b
}

func strs(n *node) []string {
	if n == nil || n.kind != kArray {
		return nil
	}
	out := make([]string, 0, len(n.vals))
	for _, e := range n.vals {
		if e.kind == kString {
			out = append(out, e.str)
		}
	}
	return out
}

func strMap(n *node) map[string]string {
	if n == nil || n.kind != kObject {
		return nil
	}
	out := make(map[string]string, len(n.keys))
	for i, k := range n.keys {
		if n.vals[i].kind == kString {
			out[k] = n.vals[i].str
		}
	}
	return out
}

// sortProblems puts problems in the order of the document, so that a
// user reads them top to bottom. A problem at a place that does not exist
// (a missing key) sorts with its parent.
func (v *validator) sortProblems(root *node, ps []Problem) {
	order := map[string]int{}
	var walk func(n *node, p string)
	walk = func(n *node, p string) {
		order[v.shownPath(p)] = len(order)
		for i, c := range n.vals {
			if n.kind == kObject {
				walk(c, JoinPath(p, n.keys[i]))
			} else {
				walk(c, indexPath(p, i))
			}
		}
	}
	walk(root, "")
	pos := func(p string) int {
		for {
			if i, ok := order[p]; ok {
				return i
			}
			cut := max(strings.LastIndexByte(p, '.'), strings.LastIndexByte(p, '['))
			if cut <= 0 {
				return 0
			}
			p = p[:cut]
		}
	}
	slices.SortStableFunc(ps, func(a, b Problem) int { return cmp.Compare(pos(a.Path), pos(b.Path)) })
}
