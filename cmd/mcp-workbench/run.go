package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
)

// A command is one subcommand of mcp-workbench. Each lives in its own file
// with its options struct, its flag set and its usage text; adding one is
// one entry in [commands].
type command struct {
	name    string
	summary string // one line, for the list in mcp-workbench help
	usage   string // what mcp-workbench help NAME and NAME --help print
	run     func(ctx context.Context, e *env, args []string) error
}

// commands are the subcommands, in the order help lists them. serve is
// what runs when no command is named. (A function, not a variable: help
// reads the table it is in.)
func commands() []*command {
	return []*command{
		{name: "serve", summary: "serve MCP on stdin/stdout: what a host runs (the default)", usage: serveUsage, run: runServe},
		{name: "validate", summary: "check the configuration and summarize it", usage: validateUsage, run: runValidate},
		{name: "check", summary: "start the toolboxes' servers as a host would and report each one", usage: checkUsage, run: runCheck},
		{name: "call", summary: "call one tool, as use_tool does", usage: callUsage, run: runCall},
		{name: "tools", summary: "show (diff) or approve changes of the servers' tool definitions", usage: toolsUsage, run: runTools},
		{name: "login", summary: "log in to a remote server that asks for OAuth", usage: loginUsage, run: runLogin},
		{name: "logout", summary: "remove the tokens of a server's login", usage: logoutUsage, run: runLogout},
		{name: "token", summary: "add, list or revoke the bearer tokens of serving over HTTP", usage: tokenUsage, run: runToken},
		{name: "status", summary: "show the shared workbenches, their sessions and servers", usage: statusUsage, run: runStatus},
		{name: "ui", summary: "a web page on 127.0.0.1: live state, search and call, review of changed tools", usage: uiUsage, run: runUI},
		{name: "stop-shared", summary: "stop the shared workbench of a configuration", usage: stopSharedUsage, run: runStopShared},
		{name: "serve-shared", summary: "run the shared workbench of a configuration (serve starts it)", usage: serveSharedUsage, run: runServeShared},
		{name: "hook", summary: "the pre-tool hook of Claude Code, Codex and Gemini CLI: the permission rules for use_tool's inner tool", usage: hookUsage, run: runHook},
		{name: "install", summary: "add the workbench to a host's own file (Codex, VS Code, Gemini CLI, …)", usage: installUsage, run: runInstall},
		{name: "import", summary: "turn a host's mcpServers into a workbench configuration", usage: importUsage, run: runImport},
		{name: "help", summary: "show the help of mcp-workbench or of one command", usage: helpUsage, run: runHelp},
		{name: "version", summary: "print the version", usage: versionUsage, run: runVersion},
	}
}

func lookup(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// globalOptions are the flags every command takes, before or after its
// name: mcp-workbench --config x check and mcp-workbench check --config x.
type globalOptions struct {
	configPath string // --config; "" for $WORKBENCH_CONFIG, else ./workbench-config.json
	logLevel   string // --log-level; "" for $WORKBENCH_LOG_LEVEL, else info
}

// globalFlagsHelp ends every command's usage text.
const globalFlagsHelp = `
Global flags, before or after the command:
  --config PATH       the configuration (else $WORKBENCH_CONFIG, else ./workbench-config.json)
  --log-level LEVEL   debug, info, warn or error (else $WORKBENCH_LOG_LEVEL, else info);
                      logs go to stderr
`

// env is what a command runs with: the streams given to run, and the
// global flags given before the command's name.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	global         globalOptions
	shared         boolFlag // serve's --shared, given before the command's name (or none)
}

// boolFlag is a boolean flag that remembers whether it was given:
// --shared, --shared=true, --shared=false.
type boolFlag struct {
	set, on bool
}

func (f *boolFlag) String() string   { return strconv.FormatBool(f.on) }
func (f *boolFlag) IsBoolFlag() bool { return true }
func (f *boolFlag) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return errors.New("want true or false")
	}
	f.set, f.on = true, on
	return nil
}

// run is the whole program, on the streams it is given. Only main turns
// its error into an exit status: an *exitError carries one whose message
// is already printed.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	fs := flag.NewFlagSet("mcp-workbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bindGlobal(fs, &e.global)
	// --shared belongs to serve, which runs without its name: hosts'
	// args are often just --config PATH.
	fs.Var(&e.shared, "shared", "")
	showVersion := fs.Bool("version", false, "")
	// Parsing stops at the first argument that is not a flag: the command.
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, mainUsage())
		return nil
	case err != nil:
		fmt.Fprintf(stderr, "mcp-workbench: %s\n\n%s", flagError(err), mainUsage())
		return &exitError{code: 2}
	case *showVersion:
		return runVersion(ctx, e, fs.Args())
	}
	args = fs.Args()
	name := "serve"
	if len(args) > 0 && args[0] != "--" {
		name, args = args[0], args[1:]
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(stderr, "mcp-workbench: unknown command %q\n\n%s", name, mainUsage())
		return &exitError{code: 2}
	}
	if e.shared.set && name != "serve" {
		return e.usageError(name, fmt.Errorf("--shared is a flag of serve, not of %s", name))
	}
	return c.run(ctx, e, args)
}

