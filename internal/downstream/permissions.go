package downstream

import "encoding/json"

// Resolve checks a call of tool name with args against the live
// connection, as the call itself would (the tool offered, not withheld,
// its arguments valid), without making it: the workbench's permission
// rules look at the tool's annotations before a call, and ask no one about
// a call that would be refused anyway. It returns nil, nil when the server
// is not connected. viewer is who calls (see [Caller]).
func (s *Server) Resolve(viewer any, name string, args json.RawMessage) (*Tool, error) {
	s.mu.Lock()
	c := s.live
	s.mu.Unlock()
	if c == nil {
		return nil, nil
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return c.resolve(viewer, name, args)
}
