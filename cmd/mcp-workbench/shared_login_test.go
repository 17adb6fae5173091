package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth/oauthtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSharedLoginOfferReachesOnlyItsSession: two sessions on one shared
// workbench open a toolbox whose remote server needs a login. The session
// whose host declared URL-mode elicitation is shown the login page; the
// other, whose host can take elicitations but not URL ones, is never asked
// and its open names the login command. Once the first host's browser
// step completes the login, both sessions call the server (one token
// store). For both protocol versions (an input request of the result, or
// the SDK's elicitation request through the relay), and for a server
// shared by the sessions or one each.
func TestSharedLoginOfferReachesOnlyItsSession(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, sharedServer := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/shared=%v", version, sharedServer), func(t *testing.T) {
				sharedLogin(t, version, sharedServer)
			})
		}
	}
}

func sharedLogin(t *testing.T, version string, sharedServer bool) {
	sharingHome(t)
	tag := fmt.Sprintf("login-%d", time.Now().UnixNano())
	wbTag := tag + "-wb"
	noneLeft(t, tag, wbTag)
	srv := oauthtest.Start(t, oauthtest.Options{})
	cfg := sharedConfig(t, map[string]any{
		"dev": map[string]any{"description": "Remote tools", "mcpServers": map[string]any{
			"linear": map[string]any{"type": "http", "url": srv.URL, "oauth": map[string]any{"scopes": "tools"}, "shared": sharedServer},
			"local":  taggedServer(tag, "local"),
		}},
	})

	type offer struct{ message, url string }
	offers := make(chan offer, 10)
	a := launchHost(t, []string{"--config", cfg}, wbTag, "", &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			// The user accepts; the browser step comes later, when the
			// test has seen the other session's open.
			offers <- offer{req.Params.Message, req.Params.URL}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}, version)
	b := launchHost(t, []string{"--config", cfg}, wbTag, "", &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Errorf("session B's host, without URL elicitation, was asked: %s %s", req.Params.Message, req.Params.URL)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}, version)

	type result struct {
		text  string
		isErr bool
		err   error
	}
	opened := make(chan result, 1)
	go func() {
		res, err := a.cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox_name": "dev"}})
		r := result{err: err}
		if err == nil {
			r.isErr = res.IsError
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					r.text += tc.Text
				}
			}
		}
		opened <- r
	}()
	var page offer
	select {
	case page = <-offers:
	case r := <-opened:
		t.Fatalf("session A's open ended without showing its host the login page: %+v", r)
	case <-time.After(time.Minute):
		t.Fatal("session A's host was not shown the login page")
	}
	if !strings.Contains(page.message, "'linear' (toolbox 'dev')") || !strings.HasPrefix(page.url, srv.Issuer+"/authorize?") {
		t.Errorf("the login offer: %q, page %q", page.message, page.url)
	}

	// Session B, while A's login waits for its browser: the server needs
	// a login, and B is told the command, not shown a page.
	text, isErr := callTool(t, b.cs, "open_toolbox", map[string]any{"toolbox_name": "dev"})
	status := openStatuses(t, text)
	if isErr || !strings.HasPrefix(status["local"], "connected") {
		t.Errorf("session B's open: %s", text)
	}
	cmd := "mcp-workbench login --config " + cfg + " dev linear"
	if s := status["linear"]; !strings.Contains(s, "login needed for server 'linear' (toolbox 'dev')") || !strings.Contains(s, cmd) {
		t.Errorf("session B's open: linear = %q, want the login needed and %q", s, cmd)
	}
	if strings.Contains(text, "/authorize") {
		t.Errorf("session B's open shows the login page of session A's login: %s", text)
	}
	if n := srv.Logins.Load(); n != 0 {
		t.Errorf("%d logins before A's browser step: the workbench logged in by itself", n)
	}

	// A's browser: the authorization page approves and redirects to the
	// shared workbench's loopback receiver.
	resp, err := http.Get(page.url)
	if err != nil {
		t.Fatalf("the browser step: %v", err)
	}
	resp.Body.Close()
	select {
	case r := <-opened:
		if r.err != nil || r.isErr || !strings.Contains(r.text, `"whoami"`) || !strings.HasPrefix(openStatuses(t, r.text)["linear"], "connected") {
			t.Errorf("session A's open after its login: %+v", r)
		}
	case <-time.After(time.Minute):
		t.Fatal("session A's open did not end after the login")
	}
	for name, p := range map[string]*process{"A": a, "B": b} {
		if text, isErr := callTool(t, p.cs, "use_tool", use("dev", "linear", "whoami", nil)); isErr || text != "you are logged in" {
			t.Errorf("session %s's call after the login: %v %s", name, isErr, text)
		}
	}
	if n := srv.Logins.Load(); n != 1 {
		t.Errorf("%d logins, want 1", n)
	}
	select {
	case o := <-offers:
		t.Errorf("session A's host was shown a second login page: %+v", o)
	default:
	}
}

