package ui

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestQuestionAskedInThePageByTheRules: a question that the rules send to
// the page ("askIn": "page") says so, where the configuration says it,
// instead of "the host could not ask"; "Deny" refuses the call.
func TestQuestionAskedInThePageByTheRules(t *testing.T) {
	q := questionWaiting(t, `"permissions": {"askIn": "page"},`)
	u, ctx, card := q.u, q.ctx, q.card
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
	if res := <-q.result; !strings.Contains(res, "denied this call in the workbench's web UI") {
		t.Fatalf("the denied call's result: %s", res)
	}
}
