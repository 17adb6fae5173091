// Package workbench is the MCP server the host talks to: two tools,
// open_toolbox and use_tool, over the toolboxes of a configuration, each
// toolbox a set of downstream servers started on first use.
package workbench

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/live"
	"github.com/mcpworkbench/mcp-workbench/internal/pins"
	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
	"github.com/mcpworkbench/mcp-workbench/internal/serverproc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name is the workbench's name in serverInfo and clientInfo.
const Name = "mcp-workbench"

// Options configure a Workbench.
type Options struct {
	Version string
	Logger  *slog.Logger
	// Stderr receives the downstream servers' stderr lines.
	Stderr io.Writer
	// Catalog, if set, keeps the tools servers list, so that open_toolbox
	// answers from it while the servers start (servers whose "catalog" is
	// false excepted). Nil: every open waits for the servers.
	Catalog *catalog.Catalog
	// CatalogStoreOnly stores what servers list in Catalog but never
	// answers an open from it: for check, which reports what the servers
	// do now.
	CatalogStoreOnly bool
	// Pins, if set, pins the servers' tool definitions and withholds
	// changed ones (see internal/pins and downstream's pins.go).
	Pins *pins.Store
	// Downstream, if set, overrides how downstream servers are handled
	// (tests shorten waits with it). Logger, Stderr, Watchdog, ClientInfo
	// and Catalog are filled in when empty.
	Downstream *downstream.Options
	// Pool, if set, holds the servers: the workbench is one host session's
	// of a shared workbench, and gets each server from the pool, which
	// runs a server once for every session whose definition of it is the
	// same. The pool's options then rule the servers: Stderr, Catalog,
	// Pins and Downstream are ignored for them (Downstream's ConfigPath
	// still names the file in the commands messages give), and the
	// workbench starts no watchdog of its own.
	Pool *downstream.Pool
	// Logins, if set, are the logins through a host shared with other
	// workbenches (those of a shared workbench's sessions): sessions that
	// need the same login get one, each shown its page, and all are told
	// when it ends. Nil: the workbench's own.
	Logins *Logins
	// StateKey signs the request states handed to hosts (roundtrip.go):
	// workbenches that share it (replicas behind a load balancer) verify
	// each other's. Nil: a key of the process's own.
	StateKey []byte
}

// Workbench holds the toolboxes of one configuration and their servers.
// A reload replaces the configuration (see [Workbench.Reload]).
type Workbench struct {
	log     *slog.Logger
	version string
	do      *downstream.Options
	pool    *downstream.Pool // nil: the workbench's servers are its own
	// catalogOpens allows open_toolbox to answer from the tool catalog.
	catalogOpens bool
	watchdog     *proctree.Watchdog

	// state is what the configuration serves; use_tool reads it without a
	// lock, and a reload swaps it whole.
	state atomic.Pointer[state]

	logins *Logins // logins whose pages went to a host
	// stateKey signs request states (Options.StateKey).
	stateKey []byte

	indexes indexCache // search indexes of recent searches

	// live writes the workbench's state file for the web UI (live.go);
	// unwatch ends the pool's pokes of it.
	live    *live.Publisher
	unwatch func()

	mu     sync.Mutex // serializes reloads and Close; guards closed
	closed bool

	// hostsMu guards what follows, apart from mu: pinsChanged takes it
	// from a server's background goroutine, which Close and Reload wait
	// for (under mu) when they stop the server.
	hostsMu     sync.Mutex
	hostsClosed bool
	servers     []*mcp.Server // the MCP servers of the host sessions, to update on reload

	// host is the host's connection its servers ask (ask.go).
	host atomic.Pointer[hostConn]
	// allowed are the tools the user allowed for the rest of a host
	// session, by its scope (permissions.go).
	allowed allowances
}

// state is one configuration's toolboxes. It is never changed once
// published: a reload makes a new one, which shares the toolboxes and
// servers the reload left as they were.
type state struct {
	cfg       *config.Config
	toolboxes []*toolbox
	byName    map[string]*toolbox
}

type toolbox struct {
	cfg     *config.Toolbox
	servers []*downstream.Server // in file order, disabled ones included

	opened  atomic.Bool // open_toolbox (or a use_tool) has opened it once
	opening atomic.Bool // a use_tool is opening it in the background
}

