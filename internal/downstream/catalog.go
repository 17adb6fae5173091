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

// Shown records the tools an open_toolbox showed of the server: ts from
// [Server.Cached], or nil for the live list. A live list that differs from
// tools shown from the catalog makes [Server.ChangedSinceShown] true.
func (s *Server) Shown(ts *ToolSet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shown, s.changed = ts, false
	if ts != nil && s.listedTools != nil {
		s.changed = !sameTools(ts, s.listedTools)
	}
	if ts == nil && s.live != nil {
		ts = s.live.tools.Load()
	}
	s.noteShown(ts)
}

// ChangedSinceShown reports whether the server's live tools differ from
// the catalog's, which the last open_toolbox showed: a call the live list
// refuses should then say that the toolbox changed and be opened again.
func (s *Server) ChangedSinceShown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// listed takes a new live list of the server's tools: ts as offered, kept
// the tool objects as sent (every valid tool, before toolFilters) and pages
// the raw tools/list results (nil where the transport cannot capture
// them). It notes a difference from what an open showed, and stores the
// list in the catalog unless the entry there holds it already. Catalog
// failures are logged at debug: the catalog only saves time.
func (s *Server) listed(ts *ToolSet, kept, pages []json.RawMessage) {
	s.mu.Lock()
	s.listedTools = ts
	s.changed = s.shown != nil && !sameTools(s.shown, ts) // the newest list decides
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