// TestSharedOneLoginForEverySession: two sessions whose hosts can both
// show a login page open the same remote server: each host is shown the
// page of one login, the user logs in once, and both opens end with the
// server logged in. (Each session's own login left the other waiting for
// a browser that never came.)
func TestSharedOneLoginForEverySession(t *testing.T) {
	for _, sharedServer := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared=%v", sharedServer), func(t *testing.T) {
			tag, wbTag := sharingTest(t, "onelogin")
			srv := oauthtest.Start(t, oauthtest.Options{})
			cfg := sharedConfig(t, map[string]any{
				"dev": map[string]any{"description": "Remote tools", "mcpServers": map[string]any{
					"linear": map[string]any{"type": "http", "url": srv.URL, "oauth": map[string]any{"scopes": "tools"}, "shared": sharedServer},
					"local":  taggedServer(tag, "local"),
				}},
			})
			pages := make(chan string, 10)
			host := func() *process {
				return launchSession(t, []string{"--config", cfg}, wbTag, "", &mcp.ClientOptions{
					Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						pages <- req.Params.URL
						return &mcp.ElicitResult{Action: "accept"}, nil
					},
				})
			}
			sessions := []*process{host(), host()}
			opened := make(chan string, len(sessions))
			for _, p := range sessions {
				go func() {
					res, err := p.cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox_name": "dev"}})
					if err != nil {
						opened <- "error: " + err.Error()
						return
					}
					var text string
					for _, c := range res.Content {
						if tc, ok := c.(*mcp.TextContent); ok {
							text += tc.Text
						}
					}
					opened <- text
				}()
			}
			var shown []string
			for range sessions {
				select {
				case page := <-pages:
					shown = append(shown, page)
				case <-time.After(time.Minute):
					t.Fatalf("the hosts were shown %d login pages, want 2", len(shown))
				}
			}
			if shown[0] != shown[1] {
				t.Errorf("the two hosts were shown two logins' pages:\n%s\n%s", shown[0], shown[1])
			}
			resp, err := http.Get(shown[0]) // the user logs in once
			if err != nil {
				t.Fatalf("the browser step: %v", err)
			}
			resp.Body.Close()
			for range sessions {
				select {
				case text := <-opened:
					if strings.HasPrefix(text, "error: ") || !strings.HasPrefix(openStatuses(t, text)["linear"], "connected") {
						t.Errorf("an open after the login: %s", text)
					}
				case <-time.After(time.Minute):
					t.Fatal("an open did not end after the one login")
				}
			}
			if n := srv.Logins.Load(); n != 1 {
				t.Errorf("%d logins, want 1", n)
			}
		})
	}
}

// openStatuses is each server's status (and error) in an open_toolbox
// result.
func openStatuses(t *testing.T, text string) map[string]string {
	t.Helper()
	var out struct {
		Servers []struct{ Name, Status, Error string } `json:"servers"`
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("open_toolbox result is not JSON: %s", text)
	}
	got := map[string]string{}
	for _, s := range out.Servers {
		got[s.Name] = s.Status + " " + s.Error
	}
	return got
}

