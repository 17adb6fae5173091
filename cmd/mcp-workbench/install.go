package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/hostconfig"
)

const installUsage = `Usage: mcp-workbench install HOST [--config PATH] [--file PATH] [--name NAME]

Adds the workbench to a host's own file, as the host's own entry that
starts this mcp-workbench with the configuration PATH: Codex's config.toml,
Claude Code's ~/.claude.json, Claude Desktop's claude_desktop_config.json,
Cursor's ~/.cursor/mcp.json, VS Code's user mcp.json, Gemini CLI's
~/.gemini/settings.json, Copilot CLI's ~/.copilot/mcp-config.json,
OpenCode's opencode.json, Windsurf's mcp_config.json, Zed's settings.json,
Cline's cline_mcp_settings.json.

Only the workbench's entry is written (for Codex, also the workbench's
PreToolUse hook, one [[hooks.PreToolUse]] table appended; for Gemini CLI, its
BeforeTool hook, one element appended to hooks.BeforeTool: mcp-workbench help
hook): every other key, comment and line of the file stays as it is. In an
entry already there only type, command and args are written again: what you
added to it (env, a timeout, autoApprove, comments) stays. A symbolic link is
followed (the link stays), a file with other hard links is written in place,
and a read-only file is refused. The file as it was is copied beside it first
(FILE.bak, or FILE.bak.2, …), and written whole or not at all. A second run
changes nothing. A file that does not parse is left untouched.

HOST is one of: claude-code, claude-desktop, cline, codex, copilot-cli, cursor,
gemini-cli, opencode, vscode, windsurf, zed.

Flags:
  --config PATH   the workbench configuration the host starts it with
                  (else $WORKBENCH_CONFIG, else ./workbench-config.json);
                  written into the entry as an absolute path
  --file PATH     the host file to write (default: the host's user file)
  --name NAME     the entry's name in the host (default workbench)
  --print         print the entry (and the host's own command, if it has
                  one) instead of writing it
  --remove-moved  also take out of the host's file the servers that are now
                  in the configuration's toolboxes (by name): removed from a
                  JSON file, commented out in Codex's config.toml; only
                  when asked, in the same write, after the same backup
  --log-level LEVEL
                  accepted as every command takes it; install prints what it
                  did on stdout and its errors on stderr
`

// installOptions is the parsed command line of mcp-workbench install.
type installOptions struct {
	globalOptions
	host  *hostconfig.Host
	file  string // the host file; "" for the host's user file
	name  string // the entry's name in the host
	print bool   // print instead of writing
	// removeMoved: also take out of the host's file the servers the
	// configuration's toolboxes now hold.
	removeMoved bool
	exe         string // the workbench binary the entry starts
	cfg         string // the absolute configuration path the entry gives
}

// installEdits are further edits of the host's file that install makes in
// the same write as the entry (Codex's hook, for one), by host name: each
// gives its edit of the file's text, and what to say once the file is
// written.
var installEdits = map[string][]func(opts installOptions) (edit func([]byte) ([]byte, bool, error), report func(res hostconfig.Installed, stdout io.Writer)){}

// hookReport is what install says of the hook it added (added) or found
// already there, for the host titled title whose hook is mcp-workbench
// hook HOST; others are the workbench's hooks for other configurations
// found in the file.
func hookReport(stdout io.Writer, res hostconfig.Installed, title, host string, added bool, others []string) {
	if !added {
		fmt.Fprintf(stdout, "%s already runs the workbench's hook (mcp-workbench hook %s) from %s.\n", title, host, res.Path)
		return
	}
	fmt.Fprintf(stdout, "Added the workbench's hook to %s: %s blocks a use_tool call that the workbench's rules deny.\n", res.Path, title)
	for _, c := range others {
		fmt.Fprintf(stdout, "Note: %s also has the workbench's hook for another configuration (%s); remove that one if it is no longer used.\n", res.Path, c)
	}
}

// runInstall implements mcp-workbench install.
func runInstall(_ context.Context, e *env, args []string) error {
	opts, err := parseInstallArgs(e, args)
	var unknown unknownHostError
	if errors.As(err, &unknown) {
		// One line, not the whole usage: the name was only mistyped.
		fmt.Fprintln(e.stderr, "mcp-workbench: install:", err)
		return &exitError{code: 2}
	}
	if err != nil {
		return e.usageError("install", err)
	}
	if err := doInstall(opts, e.stdout); err != nil {
		fmt.Fprintln(e.stderr, "mcp-workbench:", err)
		return &exitError{code: 1}
	}
	return nil
}

// unknownHostError is the one line that answers a HOST install does not
// know, with the hosts meant when it is the start of their names (gemini,
// copilot, claude), else with them all.
type unknownHostError string

func (u unknownHostError) Error() string {
	var meant []string
	given := strings.ToLower(strings.TrimSpace(string(u)))
	for _, h := range hostconfig.Hosts {
		if given != "" && (strings.HasPrefix(h.Name, given) || strings.HasPrefix(given, h.Name)) {
			meant = append(meant, h.Name)
		}
	}
	sort.Strings(meant)
	if len(meant) > 0 {
		return fmt.Sprintf("unknown host %q: did you mean %s?", string(u), strings.Join(meant, " or "))
	}
	return fmt.Sprintf("unknown host %q: want one of %s", string(u), hostconfig.HostNames())
}

