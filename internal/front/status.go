package front

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/shared"
)

// Running is one shared workbench found by [FindShared].
type Running struct {
	Socket string
	Status Status
}

// FindShared asks every shared workbench of the user for its status;
// sockets no one answers at are left to the next start to clean up.
func FindShared(ctx context.Context, version string) ([]Running, error) {
	if !shared.Supported() {
		return nil, errors.New("sharing is not supported on this system: every session runs its own servers")
	}
	dir, err := shared.Dir()
	if err != nil {
		return nil, err
	}
	socks, err := shared.Sockets(dir)
	if err != nil {
		return nil, err
	}
	var found []Running
	for _, sock := range socks {
		reply, err := Ask(ctx, sock, shared.KindStatus, version)
		if err != nil {
			continue // stale: its workbench is gone
		}
		var st Status
		if err := json.Unmarshal(reply.Status, &st); err != nil {
			continue
		}
		found = append(found, Running{Socket: sock, Status: st})
	}
	return found, nil
}

// Ask sends a status or stop hello (kind) to the shared workbench at sock,
// as a client of the given version, and returns its reply.
func Ask(ctx context.Context, sock, kind, version string) (*shared.Reply, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := shared.Dial(ctx, sock)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(sharedAnswerTimeout))
	if err := shared.WriteLine(conn, shared.Hello{Protocol: shared.Protocol, Version: version, Kind: kind, PID: os.Getpid()}); err != nil {
		return nil, err
	}
	var reply shared.Reply
	if err := shared.ReadLine(bufio.NewReader(conn), &reply); err != nil {
		return nil, err
	}
	if !reply.OK {
		return nil, errors.New(reply.Error)
	}
	return &reply, nil
}

// StartSchedule is what status shows of a server's start: since when it
// is starting (or installing its package), or why its last start failed
// and when opens and searches try it again.
type StartSchedule struct {
	// SinceMs: how long the start under way has been going on.
	SinceMs int64 `json:"startingForMs,omitempty"`
	// Error: why the last start failed; Failures: how many failed in a
	// row; FailedMs: how long ago the last one; NextTryMs: how long until
	// an open or a search tries again (0: when one comes).
	Error     string `json:"error,omitempty"`
	Failures  int    `json:"failures,omitempty"`
	FailedMs  int64  `json:"failedMsAgo,omitempty"`
	NextTryMs int64  `json:"nextTryInMs,omitempty"`
}

// ScheduleOf is the StartSchedule of a server in state st at now.
func ScheduleOf(st downstream.State, now time.Time) StartSchedule {
	var s StartSchedule
	if !st.Since.IsZero() {
		s.SinceMs = max(now.Sub(st.Since).Milliseconds(), 1)
	}
	if st.Err != nil {
		s.Error = st.Err.Error()
	}
	if !st.FailedAt.IsZero() {
		s.Failures = st.Failures
		s.FailedMs = max(now.Sub(st.FailedAt).Milliseconds(), 1)
		s.NextTryMs = max(st.NextTry.Sub(now).Milliseconds(), 0)
	}
	return s
}

// Text says the schedule in a status line, after the server's status.
func (s StartSchedule) Text() string {
	ms := func(n int64) string { return (time.Duration(n) * time.Millisecond).Round(time.Second).String() }
	var b strings.Builder
	if s.SinceMs > 0 {
		b.WriteString(" for " + ms(s.SinceMs))
	}
	if s.Failures > 0 {
		fmt.Fprintf(&b, ", %d failed start(s), the last %s ago", s.Failures, ms(s.FailedMs))
		if s.NextTryMs > 0 {
			b.WriteString(", next try in " + ms(s.NextTryMs))
		} else {
			b.WriteString(", tried again by the next open or search")
		}
	}
	if s.Error != "" {
		b.WriteString(": " + s.Error)
	}
	return b.String()
}
