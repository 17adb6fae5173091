package workbench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that needs a login, opened by a host that declared URL-mode
// elicitation, is logged in through the host: open_toolbox answers with an
// input request (a URL elicitation of the authorization page) instead of
// its result, as multi round-trip requests do (SEP-2322). The host shows
// the page and calls open_toolbox again with its answer; that second call
// waits, bounded, for the browser's redirect, and opens the toolbox with
// the server logged in. Hosts on the 2026-07-28 protocol do the round trip
// themselves; for older ones the SDK asks the host (elicitation/create)
// and calls the handler again. The workbench never opens a browser itself
// while serving: without such a host, the open reports the server as
// needing a login, with the command to run.

type loginHostKey struct{}

// loginHost is what an open needs to log in through the host.
type loginHost struct {
	ss    *mcp.ServerSession
	retry bool // the host answered this open's input requests: no new ones
}

// requestStatePrefix starts the request state of an open's input requests.
const requestStatePrefix = "wb-login-"

// withHost remembers, for the open under way, the host session that asked
// for it, if it can show a login page.
func withHost(ctx context.Context, ss *mcp.ServerSession, retry bool) context.Context {
	if ss == nil {
		return ctx
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil || p.Capabilities.Elicitation.URL == nil {
		return ctx
	}
	return context.WithValue(ctx, loginHostKey{}, &loginHost{ss: ss, retry: retry})
}

// pendingLogin is a login whose page went to a host: it waits, bounded by
// [oauth.DefaultLoginTimeout], for the browser's redirect.
type pendingLogin struct {
	server *downstream.Server // the server of the workbench that started it
	key    string             // what it logs in to: the server's url (one token each)
	id     string             // the elicitation's id, and its input request's
	url    string             // the authorization page, once shown is closed
	shown  chan struct{}      // closed when the page is known
	cancel context.CancelFunc
	done   chan struct{} // closed when the login ended
	err    error         // why it failed, once done
	// users are the workbenches whose hosts were shown the page and have
	// not given it up (guarded by Logins.mu); the last to leave cancels it.
	users map[*Workbench]bool
}

// page waits for the login's page, or its end.
func (pl *pendingLogin) page() (string, error) {
	select {
	case <-pl.shown:
		return pl.url, nil
	case <-pl.done:
		return "", pl.err
	}
}

// Logins are the logins whose pages went to a host, by elicitation id. A
// server url has at most one, shared by the opens that need it, in one
// workbench or in the sessions of a shared workbench (see
// [Options.Logins]). The zero value is ready to use.
type Logins struct {
	mu      sync.Mutex
	pending map[string]*pendingLogin
}

// leave ends w's interest in pl; a login no one waits for is given up.
func (l *Logins) leave(pl *pendingLogin, w *Workbench) {
	l.mu.Lock()
	delete(pl.users, w)
	last := len(pl.users) == 0
	l.mu.Unlock()
	if last {
		pl.cancel()
	}
}

// startLogin returns the pending login of s's url, starting it if there
// is none. It returns once the authorization page is known, or with the
// error that ended the login before that.
func (w *Workbench) startLogin(s *downstream.Server) (*pendingLogin, error) {
	l := w.logins
	key := s.Config().URL
	l.mu.Lock()
	for _, pl := range l.pending {
		if pl.key == key {
			pl.users[w] = true
			l.mu.Unlock()
			_, err := pl.page()
			return pl, err
		}
	}
	if l.pending == nil {
		l.pending = map[string]*pendingLogin{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), oauth.DefaultLoginTimeout+time.Minute)
	pl := &pendingLogin{server: s, key: key, id: rand.Text(), shown: make(chan struct{}), cancel: cancel, done: make(chan struct{}), users: map[*Workbench]bool{w: true}}
	l.pending[pl.id] = pl
	l.mu.Unlock()

	go func() {
		_, err := oauth.Login(ctx, oauth.LoginOptions{
			ConfigPath: w.state.Load().cfg.Path, Toolbox: s.Toolbox, Server: s.Config(), Store: s.OAuthStore(),
			Show: func(_ context.Context, authURL string) error {
				if pl.url == "" { // shown once
					pl.url = authURL
					close(pl.shown)
				}
				return nil
			},
		})
		cancel()
		pl.err = err
		close(pl.done)
		switch {
		case errors.Is(err, context.Canceled):
			w.log.Info("login given up", "toolbox", s.Toolbox, "server", s.Name)
		case err != nil:
			w.log.Warn("login through the host failed", "toolbox", s.Toolbox, "server", s.Name, "error", err)
		default:
			w.log.Info("logged in through the host", "toolbox", s.Toolbox, "server", s.Name)
		}
		// The opens that wait for it have its pointer; a host that never
		// came back has no use for it any more.
		l.mu.Lock()
		delete(l.pending, pl.id)
		l.mu.Unlock()
	}()
	_, err := pl.page()
	return pl, err
}

// loginRequests starts the logins of the servers in need that an open's
// host can show, and returns the input requests that show their pages, or
// nil when there are none.
func (w *Workbench) loginRequests(ctx context.Context, need []*downstream.Server) *mcp.CallToolResult {
	h, _ := ctx.Value(loginHostKey{}).(*loginHost)
	if h == nil || h.retry || len(need) == 0 {
		return nil
	}
	reqs := mcp.InputRequestMap{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range need {
		wg.Go(func() {
			pl, err := w.startLogin(s)
			if err != nil {
				return // the open reports it as needing a login
			}
			url, _ := pl.page()
			mu.Lock()
			reqs[pl.id] = &mcp.ElicitParams{
				Mode:          "url",
				Message:       fmt.Sprintf("The MCP server '%s' (toolbox '%s') needs you to log in before its tools can be used.", s.Name, s.Toolbox),
				URL:           url,
				ElicitationID: pl.id,
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(reqs) == 0 {
		return nil
	}
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: requestStatePrefix + rand.Text()}
}

// finishLogins handles the host's answers to an open's input requests: a
// login the user accepted is waited for (bounded by the login's own
// timeout and the call), one declined or cancelled is given up. It
// reports whether the open is a retry of such an open.
func (w *Workbench) finishLogins(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolParamsRaw) bool {
	if p == nil || !strings.HasPrefix(p.RequestState, requestStatePrefix) {
		return false
	}
	for id, resp := range p.InputResponses {
		w.logins.mu.Lock()
		pl := w.logins.pending[id]
		w.logins.mu.Unlock()
		if pl == nil {
			continue // ended already: the open finds out how
		}
		if res, ok := resp.(*mcp.ElicitResult); !ok || res.Action != "accept" {
			w.log.Info("the login was not accepted in the host", "toolbox", pl.server.Toolbox, "server", pl.server.Name)
			w.logins.leave(pl, w) // given up, unless another host waits for it
			continue
		}
		select {
		case <-pl.done:
		case <-ctx.Done():
			return true
		}
		if pl.err == nil && ss != nil && ss.InitializeParams() != nil && ss.InitializeParams().ProtocolVersion < "2026-07-28" {
			_ = ss.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: id})
		}
	}
	return true
}

// cancelLogins ends w's interest in every pending login (the workbench is
// closing): those no other workbench waits for are given up.
func (w *Workbench) cancelLogins() {
	w.logins.mu.Lock()
	var mine []*pendingLogin
	for _, pl := range w.logins.pending {
		if pl.users[w] {
			mine = append(mine, pl)
		}
	}
	w.logins.mu.Unlock()
	for _, pl := range mine {
		w.logins.leave(pl, w)
	}
}

// needsLogin reports whether err is a server's need of a login.
func needsLogin(err error) bool {
	var le *oauth.Error
	return errors.As(err, &le) && le.NeedsLogin()
}