func parseInstallArgs(e *env, args []string) (installOptions, error) {
	var opts installOptions
	fset := e.flagSet("install", &opts.globalOptions)
	fset.StringVar(&opts.file, "file", "", "")
	fset.StringVar(&opts.name, "name", "workbench", "")
	fset.BoolVar(&opts.print, "print", false, "")
	fset.BoolVar(&opts.removeMoved, "remove-moved", false, "")
	positional, err := parse(fset, args)
	if err != nil {
		return opts, err
	}
	switch {
	case len(positional) == 0:
		return opts, fmt.Errorf("missing HOST, one of: %s", hostconfig.HostNames())
	case len(positional) > 1:
		return opts, fmt.Errorf("unexpected argument %q (install adds the workbench to one host)", positional[1])
	case strings.TrimSpace(opts.name) == "":
		return opts, errors.New("--name needs a name")
	}
	if opts.host = hostconfig.HostNamed(positional[0]); opts.host == nil {
		return opts, unknownHostError(positional[0])
	}
	if _, err := parseLevel(opts.logLevel); err != nil {
		return opts, err
	}
	if opts.exe, err = os.Executable(); err != nil {
		opts.exe = "mcp-workbench" // found on PATH, as the host would
	}
	cfg := config.ResolvePath(opts.configPath, os.LookupEnv)
	if opts.cfg, err = filepath.Abs(cfg); err != nil {
		return opts, fmt.Errorf("--config %s: %w", cfg, err)
	}
	return opts, nil
}

// doInstall writes (or prints) the host's entry, then runs the host's
// further steps.
func doInstall(opts installOptions, stdout io.Writer) error {
	h := opts.host
	entry := h.Entry(opts.exe, opts.cfg)
	if opts.print {
		printHostEntry(stdout, h, opts.exe, opts.cfg, opts.name)
		return nil
	}
	if _, err := os.Stat(opts.cfg); err != nil {
		fmt.Fprintf(stdout, "Note: %s does not exist yet; %s will not start the workbench until it does (mcp-workbench import writes one).\n", opts.cfg, h.Title)
	}
	var moved []string
	if opts.removeMoved {
		cfg, err := config.LoadUnsetAsWarnings(opts.cfg, os.LookupEnv)
		if err != nil {
			return fmt.Errorf("--remove-moved takes the servers' names from the workbench configuration, which does not load (nothing written): %w", err)
		}
		for _, tb := range cfg.Toolboxes {
			for _, s := range tb.Servers {
				moved = append(moved, s.Name)
			}
		}
	}
	var edits []func([]byte) ([]byte, bool, error)
	var reports []func(hostconfig.Installed, io.Writer)
	for _, more := range installEdits[h.Name] {
		edit, report := more(opts)
		edits, reports = append(edits, edit), append(reports, report)
	}
	res, removed, err := hostconfig.InstallRemoving(h, opts.file, opts.name, entry, moved, edits...)
	if err != nil {
		return err
	}
	if len(removed) > 0 {
		how := "Removed"
		if h.TOML {
			how = "Commented out"
		}
		fmt.Fprintf(stdout, "%s the servers now in the workbench's toolboxes: %s.\n", how, strings.Join(removed, ", "))
	}
	switch {
	case !res.Changed:
		fmt.Fprintf(stdout, "%s already starts the workbench as %q in %s: nothing changed.\n", h.Title, opts.name, res.Path)
	case res.Created:
		fmt.Fprintf(stdout, "Wrote %s: %s starts the workbench as %q.\n", res.Path, h.Title, opts.name)
	default:
		fmt.Fprintf(stdout, "Added the workbench as %q to %s (the file as it was: %s).\n", opts.name, res.Path, res.Backup)
	}
	if res.InPlace {
		fmt.Fprintf(stdout, "Note: %s has other hard links: it was written in place, so that they all see the change.\n", res.Path)
	}
	for _, report := range reports {
		report(res, stdout)
	}
	if res.Changed {
		fmt.Fprintf(stdout, "Restart %s (or start a new session) to pick it up.\n", h.Title)
	}
	return nil
}

// printHostEntry prints how to add the workbench to host h: the host's own
// command if it has one, and the entry with the file it goes in.
func printHostEntry(w io.Writer, h *hostconfig.Host, exe, cfg, name string) {
	if cmd := h.Command(exe, cfg, name); cmd != "" {
		fmt.Fprintf(w, "     %s\n", cmd)
		fmt.Fprintf(w, "     or: %s install %s --config %s\n", config.ShellQuote(exe), h.Name, config.ShellQuote(cfg))
		return
	}
	fmt.Fprintf(w, "     %s install %s --config %s\n", config.ShellQuote(exe), h.Name, config.ShellQuote(cfg))
	file := h.UserFile()
	if file == "" {
		file = "the host's file"
	}
	if h.TOML {
		fmt.Fprintf(w, "     or add to %s:\n\n%s\n", file, indent(h.Entry(exe, cfg).TOMLTable(append(append([]string{}, h.Container...), name)...), "       "))
		return
	}
	member := hostconfig.Entry{{Key: name, Value: h.Entry(exe, cfg)}}
	for i := len(h.Container) - 1; i >= 0; i-- {
		member = hostconfig.Entry{{Key: h.Container[i], Value: member}}
	}
	fmt.Fprintf(w, "     or add to %s:\n\n%s\n", file, indent(member.JSON("", "  ")+"\n", "       "))
}

func indent(text, prefix string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}
