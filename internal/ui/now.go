package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/live"
	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// now is what the Now page shows: the configuration's toolboxes and
// servers, each with its state in every running workbench of the user
// that serves this configuration, and the configuration's problems.
type now struct {
	Config      string       `json:"config"`
	Problems    []problem    `json:"problems,omitempty"`
	Warnings    []string     `json:"warnings,omitempty"`
	Toolboxes   []toolboxNow `json:"toolboxes"`
	Workbenches []wbNow      `json:"workbenches"`
	Others      []wbNow      `json:"others,omitempty"` // of other configurations
	// Questions are the permission questions waiting for the page, of
	// every workbench of the user.
	Questions []live.Question `json:"questions"`
}

type problem struct {
	Path string `json:"path"`
	Msg  string `json:"message"`
}

type toolboxNow struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Servers     []serverNow `json:"servers"`
}

type serverNow struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	Disabled  bool   `json:"disabled,omitempty"`
	// Status sums up States: the best of them (running over starting
	// over failed over not started).
	Status string `json:"status"`
	// States are the server's states in the workbenches that run it.
	States []serverIn `json:"states"`
}

type serverIn struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`
	live.Server
}

type wbNow struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Config  string    `json:"config"`
	Version string    `json:"version"`
	Started time.Time `json:"started"`
}

// configCache keeps the last load of the configuration by its file's
// stamp: the page's stream looks every second.
type configCache struct {
	mu    sync.Mutex
	stamp string
	cfg   *config.Config
	err   error
}

func (c *configCache) load(path string) (*config.Config, error) {
	stamp := userfile.Stamp(path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if stamp != "" && stamp == c.stamp {
		return c.cfg, c.err
	}
	c.cfg, c.err = config.Load(path)
	c.stamp = stamp
	return c.cfg, c.err
}

var loads configCache

// rank orders statuses for a server's summary: the higher, the better.
var rank = map[string]int{"connected": 6, "installing": 5, "starting": 4, "error": 3, "idle": 1, "disabled": 0}

func (s *Server) now() now {
	path, err := filepath.Abs(s.o.ConfigPath)
	if err != nil {
		path = s.o.ConfigPath
	}
	n := now{Config: path, Toolboxes: []toolboxNow{}, Workbenches: []wbNow{}, Questions: live.ReadQuestions()}
	cfg, err := loads.load(path)
	var ce *config.Error
	switch {
	case errors.As(err, &ce):
		for _, p := range ce.Problems {
			n.Problems = append(n.Problems, problem{Path: p.Path, Msg: p.Msg})
		}
	case err != nil:
		n.Problems = []problem{{Msg: err.Error()}}
	}
	states, _ := live.ReadStates()
	byKey := map[string][]serverIn{}
	for _, st := range states {
		w := wbNow{PID: st.PID, Command: st.Command, Config: st.Config, Version: st.Version, Started: st.Started}
		if st.Config != path {
			n.Others = append(n.Others, w)
			continue
		}
		n.Workbenches = append(n.Workbenches, w)
		for _, sv := range st.Servers {
			k := sv.Toolbox + "\x00" + sv.Server
			byKey[k] = append(byKey[k], serverIn{PID: st.PID, Command: st.Command, Server: sv})
		}
	}
	if cfg == nil {
		return n
	}
	n.Warnings = cfg.Warnings
	for _, tb := range cfg.Toolboxes {
		tn := toolboxNow{Name: tb.Name, Description: tb.Description, Servers: []serverNow{}}
		for _, sc := range tb.Servers {
			sn := serverNow{Name: sc.Name, Transport: string(sc.Transport), Disabled: sc.Disabled, Status: "idle", States: byKey[tb.Name+"\x00"+sc.Name]}
			if sn.States == nil {
				sn.States = []serverIn{}
			}
			if sc.Disabled {
				sn.Status = "disabled"
			}
			for _, in := range sn.States {
				if rank[in.Status] > rank[sn.Status] {
					sn.Status = in.Status
				}
			}
			tn.Servers = append(tn.Servers, sn)
		}
		n.Toolboxes = append(n.Toolboxes, tn)
	}
	return n
}

func (s *Server) handleNow(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.now())
}

// handleEvents streams the Now page's data as server-sent events: once at
// once, then each time it changes, until the page goes.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		refuse(w, http.StatusInternalServerError, "streaming is not supported")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	var last []byte
	tick := time.NewTicker(s.o.Poll)
	defer tick.Stop()
	for {
		data, _ := json.Marshal(s.now())
		if !bytes.Equal(data, last) {
			last = data
			if _, err := fmt.Fprintf(w, "event: now\ndata: %s\n\n", data); err != nil {
				return
			}
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Write(data)
}
