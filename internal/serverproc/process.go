// Package serverproc runs a stdio MCP server as a child process: its own
// process group (through proctree), pipes the workbench owns, a stdout that
// yields only JSON-RPC lines, and stderr forwarded to the workbench's log
// with a prefix and flood control.
package serverproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
)

// Process is a running stdio server: the direct child, leader of a process
// group that holds everything it starts.
type Process struct {
	cmd    *exec.Cmd
	stdin  *os.File        // our end of the child's stdin
	stdout *jsonLineReader // the child's stdout, JSON-RPC lines only
	group  *proctree.Group
	stderr *stderrForwarder
	wd     *proctree.Watchdog

	exited  chan struct{} // closed once the child has been waited for
	exitErr error         // cmd.Wait's result, set before exited closes

	stderrDone chan struct{} // closed once the child's stderr is all forwarded

	found Found // where a command PATH lacks was found, or zero

	stopOnce sync.Once
}

// FoundElsewhere says where the command was found when PATH did not have
// it (the login shell's PATH or the usual folders; see lookpath.go), or
// returns the zero Found. The server's PATH starts with that folder.
func (p *Process) FoundElsewhere() Found { return p.found }

// StartError is a failure to start the command at all. Retrying cannot help.
type StartError struct{ Err error }

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Start starts cfg's command in its own process group, with cfg.BaseEnv
// (when nil, the workbench's own environment) plus cfg.Env, in cfg.Cwd —
// never through a shell — and tells wd (if set) about the group. Its stderr lines go to stderr,
// each prefixed with prefix.
func Start(cfg *config.Server, prefix string, stderr io.Writer, wd *proctree.Watchdog) (*Process, error) {
	if cfg.Cwd != "" {
		if st, err := os.Stat(cfg.Cwd); err != nil || !st.IsDir() {
			return nil, &StartError{fmt.Errorf("cwd %s is not a directory", cfg.Cwd)}
		}
	}
	cmd := serverCommand(cfg.Command, cfg.Args...)
	var found Found
	if errors.Is(cmd.Err, exec.ErrNotFound) && filepath.Base(cfg.Command) == cfg.Command {
		// Not in PATH: a GUI host's short PATH, perhaps (see lookpath.go).
		if path, f := findElsewhere(cfg.Command, envPath(cfg.Env)); path != "" {
			cmd, found = serverCommand(path, cfg.Args...), f
		}
	}
	if cmd.Err != nil {
		return nil, &StartError{describeStartErr(cfg.Command, cfg.Cwd, cmd.Err)}
	}
	cmd.Dir = cfg.Cwd
	base := slices.Clip(cfg.BaseEnv) // shared between servers: never appended to in place
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = mergeEnv(base, cfg.Env)
	if found.Dir != "" {
		cmd.Env = withPathFirst(cmd.Env, found.Dir)
	}

	// Our own pipes, not cmd.StdoutPipe: Wait must not close our end of
	// stdout before we have read the child's last words, and a grandchild
	// that keeps a pipe open must not block Wait.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	group, startErr := proctree.Start(cmd)
	// The child holds its ends now; ours must close so EOF can reach us.
	inR.Close()
	outW.Close()
	errW.Close()
	if startErr != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, &StartError{describeStartErr(cfg.Command, cfg.Cwd, startErr)}
	}
	p := &Process{
		cmd:        cmd,
		found:      found,
		stdin:      inW,
		group:      group,
		wd:         wd,
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
		stderr:     newStderrForwarder(prefix, stderr),
	}
	if usesNPXCache(PackageRunner(cfg.Command, cfg.Args)) {
		p.stderr.npx = &npxScan{}
	}
	p.wd.Watch(group.ID())
	junk := func(line []byte) {
		p.Note("stdout line is not JSON-RPC, ignored: " + Clip(string(line), 200))
	}
	p.stdout = newJSONLineReader(outR, junk)
	go func() {
		p.stderr.copy(errR)
		close(p.stderrDone)
	}()
	go func() {
		p.exitErr = group.Wait()
		close(p.exited)
	}()
	return p, nil
}

