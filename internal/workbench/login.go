package workbench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type hostSessionKey struct{}

// withHost remembers, for the open under way, the host session that asked
// for it: a host that declared URL-mode elicitation can be asked to show a
// login page.
func withHost(ctx context.Context, ss *mcp.ServerSession) context.Context {
	if ss == nil {
		return ctx
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil || p.Capabilities.Elicitation.URL == nil {
		return ctx
	}
	if p.ProtocolVersion >= "2026-07-28" {
		// From this version a request cannot be sent while serving one
		// (SEP-2322: multi round-trip requests instead); go-sdk v1.8.0's
		// tool handlers have no way to return such input requests.
		return ctx
	}
	return context.WithValue(ctx, hostSessionKey{}, ss)
}

// loginThroughHost handles a server that failed to connect because it
// needs a login, when the host can show a URL: the authorization URL goes
// to the user through a URL elicitation, and once the browser's redirect
// arrives (bounded by [oauth.DefaultLoginTimeout]) the server is connected
// again. Without such a host nothing happens: the open reports the server
// as needing a login, with the command to run. The workbench never opens
// a browser itself while serving.
func (w *Workbench) loginThroughHost(ctx context.Context, s *downstream.Server, err error) {
	ss, _ := ctx.Value(hostSessionKey{}).(*mcp.ServerSession)
	var le *oauth.Error
	if ss == nil || !errors.As(err, &le) || !le.NeedsLogin() {
		return
	}
	id := rand.Text()
	shown := false
	_, lerr := oauth.Login(ctx, oauth.LoginOptions{
		ConfigPath: w.state.Load().cfg.Path, Toolbox: s.Toolbox, Server: s.Config(),
		Show: func(ctx context.Context, authURL string) error {
			res, err := ss.Elicit(ctx, &mcp.ElicitParams{
				Mode:          "url",
				Message:       fmt.Sprintf("The MCP server '%s' (toolbox '%s') needs you to log in before its tools can be used.", s.Name, s.Toolbox),
				URL:           authURL,
				ElicitationID: id,
			})
			if err != nil {
				return fmt.Errorf("asking the host to show the login page: %w", err)
			}
			if res.Action != "accept" {
				return fmt.Errorf("the login was not accepted (%s)", res.Action)
			}
			shown = true
			return nil
		},
	})
	if shown {
		_ = ss.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: id})
	}
	if lerr != nil {
		w.log.Warn("login through the host failed", "toolbox", s.Toolbox, "server", s.Name, "error", lerr)
		return
	}
	w.log.Info("logged in through the host", "toolbox", s.Toolbox, "server", s.Name)
	_, _ = s.Connect(ctx)
}
