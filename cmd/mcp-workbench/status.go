package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
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
	found, err := front.FindShared(ctx, Version())
	if err != nil {
		fmt.Fprintln(e.stderr, "mcp-workbench:", err)
		return &exitError{code: 1}
	}
	if *asJSON {
		list := make([]front.Status, 0, len(found))
		for _, d := range found {
			list = append(list, d.Status)
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
		st := d.Status
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
			line := fmt.Sprintf("    %s/%s  %s%s", s.Toolbox, s.Server, s.Status, s.StartSchedule.Text())
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
	found, err := front.FindShared(ctx, Version())
	if err != nil {
		fmt.Fprintln(e.stderr, "mcp-workbench:", err)
		return &exitError{code: 1}
	}
	stopped := 0
	var others []string
	for _, d := range found {
		if want != "" && d.Status.Config != want {
			others = append(others, d.Status.Config)
			continue
		}
		if _, err := front.Ask(ctx, d.Socket, shared.KindStop, Version()); err != nil {
			fmt.Fprintf(e.stderr, "mcp-workbench: stopping the shared workbench of %s (pid %d): %v\n", d.Status.Config, d.Status.PID, err)
			continue
		}
		fmt.Fprintf(e.stdout, "Stopped the shared workbench of %s (version %s, pid %d).\n", d.Status.Config, d.Status.Version, d.Status.PID)
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
