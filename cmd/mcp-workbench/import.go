package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
	"github.com/mcpworkbench/mcp-workbench/internal/hostconfig"
	"github.com/mcpworkbench/mcp-workbench/internal/pins"
	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

const importUsage = `Usage: mcp-workbench import [PATH] [--from HOST] [--out FILE] [--force] [--toolbox NAME]

Reads the MCP servers of a host's file and writes a workbench configuration
holding them: Claude Desktop's claude_desktop_config.json, Claude Code's
.mcp.json or ~/.claude.json, Cursor's mcp.json (entries copied unchanged),
Codex's config.toml, VS Code's mcp.json, Gemini CLI's settings.json, Copilot
CLI's mcp-config.json, OpenCode's opencode.json, Windsurf's mcp_config.json,
Zed's settings.json and Cline's cline_mcp_settings.json (each key made the
workbench's: enabled_tools, includeTools and tools become toolFilters,
timeouts the workbench's, values the host supplied ${VAR}s). Every key that
cannot be carried over is named in a warning. Each toolbox gets a draft
description, from what its server is, to edit; ${VAR}s that are not set
here are pointed out. It ends with how to add the workbench to the host.

Without PATH it lists the host files it finds on this machine and the
servers each holds.

Flags:
  --from HOST     read PATH as HOST's file (default: told from the file):
                  claude-code, claude-desktop, cline, codex, copilot-cli,
                  cursor, gemini-cli, opencode, vscode, windsurf, zed
  --out FILE      the file to write (default workbench-config.json); its
                  folder is made if need be
  --force         overwrite FILE if it exists
  --toolbox NAME  put every server in one toolbox NAME (default: one toolbox per server)
  --log-level LEVEL
                  warn shows the notes and warnings (the default), error hides them
`

// importOptions is the parsed command line of mcp-workbench import.
type importOptions struct {
	globalOptions
	src     string // the host configuration
	out     string // the workbench configuration to write
	force   bool   // overwrite out if it exists
	toolbox string // one toolbox of this name for every server; "" for one per server
	from    string // the host whose file src is; "" to tell from the file
}

// runImport implements mcp-workbench import: it turns the servers of a
// host configuration into a workbench configuration, so that moving to the
// workbench never means retyping an entry.
func runImport(ctx context.Context, e *env, args []string) error {
	opts, err := parseImportArgs(e, args)
	if err != nil {
		return e.usageError("import", err)
	}
	if opts.src == "" {
		out, err := hostconfig.ListFiles(ctx, importReadHook)
		if err != nil {
			return err
		}
		// Names and errors come from the files: a terminal escape in
		// them is shown, not obeyed.
		_, err = io.WriteString(e.stdout, visible(out))
		return err
	}
	if err := doImport(opts, e.stdout, e.stderr); err != nil {
		// The error may quote the host's file: what it hides is shown.
		fmt.Fprintln(e.stderr, "mcp-workbench:", visible(err.Error()))
		return &exitError{code: 1}
	}
	return nil
}

// visible is text from a host's file (names, errors that quote it) as
// import prints it to a terminal: controls (escape sequences, carriage
// returns), format characters (bidi overrides, tags) and line and
// paragraph separators written as \uXXXX, newlines and tabs kept.
func visible(s string) string {
	return lineSeparators.Replace(pins.Visible(s))
}

var lineSeparators = strings.NewReplacer("\u2028", `\u2028`, "\u2029", `\u2029`)

