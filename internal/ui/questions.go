package ui

import (
	"errors"
	"net/http"

	"github.com/mcpworkbench/mcp-workbench/internal/live"
)

// handleAnswer answers a permission question a workbench put to the page
// (its host could not ask): allow once, allow for the session, or deny.
func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ID     string `json:"id"`
		Action string `json:"action"`
	}
	if !decode(w, r, &in) {
		return
	}
	if err := live.AnswerQuestion(in.ID, in.Action); err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, live.ErrNoQuestion) {
			code = http.StatusGone
		}
		refuse(w, code, err.Error())
		return
	}
	s.log.Info("answered a permission question in the web UI", "answer", in.Action)
	writeJSON(w, map[string]string{"answered": in.Action})
}
