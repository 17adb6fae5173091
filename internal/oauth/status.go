package oauth

import (
	"fmt"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
)

// Status is a remote server's login state in a line, for validate and
// check: "" for a server that never logs in (stdio, or with its own
// Authorization header). connected says whether the server was just
// reached (check); validate passes false. It never shows a token.
func Status(configPath, toolbox string, s *config.Server, connected bool) string {
	if !Applies(s) {
		return ""
	}
	cmd := loginCommand(configPath, toolbox, s.Name)
	store, err := DefaultStore()
	if err != nil {
		return "login state unknown: " + err.Error()
	}
	rec, err := store.Load(s.URL)
	if err == nil && rec != nil {
		if reason := mismatch(rec, s); reason != "" {
			return fmt.Sprintf("login needed: %s: run `%s`", reason, cmd)
		}
	}
	switch {
	case err != nil:
		return fmt.Sprintf("login needed: %v: run `%s`", err, cmd)
	case rec == nil && connected:
		return "no login needed"
	case rec == nil && s.OAuth != nil:
		return fmt.Sprintf("login needed: run `%s`", cmd)
	case rec == nil:
		return fmt.Sprintf("not logged in (needed only if the server asks: `%s`)", cmd)
	case rec.usable() && rec.Token.Expiry.IsZero():
		return "logged in (" + rec.Issuer + ", no expiry given)"
	case rec.usable():
		return fmt.Sprintf("logged in (%s, expires %s)", rec.Issuer, rec.Token.Expiry.Local().Format(time.DateTime))
	case rec.Token.RefreshToken != "":
		return fmt.Sprintf("logged in (%s; the access token expired and is refreshed on next use)", rec.Issuer)
	}
	return fmt.Sprintf("login needed: the login expired: run `%s`", cmd)
}
