package front

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// TestHTTPOneUserCannotCrowdOthersOut: with maxSessions 10 and
// maxSessionsPerUser at its default (100, so 10 here), one user's ten idle
// sessions do not keep another user out: at maxSessions the session of the
// user holding the most makes room, the least recently used one without an
// event stream first. A user who holds the most makes room with their own
// idle session; once two users hold as many, neither takes the other's.
func TestHTTPOneUserCannotCrowdOthersOut(t *testing.T) {
	far := time.Now().Add(time.Hour)
	users := bearerAuth{}
	for _, name := range []string{"alice", "bob"} {
		users[name+"-token"] = &auth.TokenInfo{UserID: name, Expiration: far}
	}
	e := serveHTTPFor(t, strings.Replace(oneToolbox, `{"toolboxes"`, `{"http": {"limits": {"maxSessions": 10}}, "toolboxes"`, 1), HTTPOptions{Auth: users})
	initialize := func(who string) (int, string, string) {
		code, body, hdr := do(t, http.MethodPost, e.url, mcpHeaders("Authorization", "Bearer "+who+"-token"), initBody)
		return code, body, hdr.Get("Mcp-Session-Id")
	}
	ping := func(who, sid string) int {
		code, _, _ := do(t, http.MethodPost, e.url, mcpHeaders("Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25", "Authorization", "Bearer "+who+"-token"), `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		return code
	}
	var alice []string
	for i := range 10 {
		code, body, sid := initialize("alice")
		if code != http.StatusOK || sid == "" {
			t.Fatalf("alice's initialize %d: %d %s", i, code, body)
		}
		alice = append(alice, sid)
	}
	// Alice's first session holds its event stream, as a live host's
	// does; her others are used after it.
	defer openStream(t, e.url, mcpHeaders("Mcp-Session-Id", alice[0], "MCP-Protocol-Version", "2025-11-25", "Authorization", "Bearer alice-token"))()
	for _, sid := range alice[1:] {
		if code := ping("alice", sid); code != http.StatusOK {
			t.Fatalf("alice's ping: %d", code)
		}
	}

	code, body, bob := initialize("bob")
	if code != http.StatusOK {
		t.Fatalf("bob's initialize while alice holds every session: %d %s; want 200", code, body)
	}
	if code := ping("alice", alice[1]); code != http.StatusNotFound {
		t.Errorf("alice's least recently used session without a stream: %d; want 404, ended to make room for bob", code)
	}
	if code := ping("alice", alice[0]); code != http.StatusOK {
		t.Errorf("alice's session with its event stream (used less recently): %d; want it kept", code)
	}
	if code := ping("bob", bob); code != http.StatusOK {
		t.Errorf("bob's session: %d", code)
	}
	if m := get(t, e.base+"/metrics", nil); !strings.Contains(m, "mcp_workbench_sessions 10") {
		t.Errorf("sessions open: %s; want 10", grepLines(m, "mcp_workbench_sessions"))
	}

	// Alice holds 9, bob 1: alice's new session takes her own idle one's
	// place, not bob's.
	code, body, sid := initialize("alice")
	if code != http.StatusOK {
		t.Fatalf("alice's new session at maxSessions: %d %s; want her own idle one to make room", code, body)
	}
	alice = append(alice, sid)
	if code := ping("bob", bob); code != http.StatusOK {
		t.Errorf("bob's only session after alice's new one: %d; want it kept", code)
	}

	// Bob takes alice's sessions until they hold as many: 5 each.
	bobs := []string{bob}
	for i := range 4 {
		code, body, sid := initialize("bob")
		if code != http.StatusOK {
			t.Fatalf("bob's session %d: %d %s", i+2, code, body)
		}
		bobs = append(bobs, sid)
	}
	// A sixth of bob's takes his own least recently used one's place.
	if code, body, _ := initialize("bob"); code != http.StatusOK {
		t.Fatalf("bob's sixth session: %d %s", code, body)
	}
	liveAlice := 0
	for _, sid := range alice {
		if ping("alice", sid) == http.StatusOK {
			liveAlice++
		}
	}
	if liveAlice != 5 {
		t.Errorf("alice has %d sessions after bob's sixth; want 5 (equal shares: bob's own made room)", liveAlice)
	}
	if code := ping("bob", bobs[0]); code != http.StatusNotFound {
		t.Errorf("bob's least recently used session after his sixth: %d; want 404", code)
	}
	if m := get(t, e.base+"/metrics", nil); !strings.Contains(m, "mcp_workbench_sessions 10") {
		t.Errorf("sessions open: %s; want 10", grepLines(m, "mcp_workbench_sessions"))
	}
}

// openStream opens a session's event stream (GET) with hdr and returns
// what closes it.
func openStream(t *testing.T, url string, hdr http.Header) (closeIt func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header = hdr
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("a session's event stream: %v %v", resp, err)
	}
	return func() {
		cancel()
		resp.Body.Close()
	}
}