func (tb *toolbox) server(name string) *downstream.Server {
	for _, s := range tb.servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// New returns a Workbench for cfg. No server is started.
func New(cfg *config.Config, opts Options) *Workbench {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Workbench{
		log:          log,
		version:      opts.Version,
		catalogOpens: !opts.CatalogStoreOnly,
		pool:         opts.Pool,
		logins:       opts.Logins,
		stateKey:     opts.StateKey,
	}
	if w.stateKey == nil {
		w.stateKey = processKey
	}
	if w.logins == nil {
		w.logins = &Logins{}
	}
	var do downstream.Options
	if opts.Downstream != nil {
		do = *opts.Downstream
	}
	if do.Logger == nil {
		do.Logger = log
	}
	if do.Stderr == nil {
		do.Stderr = opts.Stderr
	}
	if do.Watchdog == nil && w.pool == nil {
		w.watchdog = proctree.NewWatchdog(log)
		do.Watchdog = w.watchdog
	}
	if do.ConfigPath == "" {
		do.ConfigPath = cfg.Path
	}
	if do.ClientInfo == nil {
		do.ClientInfo = &mcp.Implementation{Name: Name, Version: opts.Version}
	}
	if do.Catalog == nil {
		do.Catalog = opts.Catalog
	}
	if do.Pins == nil {
		do.Pins = opts.Pins
	}
	if do.Names == nil {
		do.Names = &downstream.ToolNames{}
	}
	if do.PinsChanged == nil {
		do.PinsChanged = w.pinsChanged
	}
	if do.Host == nil {
		do.Host = w
	}
	w.live = live.NewPublisher(cfg.Path, opts.Version, w.liveServers)
	chainChanged(&do, w.live)
	if w.pool != nil {
		// The pool's servers have the pool's options: it tells us.
		w.unwatch = w.pool.OnChange(w, w.live.Poke)
	}
	w.do = &do
	st := &state{cfg: cfg, byName: map[string]*toolbox{}}
	for _, tc := range cfg.Toolboxes {
		st.add(w.newToolbox(tc, nil))
	}
	w.state.Store(st)
	return w
}

func (st *state) add(tb *toolbox) {
	st.toolboxes = append(st.toolboxes, tb)
	st.byName[tb.cfg.Name] = tb
}

// newToolbox makes a toolbox for tc, reusing the servers of old (a
// toolbox of the same name in the configuration before a reload) whose
// definition is the same, and making new ones for the others.
func (w *Workbench) newToolbox(tc *config.Toolbox, old *toolbox) *toolbox {
	tb := &toolbox{cfg: tc}
	for _, sc := range tc.Servers {
		if old != nil {
			// A kept server keeps its old *config.Server: SameServer
			// compares every field, so the two are the same value.
			if s := old.server(sc.Name); s != nil && config.SameServer(s.Config(), sc) {
				tb.servers = append(tb.servers, s)
				continue
			}
		}
		tb.servers = append(tb.servers, w.newServer(tc.Name, sc))
	}
	return tb
}

// newServer returns the server for sc in toolbox: the pool's, or one of
// the workbench's own.
func (w *Workbench) newServer(toolbox string, sc *config.Server) *downstream.Server {
	if w.pool != nil {
		return w.pool.Acquire(w, toolbox, sc, w.pinsChanged)
	}
	return downstream.NewServer(toolbox, sc, w.do)
}

// closeServer stops s, which the workbench no longer uses, for reason
// (nil: the workbench is closing); the pool's servers only when no other
// workbench uses them.
func (w *Workbench) closeServer(s *downstream.Server, reason error) {
	switch {
	case w.pool != nil && reason == nil:
		w.pool.Release(w, s)
	case w.pool != nil:
		w.pool.ReleaseFor(w, s, reason)
	case reason == nil:
		s.Close()
	default:
		s.CloseFor(reason)
	}
}

// Close stops every server the workbench started, with their process
// trees, in parallel, and returns when they are gone. Calls in flight end
// with an error. With a pool, Close releases the workbench's servers
// instead: those other workbenches use go on. Close is idempotent.
func (w *Workbench) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	w.hostsMu.Lock()
	w.hostsClosed = true
	w.hostsMu.Unlock()
	w.cancelLogins()
	var wg sync.WaitGroup
	for _, tb := range w.state.Load().toolboxes {
		for _, s := range tb.servers {
			wg.Go(func() { w.closeServer(s, nil) })
		}
	}
	wg.Wait()
	if w.unwatch != nil {
		w.unwatch()
	}
	w.live.Close()
	live.Flush(2 * time.Second)
	w.watchdog.Close()
}