// parseImportArgs reads the flags and the one PATH.
func parseImportArgs(e *env, args []string) (importOptions, error) {
	var opts importOptions
	fset := e.flagSet("import", &opts.globalOptions)
	fset.StringVar(&opts.out, "out", config.DefaultPath, "")
	fset.BoolVar(&opts.force, "force", false, "")
	fset.StringVar(&opts.toolbox, "toolbox", "", "")
	fset.StringVar(&opts.from, "from", "", "")
	positional, err := parse(fset, args)
	if err != nil {
		return opts, err
	}
	switch {
	case len(positional) > 1:
		return opts, fmt.Errorf("unexpected argument %q (import reads one host configuration)", positional[1])
	case opts.configPath != "":
		// import writes a configuration; --config names one to read.
		return opts, errors.New("import writes the file that --out names (--config is for the commands that read a configuration)")
	}
	if _, err := parseLevel(opts.logLevel); err != nil {
		return opts, err
	}
	if len(positional) == 1 {
		opts.src = positional[0]
	} else if fset.NFlag() > 0 {
		// Flags for an import without the file to import: the user
		// meant one (import alone lists the files there are).
		return opts, errors.New("missing PATH, the host configuration to import (mcp-workbench import alone lists the host files on this machine)")
	}
	if opts.from != "" && hostconfig.HostNamed(opts.from) == nil {
		return opts, fmt.Errorf("unknown host %q for --from: want one of %s", opts.from, hostconfig.HostNames())
	}
	fset.Visit(func(f *flag.Flag) {
		switch {
		case f.Name == "out" && strings.TrimSpace(opts.out) == "":
			err = errors.New("--out needs a file name")
		case f.Name == "toolbox" && strings.TrimSpace(opts.toolbox) == "":
			err = errors.New("--toolbox needs a toolbox name")
		}
	})
	return opts, err
}

// doImport does the work of runImport once the command line is known.
// Nothing is written unless the result loads in the workbench, so that a
// failed import never leaves a half-usable file behind. Notes and warnings
// go to stderr unless the log level is above warn.
func doImport(opts importOptions, stdout, stderr io.Writer) error {
	// Notes and warnings are logged as every command logs them; the
	// default level shows them, error hides them.
	log, err := newLogger(stderr, opts.logLevel)
	if err != nil {
		return err
	}
	data, err := hostconfig.ReadFile(opts.src, hostconfig.MaxFileSize)
	if err != nil {
		return fmt.Errorf("cannot read the host configuration: %w", err)
	}
	read, err := hostconfig.ReadHost(opts.src, data, opts.from)
	if err != nil {
		return err
	}
	for _, w := range read.Warnings {
		log.Warn("import: " + w)
	}
	found := read.Servers
	if len(found) == 0 {
		return fmt.Errorf("nothing to import from %s: none of its servers can be carried over (see the warnings above)", opts.src)
	}
	servers, notes := hostconfig.Name(found)
	for _, n := range notes {
		log.Warn("import: " + n)
	}
	boxes := hostconfig.Plan(servers, opts.toolbox)
	for _, n := range hostconfig.Draft(boxes, catalogTools(boxes, log)) {
		log.Warn("import: " + n)
	}
	out := hostconfig.Render(boxes)

	warnings, err := hostconfig.Check(out, boxes, os.LookupEnv)
	if err != nil {
		return fmt.Errorf("nothing written: the servers of %s do not make a valid workbench configuration: %w", opts.src, err)
	}
	if err := writeNew(opts, out); err != nil {
		return err
	}
	front.WarnConfig(log, warnings)
	// Names come from the host's file: a terminal escape in them is
	// shown, not obeyed.
	var steps strings.Builder
	printNextSteps(&steps, opts, read.Host, found, boxes)
	_, err = io.WriteString(stdout, visible(steps.String()))
	return err
}

