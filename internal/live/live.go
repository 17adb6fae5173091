// Package live is what the running workbenches of a user tell the web UI
// (mcp-workbench ui) about themselves, through small private files in the
// user's cache folder: one state file per workbench (its servers' states,
// written on change, debounced, removed at exit) and one activity record
// per process (the calls made, JSON lines, bounded and rotated). A
// workbench that nobody looks at pays a file write when a server starts or
// stops, and a channel send per call; nothing listens.
package live

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// Dir is the folder of the state files and activity records:
// os.UserCacheDir()/mcp-workbench/live.
func Dir() (string, error) { return userfile.CacheDir("live") }

// maxStateFile bounds a state file read: one the workbench wrote is far
// smaller.
const maxStateFile = 4 << 20

// State is one workbench's state file.
type State struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"` // serve, serve-shared, call, ui, …
	Config  string    `json:"config"`  // the configuration file, absolute
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
	Servers []Server  `json:"servers"`
}

// Server is one (toolbox, server) of a workbench as its state file has it.
type Server struct {
	Toolbox string `json:"toolbox"`
	Server  string `json:"server"`
	// Status: idle (not started), starting, installing, connected,
	// error, disabled, as open_toolbox says.
	Status string `json:"status"`
	// Since: when the server entered Status.
	Since time.Time `json:"since"`
	Tools int       `json:"tools,omitempty"`
	// Withheld: tools pinning or screening withhold (their definitions
	// changed since they were pinned, or were flagged).
	Withheld int `json:"withheld,omitempty"`
	// Error: why the last start failed (with the server's last stderr
	// lines when it wrote any), as the host is told.
	Error string `json:"error,omitempty"`
	// NeedsLogin: the server waits for the user to log in.
	NeedsLogin bool `json:"needsLogin,omitempty"`
	// StoppedIdle: the server was running and stopped (its idle timeout,
	// or it ended), and starts again on its next use.
	StoppedIdle bool `json:"stoppedIdle,omitempty"`
	Failures    int  `json:"failures,omitempty"`
}

// stateName is the file name of the state of workbench n of process pid.
func stateName(pid int, n uint64) string {
	return fmt.Sprintf("state-%d-%d.json", pid, n)
}

// ReadStates returns the states of the user's running workbenches, oldest
// first. Files of processes that are gone are removed; a file that
// cannot be read or decoded is skipped (it is never trusted).
func ReadStates() ([]State, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []State
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "state-") || !strings.HasSuffix(name, ".json") {
			continue
		}
		pid, ok := pidOf(name)
		if !ok {
			continue
		}
		path := filepath.Join(dir, name)
		if !Alive(pid) {
			os.Remove(path) // its workbench died without removing it
			continue
		}
		data, _, err := userfile.Read(path, maxStateFile)
		if err != nil {
			continue
		}
		var st State
		if json.Unmarshal(data, &st) != nil || st.PID != pid {
			continue
		}
		out = append(out, st)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

// pidOf reads the process id in a state or activity file's name
// (state-PID-N.json, activity-PID.jsonl).
func pidOf(name string) (int, bool) {
	rest := name[strings.IndexByte(name, '-')+1:]
	end := strings.IndexAny(rest, "-.")
	if end <= 0 {
		return 0, false
	}
	pid, err := strconv.Atoi(rest[:end])
	return pid, err == nil && pid > 0
}
