package workbench

import (
	"fmt"
	"os"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/live"
)

// TestStateFilesOfPooledWorkbenches: the sessions of a shared workbench
// each write a state file, and a server of the pool that one session's
// open starts shows as connected in both (the pool tells every
// workbench that uses it), and as stopped in both once it is stopped.
func TestStateFilesOfPooledWorkbenches(t *testing.T) {
	e := newEnv(t)
	p := e.newPool(downstream.Options{})
	text := fmt.Sprintf(`{"shared": true, "toolboxes": {"tb": {"description": "d", "mcpServers": {"a": %s}}}}`, fake("a"))
	cfg := e.config(text)
	one := e.pooled(p, cfg)
	e.pooled(p, e.config(text)) // the other session
	if res := one.Open(t.Context(), "tb", false); res.IsError {
		t.Fatalf("open: %v", res.Content)
	}
	statuses := func() map[string]int {
		states, err := live.ReadStates()
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, st := range states {
			if st.PID != os.Getpid() {
				continue
			}
			for _, s := range st.Servers {
				if s.Toolbox == "tb" && s.Server == "a" {
					n[s.Status]++
					if s.StoppedIdle {
						n["stopped"]++
					}
				}
			}
		}
		return n
	}
	fakeserver.Eventually(t, "both sessions' state files show the server connected", func() bool {
		return statuses()["connected"] == 2
	})
	for _, s := range one.Servers("tb") {
		s.Close()
	}
	fakeserver.Eventually(t, "both sessions' state files show the server stopped", func() bool {
		return statuses()["connected"] == 0
	})
}