// describeStartErr says why command did not start. A relative command
// path (./bin/server) is taken from cwd when the server has one (exec.Cmd
// evaluates a relative Path from its Dir), else from the workbench's own
// working directory, which the host chooses.
func describeStartErr(command, cwd string, err error) error {
	return describeStartErrOn(hostPaths, command, cwd, err)
}

// describeStartErrOn is describeStartErr with the path rules of an OS
// given, so that Windows' cases are checked on every OS. Only a command
// named without a folder is looked up in PATH: on Windows, exec reports
// a path without an extension that matches nothing (C:\srv\server,
// bin\server with the PATHEXT extensions tried) as not found, as it does a
// name PATH lacks, but such a path does not exist.
func describeStartErrOn(pr pathRules, command, cwd string, err error) error {
	named := pr.hasDir(command)
	switch {
	case errors.Is(err, exec.ErrNotFound) && !named:
		return fmt.Errorf("command %q not found in PATH, nor in the login shell's PATH or the folders where the usual installers put programs (Homebrew, npm, nvm, Volta, uv)", command)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, exec.ErrNotFound):
		if !pr.isAbs(command) && cwd != "" {
			return fmt.Errorf("command %q does not exist (looked for %s: a relative command is taken from the server's \"cwd\"; give a path from there, or an absolute one)", command, pr.join(cwd, command))
		}
		if !pr.isAbs(command) {
			if wd, werr := os.Getwd(); werr == nil {
				return fmt.Errorf("command %q does not exist (looked for %s: a relative command without \"cwd\" is taken from the workbench's working directory, which the host chooses; set \"cwd\" or give an absolute path)", command, pr.join(wd, command))
			}
		}
		return fmt.Errorf("command %q does not exist", command)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("command %q is not executable (permission denied)", command)
	}
	return fmt.Errorf("starting %q: %w", command, err)
}

// pathRules are an OS's rules for file paths: filepath's for the OS the
// workbench runs on (the tests have Windows' for other OSes).
type pathRules struct {
	isAbs  func(string) bool
	hasDir func(string) bool // a path, not a bare program name
	join   func(dir, rel string) string
}

var hostPaths = pathRules{
	isAbs:  filepath.IsAbs,
	hasDir: func(p string) bool { return filepath.Base(p) != p },
	join:   func(dir, rel string) string { return filepath.Join(dir, rel) },
}

// mergeEnv returns base with the variables of extra set, replacing any of
// the same name.
func mergeEnv(base []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return base
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := extra[name]; !ok || name == "" {
			out = append(out, kv)
		}
	}
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	return out
}

// Stdin is the child's stdin. Closing it asks the server to exit.
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// ReadLine returns the next JSON-RPC line the child wrote on stdout,
// without its newline, in a slice of its own. Other lines are reported on
// the server's stderr and skipped. A line longer than [MaxLine] comes as a
// *[frame.TooLongError], as [frame.Reader.Next] reports it: the caller
// decides what it means, and reads on.
func (p *Process) ReadLine() ([]byte, error) { return p.stdout.next() }

// LimitLines lets limit lower the length limit of a long line once its
// top-level id is known (see [frame.Reader.LimitFor]): a tool list is
// refused by its own bound as it comes, not once read whole. Call it
// before the first ReadLine.
func (p *Process) LimitLines(limit func(id json.RawMessage) int) { p.stdout.r.LimitFor = limit }

// Exited is closed once the child has exited and been waited for.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Note writes a message of the workbench's own about this server where its
// stderr goes.
func (p *Process) Note(msg string) { p.stderr.note(msg) }

// LastWords returns the last lines the server wrote to stderr, joined for
// an error message, or "".
func (p *Process) LastWords() string { return p.stderr.lastWords() }