// listChangedSession is a session whose host counts
// notifications/tools/list_changed.
type listChangedSession struct {
	p       *process
	changed chan struct{}
}

func startListChanged(t *testing.T, cfg, wbTag string, env ...string) *listChangedSession {
	t.Helper()
	s := &listChangedSession{changed: make(chan struct{}, 100)}
	s.p = launchSession(t, []string{"--config", cfg}, wbTag, "", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { s.changed <- struct{}{} },
	}, env...)
	return s
}

// drain forgets the notifications so far.
func (s *listChangedSession) drain() {
	for {
		select {
		case <-s.changed:
		default:
			return
		}
	}
}

// waitChanged waits for a notification after which done holds.
func (s *listChangedSession) waitChanged(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case <-s.changed:
			if done == nil || done() {
				return
			}
		case <-deadline:
			t.Fatalf("timed out waiting for notifications/tools/list_changed: %s", what)
		}
	}
}

// writeJSONFile replaces path with v, by rename, as editors save.
func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(path), ".edit.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestSharedReloadAppliesToEverySession: an edit of the configuration file
// reaches every session of the shared workbench (each host is told, and
// lists the added toolbox), each with its own environment: a server whose
// launch reads a variable that differs between the sessions stays one per
// session, whether it is changed by the edit or added by it, and a server
// the edit leaves alone keeps running, shared.
func TestSharedReloadAppliesToEverySession(t *testing.T) {
	sharingHome(t)
	tag := fmt.Sprintf("reload-%d", time.Now().UnixNano())
	wbTag := tag + "-wb"
	noneLeft(t, tag, wbTag)
	perProject := func(name string, extra ...string) map[string]any {
		s := taggedServer(tag, name, append([]string{"PROJ", "${PROJECT}"}, extra...)...)
		s["args"] = []string{"${PROJECT}"}
		return s
	}
	doc := func(toolboxes map[string]any) map[string]any {
		return map[string]any{"shared": true, "sharedGraceMs": 300, "toolboxes": toolboxes}
	}
	tb := func(servers map[string]any) map[string]any {
		return map[string]any{"description": "d", "mcpServers": servers}
	}
	cfg := sharedConfig(t, map[string]any{"tb": tb(map[string]any{"p": perProject("p"), "all": taggedServer(tag, "all")})})
	a := startListChanged(t, cfg, wbTag, "PROJECT=alpha")
	b := startListChanged(t, cfg, wbTag, "PROJECT=beta")
	sessions := map[string]*listChangedSession{"alpha": a, "beta": b}

	before := map[string]string{}
	allPID := ""
	for project, s := range sessions {
		before[project] = whoami(t, s.p.cs, "tb", "p")
		if got := whoamiEnv(t, s.p.cs, "tb", "p", "PROJ"); got != project {
			t.Errorf("session %s's server p sees PROJ=%q before the edit", project, got)
		}
		pid := whoami(t, s.p.cs, "tb", "all")
		if allPID != "" && pid != allPID {
			t.Errorf("server all runs as %s and %s for two sessions, want one", allPID, pid)
		}
		allPID = pid
	}
	if before["alpha"] == before["beta"] {
		t.Fatalf("server p runs once (%s) for two projects", before["alpha"])
	}

	// The edit changes p (a variable added: it starts again), adds a
	// toolbox whose server also reads PROJECT, and leaves all alone.
	for _, s := range sessions {
		s.drain()
	}
	writeJSONFile(t, cfg, doc(map[string]any{
		"tb":  tb(map[string]any{"p": perProject("p", "GEN", "2"), "all": taggedServer(tag, "all")}),
		"two": tb(map[string]any{"q": perProject("q")}),
	}))
	for project, s := range sessions {
		s.waitChanged(t, "session "+project+" to list the added toolbox", func() bool {
			return slices.Equal(toolboxEnum(t, s.p.cs), []string{"tb", "two"})
		})
	}

	after := map[string]string{}
	added := map[string]string{}
	for project, s := range sessions {
		after[project] = whoami(t, s.p.cs, "tb", "p")
		if after[project] == before[project] {
			t.Errorf("session %s's server p, changed by the edit, still runs as %s", project, before[project])
		}
		if got := whoamiEnv(t, s.p.cs, "tb", "p", "PROJ"); got != project {
			t.Errorf("session %s's server p sees PROJ=%q after the edit", project, got)
		}
		if got := whoamiEnv(t, s.p.cs, "tb", "p", "GEN"); got != "2" {
			t.Errorf("session %s's server p sees GEN=%q after the edit, want 2", project, got)
		}
		added[project] = whoami(t, s.p.cs, "two", "q")
		if got := whoamiEnv(t, s.p.cs, "two", "q", "PROJ"); got != project {
			t.Errorf("session %s's server q (added by the edit) sees PROJ=%q", project, got)
		}
		if pid := whoami(t, s.p.cs, "tb", "all"); pid != allPID {
			t.Errorf("session %s: server all, unchanged by the edit, runs as %s, was %s", project, pid, allPID)
		}
	}
	if after["alpha"] == after["beta"] {
		t.Errorf("after the edit, server p runs once (%s) for two projects", after["alpha"])
	}
	if added["alpha"] == added["beta"] {
		t.Errorf("server q, added by the edit, runs once (%s) for two projects", added["alpha"])
	}
	// The old p processes are stopped: all, p and q per project remain.
	if _, ok := fakeserver.Tagged(tag); ok {
		fakeserver.Eventually(t, "the servers p replaced by the edit to stop", func() bool {
			pids, _ := fakeserver.Tagged(tag)
			return len(pids) == 5
		})
	}
}

