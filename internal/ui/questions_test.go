package ui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestQuestionAnsweredInThePage: a rule asks before maths/calc/add runs,
// and the workbench's host cannot ask (no elicitation: here, no host at
// all, as for the call command). With the page running, the question
// comes to it, the call waiting; "Allow once" lets the call run, and its
// result is the server's.
func TestQuestionAnsweredInThePage(t *testing.T) {
	u := newUITest(t, func(tag string) string {
		return `{"toolboxes": {"maths": {"description": "Numbers", "permissions": {"tools": {"calc/add": "ask"}},
			"mcpServers": {"calc": ` + fake(t, tag, "calc", "API_KEY", secret) + `}}}}`
	})
	ctx := browser(t)
	u.open(ctx, "questions")
	u.run(ctx, chromedp.WaitVisible(chromedp.CSS("#questions-none")))

	wb := u.hostWorkbench()
	result := make(chan string, 1)
	go func() {
		result <- string(wb.Use(t.Context(), "maths", "calc", "add", json.RawMessage(`{"a": 2, "b": 40}`), nil))
	}()
	card := `[data-question="maths/calc/add"]`
	u.run(ctx, chromedp.WaitVisible(chromedp.CSS(card)))
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
}
