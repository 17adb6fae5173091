package live

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// debounce is how long a publisher gathers changes before it writes: a
// start is several changes (starting, installing, connected) in a row.
const debounce = 150 * time.Millisecond

var publishers atomic.Uint64 // numbers the workbenches of this process

// Publisher writes one workbench's state file when poked: at most once a
// debounce period, only when the state differs from the last written, and
// never on the caller's goroutine. Close removes the file.
type Publisher struct {
	snapshot func() []Server
	head     State
	path     string // "" until the first write found the folder

	mu      sync.Mutex
	armed   bool
	timer   *time.Timer
	closed  bool
	last    []byte
	since   map[string]sinceMark // when each server entered its status
	written sync.WaitGroup
	// writing serializes the writes, so that a later snapshot is never
	// overwritten by an earlier one.
	writing sync.Mutex
}

type sinceMark struct {
	status string
	at     time.Time
	ran    bool // it was connected once
}

// NewPublisher returns the publisher of a workbench of this process, on
// configuration file config, whose servers' states snapshot returns.
// Nothing is written until [Publisher.Poke].
func NewPublisher(config, version string, snapshot func() []Server) *Publisher {
	if abs, err := filepath.Abs(config); err == nil {
		config = abs
	}
	command := commandOf(os.Args[1:])
	n := publishers.Add(1)
	p := &Publisher{
		snapshot: snapshot,
		head:     State{PID: os.Getpid(), Command: command, Config: config, Version: version, Started: time.Now()},
		since:    map[string]sinceMark{},
	}
	if dir, err := Dir(); err == nil {
		p.path = filepath.Join(dir, stateName(p.head.PID, n))
	}
	return p
}

// Poke says that a server's state may have changed: the file is written
// within the debounce period. It returns at once; it may be called under
// a server's lock.
func (p *Publisher) Poke() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed || p.closed || p.path == "" {
		return
	}
	p.armed = true
	p.written.Add(1)
	p.timer = time.AfterFunc(debounce, p.write)
}

func (p *Publisher) write() {
	defer p.written.Done()
	p.writing.Lock()
	defer p.writing.Unlock()
	// Disarmed before the snapshot: a change while it is taken arms the
	// next write, which sees it.
	p.mu.Lock()
	p.armed = false
	p.mu.Unlock()
	servers := p.snapshot() // outside p.mu: it takes the servers' locks
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	now := time.Now()
	for i := range servers {
		s := &servers[i]
		key := s.Toolbox + "\x00" + s.Server
		m := p.since[key]
		if m.status != s.Status {
			m = sinceMark{status: s.Status, at: now, ran: m.ran}
		}
		if s.Status == "connected" {
			m.ran = true
		}
		p.since[key] = m
		s.Since = m.at
		s.StoppedIdle = s.Status == "idle" && m.ran
	}
	st := p.head
	st.Servers = servers
	body, _ := json.Marshal(st.Servers)
	if bytes.Equal(body, p.last) {
		return
	}
	p.last = body
	st.Updated = now
	data, err := json.Marshal(st)
	if err != nil {
		return
	}
	if userfile.MakeDir(filepath.Dir(p.path), "web UI's state folder") != nil {
		return
	}
	_ = userfile.WriteAtomic(p.path, "state-*.tmp", data)
}

// Close waits for a write under way and removes the state file.
func (p *Publisher) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	if p.armed && p.timer.Stop() {
		p.armed = false
		p.written.Done() // its write will not run
	}
	p.mu.Unlock()
	p.written.Wait()
	if p.path != "" {
		os.Remove(p.path)
	}
}

// commandOf is the mcp-workbench command in a command line: the first
// argument that names one, else serve (the default command).
func commandOf(args []string) string {
	for _, a := range args {
		switch a {
		case "serve", "serve-shared", "call", "check", "tools", "ui":
			return a
		}
	}
	return "serve"
}
