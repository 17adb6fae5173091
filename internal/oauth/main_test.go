package oauth_test

import (
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth/oauthtest"
)

func TestMain(m *testing.M) {
	oauthtest.MaybeBrowse()
	fakeserver.TestMain(m)
}
