package downstream

import (
	"cmp"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
)

// Pool holds the servers of a shared workbench, whose host sessions each
// have a Workbench of their own: a server whose definition is the same in
// two of them (the same launch, once each session's variables are
// expanded) runs once for both. Its methods are safe for concurrent use.
type Pool struct {
	o        *Options
	watchdog *proctree.Watchdog // the pool's own, when o had none

	mu      sync.Mutex
	closed  bool
	byID    map[config.ServerID][]*pooled // the servers of each (toolbox, server) name
	pooledS map[*Server]*pooled

	// watchers are told when a server of the pool may have changed state
	// (see [Pool.OnChange]); under their own lock, since servers call it
	// under theirs.
	watchMu  sync.Mutex
	watchers map[any]func()
}

// pooled is one server of a pool and who uses it.
type pooled struct {
	s *Server
	// owner is the one owner of a server that is not shared (its
	// config.Server.Shared is false), nil for a shared one.
	owner any
	users map[any]*user
}

type user struct {
	n       int // Acquires not yet Released
	changed func(*Server)
}

// NewPool returns a pool of servers shared by the Workbenches of one
// process (the shared workbench's sessions). o is the options every server
// of the pool gets (Logger, Stderr, Watchdog, ClientInfo, Catalog, Pins,
// Names, ConfigPath…); its PinsChanged is the pool's own, which tells
// every user of the server. Without a Watchdog, the pool starts one, which
// its Close closes.
func NewPool(o *Options) *Pool {
	do := *o
	if do.Logger == nil {
		do.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Pool{byID: map[config.ServerID][]*pooled{}, pooledS: map[*Server]*pooled{}}
	if do.Watchdog == nil {
		p.watchdog = proctree.NewWatchdog(do.Logger)
		do.Watchdog = p.watchdog
	}
	do.PinsChanged = p.pinsChanged
	prev := do.Changed
	do.Changed = func() {
		if prev != nil {
			prev()
		}
		p.watchMu.Lock()
		for _, f := range p.watchers {
			f()
		}
		p.watchMu.Unlock()
	}
	p.o = &do
	return p
}

// OnChange calls f, until the returned func is called, whenever a server
// of the pool may have changed state (what [Options.Changed] says; f must
// return at once). owner keys it: one per owner.
func (p *Pool) OnChange(owner any, f func()) (stop func()) {
	p.watchMu.Lock()
	if p.watchers == nil {
		p.watchers = map[any]func(){}
	}
	p.watchers[owner] = f
	p.watchMu.Unlock()
	return func() {
		p.watchMu.Lock()
		delete(p.watchers, owner)
		p.watchMu.Unlock()
	}
}

// Acquire returns the server for (toolbox, sc) used by owner (a comparable
// value, such as a pointer: the caller's Workbench): an existing
// one if a server of the pool has the same key, else a new one
// ([NewServer]; nothing is started). The key is the toolbox name, the
// server name and every field of sc as [config.SameServer] compares them
// (BaseEnv and Cwd included), so that the equal definitions of two
// sessions' configurations find one server; a server whose sc.Shared is
// false is keyed by owner too, so no other owner ever gets it. The
// server's Config stays the sc of its first acquirer. changed is called,
// with the server, when its tools change in a way the owner's host must
// hear of (what [Options.PinsChanged] says); it must not wait for the
// pool or the server to be closed.
//
// After Close, Acquire returns a closed server: its calls fail as a
// shutting-down workbench's do.
func (p *Pool) Acquire(owner any, toolbox string, sc *config.Server, changed func(*Server)) *Server {
	id := config.ServerID{Toolbox: toolbox, Server: sc.Name}
	var mine any
	if !sc.Shared {
		mine = owner
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		s := NewServer(toolbox, sc, p.o)
		s.Close() // never started: returns at once
		return s
	}
	var e *pooled
	for _, c := range p.byID[id] {
		if c.owner == mine && config.SameServer(c.s.Config(), sc) {
			e = c
			break
		}
	}
	if e == nil {
		e = &pooled{s: NewServer(toolbox, sc, p.o), owner: mine, users: map[any]*user{}}
		// A server of one session can ask that session's host (ask.go);
		// a shared one has no host: its requests could not be told apart.
		if h, ok := mine.(Host); ok {
			e.s.host = h
		}
		p.byID[id] = append(p.byID[id], e)
		p.pooledS[e.s] = e
	}
	u := e.users[owner]
	if u == nil {
		u = &user{}
		e.users[owner] = u
	}
	u.n++
	u.changed = changed
	return e.s
}

// Release ends owner's use of s; the last user's Release closes s, and
// waits until it is stopped.
func (p *Pool) Release(owner any, s *Server) { p.ReleaseFor(owner, s, errClosed) }

// ReleaseFor is Release that, when it closes s, gives calls in flight and
// later ones reason (see [Server.CloseFor]): ErrRemoved or ErrChanged
// when a reload of the owner's configuration let s go.
func (p *Pool) ReleaseFor(owner any, s *Server, reason error) {
	p.mu.Lock()
	e := p.pooledS[s]
	if e == nil || e.users[owner] == nil {
		p.mu.Unlock()
		return // not acquired by owner, or the pool is closed
	}
	if u := e.users[owner]; u.n > 1 {
		u.n--
		p.mu.Unlock()
		return
	}
	delete(e.users, owner)
	last := len(e.users) == 0
	if last {
		p.removeLocked(e)
	}
	p.mu.Unlock()
	if last {
		s.CloseFor(reason)
	} else {
		s.Forget(owner) // what its opens showed
	}
}

func (p *Pool) removeLocked(e *pooled) {
	delete(p.pooledS, e.s)
	id := config.ServerID{Toolbox: e.s.Toolbox, Server: e.s.Name}
	rest := p.byID[id][:0]
	for _, c := range p.byID[id] {
		if c != e {
			rest = append(rest, c)
		}
	}
	if len(rest) == 0 {
		delete(p.byID, id)
	} else {
		p.byID[id] = rest
	}
}

// Close closes every server of the pool, in parallel, and waits until they
// are stopped; then the pool's own watchdog, if it started one. Close is
// idempotent.
func (p *Pool) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	servers := make([]*Server, 0, len(p.pooledS))
	for s := range p.pooledS {
		servers = append(servers, s)
	}
	p.byID, p.pooledS = map[config.ServerID][]*pooled{}, map[*Server]*pooled{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(s.Close)
	}
	wg.Wait()
	p.watchdog.Close()
}

