package downstream

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/pins"
)

// Tool pinning's side of a server (see internal/pins). Every tool set the
// server yields — a live list, or one read from the catalog — passes
// guard: each tool's definition is compared with its pin and screened, and
// the tools that changed since they were approved (with "toolChanges":
// "block"), that are new while approveNewTools is set, whose pin file is
// damaged, or that screening flagged while blockFlaggedTools is set are
// withheld: left out of the set's Tools, so that open_toolbox does not
// show them and use_tool refuses them, naming what changed and the
// commands to review and approve it. A live list of a server never seen
// pins its tools (first sight is trusted unless approveNewTools), and a
// live list pins the tools a known server adds.

// ToolNames is what every server of a workbench listed, for screening's
// cross-server mentions. Each server keeps its own entry, under its
// "toolbox/server" label: in a shared workbench two sessions' copies of a
// server (one that is not shared, or whose definition differs between
// them) have the same label and different tools. Safe for concurrent use.
type ToolNames struct {
	mu      sync.Mutex
	m       map[*Server]labelled // each server's tool names
	version uint64               // counts changes of m
}

type labelled struct {
	label string // "toolbox/server"
	names []string
}

// Version counts the changes of the names: a tool set screened under
// another version is screened again (see conn.recheck).
func (n *ToolNames) Version() uint64 {
	if n == nil {
		return 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.version
}

// set records the tool names of server s.
func (n *ToolNames) set(s *Server, label string, names []string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[*Server]labelled{}
	}
	if old, ok := n.m[s]; ok && slices.Equal(old.names, names) {
		return
	}
	n.m[s] = labelled{label: label, names: names}
	n.version++
}

// forget drops the names of s, a server closed for good.
func (n *ToolNames) forget(s *Server) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.m[s]; ok {
		delete(n.m, s)
		n.version++
	}
}

// others returns the tools of every server but those labelled label.
func (n *ToolNames) others(label string) pins.Others {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	out := pins.Others{}
	for _, e := range n.m {
		if e.label == label {
			continue
		}
		for _, name := range e.names {
			out[name] = e.label
		}
	}
	return out
}

// Withheld is a tool left out of a server's tool set, and why.
type Withheld struct {
	Name   string
	Reason string
}

// ReviewCommand is the command that shows (verb "diff") or approves
// (verb "approve") the changes of server's tool, with --config when the
// configuration is not the default one.
func ReviewCommand(verb, configPath, toolbox, server, tool string) string {
	cmd := "mcp-workbench tools " + verb
	if configPath != "" && configPath != config.DefaultPath {
		cmd += " --config " + config.ShellQuote(configPath)
	}
	for _, a := range []string{toolbox, server, tool} {
		if a == "" {
			break
		}
		cmd += " " + config.ShellQuote(a)
	}
	return cmd
}

// PinKey returns the server's identity in the pin store (see [PinKeyOf]).
func (s *Server) PinKey() string { return s.pinKey }

