package workbench

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/live"
	"github.com/mcpworkbench/mcp-workbench/internal/permissions"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pageHome points the user's folders (the web UI's state folder, where
// questions wait, among them) at a temporary home of the test's own: no
// web UI runs there, and no other test's question is seen.
func pageHome(t *testing.T) {
	home := t.TempDir()
	for _, v := range fakeserver.HomeVars {
		t.Setenv(v, filepath.Join(home, strings.ToLower(v)))
	}
	if live.UIRuns() {
		t.Fatal("a web UI runs in the test's home")
	}
}

// waitingQuestion waits for the question about toolbox/server/tool to be
// put to the web UI, and returns it.
func waitingQuestion(t *testing.T, toolbox, server, tool string) live.Question {
	t.Helper()
	var q live.Question
	fakeserver.Eventually(t, fmt.Sprintf("the question about %s/%s/%s in the web UI", toolbox, server, tool), func() bool {
		for _, x := range live.ReadQuestions() {
			if x.Toolbox == toolbox && x.Server == server && x.Tool == tool {
				q = x
				return true
			}
		}
		return false
	})
	return q
}

// callAsync calls use_tool in the background; the result comes on the
// channel.
func callAsync(t *testing.T, cs *mcp.ClientSession, args map[string]any) <-chan [2]string {
	out := make(chan [2]string, 1)
	go func() {
		text, isErr := call(t, cs, "use_tool", args)
		out <- [2]string{text, fmt.Sprint(isErr)}
	}()
	return out
}

// TestAskInPageHostThatCanAsk: with "askIn": "page", a host that can
// show a form (on each protocol era) is not asked: the question waits in
// the web UI's page, although no web UI runs yet (the log says to run
// one), and the answer there decides the call: allow once runs it with
// the server's result, deny refuses it without calling the server. An
// approval of Claude Code's prompt in the call's input does not count.
func TestAskInPageHostThatCanAsk(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			pageHome(t)
			e := newEnv(t)
			host := &permHost{}
			host.set("decline", nil) // a question to the host would refuse the call
			_, cs := e.permSession(fmt.Sprintf(oneServer, permFake(t, "a", `{"askIn": "page", "tools": {"delete_item": "ask"}}`)), protocol, host.options())

			done := callAsync(t, cs, use("dev", "a", "delete_item", map[string]any{"id": 7}))
			q := waitingQuestion(t, "dev", "a", "delete_item")
			if q.AskIn != permissions.AskInPage || !strings.Contains(q.Why, `"page" at toolboxes.dev.mcpServers.a.permissions.askIn`) ||
				!strings.Contains(q.Rule, `the rule "delete_item" at toolboxes.dev.mcpServers.a.permissions.tools.delete_item`) || q.Args != `{"id":7}` {
				t.Errorf("the question: %+v", q)
			}
			if err := live.AnswerQuestion(q.ID, live.AllowOnce); err != nil {
				t.Fatal(err)
			}
			if got := <-done; got[1] != "false" || got[0] != `delete_item {"id":7}` {
				t.Errorf("allowed once in the page: %s (error %s); want the server's result", got[0], got[1])
			}
			if e.calls("delete_item") != 1 || len(host.asked()) != 0 {
				t.Errorf("%d calls, the host asked %q; want one call and no question to the host", e.calls("delete_item"), host.asked())
			}
			if !strings.Contains(e.logs.String(), "no web UI runs: run mcp-workbench ui to answer it") {
				t.Errorf("no warning that no web UI runs:\n%s", e.logs)
			}

			// Allowed once: the next call is asked again; with an approval of
			// the hook in its input, still in the page.
			keyPath, err := permissions.KeyPath()
			if err != nil {
				t.Fatal(err)
			}
			token, err := permissions.SignApproval(keyPath, "dev", "a", "delete_item", json.RawMessage(`{"id":8}`), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			in := use("dev", "a", "delete_item", map[string]any{"id": 8})
			in[permissions.ApprovalField] = token
			done = callAsync(t, cs, in)
			if err := live.AnswerQuestion(waitingQuestion(t, "dev", "a", "delete_item").ID, live.Deny); err != nil {
				t.Fatal(err)
			}
			if got := <-done; got[1] != "true" || !strings.Contains(got[0], "denied this call in the workbench's web UI") {
				t.Errorf("denied in the page: %s (error %s)", got[0], got[1])
			}
			if e.calls("delete_item") != 1 || len(host.asked()) != 0 {
				t.Errorf("%d calls, the host asked %q; want the denied call not made and no question to the host", e.calls("delete_item"), host.asked())
			}
			if len(live.ReadQuestions()) != 0 {
				t.Errorf("questions left waiting: %+v", live.ReadQuestions())
			}
		})
	}
}