// bindGlobal adds the global flags to fs, storing into g; their defaults
// are what g holds.
func bindGlobal(fs *flag.FlagSet, g *globalOptions) {
	fs.StringVar(&g.configPath, "config", g.configPath, "")
	fs.StringVar(&g.logLevel, "log-level", g.logLevel, "")
}

// flagSet returns the flag set of a command, with the global flags bound
// to g and set to what was given before the command's name. Parse errors
// are reported by [env.usageError], so the flag set prints nothing.
func (e *env) flagSet(name string, g *globalOptions) *flag.FlagSet {
	*g = e.global
	fs := flag.NewFlagSet("mcp-workbench "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bindGlobal(fs, g)
	return fs
}

// parse parses a command's arguments. Flags may come before, between or
// after the positional arguments, as people type them either way; "--"
// ends the flags. It returns the positional arguments in order.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// usageError reports a mistake on the command line of command name: the
// message, then the command's usage, on stderr; exit status 2. A request
// for help (flag.ErrHelp, from --help or -h) prints the usage on stdout
// instead, and is no error.
func (e *env) usageError(name string, err error) error {
	c := lookup(name)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(e.stdout, c.usage)
		return nil
	}
	fmt.Fprintf(e.stderr, "mcp-workbench: %s: %s\n\n%s", name, flagError(err), c.usage)
	return &exitError{code: 2}
}

// flagError is a command-line error as the help writes flags: the flag
// package names them with one dash ("-config"), the help with two.
func flagError(err error) string {
	msg := err.Error()
	for _, p := range []string{"not defined: -", "needs an argument: -", "for flag -", "for -"} {
		if i := strings.Index(msg, p); i >= 0 && !strings.HasPrefix(msg[i+len(p):], "-") {
			msg = msg[:i+len(p)] + "-" + msg[i+len(p):]
		}
	}
	return msg
}

// logger returns the logger of a command run, writing to stderr through
// the returned writer, which the servers' stderr forwarders share.
func (e *env) logger(name string, g globalOptions) (*slog.Logger, *syncWriter, error) {
	out := &syncWriter{w: e.stderr}
	log, err := newLogger(out, g.logLevel)
	if err != nil {
		return nil, nil, e.usageError(name, err)
	}
	return log, out, nil
}

// load makes the logger of a command run (see [env.logger]), then loads
// the configuration that g names and logs its warnings. A configuration
// that cannot be used is reported on stderr: exit status 1.
func (e *env) load(name string, g globalOptions) (*config.Config, *slog.Logger, *syncWriter, error) {
	cfg, log, logOut, err := e.loadQuiet(name, g)
	if err == nil {
		front.WarnConfig(log, cfg.Warnings)
	}
	return cfg, log, logOut, err
}

// loadQuiet is load without logging the configuration's warnings: for
// serve --http, which logs them once its log has the configured format.
func (e *env) loadQuiet(name string, g globalOptions) (*config.Config, *slog.Logger, *syncWriter, error) {
	log, logOut, err := e.logger(name, g)
	if err != nil {
		return nil, nil, nil, err
	}
	load := config.Load
	if name == "validate" {
		// It looks at the file from a shell, whose environment is not the
		// one the host starts the workbench in: an unset ${VAR} is a warning.
		load = func(path string) (*config.Config, error) { return config.LoadUnsetAsWarnings(path, os.LookupEnv) }
	}
	cfg, err := load(config.ResolvePath(g.configPath, os.LookupEnv))
	if err != nil {
		fmt.Fprintln(e.stderr, "mcp-workbench:", err)
		return nil, nil, nil, &exitError{code: 1}
	}
	return cfg, log, logOut, nil
}

// noArguments refuses positional arguments, for the commands that take none.
func noArguments(positional []string) error {
	if len(positional) > 0 {
		return fmt.Errorf("unexpected argument %q", positional[0])
	}
	return nil
}

func newLogger(out io.Writer, level string) (*slog.Logger, error) {
	if level == "" {
		level = os.Getenv("WORKBENCH_LOG_LEVEL")
	}
	l, err := parseLevel(level)
	if err != nil {
		return nil, err
	}
	h := slog.NewTextHandler(out, &slog.HandlerOptions{
		Level: l,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{} // hosts stamp their logs themselves
			}
			return a
		},
	})
	return slog.New(h), nil
}

// parseLevel reads a --log-level value; "" is info.
func parseLevel(level string) (slog.Level, error) {
	switch strings.ToLower(level) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q (use debug, info, warn or error)", level)
}

// syncWriter serializes writes from the logger and the servers' stderr
// forwarders, so that lines never interleave.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// commandList renders the commands for the main usage text.
func commandList() string {
	var b strings.Builder
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, c.name, c.summary)
	}
	return b.String()
}