// Instructions is the text of the initialize result's instructions: the
// toolboxes in file order, with their server counts and descriptions.
func (w *Workbench) Instructions() string {
	st := w.state.Load()
	if len(st.toolboxes) == 0 {
		where := "the workbench configuration file"
		if st.cfg.Path != "" {
			where = st.cfg.Path
			if abs, err := filepath.Abs(where); err == nil {
				where = abs
			}
		}
		return "No toolboxes configured.\n\nTo add one, put it under \"toolboxes\" in " + where +
			"; the workbench picks the change up without a restart, and open_toolbox's description then lists it."
	}
	// Descriptions are cut short when the whole would pass maxInstructions.
	per := len("\n (99 servers, 9999 tools)\n  Description: \n")
	room := maxInstructions - len(instructionsHead) - len(instructionsTail)
	descMax := 0
	for _, tb := range st.toolboxes {
		room -= per + len(tb.cfg.Name)
		descMax = max(descMax, len(tb.cfg.Description))
	}
	for descMax > 40 && room < sumClipped(st.toolboxes, descMax) {
		descMax -= 20
	}
	var b strings.Builder
	b.WriteString(instructionsHead)
	for _, tb := range st.toolboxes {
		n := tb.cfg.EnabledServers()
		unit := "servers"
		if n == 1 {
			unit = "server"
		}
		b.WriteString("\n")
		b.WriteString(tb.cfg.Name)
		b.WriteString(" (")
		b.WriteString(strconv.Itoa(n))
		b.WriteString(" ")
		b.WriteString(unit)
		if tools, ok := w.knownToolCount(tb); ok {
			b.WriteString(", ")
			b.WriteString(strconv.Itoa(tools))
			b.WriteString(" tools")
		}
		b.WriteString(")\n  Description: ")
		b.WriteString(serverproc.Clip(tb.cfg.Description, descMax))
		b.WriteString("\n")
	}
	b.WriteString(instructionsTail)
	return b.String()
}

// The instructions' fixed parts, and the most they may hold: hosts put
// them in every prompt.
const (
	instructionsHead = "Available Toolboxes:\n"
	instructionsTail = "\nTo find a tool, call open_toolbox with a \"query\" saying what the task needs: it searches the tools of every toolbox " +
		"and returns the best matches, ready for use_tool. Or open a whole toolbox with open_toolbox and its \"toolbox_name\", " +
		"then use_tool to invoke its tools."
	maxInstructions = 4000
)

func sumClipped(tbs []*toolbox, n int) int {
	sum := 0
	for _, tb := range tbs {
		sum += min(len(tb.cfg.Description), n+len("…"))
	}
	return sum
}

// knownToolCount is how many tools the enabled servers of tb offer, when
// it is known of every one of them without starting it (running, or in
// the tool catalog).
func (w *Workbench) knownToolCount(tb *toolbox) (int, bool) {
	n, any := 0, false
	for _, s := range tb.servers {
		switch st := s.State(); {
		case st.Status == downstream.StatusDisabled:
			continue
		case st.Status == downstream.StatusConnected:
			n += len(st.Tools.Tools)
		case w.catalogOpens && s.UsesCatalog():
			ts, ok, _ := s.Cached()
			if !ok {
				return 0, false
			}
			n += len(ts.Tools)
		default:
			return 0, false
		}
		any = true
	}
	return n, any
}

// Connect serves the workbench's two tools to a host that writes to in and
// reads from out, MCP's stdio transport, until the session ends. The
// caller closes the streams.
func (w *Workbench) Connect(ctx context.Context, in io.Reader, out io.Writer) (*mcp.ServerSession, error) {
	s := w.newMCPServer(nil, handleUseElsewhere)
	t := &hostTransport{w: w, in: in, out: out}
	ss, err := s.Connect(ctx, t, nil)
	if err != nil {
		return nil, err
	}
	// The servers' requests of the host go to the host connected last.
	t.conn.ss.Store(ss)
	w.host.Store(t.conn)
	return ss, nil
}

