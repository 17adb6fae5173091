package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
)

// status shows a server starting (or installing) with since when, and a
// failed one with its failures, when the last was, when opens and
// searches try it again, and why.
func TestStatusShowsStartsAndTheirSchedule(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		st   downstream.State
		text string
		json string
	}{
		{downstream.State{Status: downstream.StatusInstalling, Since: now.Add(-12 * time.Second)}, " for 12s", `{"startingForMs":12000}`},
		{downstream.State{Status: downstream.StatusError, Err: errors.New("could not start (1 attempt): boom"), Failures: 2, FailedAt: now.Add(-40 * time.Second), NextTry: now.Add(20 * time.Second)},
			", 2 failed start(s), the last 40s ago, next try in 20s: could not start (1 attempt): boom",
			`{"error":"could not start (1 attempt): boom","failures":2,"failedMsAgo":40000,"nextTryInMs":20000}`},
		{downstream.State{Status: downstream.StatusError, Err: errors.New("x"), Failures: 1, FailedAt: now.Add(-40 * time.Second), NextTry: now.Add(-5 * time.Second)},
			", 1 failed start(s), the last 40s ago, tried again by the next open or search: x", ""},
		{downstream.State{Status: downstream.StatusConnected}, "", `{}`},
	} {
		s := front.ScheduleOf(c.st, now)
		if got := s.Text(); got != c.text {
			t.Errorf("%s: text %q, want %q", c.st.Status, got, c.text)
		}
		if c.json != "" {
			b, _ := json.Marshal(s)
			if string(b) != c.json {
				t.Errorf("%s: JSON %s, want %s", c.st.Status, b, c.json)
			}
		}
	}
}

// gateOnText is a stderr that opens a gate file once it has been told
// want: what the test waits for before it lets the server go on.
type gateOnText struct {
	mu     sync.Mutex
	b      bytes.Buffer
	want   string
	gate   string
	opened bool
}

func (g *gateOnText) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.b.Write(p)
	if !g.opened && strings.Contains(g.b.String(), g.want) {
		g.opened = true
		_ = os.WriteFile(g.gate, nil, 0o600)
	}
	return len(p), nil
}

// check says when a server's start is a package runner's install, and
// starts it all the same once installed.
func TestCheckSaysInstalling(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "installed")
	cfg := installConfig(t, gate)
	var out bytes.Buffer
	errOut := &gateOnText{want: "dev/pkg installing its package (npx)", gate: gate}
	if err := run(context.Background(), []string{"check", "--config", cfg}, strings.NewReader(""), &out, errOut); err != nil {
		t.Fatalf("check: %v\n%s\n%s", err, out.String(), errOut.b.String())
	}
	if !errOut.opened || !strings.Contains(out.String(), "All 1 server(s) started.") {
		t.Errorf("check:\n%s\n%s", out.String(), errOut.b.String())
	}
}
