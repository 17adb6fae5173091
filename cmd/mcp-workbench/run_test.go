package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"
)

func TestCommandLine(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "Development", "mcpServers": map[string]any{
			"fs":  map[string]any{"command": "npx", "args": []string{"-y", "server"}},
			"web": map[string]any{"type": "http", "url": "http://127.0.0.1:9/mcp", "disabled": true},
		}},
	}})
	missing := filepath.Join(t.TempDir(), "none.json")
	tests := []struct {
		args     []string
		env      map[string]string
		code     int
		out, err string // fragments of stdout and stderr
	}{
		{args: []string{"--version"}, out: "mcp-workbench " + sourceVersion},
		{args: []string{"version"}, out: "mcp-workbench " + sourceVersion},
		{args: []string{"help"}, out: "Commands:\n  serve "},
		{args: []string{"--help"}, out: "Commands:\n  serve "},
		{args: []string{"-h"}, out: "Commands:\n  serve "},
		{args: []string{"validate", "--config", cfg}, out: "valid, 1 toolbox(es)"},
		{args: []string{"validate"}, env: map[string]string{"WORKBENCH_CONFIG": cfg}, out: "fs"},
		{args: []string{"--bogus"}, code: 2, err: "flag provided but not defined: --bogus"},
		{args: []string{"frobnicate"}, code: 2, err: `unknown command "frobnicate"`},
		{args: []string{"--log-level", "loud", "--config", cfg}, code: 2, err: `unknown log level "loud"`},
		{args: []string{"--log-level", "warn+2", "--config", cfg}, code: 2, err: `unknown log level "warn+2"`},
		{args: []string{"--config", missing}, code: 1, err: "not found"},
		{args: []string{"serve", "--config", missing}, code: 1, err: "not found"},
		{args: []string{"serve", "extra"}, code: 2, err: "mcp-workbench: serve: unexpected argument \"extra\"\n\nUsage: mcp-workbench [serve]"},
		{args: []string{"validate", "extra", "--config", cfg}, code: 2, err: "mcp-workbench: validate: unexpected argument \"extra\"\n\nUsage: mcp-workbench validate"},
		{args: []string{"help", "frobnicate"}, code: 2, err: `unknown command "frobnicate" (the commands: serve, validate, check, call, tools, login, logout, token, status, ui, stop-shared, serve-shared, hook, install, import, help, version)`},
		// Global flags before or after the command's name; after wins.
		{args: []string{"--config", cfg, "validate"}, out: "valid, 1 toolbox(es)"},
		{args: []string{"--config", missing, "validate", "--config", cfg}, out: "valid, 1 toolbox(es)"},
		{args: []string{"--log-level", "debug", "validate", "--config", cfg}, out: "valid"},
		{args: []string{"validate", "--config", cfg, "--log-level", "error"}, out: "valid"},
		// "--" ends the flags.
		{args: []string{"check", "--config", cfg, "--", "--json"}, code: 2, err: `no toolbox "--json"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			code, stdout, stderr := runCmd(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stdout, tt.out) || !strings.Contains(stderr, tt.err) {
				t.Errorf("code %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q)", code, tt.code, stdout, tt.out, stderr, tt.err)
			}
		})
	}
}

// TestEveryCommandHasHelp checks that each command explains itself, the
// same way whether asked with help COMMAND or COMMAND --help, and takes
// the global flags.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			if !strings.HasPrefix(c.usage, "Usage: mcp-workbench ") {
				t.Errorf("usage does not start with Usage: mcp-workbench\n%s", c.usage)
			}
			if !strings.Contains(c.usage, "--log-level") {
				t.Errorf("usage does not mention --log-level:\n%s", c.usage)
			}
			for _, args := range [][]string{{"help", c.name}, {c.name, "--help"}, {c.name, "-h"}, {"--log-level", "warn", c.name, "--help"}} {
				code, stdout, stderr := runCmd(t, "", args...)
				if code != 0 || stdout != c.usage || stderr != "" {
					t.Errorf("%v: exit %d, stderr %q, stdout\n%s", args, code, stderr, stdout)
				}
			}
			if !strings.Contains(mainUsage(), "\n  "+c.name+" ") {
				t.Errorf("mcp-workbench help does not list %s:\n%s", c.name, mainUsage())
			}
		})
	}
}

// TestEveryCommandTakesTheLogLevel checks that --log-level is accepted,
// and checked, before or after every command's name.
func TestEveryCommandTakesTheLogLevel(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			for _, args := range [][]string{{c.name, "--log-level", "loud"}, {"--log-level", "loud", c.name}} {
				if c.name == "help" {
					break // help explains; it reads no level
				}
				code, stdout, stderr := runCmd(t, "", args...)
				wantErr := "mcp-workbench: " + c.name + `: unknown log level "loud"`
				if c.name == "import" || c.name == "call" || c.name == "login" || c.name == "logout" || c.name == "tools" || c.name == "hook" || c.name == "install" {
					wantErr = "mcp-workbench: " + c.name + ": " // they need arguments first
				}
				if code != 2 || stdout != "" || !strings.Contains(stderr, wantErr) || !strings.Contains(stderr, c.usage) {
					t.Errorf("%v: exit %d, stdout %q, stderr\n%s", args, code, stdout, stderr)
				}
			}
		})
	}
	// import reports a bad level once its arguments are right.
	code, _, stderr := runCmd(t, "", "import", importFixture("cursor-mcp.json"), "--out", filepath.Join(t.TempDir(), "x.json"), "--log-level", "loud")
	if code != 2 || !strings.Contains(stderr, `import: unknown log level "loud"`) {
		t.Errorf("import --log-level loud: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCmd(t, "", "call", "dev", "a", "t", "--log-level", "loud")
	if code != 2 || !strings.Contains(stderr, `call: unknown log level "loud"`) {
		t.Errorf("call --log-level loud: exit %d\n%s", code, stderr)
	}
	// A good level is accepted by import, which has no --config.
	out := filepath.Join(t.TempDir(), "wb.json")
	code, _, stderr = runCmd(t, "", "--log-level", "debug", "import", importFixture("cursor-mcp.json"), "--out", out)
	if code != 0 {
		t.Errorf("import with --log-level debug: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}

// TestJSONProblemNamesNoGoType checks the message for a result that does
// not decode, which a server can send: it speaks of JSON, not of Go, in
// the words frame.Explain uses everywhere.
func TestJSONProblemNamesNoGoType(t *testing.T) {
	for doc, want := range map[string]string{
		`{"content": "x"}`:           `expected an array at "content", got a string`,
		`{"content": [{"type": 1}]}`: `expected a string at "content.type", got a number`,
		`{"isError": "yes"}`:         `expected true or false at "isError", got a string`,
		`[1]`:                        "expected an object, got an array",
		`{"content": [`:              "not valid JSON at byte 13: unexpected end of JSON input",
	} {
		var res result
		err := json.Unmarshal([]byte(doc), &res)
		if got := frame.Explain(err); got != want || strings.Contains(got, "Go ") {
			t.Errorf("%s: %q (from %v), want %q", doc, got, err, want)
		}
	}
}
