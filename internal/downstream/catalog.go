package downstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
)

// The tool catalog's side of a server. Each listing of the server's tools
// is stored in the catalog when it differs from the entry there (or there
// is none, or it expired), so that the next open_toolbox of a workbench,
// this one or another, can show the tools before the server has started.
// When an open showed the catalog's tools and the live list turns out to
// be different, the server remembers it, so that a call the live list
// refuses can say that the toolbox changed.

// UsesCatalog reports whether open_toolbox may show this server's tools
// from the catalog: the workbench has one and the server's "catalog" is
// not false.
func (s *Server) UsesCatalog() bool { return s.catalogKey != "" }

// Cached returns the server's tools from the catalog, filtered and
// rendered as open_toolbox shows them, or false and why not (for a debug
// log). Their schemas are not compiled: calls wait for the live list,
// which the server's start brings.
func (s *Server) Cached() (*ToolSet, bool, string) {
	if s.catalogKey == "" {
		return nil, false, "the server does not use the catalog"
	}
	// The entry last read is kept while the catalog's file is the same
	// (searches read every server's entry) and has not expired.
	stamp := s.o.Catalog.Stamp(s.catalogKey)
	if s.o.Pins != nil && stamp != "" {
		stamp += "/" + s.o.Pins.Stamp(s.pinKey) // an approval changes what is withheld
	}
	if stamp != "" {
		stamp += fmt.Sprintf("/%d", s.o.Names.Version()) // and other servers' names what is flagged
	}
	s.catMu.Lock()
	defer s.catMu.Unlock()
	if stamp != "" && stamp == s.cat.stamp && (s.cat.expires.IsZero() || time.Now().Before(s.cat.expires)) {
		return s.cat.tools, true, ""
	}
	e, ok, reason := s.o.Catalog.Get(s.catalogKey)
	if !ok {
		s.cat = cachedEntry{}
		return nil, false, reason
	}
	ts, _ := toolSet(e.Tools, func(string) bool { return true }, s.cfg.ToolFilters, s.Toolbox, s.Name, s.log, false)
	ts = s.guard(ts, false)
	s.cat = cachedEntry{stamp: stamp, tools: ts}
	if exp, ok := e.Expires(); ok {
		s.cat.expires = exp
	}
	return ts, true, ""
}

// cachedEntry is the catalog entry [Server.Cached] read last, as a tool
// set, and the stamp of the file it came from.
type cachedEntry struct {
	stamp   string
	tools   *ToolSet
	expires time.Time // zero: none
}

// Shown records the tools an open_toolbox of viewer (the Workbench of a
// host session; a comparable value) showed of the server: ts from
// [Server.Cached], or nil for the live list. Each viewer has its own
// record: in a shared workbench the sessions open their toolboxes at
// different times, from the catalog or from the live list.
func (s *Server) Shown(viewer any, ts *ToolSet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := &view{catalog: ts}
	if ts == nil && s.live != nil {
		ts = s.live.tools.Load()
	}
	if ts != nil {
		v.defs = make(map[string]string, len(ts.Tools))
		for _, t := range ts.Tools {
			v.defs[t.Name] = t.def.Hash
		}
	}
	if s.views == nil {
		s.views = map[any]*view{}
	}
	s.views[viewer] = v
}

// view is what one viewer's last open showed of the server.
type view struct {
	// catalog is the tool set shown when it came from the catalog, nil
	// when it was the live list.
	catalog *ToolSet
	// defs maps the tools shown to their definitions' hashes: a call of a
	// tool whose definition changed since then is refused with "the
	// toolbox changed".
	defs map[string]string
}

// Forget drops viewer's record (see [Server.Shown]): its session ended, or
// let the server go.
func (s *Server) Forget(viewer any) {
	s.mu.Lock()
	delete(s.views, viewer)
	s.mu.Unlock()
}

// ChangedSinceShown reports whether the server's live tools differ from
// the catalog's, which viewer's last open_toolbox showed: a call the live
// list refuses should then say that the toolbox changed and be opened
// again.
func (s *Server) ChangedSinceShown(viewer any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.views[viewer]
	return v != nil && v.catalog != nil && s.listedTools != nil && !sameTools(v.catalog, s.listedTools)
}

// shownHash returns the hash of the definition viewer's last open showed
// of the tool name.
func (s *Server) shownHash(viewer any, name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.views[viewer]
	if v == nil {
		return "", false
	}
	h, ok := v.defs[name]
	return h, ok
}

// listed takes a new live list of the server's tools: ts as offered, kept
// the tool objects as sent (every valid tool, before toolFilters) and pages
// the raw tools/list results (nil where the transport cannot capture
// them). It keeps it (what each viewer's open showed is compared with the
// newest list), and stores the list in the catalog unless the entry there holds it already. Catalog
// failures are logged at debug: the catalog only saves time.
func (s *Server) listed(ts *ToolSet, kept, pages []json.RawMessage) {
	s.mu.Lock()
	s.listedTools = ts // the newest list decides what changed since an open
	s.mu.Unlock()
	if s.catalogKey == "" {
		return
	}
	if e, ok, _ := s.o.Catalog.Get(s.catalogKey); ok && sameRaw(e.Tools, kept) {
		return
	}
	if err := s.o.Catalog.Put(s.catalogKey, kept, catalog.HintFrom(pages...)); err != nil {
		s.log.Debug("could not store the tool list in the catalog", "error", err)
		return
	}
	s.log.Debug("stored the tool list in the catalog", "tools", len(kept))
}

// sameRaw reports whether two lists of tool objects hold the same bytes
// (the catalog trims the space around each).
func sameRaw(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(bytes.TrimSpace(a[i]), bytes.TrimSpace(b[i])) {
			return false
		}
	}
	return true
}
