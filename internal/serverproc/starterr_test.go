package serverproc

import (
	"errors"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// windowsPaths are Windows' path rules, for the tests on other OSes.
var windowsPaths = pathRules{
	isAbs: func(p string) bool {
		return strings.HasPrefix(p, `\\`) || len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
	},
	hasDir: func(p string) bool { return strings.ContainsAny(p, `:\/`) },
	join: func(dir, rel string) string {
		rel = strings.TrimPrefix(strings.ReplaceAll(rel, "/", `\`), `.\`)
		return strings.TrimRight(dir, `\/`) + `\` + rel
	},
}

// TestMissingCommandByOS: only a command named without a folder is "not
// found in PATH"; a path that matches nothing "does not exist", with
// where it was looked for. On Windows exec reports an absolute or
// relative path without an extension (C:\srv\nope\server, bin/nope with a
// cwd), PATHEXT's extensions tried, with the error of a name PATH lacks.
func TestMissingCommandByOS(t *testing.T) {
	notFound := func(name string) error { return &exec.Error{Name: name, Err: exec.ErrNotFound} }
	cases := []struct {
		os            string
		pr            pathRules
		command, cwd  string
		err           error
		want, notWant string
	}{
		{"windows", windowsPaths, `C:\Users\me\nope\server`, "", notFound(`C:\Users\me\nope\server`),
			`command "C:\\Users\\me\\nope\\server" does not exist`, "PATH"},
		{"windows", windowsPaths, `bin/nope`, `C:\srv`, notFound(`bin/nope`),
			`does not exist (looked for C:\srv\bin\nope: a relative command is taken from the server's "cwd"`, "PATH"},
		{"windows", windowsPaths, `C:\srv\nope\server.exe`, "", &fs.PathError{Op: "stat", Path: `C:\srv\nope\server.exe`, Err: fs.ErrNotExist},
			`command "C:\\srv\\nope\\server.exe" does not exist`, "PATH"},
		{"windows", windowsPaths, `npx`, "", notFound("npx"), `command "npx" not found in PATH`, "does not exist"},
		{"host", hostPaths, filepath.Join("bin", "nope"), filepath.Join(string(filepath.Separator)+"srv", "x"), &fs.PathError{Op: "fork/exec", Path: "bin/nope", Err: fs.ErrNotExist},
			"looked for " + filepath.Join(string(filepath.Separator)+"srv", "x", "bin", "nope") + ":", "PATH"},
		{"host", hostPaths, "mcp-workbench-nope", "", notFound("mcp-workbench-nope"), `command "mcp-workbench-nope" not found in PATH`, "does not exist"},
	}
	for _, c := range cases {
		msg := describeStartErrOn(c.pr, c.command, c.cwd, c.err).Error()
		if !strings.Contains(msg, c.want) || strings.Contains(msg, c.notWant) {
			t.Errorf("%s: command %q, cwd %q: %s\nwant %q, without %q", c.os, c.command, c.cwd, msg, c.want, c.notWant)
		}
	}
}

// TestMissingCommandPathStarts: a real start of a command path that does
// not exist, absolute or relative to the server's cwd, says so and where
// it looked, on every OS (on Windows the path has no extension).
func TestMissingCommandPathStarts(t *testing.T) {
	dir := t.TempDir()
	var stderr fakeserver.Buffer
	abs := filepath.Join(dir, "nope", "server")
	_, err := Start(&config.Server{Name: "s", Command: abs}, "[s]", &stderr, nil)
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "does not exist") || strings.Contains(err.Error(), "PATH") {
		t.Errorf("absolute path: %v", err)
	}
	_, err = Start(&config.Server{Name: "s", Command: "bin/nope", Cwd: dir}, "[s]", &stderr, nil)
	if want := "looked for " + filepath.Join(dir, "bin", "nope") + ":"; !errors.As(err, &se) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "PATH") {
		t.Errorf("relative path with a cwd: %v, want %q", err, want)
	}
}