// writeNew writes the configuration to opts.out, making its folder (0700)
// if need be, so that "--out ~/.config/mcp-workbench/config.json" works on
// a fresh home. The file is written whole or not at all (a temporary file
// renamed, or linked into place), 0600 since it holds the servers' env and
// headers. Without --force an existing file is never replaced, not even by
// a race: the link fails if the name is taken. The host configuration
// itself is never overwritten, even with --force: it still lists the
// servers the user has.
func writeNew(opts importOptions, data []byte) error {
	if srcInfo, err := os.Stat(opts.src); err == nil {
		if outInfo, err := os.Stat(opts.out); err == nil && os.SameFile(srcInfo, outInfo) {
			return fmt.Errorf("%s is the host configuration being imported: give another --out", opts.out)
		}
	}
	exists := fmt.Errorf("%s already exists: give --force to overwrite it, or --out FILE to write another file", opts.out)
	if _, err := os.Lstat(opts.out); err == nil && !opts.force {
		return exists
	}
	dir := filepath.Dir(opts.out)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot make the folder of the workbench configuration: %w", err)
	}
	if opts.force {
		if err := userfile.WriteAtomic(opts.out, ".workbench-config-*.tmp", data); err != nil {
			return fmt.Errorf("cannot write the workbench configuration %s: %w", opts.out, err)
		}
		return nil
	}
	err := userfile.WriteNew(opts.out, ".workbench-config-*.tmp", data)
	if errors.Is(err, fs.ErrExist) {
		return exists
	}
	if err != nil {
		return fmt.Errorf("cannot write the workbench configuration %s: %w", opts.out, err)
	}
	return nil
}

// printNextSteps tells the user what was done and what is left: the TODO
// descriptions, and replacing the imported servers in the host with the
// workbench. Until they are removed the host starts them itself as well.
func printNextSteps(stdout io.Writer, opts importOptions, host *hostconfig.Host, found []hostconfig.Server, boxes []hostconfig.Toolbox) {
	exe, err := os.Executable()
	if err != nil {
		exe = "mcp-workbench" // found on PATH, as the host would
	}
	outAbs, err := filepath.Abs(opts.out)
	if err != nil {
		outAbs = opts.out
	}
	srcAbs, err := filepath.Abs(opts.src)
	if err != nil {
		srcAbs = opts.src
	}
	n := 0
	for _, tb := range boxes {
		n += len(tb.Servers)
	}
	fmt.Fprintf(stdout, "Wrote %s: %d server(s) from %s in %d toolbox(es):\n", outAbs, n, srcAbs, len(boxes))
	for _, tb := range boxes {
		names := make([]string, len(tb.Servers))
		for i, s := range tb.Servers {
			names[i] = s.As
			if s.As != s.Name {
				names[i] += " (" + s.Name + " " + s.Where() + ")"
			}
		}
		fmt.Fprintf(stdout, "  toolbox %s: %s\n", tb.Name, strings.Join(names, ", "))
	}

	fmt.Fprintf(stdout, `
Next:
  1. Make each "Draft: " description in %s say when the model should open
     its toolbox (it reads them to choose one), and remove "Draft: ". Then check the file:
       %s validate --config %s
  2. Remove the imported servers from the host configuration
       %s
`, outAbs, config.ShellQuote(exe), config.ShellQuote(outAbs), srcAbs)
	top := `top-level "mcpServers"`
	if host != nil {
		top = `"` + host.Container[0] + `"`
		if host.TOML {
			top = "[mcp_servers.NAME] tables"
		}
	}
	for _, where := range serversByPlace(found, top) {
		fmt.Fprintf(stdout, "     %s: %s\n", where.place, strings.Join(where.names, ", "))
	}
	fmt.Fprint(stdout, "     (or the host starts them itself as well), and add the workbench in their place")
	if host != nil {
		fmt.Fprintf(stdout, " (see docs/hosts/%s.md):\n", host.Name)
		printHostEntry(stdout, host, exe, outAbs, "workbench")
		return
	}
	if !hostconfig.ClaudeCode(opts.src, found) {
		fmt.Fprintf(stdout, ":\n\n{\n  \"mcpServers\": {\n    \"workbench\": {\n      \"command\": %s,\n      \"args\": [\"--config\", %s]\n    }\n  }\n}\n",
			frame.Quote(exe), frame.Quote(outAbs))
		return
	}
	// Claude Code defers MCP tools behind its tool search; the workbench's
	// two tools are what the model starts from, so they are always loaded.
	entry := fmt.Sprintf(`{"type":"stdio","command":%s,"args":["--config",%s],"alwaysLoad":true}`, frame.Quote(exe), frame.Quote(outAbs))
	// A project's .mcp.json holds the servers of that project: the
	// workbench takes their place there, not in every project.
	scope, where := "user", ", for every project:"
	if strings.HasSuffix(filepath.Base(opts.src), ".mcp.json") {
		scope, where = "project", ", in the project's .mcp.json (run it in "+config.ShellQuote(filepath.Dir(srcAbs))+"):"
	}
	fmt.Fprintf(stdout, "%s\n       claude mcp add-json --scope %s workbench %s\n"+
		"     (\"alwaysLoad\": true keeps its two tools loaded rather than deferred behind Claude Code's tool search)\n",
		where, scope, config.ShellQuote(entry))
	fmt.Fprintf(stdout, "  3. To have Claude Code's own permission prompt name the tool behind each use_tool call,\n"+
		"     by the \"permissions\" rules of %s, add its hook to ~/.claude/settings.json:\n\n%s\n",
		outAbs, hookSettings(exe, outAbs))
}

