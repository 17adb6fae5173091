package ui

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestTrySearchAndCall: the Try page's search ranks the tool that adds
// numbers first, shows the exact text the model reads with its size, and
// the call form calls it with arguments checked against its schema: a
// missing required argument is refused before the server sees it.
func TestTrySearchAndCall(t *testing.T) {
	u := newUITest(t, func(tag string) string {
		return `{"toolboxes": {"maths": {"description": "Numbers", "mcpServers": {"calc": ` + fake(t, tag, "calc") + `}}}}`
	})
	ctx := browser(t)
	u.open(ctx, "try")
	u.run(ctx,
		chromedp.SetValue(chromedp.CSS("#search-query"), "add two numbers"),
		chromedp.Click(chromedp.CSS(`#search-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#ranked li")),
	)
	first := u.text(ctx, "#ranked li:first-child code")
	if first != "maths/calc/add" {
		t.Errorf("the first ranked tool is %q, want maths/calc/add", first)
	}
	shown := u.text(ctx, "#search-text")
	size := u.text(ctx, "#search-size")
	if !strings.Contains(shown, `"name":"add"`) || !strings.Contains(size, " bytes") {
		t.Errorf("the model's text %q, its size %q", shown, size)
	}
	u.shot(ctx, "try")

	// The first result's Call… fills the form.
	u.run(ctx,
		chromedp.Click(chromedp.CSS("#ranked li:first-child button")),
		chromedp.SetValue(chromedp.CSS("#call-args"), `{"a": 2}`),
		chromedp.Click(chromedp.CSS(`#call-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#call-text")),
	)
	if refused := u.text(ctx, "#call-text"); !strings.Contains(refused, "b") || !strings.Contains(refused, "maths") {
		t.Errorf("a call without the required b: %q", refused)
	}
	u.run(ctx,
		chromedp.SetValue(chromedp.CSS("#call-args"), `{"a": 2, "b": 40}`),
		chromedp.Click(chromedp.CSS(`#call-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#call-text:not(.err)")),
	)
	if got := u.text(ctx, "#call-text"); got != "42" {
		t.Errorf("the call's result: %q, want 42", got)
	}

	// Activity shows both calls, newest first, and filters them; the
	// arguments are not in it.
	u.run(ctx,
		chromedp.Navigate(u.base+"/#activity"),
		chromedp.WaitVisible(chromedp.CSS(`#activity-table tr[data-call="maths/calc/add"][data-outcome="ok"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#activity-table tr[data-call="maths/calc/add"][data-outcome="error"]`)),
	)
	newest, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#activity-table tbody tr"), "data-outcome"))
	if err != nil {
		t.Fatal(err)
	}
	if newest.Value != "ok" {
		t.Errorf("the newest call is not first: %+v", newest)
	}
	u.run(ctx, chromedp.SetValue(chromedp.CSS("#activity-filter"), "error"))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("activity-filter").dispatchEvent(new Event("input"))`)); err != nil {
		t.Fatal(err)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#activity-table tbody tr").length`)); err != nil || n != 1 {
		t.Errorf("filtered by error: %d rows (%v), want 1", n, err)
	}
	if _, body := u.request("GET", "/api/activity", "", u.authed()); strings.Contains(body, `"a":`) || strings.Contains(body, `"b":`) {
		t.Errorf("the activity record holds arguments: %s", body)
	}
}
