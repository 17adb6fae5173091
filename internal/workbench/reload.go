package workbench

import (
	"sync"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
)

// Reload serves cfg from now on, in place of the configuration the
// workbench has, and returns what changed. Servers and toolboxes that are
// gone are stopped; servers whose definition changed are stopped and start
// again, with the new one, on next use; unchanged servers keep running
// with their sessions, and their calls in flight go on; added ones are
// offered at once. A toolbox that changed in any way is no longer open
// (its next use opens it again); the others stay open.
//
// When the list of toolboxes changed (names, order, descriptions,
// servers), open_toolbox's description and toolbox enum are updated and
// every host session is sent notifications/tools/list_changed. The
// initialize instructions cannot change for a session that has started.
//
// Reload returns once the servers it stopped are gone. After Close it does
// nothing.
func (w *Workbench) Reload(cfg *config.Config) config.Changes {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.state.Load()
	ch := config.Diff(old.cfg, cfg)
	if w.closed {
		return ch
	}
	changed := map[string]bool{}
	for _, name := range ch.ToolboxesChanged {
		changed[name] = true
	}
	next := &state{cfg: cfg, byName: map[string]*toolbox{}}
	kept := map[*downstream.Server]bool{}
	for _, tc := range cfg.Toolboxes {
		otb := old.byName[tc.Name]
		tb := otb
		if otb == nil || changed[tc.Name] {
			tb = w.newToolbox(tc, otb)
		}
		for _, s := range tb.servers {
			kept[s] = true
		}
		next.add(tb)
	}
	w.state.Store(next)
	w.live.Poke()

	var stop []*downstream.Server
	for _, tb := range old.toolboxes {
		for _, s := range tb.servers {
			if !kept[s] {
				stop = append(stop, s)
			}
		}
	}
	if ch.ToolboxListChanged() {
		tool := w.openToolboxTool()
		w.hostsMu.Lock()
		for _, s := range w.servers {
			s.AddTool(tool, w.handleOpen) // replaces it, and tells the session
		}
		w.hostsMu.Unlock()
	}
	if !ch.Empty() {
		w.log.Info("configuration reloaded",
			"toolboxes_added", len(ch.ToolboxesAdded), "toolboxes_removed", len(ch.ToolboxesRemoved), "toolboxes_changed", len(ch.ToolboxesChanged),
			"servers_added", len(ch.ServersAdded), "servers_removed", len(ch.ServersRemoved), "servers_changed", len(ch.ServersChanged))
	}
	removed := map[config.ServerID]bool{}
	for _, id := range ch.ServersRemoved {
		removed[id] = true
	}
	var wg sync.WaitGroup
	for _, s := range stop {
		reason := downstream.ErrChanged
		if removed[config.ServerID{Toolbox: s.Toolbox, Server: s.Name}] {
			reason = downstream.ErrRemoved
		}
		wg.Go(func() { w.closeServer(s, reason) })
	}
	wg.Wait()
	return ch
}
