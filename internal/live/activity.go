package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// Call is one use_tool call in the activity record. Arguments and results
// are never kept: only their size.
type Call struct {
	Time    time.Time `json:"time"`
	PID     int       `json:"pid"`
	Toolbox string    `json:"toolbox"`
	Server  string    `json:"server"`
	Tool    string    `json:"tool"`
	Ms      int64     `json:"ms"`      // how long until the answer
	Outcome string    `json:"outcome"` // ok, error (the result's isError)
	Bytes   int       `json:"bytes"`   // of the result
	Checked bool      `json:"permissionChecked,omitempty"`
	// Permission is the decision of the rules that govern the call, or
	// the answer to the question they asked, and who gave it: "allow:
	// accepted, this call (user)", "deny: memory/delete_* (rule)".
	Permission string `json:"permission,omitempty"`
	ArgBytes   int    `json:"argBytes"`
	// Host is the host's name and version (its clientInfo), "" when it
	// gave none.
	Host string `json:"host,omitempty"`
	// HostVersion is written after Host, with a space: the caller need
	// not join them (an allocation on the call's path).
	HostVersion string `json:"-"`
}

// The record's bounds: a file is rotated (to .1, the one before dropped)
// past maxActivity bytes; calls beyond the queue's room while the writer
// is behind are dropped, never waited for.
const (
	maxActivity   = 1 << 20
	activityQueue = 256
)

var activity = struct {
	ch      chan Call
	running atomic.Bool  // a writer goroutine runs
	queued  atomic.Int64 // calls queued so far
	written atomic.Int64 // calls taken from the queue (written, or given up)
	flush   chan chan struct{}
}{ch: make(chan Call, activityQueue), flush: make(chan chan struct{})}

// idleExit is how long the writer waits for a call before it closes the
// file and ends: a workbench that is not called runs no goroutine for it.
const idleExit = time.Second

// dirRecheck is how often a running writer looks the folder up again.
const dirRecheck = 500 * time.Millisecond

// Record queues a call for this process's activity record and returns at
// once: a call that finds the queue full is dropped; one goroutine writes
// them, started when one is queued and ended once idle.
func Record(c Call) {
	select {
	case activity.ch <- c:
		activity.queued.Add(1)
	default:
		return
	}
	if activity.running.CompareAndSwap(false, true) {
		go writeActivity()
	}
}

// Flush waits, up to wait, until every call queued so far is in the
// record, then has the writer close its file (it opens the folder's anew
// for the next call). A workbench calls it as it closes, so that its
// record is whole at exit and nothing is written after into a folder
// being removed (a test's home) or held open there (which Windows would
// not let be removed).
func Flush(wait time.Duration) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	// Up to the calls queued so far only: other workbenches of the
	// process (HTTP sessions) may go on queueing theirs.
	for target := activity.queued.Load(); activity.written.Load() < target; {
		select {
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
	done := make(chan struct{})
	for activity.running.Load() {
		select {
		case activity.flush <- done:
			<-done
			return
		case <-tick.C: // the writer may have ended meanwhile, closing its file
		case <-deadline.C:
			return
		}
	}
}

func activityName(pid int) string { return "activity-" + strconv.Itoa(pid) + ".jsonl" }

// writeActivity appends the queued calls to the process's record, as
// lines of JSON, rotating it past maxActivity bytes, until no call came
// for idleExit.
func writeActivity() {
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	var dir, path string // of f
	var checked time.Time
	var size int64
	var line []byte // reused: the writer allocates nothing per call
	write := func(c Call) {
		// The folder is looked up again now and then (the environment
		// may change, as in tests): records go where readers look.
		if f == nil || time.Since(checked) > dirRecheck {
			d, err := Dir()
			if err != nil {
				return
			}
			checked = time.Now()
			if f != nil && d != dir {
				f.Close()
				f = nil
			}
			dir = d
		}
		if f == nil {
			path = filepath.Join(dir, activityName(os.Getpid()))
			if userfile.MakeDir(dir, "web UI's state folder") != nil {
				return
			}
			var err error
			if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err != nil {
				f = nil
				return
			}
			if fi, err := f.Stat(); err == nil {
				size = fi.Size()
			}
		}
		line = c.appendJSON(line[:0])
		n, _ := f.Write(line)
		size += int64(n)
		if size > maxActivity {
			f.Close()
			f = nil
			_ = os.Rename(path, strings.TrimSuffix(path, ".jsonl")+".1.jsonl")
		}
	}
	idle := time.NewTimer(idleExit)
	defer idle.Stop()
	for {
		select {
		case c := <-activity.ch:
			idle.Reset(idleExit)
			write(c)
			activity.written.Add(1)
		case done := <-activity.flush:
			if f != nil {
				f.Close()
				f = nil
			}
			close(done)
		case <-idle.C:
			activity.running.Store(false)
			// A call queued before the store finds running still set:
			// take it on, unless a new writer already did.
			if len(activity.ch) > 0 && activity.running.CompareAndSwap(false, true) {
				idle.Reset(idleExit)
				continue
			}
			return
		}
	}
}

// maxLine bounds one line of a record read: a longer one was not written
// by a workbench, and is skipped.
const maxLine = 64 << 10

// ReadActivity returns the calls in every activity record of the user's
// folder, newest first, at most limit. Lines that are not a call are
// skipped.
func ReadActivity(limit int) ([]Call, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []Call{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []Call{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "activity-") || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		data, _, err := userfile.Read(filepath.Join(dir, name), 2*maxActivity)
		if err != nil {
			continue
		}
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			var c Call
			if len(line) <= maxLine && json.Unmarshal(line, &c) == nil && c.Tool != "" {
				out = append(out, c)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// appendJSON appends c as one line of JSON, as encoding/json would write
// it, without allocating.
func (c *Call) appendJSON(b []byte) []byte {
	b = append(b, `{"time":"`...)
	b = c.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","pid":`...)
	b = strconv.AppendInt(b, int64(c.PID), 10)
	for _, f := range [...]struct{ k, v string }{{"toolbox", c.Toolbox}, {"server", c.Server}, {"tool", c.Tool}, {"outcome", c.Outcome}} {
		b = append(b, `,"`...)
		b = append(b, f.k...)
		b = append(b, `":`...)
		b = frame.AppendString(b, f.v)
	}
	b = append(b, `,"ms":`...)
	b = strconv.AppendInt(b, c.Ms, 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, int64(c.Bytes), 10)
	b = append(b, `,"argBytes":`...)
	b = strconv.AppendInt(b, int64(c.ArgBytes), 10)
	if c.Checked {
		b = append(b, `,"permissionChecked":true`...)
	}
	if c.Permission != "" {
		b = append(b, `,"permission":`...)
		b = frame.AppendString(b, c.Permission)
	}
	if c.Host != "" {
		b = append(b, `,"host":`...)
		b = frame.AppendString(b, c.Host)
		if c.HostVersion != "" {
			// "name version": the name's closing quote becomes the space,
			// and the version's opening quote goes.
			b[len(b)-1] = ' '
			mark := len(b)
			b = frame.AppendString(b, c.HostVersion)
			b = append(b[:mark], b[mark+1:]...)
		}
	}
	return append(b, "}\n"...)
}