// newMCPServer is the SDK's server of a host session: the two tools,
// use_tool served by use. initialized, if set, is told the session once
// the host initialized it.
func (w *Workbench) newMCPServer(initialized func(context.Context, *mcp.InitializedRequest), use mcp.ToolHandler) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Version: w.version}, &mcp.ServerOptions{
		Instructions: w.Instructions(),
		Logger:       downstream.SDKLogger(w.log),
		// The host's roots changed: its servers are told (ask.go).
		//lint:ignore SA1019 the host's roots are relayed to servers of the 2025 protocols
		RootsListChangedHandler: w.rootsChanged,
		// open_toolbox lists the toolboxes, which a reload of the
		// configuration changes.
		Capabilities:       &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		SetCacheable:       cacheToolList,
		InitializedHandler: initialized,
	})
	s.AddReceivingMiddleware(w.noteRequestCapabilities)
	w.hostsMu.Lock()
	s.AddTool(w.openToolboxTool(), w.handleOpen)
	s.AddTool(useToolTool(), use)
	w.servers = append(w.servers, s)
	w.hostsMu.Unlock()
	return s
}

// toolListTTL is the life tools/list gives the workbench's two tools, in
// ms: a day. They change only when a reload changes the toolboxes, and
// the host is told then (notifications/tools/list_changed); a host that
// keeps the list (2026-07-28 hosts read ttlMs) keeps its prompt's bytes
// too.
const toolListTTL = 24 * 60 * 60 * 1000

// cacheToolList sets the caching hints of the workbench's tools/list:
// toolListTTL, and "private", since the toolboxes it names are the user's.
func cacheToolList(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	if _, ok := req.(*mcp.ListToolsRequest); ok {
		c.TTLMs, c.CacheScope = toolListTTL, "private"
	}
}

// handleUseElsewhere is use_tool's handler in the SDK, which never runs:
// the host's connection serves every use_tool call itself (host.go), and
// the SDK refuses the ones it would not serve either.
func handleUseElsewhere(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return errorResult("use_tool is served by the workbench's connection to the host"), nil
}

// Tools returns the workbench's two tools as a host lists them.
func (w *Workbench) Tools() []*mcp.Tool {
	return []*mcp.Tool{w.openToolboxTool(), useToolTool()}
}

// Servers returns the servers of a toolbox in file order, disabled ones
// included, or nil for an unknown toolbox. The command line's check uses
// them to report on each server as it starts.
func (w *Workbench) Servers(toolbox string) []*downstream.Server {
	if tb := w.state.Load().byName[toolbox]; tb != nil {
		return tb.servers
	}
	return nil
}

// RenderStarts is [Workbench.Render] from what each server's start
// produced (its tools, or its error) rather than its live state: check
// reports on starts that all ended, while an idleTimeoutMs may have stopped
// a quick server before the slowest one started. started returns nil, nil
// for a server that was not started.
func (w *Workbench) RenderStarts(toolbox string, started func(*downstream.Server) (*downstream.ToolSet, error)) *mcp.CallToolResult {
	tb := w.state.Load().byName[toolbox]
	if tb == nil {
		return textResult(w.toolboxNotFound(toolbox), true)
	}
	views := make([]serverView, len(tb.servers))
	for i, s := range tb.servers {
		tools, err := started(s)
		switch {
		case s.Config().Disabled:
			views[i] = serverView{status: downstream.StatusDisabled}
		case tools != nil:
			views[i] = serverView{status: downstream.StatusConnected, tools: tools}
		case err != nil:
			views[i] = serverView{status: downstream.StatusError, err: err}
		default:
			views[i] = serverView{status: downstream.StatusIdle}
		}
	}
	return w.renderOpen(tb, views)
}

// pinsChanged tells the hosts that what open_toolbox returns changed: a
// running server's new tool list withholds or changes tools. open_toolbox
// is added again as it is, which makes the SDK send
// notifications/tools/list_changed to every session; the two tools stay
// the same.
func (w *Workbench) pinsChanged(*downstream.Server) {
	w.hostsMu.Lock()
	defer w.hostsMu.Unlock()
	if w.hostsClosed {
		return
	}
	tool := w.openToolboxTool()
	for _, s := range w.servers {
		s.AddTool(tool, w.handleOpen)
	}
}
