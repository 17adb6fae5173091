package oauth_test

import (
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth/oauthtest"
	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
)

func TestMain(m *testing.M) {
	// Fake servers and the watchdog inherit the test's environment, the
	// browser's mode included: they decide first.
	proctree.MaybeRun()
	fakeserver.MaybeRun()
	oauthtest.MaybeBrowse()
	maybeRefresh()
	fakeserver.TestMain(m)
}
