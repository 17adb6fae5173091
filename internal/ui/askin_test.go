package ui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestQuestionAskedInThePageByTheRules: a question that the rules send to
// the page ("askIn": "page") says so, where the configuration says it,
// instead of "the host could not ask"; "Deny" refuses the call.
func TestQuestionAskedInThePageByTheRules(t *testing.T) {
	u := newUITest(t, func(tag string) string {
		return `{"permissions": {"askIn": "page"}, "toolboxes": {"maths": {"description": "Numbers", "permissions": {"tools": {"calc/add": "ask"}},
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
	for _, want := range []string{`in this page by "askIn": "page" at permissions.askIn`, `the rule "calc/add" at toolboxes.maths.permissions.tools.calc/add`} {
		if !strings.Contains(shown, want) {
			t.Errorf("the question %q does not say %q", shown, want)
		}
	}
	if strings.Contains(shown, "could not ask") {
		t.Errorf("the question says the host could not ask: %q", shown)
	}
	u.run(ctx, chromedp.Click(chromedp.CSS(card+` [data-answer="deny"]`)))
	if res := <-result; !strings.Contains(res, "denied this call in the workbench's web UI") {
		t.Fatalf("the denied call's result: %s", res)
	}
}