// FinalWords is LastWords once the child's stderr has ended, for a child
// that has exited: the line a dying server writes last may still be in the
// pipe when its exit is seen. It waits at most wait for the end, which
// only a descendant that escaped the stop and holds stderr open delays.
func (p *Process) FinalWords(wait time.Duration) string {
	select {
	case <-p.stderrDone:
	case <-time.After(wait):
	}
	return p.stderr.lastWords()
}

// BrokenNPXEntry returns the npx cache entry (a _npx/<hash> folder) that
// the server's stderr says is broken — a module or package not found, in
// a path inside it — or "". Only npx's servers are watched for it.
func (p *Process) BrokenNPXEntry() string { return p.stderr.brokenNPXEntry() }

// HasChild reports whether the server's command has a child process
// alive, and whether that can be told on this system (see
// [proctree.Group.HasChild]).
func (p *Process) HasChild() (has, known bool) { return p.group.HasChild() }

// ExitDescription says how the child ended, for error messages.
func (p *Process) ExitDescription() string {
	st := p.cmd.ProcessState
	if st == nil {
		return "exited"
	}
	var ee *exec.ExitError
	if p.exitErr != nil && !errors.As(p.exitErr, &ee) {
		return fmt.Sprintf("exited (%v)", p.exitErr)
	}
	return "exited with " + st.String()
}

// ExitedCleanly reports whether the child has exited with status 0.
func (p *Process) ExitedCleanly() bool {
	return p.HasExited() && p.exitErr == nil && p.cmd.ProcessState != nil && p.cmd.ProcessState.Success()
}

// HasExited reports whether the child has been waited for.
func (p *Process) HasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Stop ends the process tree: the child's stdin is closed first, as the MCP
// stdio transport asks; a child still running after grace, and every other
// process of its group, get SIGTERM and then SIGKILL. Safe to call more than
// once and concurrently; every call returns only when the stop is done.
func (p *Process) Stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(grace):
		}
		p.group.Stop(grace)
		p.stdout.Close()
		<-p.exited
		p.wd.Forget(p.group.ID())
		// The tree is gone, so its stderr is at its end: let the last
		// lines (and the count of dropped ones) reach the log first.
		select {
		case <-p.stderrDone:
		case <-time.After(grace):
		}
	})
}

// jsonLineReader passes through only the lines of r that look like
// JSON-RPC messages — a JSON object or batch naming "jsonrpc" — so that a
// server printing a banner or a log line on stdout (plain or JSON, as
// loggers like pino do by default) does not break its JSON-RPC stream;
// other lines go to junk, but for a message that ends one. Whether a
// passing line is well-formed is left to the reader of the messages.
type jsonLineReader struct {
	src  io.Closer
	r    *frame.Reader
	junk func([]byte)
}

var jsonrpcKey = []byte(`"jsonrpc"`)

// MaxLine bounds one JSON-RPC message from a server.
const MaxLine = 64 << 20

func newJSONLineReader(r io.ReadCloser, junk func([]byte)) *jsonLineReader {
	return &jsonLineReader{src: r, r: frame.NewReader(r, MaxLine), junk: junk}
}

// Close closes the underlying pipe, which ends a read in progress.
func (j *jsonLineReader) Close() error { return j.src.Close() }

func (j *jsonLineReader) next() ([]byte, error) {
	for {
		line, err := j.r.Next()
		switch {
		case err != nil:
			return nil, err
		case (line[0] == '{' || line[0] == '[') && bytes.Contains(line, jsonrpcKey):
			return line, nil
		}
		// What is left of a line that another message cut short may end
		// in a later message written inside it (see frame.Reader.Next).
		if head, msg := frame.SplitInterleaved(line); msg != nil {
			j.junk(head)
			return msg, nil
		}
		// Or it is that line's end, which may show whose answer it was
		// (a server that writes the id last): its call can fail at once.
		if bytes.Contains(line, jsonrpcKey) && frame.TailID(line) != nil {
			return line, nil
		}
		j.junk(line)
	}
}

// Clip shortens s to at most n bytes for a log line, at a character's
// start.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