// PoolEntry is one server of a pool, for a status report.
type PoolEntry struct {
	Toolbox, Server string
	Users           int // owners using it
	// Shared is the server's config.Server.Shared: whether other owners
	// may come to use it.
	Shared bool
	State  State
	// IdleFor is how long it has had no call in flight, while running.
	IdleFor time.Duration
}

// Entries reports the servers of the pool, by toolbox and server name.
func (p *Pool) Entries() []PoolEntry {
	type snap struct {
		s     *Server
		users int
	}
	p.mu.Lock()
	snaps := make([]snap, 0, len(p.pooledS))
	for s, e := range p.pooledS {
		snaps = append(snaps, snap{s, len(e.users)})
	}
	p.mu.Unlock()
	out := make([]PoolEntry, len(snaps))
	for i, sn := range snaps {
		// State outside p.mu: it may read the pin store.
		out[i] = PoolEntry{Toolbox: sn.s.Toolbox, Server: sn.s.Name, Users: sn.users, Shared: sn.s.Config().Shared, State: sn.s.State(), IdleFor: sn.s.IdleFor()}
	}
	slices.SortFunc(out, func(a, b PoolEntry) int {
		return cmp.Or(cmp.Compare(a.Toolbox, b.Toolbox), cmp.Compare(a.Server, b.Server), cmp.Compare(b.Users, a.Users))
	})
	return out
}

// pinsChanged tells every user of s that its tools changed. The callbacks
// run outside the pool's lock: one takes its workbench's own.
func (p *Pool) pinsChanged(s *Server) {
	p.mu.Lock()
	var tell []func(*Server)
	if e := p.pooledS[s]; e != nil {
		for _, u := range e.users {
			if u.changed != nil {
				tell = append(tell, u.changed)
			}
		}
	}
	p.mu.Unlock()
	for _, f := range tell {
		f(s)
	}
}
