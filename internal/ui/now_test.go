package ui

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// TestNowShowsRunningAndFailingServers: a workbench of the configuration
// (as a host's) starts a server that runs and one that exits at start; the
// Now page, already open, shows both as they become so, by itself, with
// the failed one's error, and the configuration's problem with its JSON
// path once the file is broken.
func TestNowShowsRunningAndFailingServers(t *testing.T) {
	u := newUITest(t, func(tag string) string {
		return `{"toolboxes": {
			"notes": {"description": "Notes kept for the user", "mcpServers": {"keeper": ` + fake(t, tag, "keeper") + `}},
			"broken": {"description": "A server that exits at start", "mcpServers": {"crasher": ` + fake(t, tag, "crasher", fakeserver.EnvExitAtStart, "3") + `}}}}`
	})
	ctx := browser(t)
	u.open(ctx, "now")
	u.run(ctx, chromedp.WaitVisible(chromedp.CSS(`tr[data-server="notes/keeper"][data-status="idle"]`)))

	wb := u.hostWorkbench()
	wb.Open(t.Context(), "notes", false)
	wb.Open(t.Context(), "broken", false)

	u.run(ctx,
		chromedp.WaitVisible(chromedp.CSS(`tr[data-server="notes/keeper"][data-status="connected"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-server="broken/crasher"][data-status="error"]`)),
	)
	keeper := u.text(ctx, `tr[data-server="notes/keeper"]`)
	crasher := u.text(ctx, `tr[data-server="broken/crasher"]`)
	if !strings.Contains(keeper, "running") || !strings.Contains(keeper, "tools") {
		t.Errorf("the running server's row: %q", keeper)
	}
	if !strings.Contains(crasher, "failed") || !strings.Contains(crasher, "exit") {
		t.Errorf("the failed server's row does not say it failed and why: %q", crasher)
	}
	u.shot(ctx, "now")
}
