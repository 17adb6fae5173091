package ui

import (
	"net/http"
	"strconv"

	"github.com/mcpworkbench/mcp-workbench/internal/live"
)

// handleActivity answers the recent calls of every workbench of the user,
// newest first (at most ?limit=, default 500): what internal/live
// records, never arguments or results.
func (s *Server) handleActivity(w http.ResponseWriter, r *http.Request) {
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit <= 0 || limit > 5000 {
		limit = 500
	}
	calls, err := live.ReadActivity(limit)
	if err != nil {
		refuse(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, calls)
}
