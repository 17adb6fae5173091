package downstream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
)

// process is a running stdio server: the direct child, leader of a process
// group that holds everything it starts.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File        // our end of the child's stdin
	stdout *jsonLineReader // the child's stdout, JSON-RPC lines only
	group  *proctree.Group
	stderr *stderrForwarder
	wd     *proctree.Watchdog

	exited  chan struct{} // closed once the child has been waited for
	exitErr error         // cmd.Wait's result, set before exited closes

	stderrDone chan struct{} // closed once the child's stderr is all forwarded

	stopOnce sync.Once
}

// startError is a failure to start the command at all. Retrying cannot help.
type startError struct{ err error }

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

// startProcess starts cfg's command in its own process group, with the
// workbench's environment plus cfg.Env, in cfg.Cwd. Never through a shell.
func startProcess(cfg *config.Server, prefix string, o *Options) (*process, error) {
	if cfg.Cwd != "" {
		if st, err := os.Stat(cfg.Cwd); err != nil || !st.IsDir() {
			return nil, &startError{fmt.Errorf("cwd %s is not a directory", cfg.Cwd)}
		}
	}
	cmd := serverCommand(cfg.Command, cfg.Args...)
	if cmd.Err != nil {
		return nil, &startError{describeStartErr(cfg.Command, cmd.Err)}
	}
	cmd.Dir = cfg.Cwd
	cmd.Env = mergeEnv(os.Environ(), cfg.Env)

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
		return nil, &startError{describeStartErr(cfg.Command, startErr)}
	}
	p := &process{
		cmd:        cmd,
		stdin:      inW,
		group:      group,
		wd:         o.Watchdog,
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
		stderr:     newStderrForwarder(prefix, o.Stderr),
	}
	p.wd.Watch(group.ID())
	junk := func(line []byte) {
		p.stderr.note(fmt.Sprintf("stdout line is not JSON-RPC, ignored: %s", clip(line, 200)))
	}
	p.stdout = newJSONLineReader(outR, junk)
	go func() {
		p.stderr.copy(errR)
		close(p.stderrDone)
	}()
	go func() {
		p.exitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func describeStartErr(command string, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("command %q not found in PATH", command)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("command %q does not exist", command)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("command %q is not executable (permission denied)", command)
	}
	return fmt.Errorf("starting %q: %w", command, err)
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

// exitDescription says how the child ended, for error messages.
func (p *process) exitDescription() string {
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

// hasExited reports whether the child has been waited for.
func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// stop ends the process tree: the child's stdin is closed first, as the MCP
// stdio transport asks; a child still running after grace, and every other
// process of its group, get SIGTERM and then SIGKILL. Safe to call more than
// once and concurrently; every call returns only when the stop is done.
func (p *process) stop(grace time.Duration) {
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

// kill ends the process tree at once, for a start-up that is abandoned.
func (p *process) kill() {
	p.group.Kill()
}

// jsonLineReader passes through only the lines of r that look like
// JSON-RPC messages — a JSON object or batch naming "jsonrpc" — so that a
// server printing a banner or a log line on stdout (plain or JSON, as
// loggers like pino do by default) does not break its JSON-RPC stream;
// other lines go to junk. Whether a passing line is well-formed is left to
// the SDK, which decodes it anyway.
type jsonLineReader struct {
	src     io.Closer
	r       *bufio.Reader
	junk    func([]byte)
	pending []byte
	err     error
}

var jsonrpcKey = []byte(`"jsonrpc"`)

// maxLine bounds one JSON-RPC message from a server.
const maxLine = 64 << 20

func newJSONLineReader(r io.ReadCloser, junk func([]byte)) *jsonLineReader {
	return &jsonLineReader{src: r, r: bufio.NewReaderSize(r, 64<<10), junk: junk}
}

// Close closes the underlying pipe, which ends a Read in progress.
func (j *jsonLineReader) Close() error { return j.src.Close() }

func (j *jsonLineReader) Read(p []byte) (int, error) {
	for len(j.pending) == 0 {
		if j.err != nil {
			return 0, j.err
		}
		line, err := j.readLine()
		j.err = err
		trimmed := bytes.TrimSpace(line)
		switch {
		case len(trimmed) == 0:
		case (trimmed[0] == '{' || trimmed[0] == '[') && bytes.Contains(trimmed, jsonrpcKey):
			j.pending = append(trimmed, '\n')
		default:
			j.junk(trimmed)
		}
	}
	n := copy(p, j.pending)
	j.pending = j.pending[n:]
	return n, nil
}

// readLine returns the next line without its newline. A line longer than
// maxLine is dropped (reported as junk) rather than buffered without bound.
func (j *jsonLineReader) readLine() ([]byte, error) {
	var long []byte
	for {
		frag, err := j.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(frag) > maxLine {
				long = append(long[:0], "(a line longer than 64 MiB)"...)
				for errors.Is(err, bufio.ErrBufferFull) {
					_, err = j.r.ReadSlice('\n')
				}
				j.junk(long)
				return nil, err
			}
			long = append(long, frag...)
			continue
		}
		if long != nil {
			return append(long, frag...), err
		}
		// frag aliases the reader's buffer: copy before the next read.
		return append([]byte(nil), frag...), err
	}
}

// clip shortens b for a log line.
func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
