package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/shared"
)

const statusUsage = `Usage: mcp-workbench status [--json]

Shows the shared workbenches of this user: for each, its configuration,
version and process, the host sessions relayed to it, and the servers it
runs, with the sessions using each and how long it has been idle.

  --json   print the same as JSON
` + globalFlagsHelp

const stopSharedUsage = `Usage: mcp-workbench stop-shared [--all] [--config PATH]

Stops the shared workbench of the configuration (every version's), with
its servers. Sessions relayed to it see calls in flight fail; their next
call starts a new shared workbench.

  --all    stop every shared workbench of this user
` + globalFlagsHelp

// sharedDaemon is one shared workbench found by status or stop-shared.
type sharedDaemon struct {
	sock   string
	status sharedStatus
}

// findShared asks every shared workbench of the user for its status;
// sockets no one answers at are left to the next start to clean up.
func findShared(ctx context.Context) ([]sharedDaemon, error) {
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
	var found []sharedDaemon
	for _, sock := range socks {
		reply, err := askShared(ctx, sock, shared.KindStatus)
		if err != nil {
			continue // stale: its workbench is gone
		}
		var st sharedStatus
		if err := json.Unmarshal(reply.Status, &st); err != nil {
			continue
		}
		found = append(found, sharedDaemon{sock: sock, status: st})
	}
	return found, nil
}

// askShared sends a status or stop hello to the shared workbench at sock.
func askShared(ctx context.Context, sock, kind string) (*shared.Reply, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := shared.Dial(ctx, sock)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(sharedAnswerTimeout))
	if err := shared.WriteLine(conn, shared.Hello{Protocol: shared.Protocol, Version: Version(), Kind: kind, PID: os.Getpid()}); err != nil {
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

func runStatus(ctx context.Context, e *env, args []string) error {
	var g globalOptions
	fs := e.flagSet("status", &g)
	asJSON := fs.Bool("json", false, "")
	positional, err := parse(fs, args)
	if err == nil {
		err = noArguments(positional)
	}
	if err != nil {
		return e.usageError("status", err)
	}
	if _, _, err := e.logger("status", g); err != nil {
		return err
	}
	found, err := findShared(ctx)
	if err != nil {
		fmt.Fprintln(e.stderr, "mcp-workbench:", err)
		return &exitError{code: 1}
	}
	if *asJSON {
		list := make([]sharedStatus, 0, len(found))
		for _, d := range found {
			list = append(list, d.status)
		}
		out, _ := json.MarshalIndent(list, "", "  ")
		fmt.Fprintln(e.stdout, string(out))
		return nil
	}
	if len(found) == 0 {
		fmt.Fprintln(e.stdout, "No shared workbench is running.")
		return nil
	}
	now := time.Now()
	for i, d := range found {
		st := d.status
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		fmt.Fprintf(e.stdout, "%s  (version %s, pid %d, up %s)\n", st.Config, st.Version, st.PID, since(now, st.Started))
		fmt.Fprintf(e.stdout, "  sessions: %d\n", len(st.Sessions))
		for _, s := range st.Sessions {
			fmt.Fprintf(e.stdout, "    #%d  pid %d  %s  (for %s)\n", s.ID, s.PID, s.Cwd, since(now, s.Since))
		}
		fmt.Fprintf(e.stdout, "  servers: %d\n", len(st.Servers))
		for _, s := range st.Servers {
			line := fmt.Sprintf("    %s/%s  %s%s", s.Toolbox, s.Server, s.Status, s.startSchedule.text())
			if s.IdleMs > 0 {
				line += ", idle " + (time.Duration(s.IdleMs) * time.Millisecond).Round(time.Second).String()
			}
			users := "sessions"
			if s.Users == 1 {
				users = "session"
			}
			line += fmt.Sprintf("  (%d %s", s.Users, users)
			if !s.Shared {
				line += `, "shared": false`
			}
			fmt.Fprintln(e.stdout, line+")")
		}
	}
	return nil
}

// startSchedule is what status shows of a server's start: since when it
// is starting (or installing its package), or why its last start failed
// and when opens and searches try it again.
type startSchedule struct {
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

func scheduleOf(st downstream.State, now time.Time) startSchedule {
	var s startSchedule
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

// text says the schedule in a status line, after the server's status.
func (s startSchedule) text() string {
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

func since(now, t time.Time) string {
	return now.Sub(t).Round(time.Second).String()
}

func runStopShared(ctx context.Context, e *env, args []string) error {
	var g globalOptions
	fs := e.flagSet("stop-shared", &g)
	all := fs.Bool("all", false, "")
	positional, err := parse(fs, args)
	if err == nil {
		err = noArguments(positional)
	}
	if err != nil {
		return e.usageError("stop-shared", err)
	}
	if _, _, err := e.logger("stop-shared", g); err != nil {
		return err
	}
	var want string
	if !*all {
		want, err = filepath.Abs(config.ResolvePath(g.configPath, os.LookupEnv))
		if err != nil {
			return err
		}
	}
	found, err := findShared(ctx)
	if err != nil {
		fmt.Fprintln(e.stderr, "mcp-workbench:", err)
		return &exitError{code: 1}
	}
	stopped := 0
	var others []string
	for _, d := range found {
		if want != "" && d.status.Config != want {
			others = append(others, d.status.Config)
			continue
		}
		if _, err := askShared(ctx, d.sock, shared.KindStop); err != nil {
			fmt.Fprintf(e.stderr, "mcp-workbench: stopping the shared workbench of %s (pid %d): %v\n", d.status.Config, d.status.PID, err)
			continue
		}
		fmt.Fprintf(e.stdout, "Stopped the shared workbench of %s (version %s, pid %d).\n", d.status.Config, d.status.Version, d.status.PID)
		stopped++
	}
	if stopped == 0 {
		msg := "No shared workbench is running"
		if want != "" {
			msg += " for " + want
			if len(others) > 0 {
				msg += "; running for: " + strings.Join(others, ", ") + " (stop-shared --all stops every one)"
			}
		}
		fmt.Fprintln(e.stdout, msg+".")
	}
	return nil
}