// TestSharedToolChangeTellsEverySession: a shared server that changes a
// tool's definition while running (pins) is one process for both
// sessions; the change, made through one session, is told to both hosts
// (notifications/tools/list_changed through the relay), and the changed
// tool is withheld from both.
func TestSharedToolChangeTellsEverySession(t *testing.T) {
	sharingHome(t)
	tag := fmt.Sprintf("pinschanged-%d", time.Now().UnixNano())
	wbTag := tag + "-wb"
	noneLeft(t, tag, wbTag)
	defs := filepath.Join(t.TempDir(), "defs.json")
	if err := os.WriteFile(defs, []byte(victimV1), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := sharedConfig(t, map[string]any{
		"dev": map[string]any{"description": "d", "mcpServers": map[string]any{
			"fake": taggedServer(tag, "fake", fakeserver.EnvDefsFile, defs),
		}},
	})
	a := startListChanged(t, cfg, wbTag)
	b := startListChanged(t, cfg, wbTag)
	if text, isErr := callTool(t, a.p.cs, "use_tool", use("dev", "fake", "victim", map[string]any{"a": 1})); isErr {
		t.Fatalf("victim before the change: %s", text)
	}
	if pa, pb := whoami(t, a.p.cs, "dev", "fake"), whoami(t, b.p.cs, "dev", "fake"); pa != pb {
		t.Fatalf("the sessions do not share the server: pids %s, %s", pa, pb)
	}

	a.drain()
	b.drain()
	if err := os.WriteFile(defs, []byte(victimV2), 0o600); err != nil {
		t.Fatal(err)
	}
	if text, isErr := callTool(t, a.p.cs, "use_tool", use("dev", "fake", "redefine", nil)); isErr {
		t.Fatal(text)
	}
	for name, s := range map[string]*listChangedSession{"A": a, "B": b} {
		s.waitChanged(t, "session "+name+"'s host to be told of the changed tool", nil)
		text, isErr := callTool(t, s.p.cs, "use_tool", use("dev", "fake", "victim", map[string]any{"a": 1}))
		if !isErr || !strings.Contains(text, "Cannot call tool 'victim' in server 'fake' (toolbox 'dev')") || !strings.Contains(text, "its description changed") {
			t.Errorf("session %s's call of the changed tool: %v %s", name, isErr, text)
		}
	}
	if pids, ok := fakeserver.Tagged(tag); ok && len(pids) != 1 {
		t.Errorf("%d server processes, want 1: %v", len(pids), pids)
	}
}
