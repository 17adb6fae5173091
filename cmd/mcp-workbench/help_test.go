package main

import (
	"regexp"
	"strings"
	"testing"
)

// The top-level help's "Start with:" is what a new user types first, on a
// configuration of their own: it names no toolbox, server or tool they may
// not have (the example config's "knowledge memory" is not in an
// imported one), only placeholders.
func TestHelpStartsWithWhatEveryUserHas(t *testing.T) {
	code, stdout, stderr := runCmd(t, "", "help")
	if code != 0 || stderr != "" {
		t.Fatalf("help: exit %d, stderr %q", code, stderr)
	}
	_, start, ok := strings.Cut(stdout, "\nStart with:\n")
	if !ok {
		t.Fatalf("help has no \"Start with:\":\n%s", stdout)
	}
	placeholder := regexp.MustCompile(`^[A-Z][A-Z0-9_-]*$`)
	takesNames := map[string]bool{"call": true, "check": true, "login": true, "logout": true, "tools": true}
	commands := 0
	for _, line := range strings.Split(start, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "mcp-workbench" {
			continue
		}
		commands++
		if !takesNames[fields[1]] {
			continue
		}
		for _, arg := range fields[2:] {
			if strings.HasPrefix(arg, "-") || strings.HasPrefix(arg, "'") || arg == "approve" || arg == "diff" {
				break // flags, then the call's JSON arguments
			}
			if !placeholder.MatchString(arg) {
				t.Errorf("help's \"Start with:\" names %q, which the user's configuration may not have:\n  %s", arg, line)
			}
		}
	}
	if commands < 3 || !strings.Contains(start, "mcp-workbench call TOOLBOX SERVER TOOL") {
		t.Errorf("help's \"Start with:\" does not show import, check and a call with placeholders:\n%s", start)
	}
}

// help check names every report check prints, so that a user who sees a
// permissions or pins line knows what it is (TestCheckPrintsPermissions
// and the pins tests check the reports themselves).
func TestCheckHelpNamesItsReports(t *testing.T) {
	code, stdout, _ := runCmd(t, "", "help", "check")
	if code != 0 {
		t.Fatalf("help check: exit %d", code)
	}
	text := strings.Join(strings.Fields(stdout), " ") // lines rewrapped freely
	for _, want := range []string{
		"permission rules",     // the permissions report
		"allow, ask or deny",   // each tool's decision
		"match no tool",        // the unmatched rules' warnings
		"pinned, changed, new", // the pins line
		"mcp-workbench tools diff",
		"login",     // a server that needs one
		"two tools", // what a host sees before an open
		"catalog",   // check refreshes it
	} {
		if !strings.Contains(text, want) {
			t.Errorf("help check does not mention %q:\n%s", want, stdout)
		}
	}
}

// The help's line for hook names every host whose hook it answers
// (hookHosts): Gemini CLI's too.
func TestHelpHookNamesEveryHost(t *testing.T) {
	_, stdout, _ := runCmd(t, "", "help")
	var line string
	for _, l := range strings.Split(stdout, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "hook" {
			line = l
		}
	}
	for _, h := range hookHosts {
		if !strings.Contains(line, h.title) {
			t.Errorf("help's line for hook does not name %s: %q", h.title, line)
		}
	}
}