// hookSettings is the entry of Claude Code's settings that installs the
// workbench's PreToolUse hook (hook.go) for the workbench named
// "workbench" in its mcpServers.
func hookSettings(exe, configPath string) string {
	cmd := hostconfig.HookCommand(exe, configPath, "claude-code")
	return fmt.Sprintf(`{
  "hooks": {
    "PreToolUse": [
      {"matcher": "mcp__workbench__use_tool",
       "hooks": [{"type": "command", "command": %s}]}
    ]
  }
}
`, frame.Quote(cmd))
}

// place is where in a host configuration some imported servers are.
type place struct {
	place string
	names []string
}

// serversByPlace groups the host's servers by the object that holds them,
// in file order: the top-level "mcpServers", or a Claude Code project's.
func serversByPlace(found []hostconfig.Server, top string) []place {
	var out []place
	seen := map[string]bool{}
	for _, s := range found {
		where := top
		if s.Project != "" {
			where = `"projects" → ` + frame.Quote(s.Project) + ` → "mcpServers"`
		}
		if seen[where+"\x00"+s.Name] {
			continue
		}
		seen[where+"\x00"+s.Name] = true
		i := 0
		for i < len(out) && out[i].place != where {
			i++
		}
		if i == len(out) {
			out = append(out, place{place: where})
		}
		out[i].names = append(out[i].names, s.Name)
	}
	return out
}

// importReadHook, if set (by tests), is called before each host file the
// listing reads.
var importReadHook func(path string)

// catalogTools returns, for Draft, the tools the tool catalog knows for an
// imported server: those that the workbench listed when it last started a
// server of the same definition (a server imported from another host is
// often one it already ran). Nothing is made or written when there is no
// catalog yet.
func catalogTools(boxes []hostconfig.Toolbox, log *slog.Logger) func(string, hostconfig.Imported) []hostconfig.ToolInfo {
	dir, err := catalog.DefaultDir()
	if err != nil {
		return nil
	}
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	cat, err := catalog.Open(dir)
	if err != nil {
		log.Debug("import: no tool catalog", "err", err)
		return nil
	}
	// The catalog knows a server by its definition with the variables
	// expanded, as the workbench would start it from here.
	cfg, err := config.ParseUnsetAsWarnings(hostconfig.Render(boxes), os.LookupEnv)
	if err != nil {
		return nil
	}
	return func(toolbox string, s hostconfig.Imported) []hostconfig.ToolInfo {
		for _, tb := range cfg.Toolboxes {
			if tb.Name != toolbox {
				continue
			}
			for _, sc := range tb.Servers {
				if sc.Name != s.As {
					continue
				}
				entry, ok, _ := cat.Get(catalog.Key(sc, downstream.ProtocolVersion))
				if !ok {
					return nil
				}
				var tools []hostconfig.ToolInfo
				for _, raw := range entry.Tools {
					var t hostconfig.ToolInfo
					var obj struct {
						Name        string `json:"name"`
						Description string `json:"description"`
					}
					if json.Unmarshal(raw, &obj) == nil && obj.Name != "" {
						t.Name, t.Description = obj.Name, obj.Description
						tools = append(tools, t)
					}
				}
				return tools
			}
		}
		return nil
	}
}
