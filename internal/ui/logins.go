package ui

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth"
)

// loginNow is one remote server's login on the Logins page. It never
// holds a token, nor the server's URL (whose query may hold a key).
type loginNow struct {
	Toolbox  string `json:"toolbox"`
	Server   string `json:"server"`
	Status   string `json:"status"` // oauth.Status's line
	LoggedIn bool   `json:"loggedIn"`
	Busy     bool   `json:"busy,omitempty"` // a sign-in from the page is under way
	Last     string `json:"last,omitempty"` // how the page's last sign-in ended
}

// logins are the sign-ins the page started, by toolbox/server.
type logins struct {
	mu   sync.Mutex
	busy map[string]bool
	last map[string]string
}

func (s *Server) remote(toolbox, server string) (*config.Config, *config.Server, bool) {
	cfg, err := loads.load(s.o.ConfigPath)
	if err != nil {
		return nil, nil, false
	}
	tb := cfg.Toolbox(toolbox)
	if tb == nil {
		return nil, nil, false
	}
	sc := tb.Server(server)
	if sc == nil || !oauth.Applies(sc) {
		return nil, nil, false
	}
	return cfg, sc, true
}

func (s *Server) handleLogins(w http.ResponseWriter, r *http.Request) {
	out := []loginNow{}
	cfg, err := loads.load(s.o.ConfigPath)
	if err != nil {
		writeJSON(w, out)
		return
	}
	s.logins.mu.Lock()
	defer s.logins.mu.Unlock()
	for _, tb := range cfg.Toolboxes {
		for _, sc := range tb.Servers {
			if !oauth.Applies(sc) {
				continue
			}
			key := tb.Name + "/" + sc.Name
			st := oauth.Status(cfg.Path, tb.Name, sc, false)
			out = append(out, loginNow{Toolbox: tb.Name, Server: sc.Name, Status: st, LoggedIn: strings.HasPrefix(st, "logged in"),
				Busy: s.logins.busy[key], Last: s.logins.last[key]})
		}
	}
	writeJSON(w, out)
}

// handleLogin starts the login command's OAuth flow for a server and
// answers with the authorization page's address, for the user to open;
// the flow goes on (waiting for the redirect, storing the tokens) after
// the answer, up to oauth.DefaultLoginTimeout.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	var in struct{ Toolbox, Server string }
	if !decode(w, r, &in) {
		return
	}
	cfg, sc, ok := s.remote(in.Toolbox, in.Server)
	if !ok {
		refuse(w, http.StatusNotFound, "toolbox '"+in.Toolbox+"' has no remote server '"+in.Server+"' that logs in with OAuth")
		return
	}
	key := in.Toolbox + "/" + in.Server
	s.logins.mu.Lock()
	if s.logins.busy[key] {
		s.logins.mu.Unlock()
		refuse(w, http.StatusConflict, "a sign-in to "+key+" is under way: finish it in its page, or wait for it to time out")
		return
	}
	s.logins.busy[key] = true
	s.logins.mu.Unlock()

	shown := make(chan string, 1)
	ended := make(chan error, 1)
	go func() {
		res, err := oauth.Login(s.ctx, oauth.LoginOptions{
			ConfigPath: cfg.Path, Toolbox: in.Toolbox, Server: sc,
			Show: func(_ context.Context, authURL string) error {
				shown <- authURL
				return nil
			},
		})
		last := "signed in"
		switch {
		case err != nil:
			last = err.Error()
		case res.NotNeeded:
			last = "the server answered without asking for a login"
		}
		s.logins.mu.Lock()
		delete(s.logins.busy, key)
		s.logins.last[key] = last
		s.logins.mu.Unlock()
		s.log.Info("sign-in from the web UI ended", "toolbox", in.Toolbox, "server", in.Server, "outcome", last)
		ended <- err
	}()
	select {
	case u := <-shown:
		writeJSON(w, map[string]string{"authURL": u})
	case err := <-ended:
		if err != nil {
			refuse(w, http.StatusBadGateway, err.Error())
			return
		}
		writeJSON(w, map[string]string{"message": "no sign-in needed: the server answered without asking for one"})
	case <-time.After(2 * time.Minute):
		refuse(w, http.StatusGatewayTimeout, "the server did not say where to sign in within 2 minutes")
	}
}

// handleLogout removes the tokens of a server's login (the logout command).
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	var in struct{ Toolbox, Server string }
	if !decode(w, r, &in) {
		return
	}
	_, sc, ok := s.remote(in.Toolbox, in.Server)
	if !ok {
		refuse(w, http.StatusNotFound, "toolbox '"+in.Toolbox+"' has no remote server '"+in.Server+"' that logs in with OAuth")
		return
	}
	store, err := oauth.DefaultStore()
	if err != nil {
		refuse(w, http.StatusInternalServerError, err.Error())
		return
	}
	had, err := oauth.Logout(r.Context(), store, sc.URL)
	if err != nil {
		refuse(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, map[string]bool{"removed": had})
}
