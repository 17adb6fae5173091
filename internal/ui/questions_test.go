package ui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
)

// waiting is a call of maths/calc/add, which a rule asks about, made by
// a host that cannot ask (here, no host at all, as for the call command),
// and waiting for its answer in the page: its question's card shows.
type waiting struct {
	u      *uiTest
	ctx    context.Context
	wb     *workbench.Workbench
	result chan string // the call's result, once answered
	card   string      // the question's card, a CSS selector
}

// questionWaiting opens the Questions page of a configuration whose
// maths toolbox asks before calc/add runs (top: more of its top-level
// keys, each followed by a comma), calls 2 + 40, and returns once the
// page shows the question.
func questionWaiting(t *testing.T, top string) waiting {
	t.Helper()
	u := newUITest(t, func(tag string) string {
		return `{` + top + `"toolboxes": {"maths": {"description": "Numbers", "permissions": {"tools": {"calc/add": "ask"}},
			"mcpServers": {"calc": ` + fake(t, tag, "calc", "API_KEY", secret) + `}}}}`
	})
	ctx := browser(t)
	u.open(ctx, "questions")
	u.run(ctx, chromedp.WaitVisible(chromedp.CSS("#questions-none")))
	q := waiting{u: u, ctx: ctx, wb: u.hostWorkbench(), result: make(chan string, 1), card: `[data-question="maths/calc/add"]`}
	go func() {
		q.result <- string(q.wb.Use(t.Context(), "maths", "calc", "add", json.RawMessage(`{"a": 2, "b": 40}`), nil))
	}()
	u.run(ctx, chromedp.WaitVisible(chromedp.CSS(q.card)))
	return q
}

// TestQuestionAnsweredInThePage: a rule asks before maths/calc/add runs,
// and the workbench's host cannot ask (no elicitation: here, no host at
// all, as for the call command). With the page running, the question
// comes to it, the call waiting; "Allow once" lets the call run, and its
// result is the server's.
func TestQuestionAnsweredInThePage(t *testing.T) {
	q := questionWaiting(t, "")
	u, ctx, wb, result, card := q.u, q.ctx, q.wb, q.result, q.card
	shown := u.text(ctx, card)
	if !strings.Contains(shown, `"b": 40`) && !strings.Contains(shown, `"b":40`) {
		t.Errorf("the question does not show the arguments: %q", shown)
	}
	if strings.Contains(shown, secret) {
		t.Errorf("the question shows a secret: %q", shown)
	}
	u.shot(ctx, "questions")
	u.run(ctx,
		chromedp.Click(chromedp.CSS(card+` [data-answer="once"]`)),
		chromedp.WaitVisible(chromedp.CSS(".answered")),
	)
	res := <-result
	if !strings.Contains(res, `"text":"42"`) || strings.Contains(res, `"isError":true`) {
		t.Fatalf("the allowed call's result: %s", res)
	}
	// The next call is asked again (allowed once), and a denial refuses it.
	go func() {
		result <- string(wb.Use(t.Context(), "maths", "calc", "add", json.RawMessage(`{"a": 1, "b": 1}`), nil))
	}()
	u.run(ctx,
		chromedp.WaitVisible(chromedp.CSS(card)),
		chromedp.Click(chromedp.CSS(card+` [data-answer="deny"]`)),
	)
	if res := <-result; !strings.Contains(res, "denied this call in the workbench's web UI") {
		t.Fatalf("the denied call's result: %s", res)
	}
	// Activity says which answer each call got, and who gave it.
	want := []string{"allow: allowed once, in the web UI (user)", "deny: denied in the web UI (user)"}
	var body string
	for range 500 { // the record is written off the call's path
		if _, body = u.request("GET", "/api/activity", "", u.authed()); strings.Contains(body, want[0]) && strings.Contains(body, want[1]) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	u.run(ctx, chromedp.Navigate(u.base+"/#activity"))
	for _, w := range want {
		u.run(ctx, chromedp.WaitVisible(chromedp.Search(`//*[@id="activity-table"]//*[contains(text(), "`+w+`")]`)))
	}
	u.shot(ctx, "activity")
}