// TestAskInNearestLevelWins: the server's "askIn" wins over its
// toolbox's, the toolbox's over the top level's, whichever level's rule
// asks; "allow for the session" given in the page stops the questions for
// that tool.
func TestAskInNearestLevelWins(t *testing.T) {
	pageHome(t)
	e := newEnv(t)
	host := &permHost{}
	host.set("accept", map[string]any{"allowForSession": false})
	cfg := fmt.Sprintf(`{"permissions": {"askIn": "page", "annotations": {"destructiveHint": "ask", "readOnlyHint": "allow"}},
	  "toolboxes": {
	    "dev": {"description": "d", "permissions": {"askIn": "host"}, "mcpServers": {"a": %s, "b": %s}},
	    "ops": {"description": "o", "mcpServers": {"c": %s}}}}`,
		permFake(t, "a", `{"askIn": "page"}`), permFake(t, "b", ""), permFake(t, "c", ""))
	_, cs := e.permSession(cfg, "2025-11-25", host.options())

	// b: the toolbox says host, over the top level's page.
	if got, isErr := call(t, cs, "use_tool", use("dev", "b", "delete_item", nil)); isErr || len(host.asked()) != 1 || len(live.ReadQuestions()) != 0 {
		t.Errorf("dev/b: %s (error %v), the host asked %d times; want the host asked", got, isErr, len(host.asked()))
	}
	// a: its own "page" wins over its toolbox's "host".
	done := callAsync(t, cs, use("dev", "a", "delete_item", nil))
	if err := live.AnswerQuestion(waitingQuestion(t, "dev", "a", "delete_item").ID, live.AllowOnce); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got[1] != "false" || len(host.asked()) != 1 {
		t.Errorf("dev/a: %s (error %s), the host asked %d times; want it asked in the page only", got[0], got[1], len(host.asked()))
	}
	// c: the top level's "page".
	done = callAsync(t, cs, use("ops", "c", "drop_table", nil))
	q := waitingQuestion(t, "ops", "c", "drop_table")
	if !strings.Contains(q.Why, `"page" at permissions.askIn`) {
		t.Errorf("ops/c's question: %+v", q)
	}
	if err := live.AnswerQuestion(q.ID, live.AllowSession); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got[1] != "false" {
		t.Errorf("ops/c allowed for the session: %s", got[0])
	}
	if got, isErr := call(t, cs, "use_tool", use("ops", "c", "drop_table", nil)); isErr || e.calls("drop_table") != 2 || len(host.asked()) != 1 {
		t.Errorf("ops/c again: %s (error %v), %d calls, the host asked %d times; want it run without a question", got, isErr, e.calls("drop_table"), len(host.asked()))
	}
	if !strings.Contains(e.logs.String(), `why="allowed for the rest of the session, in the web UI"`) {
		t.Errorf("no record of the answer in the log:\n%s", e.logs)
	}
}

// TestAskInPageNoAnswer: a question asked in the page that nobody
// answers refuses the call once the wait is over, saying where it waited
// and what shows it; the server is not called. The host here cannot ask
// (no elicitation) and no web UI runs.
func TestAskInPageNoAnswer(t *testing.T) {
	pageHome(t)
	wait := uiAskWait
	uiAskWait = 200 * time.Millisecond
	t.Cleanup(func() { uiAskWait = wait })
	e := newEnv(t)
	cfg := fmt.Sprintf(`{"permissions": {"askIn": "page", "tools": {"a/delete_*": "ask"}}, "toolboxes": {"dev": {"description": "d", "mcpServers": {"a": %s}}}}`, permFake(t, "a", ""))
	_, cs := e.permSession(cfg, "2025-11-25", nil)
	got, isErr := call(t, cs, "use_tool", use("dev", "a", "delete_item", nil))
	for _, want := range []string{`the rule "a/delete_*" at permissions.tools.a/delete_*`, `in the workbench's web UI ("askIn": "page" at permissions.askIn)`,
		"waited there for 200ms without an answer", "`mcp-workbench ui` shows the waiting questions"} {
		if !isErr || !strings.Contains(got, want) {
			t.Errorf("%s (error %v)\nlacks %q", got, isErr, want)
		}
	}
	if e.calls("delete_item") != 0 {
		t.Errorf("%d calls; want none", e.calls("delete_item"))
	}
	if !strings.Contains(e.logs.String(), `msg="permission answer" toolbox=dev server=a tool=delete_item decision=deny who=rule why="no answer in the web UI within 200ms"`) {
		t.Errorf("no record of the refusal in the log:\n%s", e.logs)
	}
}
