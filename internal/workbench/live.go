package workbench

import (
	"errors"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/live"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
)

// liveServers is what the workbench's state file says of its servers (see
// internal/live): the web UI's Now page reads it.
func (w *Workbench) liveServers() []live.Server {
	var out []live.Server
	for _, tb := range w.state.Load().toolboxes {
		for _, s := range tb.servers {
			st := s.State()
			ls := live.Server{Toolbox: tb.cfg.Name, Server: s.Name, Status: string(st.Status), Failures: st.Failures}
			if st.Tools != nil {
				ls.Tools, ls.Withheld = len(st.Tools.Tools), len(st.Tools.Withheld)
			}
			if st.Err != nil {
				ls.Error = st.Err.Error()
				var le *oauth.Error
				ls.NeedsLogin = errors.As(st.Err, &le) && le.Command != ""
			}
			out = append(out, ls)
		}
	}
	return out
}

// chainChanged makes the servers' state changes poke the state file's
// publisher, after what the options' own Changed does.
func chainChanged(do *downstream.Options, p *live.Publisher) {
	if prev := do.Changed; prev != nil {
		do.Changed = func() { prev(); p.Poke() }
		return
	}
	do.Changed = p.Poke
}
