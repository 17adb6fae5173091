package downstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
)

// Review is one server's part of a review of its tools' definitions
// against its pins: mcp-workbench tools diff and approve, and the web UI's
// review.
type Review struct {
	Server *Server
	Label  string   // TOOLBOX/SERVER
	Tools  *ToolSet // what the server lists; nil when Err is set
	Err    error    // why the server did not start
	// Pending is what approving changes ([Server.Pending]): set by the
	// caller, which chooses the tools.
	Pending []Pending
}

// StartForReview starts the servers that are not disabled, all at once,
// and returns each one's part of a review, in the order given: the tools
// it lists, screened again once every server has listed its own (a tool
// may shadow another server's), or why it did not start.
func StartForReview(ctx context.Context, servers []*Server) []Review {
	var rs []Review
	for _, s := range servers {
		if !s.Config().Disabled {
			rs = append(rs, Review{Server: s, Label: s.Toolbox + "/" + s.Name})
		}
	}
	var wg sync.WaitGroup
	for i := range rs {
		wg.Go(func() {
			rs[i].Tools, rs[i].Err = rs[i].Server.Connect(ctx)
		})
	}
	wg.Wait()
	for i, r := range rs {
		if r.Err != nil {
			continue
		}
		if cur := r.Server.State().Tools; cur != nil {
			rs[i].Tools = cur // screened again now that every server has listed its tools
		}
	}
	return rs
}

// ReviewCode stands for the changes that approving rs makes (their
// Pending): the same code means the same definitions, so that approve
// pins only what the review showed (tools approve --reviewed, the web
// UI's approve).
func ReviewCode(rs []Review) string {
	h := sha256.New()
	for _, r := range rs {
		for _, p := range r.Pending {
			fmt.Fprintf(h, "%d:%s%d:%s%d:%s", len(r.Label), r.Label, len(p.Name), p.Name, len(p.Hash), p.Hash)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}