// PinKeyOf is the identity in the pin store of the server cfg of
// toolbox: the hex SHA-256 of the toolbox's and the server's names, its
// transport, its command and args or its url as the configuration file
// writes them (${VAR} references unexpanded, a url's userinfo masked:
// config.Server.Shown), its cwd, and the names of its env variables and
// headers. Nothing a secret is kept in (env and header values, what a
// variable holds) is in it, so a rotated token keeps the pins; nor are
// toolFilters (pins are by tool) or the protocol version. The names keep
// apart servers that differ only by such values. When the identity
// changes all the same, the server's previous pins are found
// ([Server.previousPins]).
func PinKeyOf(toolbox string, cfg *config.Server) string {
	doc := struct {
		V         int      `json:"v"`
		Toolbox   string   `json:"toolbox"`
		Server    string   `json:"server"`
		Transport string   `json:"transport"`
		Shown     string   `json:"shown"`
		Cwd       string   `json:"cwd,omitempty"`
		Env       []string `json:"env,omitempty"`
		Headers   []string `json:"headers,omitempty"`
	}{V: 2, Toolbox: toolbox, Server: cfg.Name, Transport: string(cfg.Transport), Shown: cfg.Shown,
		Env: slices.Sorted(maps.Keys(cfg.Env)), Headers: slices.Sorted(maps.Keys(cfg.Headers))}
	if !cfg.SessionCwd {
		doc.Cwd = cfg.Cwd
	}
	b, _ := json.Marshal(doc) // strings only: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// loadPins loads the server's pins, or its previous ones when it has none
// ([Server.previousPins]).
func (s *Server) loadPins() (map[string]pins.Pin, pins.State, string) {
	m, st, why := s.o.Pins.Load(s.pinKey)
	if st == pins.Missing {
		if prev, pst, pwhy := s.previousPins(); pst != pins.Missing {
			return prev, pst, pwhy
		}
	}
	return m, st, why
}

// pinServer names the server in the pin files it uses (see
// [pins.Store.Find]): its configuration file and "toolbox/server".
func (s *Server) pinServer() string { return s.o.ConfigPath + "#" + s.Toolbox + "/" + s.Name }

// previousPins finds the pins the server had under another identity, when
// it has none under its own: those of an older workbench (keyed by the
// catalog's key), else the last ones of the same configuration file's
// server of that name (its command, url or env changed). They are copied
// to its identity, and its tools are compared with them.
//
// An older workbench's file that does not check out is the server's: it
// says Corrupt (nothing is trusted until approved).
func (s *Server) previousPins() (map[string]pins.Pin, pins.State, string) {
	store := s.o.Pins
	from := catalog.Key(s.cfg, ProtocolVersion)
	if _, st, why := store.Load(from); st == pins.Corrupt {
		return nil, st, why
	} else if st != pins.OK {
		var ok bool
		if from, ok = store.Find(s.pinServer(), s.pinKey); !ok {
			return nil, pins.Missing, ""
		}
	}
	prev, st, _ := store.Load(from)
	if st != pins.OK || from == s.pinKey {
		return nil, pins.Missing, ""
	}
	var now map[string]pins.Pin
	wrote, err := store.UpdateFor(s.pinKey, s.pinServer(), func(m map[string]pins.Pin) bool {
		if len(m) > 0 { // another workbench got there first
			now = maps.Clone(m)
			return false
		}
		maps.Copy(m, prev)
		now = maps.Clone(m)
		return true
	})
	if err != nil {
		s.log.Warn("could not copy the server's previous pins", "error", err)
		return nil, pins.Missing, ""
	}
	if wrote {
		s.log.Info("the server's identity in the pin store changed; its tools are compared with its previous pins", "tools", len(prev))
	}
	return now, pins.OK, ""
}

// guard returns full with the tools pinning and screening withhold left
// out (see above). live says full is a live list: only a live list pins.
func (s *Server) guard(full *ToolSet, live bool) *ToolSet {
	if full == nil {
		return nil
	}
	label := s.Toolbox + "/" + s.Name
	own := make(map[string]bool, len(full.all))
	defs := make([]pins.Def, len(full.all))
	for i, t := range full.all {
		own[t.Name] = true
		defs[i] = t.def
	}
	if live {
		s.o.Names.set(s, label, full.offeredAll())
	}
	out := &ToolSet{byName: map[string]*Tool{}, filtered: full.filtered, all: full.all, withheld: map[string]string{}, flags: map[string][]string{}}
	store := s.o.Pins
	mode := s.cfg.ToolChanges
	var pinned map[string]pins.Pin
	state := pins.OK
	if store != nil {
		out.pinStamp = store.Stamp(s.pinKey)
		var why string
		pinned, state, why = s.loadPins()
		if state == pins.Corrupt && mode != config.ToolChangesOff {
			s.warnCorrupt(out.pinStamp, why)
		}
		if live && mode != config.ToolChangesOff && state != pins.Corrupt {
			pinned = s.pinNew(defs, pinned, state == pins.Missing)
			out.pinStamp = store.Stamp(s.pinKey)
		}
	}
	out.namesVersion = s.o.Names.Version()
	others := s.o.Names.others(label)
	for i, t := range full.all {
		d := defs[i]
		nt := *t
		nt.Flags = append(pins.Screen(d.Canon, others, own), pins.DupFlags(d)...)
		if len(nt.Flags) > 0 {
			out.flags[t.Name] = nt.Flags
		}
		var reason, change string
		p, ok := pinned[d.Name]
		switch {
		case store == nil || mode == config.ToolChangesOff:
		case state == pins.Corrupt:
			change = "its pin could not be checked: the pin file is damaged"
		case ok && !p.Matches(d):
			change = pins.Describe(pins.What(p.Def, d.Canon)) + " changed since it was approved"
		case !ok && s.cfg.ApproveNewTools:
			change = "it is new and waits for approval"
		}
		if change != "" {
			if mode == config.ToolChangesBlock {
				reason = change
			} else {
				nt.Change = change
			}
		}
		if reason == "" && s.cfg.BlockFlagged && len(nt.Flags) > 0 && !(ok && p.Matches(d) && p.Approved) {
			reason = "screening flagged it (" + strings.Join(nt.Flags, "; ") + ")"
		}
		if reason != "" {
			out.withheld[t.Name] = reason
			out.Withheld = append(out.Withheld, Withheld{Name: t.Name, Reason: reason})
			continue
		}
		out.Tools = append(out.Tools, &nt)
		out.byName[t.Name] = &nt
	}
	return out
}

// pinNew pins the tools of defs that have no pin (every one on first
// sight) unless approveNewTools, and the whole definition of those an
// older workbench pinned the [pins.Fields] of (see [pins.Pin.Whole]),
// under the store's lock, and returns the pins as they are then.
func (s *Server) pinNew(defs []pins.Def, pinned map[string]pins.Pin, first bool) map[string]pins.Pin {
	var added, upgraded []string
	var now map[string]pins.Pin
	_, err := s.o.Pins.UpdateFor(s.pinKey, s.pinServer(), func(m map[string]pins.Pin) bool {
		for _, d := range defs {
			p, ok := m[d.Name]
			switch {
			case !ok && !s.cfg.ApproveNewTools:
				m[d.Name] = pins.Pin{Hash: d.Hash, Def: d.Canon, Whole: true}
				added = append(added, d.Name)
			case ok:
				if np, ok := p.Upgrade(d); ok {
					m[d.Name] = np
					upgraded = append(upgraded, d.Name)
				}
			}
		}
		now = maps.Clone(m)
		return len(added)+len(upgraded) > 0
	})
	if err != nil {
		s.log.Warn("could not pin the server's tools", "error", err)
		return pinned
	}
	switch {
	case len(added) == 0:
	case first:
		s.log.Info("first sight: pinned the server's tool definitions", "tools", len(added))
	default:
		s.log.Info("pinned the server's new tools", "tools", pins.Line(strings.Join(added, ", ")))
	}
	if len(upgraded) > 0 {
		s.log.Info("pinned the whole definitions of tools pinned by an older workbench", "tools", len(upgraded))
	}
	return now
}

// warnCorrupt says, once per state of the file, that the server's pin
// file does not check out.
func (s *Server) warnCorrupt(stamp, why string) {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	if s.corruptWarned == stamp {
		return
	}
	s.corruptWarned = stamp
	s.log.Warn("the server's pin file is damaged or was edited; its tools are not trusted until approved again",
		"file", s.o.Pins.Path(s.pinKey), "reason", why, "review", ReviewCommand("diff", s.o.ConfigPath, s.Toolbox, s.Name, ""))
}

// recheck applies the pin store again when it changed since ts was
// guarded (an approval, another workbench pinning), and returns the set
// to use.
func (c *conn) recheck() *ToolSet {
	ts := c.tools.Load()
	s := c.s
	if ts == nil || ts.all == nil || (s.o.Pins == nil || ts.pinStamp == s.o.Pins.Stamp(s.pinKey)) && ts.namesVersion == s.o.Names.Version() {
		return ts
	}
	c.listMu.Lock()
	defer c.listMu.Unlock()
	if cur := c.tools.Load(); cur != ts {
		return cur
	}
	ng := s.guard(ts.full(), true)
	c.tools.Store(ng)
	return ng
}

// PinReport compares ts's tools (every offered tool, withheld ones too)
// with the server's pins, and screens them.
func (s *Server) PinReport(ts *ToolSet) ([]pins.Report, pins.State, string) {
	if s.o.Pins == nil || ts == nil {
		return nil, pins.Missing, "no pin store"
	}
	pinned, state, why := s.loadPins()
	return pins.Compare(pinned, ts.Defs()), state, why
}

// Pending is a change [Server.Approve] makes to a server's pins.
type Pending struct {
	Name string
	Hash string // of the definition to pin; "" drops the pin of a removed tool
}

// Pending returns what approving names (nil: every tool) of ts changes:
// each tool whose pin differs from its definition, or that screening
// flags and was only trusted on first sight (blockFlaggedTools serves a
// flagged tool once the user approved it), and each pin of a tool ts no
// longer has (all of them when names is nil, else those named).
func (s *Server) Pending(ts *ToolSet, names []string) []Pending {
	if s.o.Pins == nil || ts == nil {
		return nil
	}
	pinned, _, _ := s.loadPins()
	var out []Pending
	cur := map[string]bool{}
	for _, d := range ts.Defs() {
		cur[d.Name] = true
		if names != nil && !slices.Contains(names, d.Name) {
			continue
		}
		if p, ok := pinned[d.Name]; ok && p.Whole && p.Hash == d.Hash && (p.Approved || len(ts.FlagsOf(d.Name)) == 0) {
			continue
		}
		if p, ok := pinned[d.Name]; ok && !p.Whole && p.Matches(d) && len(ts.FlagsOf(d.Name)) == 0 {
			continue // an older workbench's pin: the next live list pins it whole
		}
		out = append(out, Pending{Name: d.Name, Hash: d.Hash})
	}
	var gone []string
	for n := range pinned {
		if !cur[n] && (names == nil || slices.Contains(names, n)) {
			gone = append(gone, n)
		}
	}
	slices.Sort(gone)
	for _, n := range gone {
		out = append(out, Pending{Name: n})
	}
	return out
}

// Approve pins, marked approved, the definitions of ts that pending names
// (as [Server.Pending] returned them: only those, only as they were
// then), and drops the pins it says to. It returns what it approved.
func (s *Server) Approve(ts *ToolSet, pending []Pending) ([]string, error) {
	if s.o.Pins == nil {
		return nil, fmt.Errorf("no pin store")
	}
	defs := map[string]pins.Def{}
	for _, d := range ts.Defs() {
		defs[d.Name] = d
	}
	var done []string
	_, err := s.o.Pins.UpdateFor(s.pinKey, s.pinServer(), func(m map[string]pins.Pin) bool {
		done = done[:0]
		for _, p := range pending {
			if p.Hash == "" {
				if _, ok := m[p.Name]; ok {
					delete(m, p.Name)
					done = append(done, p.Name+" (removed)")
				}
				continue
			}
			d, ok := defs[p.Name]
			if !ok || d.Hash != p.Hash {
				continue // not what was reviewed
			}
			m[d.Name] = pins.Pin{Hash: d.Hash, Def: d.Canon, Approved: true, Whole: true}
			done = append(done, d.Name)
		}
		return len(done) > 0
	})
	return done, err
}

// Defs returns the definitions of every tool of the set, withheld ones
// too, in the server's order.
func (ts *ToolSet) Defs() []pins.Def {
	if ts == nil {
		return nil
	}
	out := make([]pins.Def, len(ts.all))
	for i, t := range ts.all {
		out[i] = t.def
	}
	return out
}

// full returns the set of every offered tool, before guard.
func (ts *ToolSet) full() *ToolSet {
	f := &ToolSet{Tools: ts.all, all: ts.all, byName: map[string]*Tool{}, filtered: ts.filtered}
	for _, t := range ts.all {
		f.byName[t.Name] = t
	}
	return f
}

func (ts *ToolSet) offeredAll() []string {
	out := make([]string, len(ts.all))
	for i, t := range ts.all {
		out[i] = t.Name
	}
	return out
}

// WithheldReason returns why the set withholds the tool name, or "".
func (ts *ToolSet) WithheldReason(name string) string {
	if ts == nil {
		return ""
	}
	return ts.withheld[name]
}

// ForTheUser ends what the model is told of a withheld tool. The model
// gets no command: one with a shell could approve a change it should not
// (the commands go to the log, check and tools diff, for the user).
const ForTheUser = "only the user can approve it: tell them, `mcp-workbench check` shows them the change and how to approve it"

// withheldError is use_tool's refusal of a withheld tool, which says the
// toolbox changed if viewer's last open showed the tool; the commands to
// review and approve it go to the log.
func (s *Server) withheldError(viewer any, name, why string) *RefusedError {
	s.log.Warn("refused a call of a withheld tool", "tool", pins.Line(name), "reason", why,
		"review", ReviewCommand("diff", s.o.ConfigPath, s.Toolbox, s.Name, name))
	msg := fmt.Sprintf("the tool is withheld until the user approves it: %s; %s", why, ForTheUser)
	if _, ok := s.shownHash(viewer, name); ok {
		return &RefusedError{SaysChanged: true, Reason: fmt.Sprintf("the toolbox '%s' changed since it was opened; open it again with open_toolbox to see its tools now. ", s.Toolbox) + msg}
	}
	return &RefusedError{Reason: msg}
}

// verdict sums up what pinning made of a set: its withheld tools and those
// served changed, with why.
func verdict(ts *ToolSet) string {
	if ts == nil {
		return ""
	}
	var b strings.Builder
	for _, w := range ts.Withheld {
		b.WriteString(w.Name + "\x00" + w.Reason + "\x00")
	}
	for _, t := range ts.Tools {
		if t.Change != "" {
			b.WriteString(t.Name + "\x00" + t.Change + "\x00")
		}
	}
	return b.String()
}

// FlagsOf returns what screening found in the tool name's definition,
// withheld or not.
func (ts *ToolSet) FlagsOf(name string) []string {
	if ts == nil {
		return nil
	}
	return ts.flags[name]
}
