// Package config loads, expands and validates the workbench configuration:
// named toolboxes, each holding downstream MCP servers in the standard
// "mcpServers" host format.
//
// Loading goes Load → Parse → validate. Every problem is collected and
// reported at once, each with its JSON path, so that a user fixes a broken
// file in one pass. Toolboxes and servers keep the order they have in the
// file.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/permissions"
	"github.com/mcpworkbench/mcp-workbench/internal/shellquote"
)

// DefaultPath is the file used when neither --config nor WORKBENCH_CONFIG is given.
const DefaultPath = "workbench-config.json"

// envConfig names the environment variable that holds the config path.
const envConfig = "WORKBENCH_CONFIG"

// Defaults for the per-server limits, per the workbench's contract.
const (
	DefaultConnectionTimeout = 30 * time.Second
	DefaultRequestTimeout    = 60 * time.Second
	DefaultMaxRetries        = 2
	// A server's tool list may hold this many tools and bytes (its pages'
	// results together). Real servers list tens to hundreds of tools in
	// well under a megabyte; the bounds only stop a server that would hold
	// the workbench's memory hostage.
	DefaultMaxTools         = 10000
	DefaultMaxToolListBytes = 32 << 20
)

// Defaults for the top-level settings of open_toolbox.
const (
	// DefaultOpenResultMaxChars keeps an open_toolbox result under the
	// 50,000 characters past which Claude Code shows a tool result to the
	// model only as a file preview.
	DefaultOpenResultMaxChars = 40000
	// DefaultOpenTimeout is under the 60 s after which the TypeScript SDK's
	// hosts give up on a request.
	DefaultOpenTimeout = 45 * time.Second
	// DefaultSearchTimeout is how long a search waits for servers it
	// knows nothing of: most start within it, and a model that searches
	// gets its answer from what is known in a few seconds, not 45.
	DefaultSearchTimeout = 5 * time.Second
	// DefaultSharedGrace is how long a shared workbench stays after its
	// last session left: a host that restarts finds its servers running.
	DefaultSharedGrace = 30 * time.Second
)

// Transport is how the workbench reaches a downstream server.
type Transport string

// The transports a server may use.
const (
	Stdio Transport = "stdio"
	HTTP  Transport = "http" // streamable HTTP
	SSE   Transport = "sse"
)

// Config is a validated workbench configuration.
type Config struct {
	// Path is the file the configuration was loaded from, if any.
	Path string
	// Toolboxes in file order.
	Toolboxes []*Toolbox
	// OpenResultMaxChars bounds the characters of an open_toolbox result;
	// 0: no bound ("openResultMaxChars").
	OpenResultMaxChars int
	// OpenTimeout bounds how long open_toolbox waits for servers to start
	// ("openTimeoutMs").
	OpenTimeout time.Duration
	// SearchTimeout bounds how long a search (open_toolbox with a query)
	// waits for servers to start, within OpenTimeout ("searchTimeoutMs").
	SearchTimeout time.Duration
	// Shared is the top-level "shared": host sessions share one workbench
	// process, which runs a server once for every session whose launch of
	// it is the same (see [Server.Shared]).
	Shared bool
	// SharedGrace is how long the shared workbench stays after its last
	// session left ("sharedGraceMs").
	SharedGrace time.Duration
	// Permissions are the top-level "permissions" (nil: none); a toolbox
	// and a server may have their own (see internal/permissions).
	Permissions *permissions.Rules
	// AnyPermissions is set when some level of the file has
	// "permissions": without, every call is allowed and use_tool looks at
	// no rule.
	AnyPermissions bool
	// HTTP is the top-level "http": how serve --http serves, its defaults
	// filled in.
	HTTP Serving
	// Warnings are problems that do not stop the workbench, such as
	// unknown keys (hosts add their own), each naming its JSON path.
	Warnings []string
}

// Toolbox is a named group of downstream servers.
type Toolbox struct {
	Name        string
	Description string
	// Servers in file order, disabled ones included.
	Servers []*Server
	// Permissions are the toolbox's "permissions"; nil: none.
	Permissions *permissions.Rules
	// Access is the toolbox's "access": who may use it over HTTP; nil:
	// everyone.
	Access *Access
}

// The values of "toolChanges".
const (
	ToolChangesBlock = "block"
	ToolChangesWarn  = "warn"
	ToolChangesOff   = "off"
)

// Server is one downstream MCP server of a toolbox.
type Server struct {
	Name      string
	Transport Transport
	// TransportInferred is set when the file names no transport and a url
	// alone made it http: such a server may turn out to speak only the
	// older SSE transport, which is then used instead (as the MCP spec's
	// backwards-compatibility section advises).
	TransportInferred bool

	// stdio
	Command string
	Args    []string
	Env     map[string]string // added to BaseEnv
	Cwd     string
	// BaseEnv is the environment the server starts from, before Env; nil:
	// the workbench's own. No key of the file sets it: a shared workbench
	// sets it for each host session (see [Config.ForSession]).
	BaseEnv []string
	// SessionCwd is set when Cwd is not the file's but the folder of the
	// host session ([Config.ForSession]): where a server without "cwd"
	// runs in any case, so that the catalog and pins key it as if it had
	// none.
	SessionCwd bool

	// http and sse
	URL     string
	Headers map[string]string
	// OAuth holds the optional "oauth" object of an http or sse server: the
	// fields Claude Code's entries use. Nil when the entry has none; such a
	// server is still logged in to if it answers 401 (see internal/oauth).
	OAuth *OAuth

	// Shown is where the server is, for summaries and messages: its
	// command line or its url as the file writes them, ${VAR} references
	// unexpanded and a url's userinfo masked (see [MaskURL]). Set once the
	// transport is known.
	Shown string
	// ShownFilters is ToolFilters as the file writes them, for summaries.
	ShownFilters []string

	// ToolFilters selects the tools offered: exact names or glob patterns
	// (permissions.Match: path.Match's syntax, * matching "/" too). Nil
	// means every tool.
	ToolFilters []string
	Disabled    bool

	ConnectionTimeout time.Duration
	RequestTimeout    time.Duration
	MaxRetries        int

	// Catalog allows open_toolbox to answer from the tool catalog (the
	// tools this server listed before) while the server starts. Default
	// true; "catalog" at the top level or on the server turns it off.
	Catalog bool
	// IdleTimeout stops the server after this long with no call in flight
	// and none made; 0 (the default) never stops it.
	IdleTimeout time.Duration

	// ToolChanges is what a tool whose definition changed since it was
	// pinned gets: ToolChangesBlock (withheld until approved, the
	// default), ToolChangesWarn (served, marked changed) or
	// ToolChangesOff ("toolChanges").
	ToolChanges string
	// BlockFlagged withholds tools that screening flags, like changed
	// ones ("blockFlaggedTools").
	BlockFlagged bool
	// ApproveNewTools makes the tools of a server seen for the first time,
	// and tools a pinned server adds, wait for approval too
	// ("approveNewTools"); by default first sight is trusted.
	ApproveNewTools bool

	// MaxTools and MaxToolListBytes bound the server's tool list: a list
	// past either fails the server's start (or a new listing).
	MaxTools         int
	MaxToolListBytes int

	// Shared is set when the server may run once for several host
	// sessions of a shared workbench: the top-level "shared" is true and
	// neither its toolbox nor the server says "shared": false.
	Shared bool
	// OptedOut is set when the server or its toolbox says "shared": false
	// (see [Config.ShareAll]).
	OptedOut bool

	// Permissions are the server's own "permissions"; nil: none. They are
	// no part of the server's identity ([SameServer]): a change of them
	// applies to the next call without restarting the server.
	Permissions *permissions.Rules
}

// AuthorizationHeader reports whether the server's headers set
// Authorization (in any case): such a server is never logged in to.
func (s *Server) AuthorizationHeader() bool {
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}

// OAuth is a server's "oauth" object. Every field is optional.
type OAuth struct {
	// ClientID is a client registered with the authorization server
	// beforehand, for servers without dynamic client registration.
	ClientID string
	// ClientSecret goes with ClientID for confidential clients. It is a
	// secret: never logged, never repeated in a message.
	ClientSecret string
	// CallbackPort fixes the redirect to http://localhost:PORT/callback,
	// the URL a pre-registered client was registered with. 0: any free port.
	CallbackPort int
	// AuthServerMetadataURL (https) names the authorization server's
	// metadata document, skipping discovery.
	AuthServerMetadataURL string
	// Scopes, space-separated, replace the scopes discovery would ask for.
	Scopes string
}

// Toolbox returns the toolbox with the given name, or nil.
func (c *Config) Toolbox(name string) *Toolbox {
	for _, tb := range c.Toolboxes {
		if tb.Name == name {
			return tb
		}
	}
	return nil
}

// ToolboxNames returns the toolbox names in file order.
func (c *Config) ToolboxNames() []string {
	names := make([]string, len(c.Toolboxes))
	for i, tb := range c.Toolboxes {
		names[i] = tb.Name
	}
	return names
}

// Server returns the server with the given name, or nil.
func (t *Toolbox) Server(name string) *Server {
	for _, s := range t.Servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// EnabledServers counts the servers that are not disabled.
func (t *Toolbox) EnabledServers() int {
	n := 0
	for _, s := range t.Servers {
		if !s.Disabled {
			n++
		}
	}
	return n
}

// Problem is one configuration error, located by its JSON path.
type Problem struct {
	Path string // e.g. toolboxes.dev.mcpServers.remote.url; "" for the whole file
	Msg  string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Msg
	}
	return p.Path + ": " + p.Msg
}

// Error is returned for a configuration that cannot be used. It lists every
// problem found, not just the first.
type Error struct {
	File     string
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("invalid configuration")
	if e.File != "" {
		b.WriteString(" " + e.File)
	}
	if len(e.Problems) == 1 {
		fmt.Fprintf(&b, ": %s", e.Problems[0])
		return b.String()
	}
	fmt.Fprintf(&b, " (%d problems):", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// ResolvePath picks the configuration file: the flag value if set, else
// $WORKBENCH_CONFIG, else ./workbench-config.json.
func ResolvePath(flagValue string, lookup LookupFunc) string {
	if flagValue != "" {
		return flagValue
	}
	if v, ok := lookup(envConfig); ok && v != "" {
		return v
	}
	return DefaultPath
}

// Load reads and validates the configuration file at path, expanding
// ${VAR} references from the process environment.
func Load(path string) (*Config, error) {
	return LoadWith(path, os.LookupEnv)
}

// LoadWith is [Load] with the environment given by lookup.
func LoadWith(path string, lookup LookupFunc) (*Config, error) {
	cfg, _, err := loadFile(path, lookup)
	return cfg, err
}

// LoadUnsetAsWarnings is [LoadWith] for a look at the file from a shell
// (validate): a ${VAR} that lookup does not know is a warning, not an
// error, since the environment the host starts the workbench in is not the
// shell's. Such a variable stands for its own name in the values; the
// configuration is for reading, not for running.
func LoadUnsetAsWarnings(path string, lookup LookupFunc) (*Config, error) {
	cfg, _, err := readAndLoad(path, lookup, unsetWarns)
	return cfg, err
}

// LoadRules is [LoadWith] for a reader of the permission rules only (the
// hosts' pre-tool hooks, which run in the host's environment, not in the
// one the host gives the workbench): a ${VAR} that lookup does not know is
// a placeholder, as for [LoadUnsetAsWarnings], where the rules do not
// look (a server's env, headers, args, command, url), and an error where
// they do: a toolbox's or server's name, or a "permissions" object.
func LoadRules(path string, lookup LookupFunc) (*Config, error) {
	cfg, _, err := readAndLoad(path, lookup, unsetWarnsOutsideRules)
	return cfg, err
}

// unsetMode says what an unset ${VAR} is to a load.
type unsetMode int

const (
	unsetFails             unsetMode = iota // an error (the workbench's own load)
	unsetWarns                              // a warning, the name a placeholder
	unsetWarnsOutsideRules                  // unsetWarns but in names and rules ([LoadRules])
)

// ParseUnsetAsWarnings is [LoadUnsetAsWarnings] for a configuration not
// yet in a file: the one import is about to write.
func ParseUnsetAsWarnings(data []byte, lookup LookupFunc) (*Config, error) {
	return parse(data, lookup, "", unsetWarns)
}

// loadFile is [LoadWith], also returning the bytes read (nil if the file
// could not be read), so that a watcher can tell an unchanged file.
func loadFile(path string, lookup LookupFunc) (*Config, []byte, error) {
	return readAndLoad(path, lookup, unsetFails)
}

func readAndLoad(path string, lookup LookupFunc, unset unsetMode) (*Config, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			abs, _ := filepath.Abs(path)
			return nil, nil, fmt.Errorf("configuration file %s not found (give one with --config PATH or %s, see workbench-config.example.json)", abs, envConfig)
		}
		return nil, nil, fmt.Errorf("reading configuration: %w", err)
	}
	cfg, err := loadData(path, data, lookup, unset)
	return cfg, data, err
}

func loadData(path string, data []byte, lookup LookupFunc, unset unsetMode) (*Config, error) {
	cfg, err := parse(data, lookup, path, unset)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			ce.File = path
			return nil, ce
		}
		return nil, fmt.Errorf("configuration %s: %w", path, err)
	}
	cfg.Path = path
	// A relative cwd is taken from the configuration file's folder: the
	// workbench's own working directory depends on the host that starts it.
	dir := filepath.Dir(path)
	cfg.HTTP.resolve(dir)
	for _, tb := range cfg.Toolboxes {
		for _, s := range tb.Servers {
			if s.Cwd != "" && !filepath.IsAbs(s.Cwd) {
				s.Cwd = filepath.Join(dir, s.Cwd)
			}
		}
	}
	return cfg, nil
}

// Parse decodes, expands and validates a configuration document.
func Parse(data []byte, lookup LookupFunc) (*Config, error) {
	return parse(data, lookup, "", unsetFails)
}

// parse is [Parse] of the document read from file ("" if unknown), which
// messages name.
func parse(data []byte, lookup LookupFunc, file string, unset unsetMode) (*Config, error) {
	root, problems, err := decodeTree(data)
	if errors.Is(err, ErrEmpty) {
		return nil, fmt.Errorf("%w; it must hold a JSON object with \"toolboxes\"", err)
	}
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) && looksLikeTOML(data) {
			// A host's TOML file (Codex's config.toml) given where the
			// workbench's JSON belongs.
			if file == "" {
				file = "PATH"
			}
			return nil, fmt.Errorf("%w; this looks like TOML (as Codex's config.toml is), and the workbench's configuration is JSON: to make one from the MCP servers in it, run: mcp-workbench import %s", err, ShellQuote(file))
		}
		return nil, err
	}
	info, err := loadSchema()
	if err != nil {
		return nil, fmt.Errorf("the built-in configuration schema is broken: %w", err)
	}
	v := &validator{lookup: lookup, problems: problems, unsetWarns: unset != unsetFails, rulesStrict: unset == unsetWarnsOutsideRules}
	root = v.expand(root, "", "")
	v.expanded = true
	if root.kind != kObject {
		return nil, &Error{Problems: []Problem{{Msg: fmt.Sprintf("the file must hold a JSON object with \"toolboxes\", not a JSON %s", root.kind)}}}
	}
	if root.get("toolboxes") == nil && (root.get("mcpServers") != nil || root.get("projects") != nil) {
		// An MCP host's own file, given where the workbench's belongs
		// (~/.claude.json may hold servers under "projects" only).
		if file == "" {
			file = "PATH"
		}
		key := "mcpServers"
		if root.get(key) == nil {
			key = "projects"
		}
		return nil, &Error{Problems: []Problem{{Msg: fmt.Sprintf("this is an MCP host's configuration (%q at the top, no \"toolboxes\"); ", key) +
			"to make a workbench configuration of its servers, run: mcp-workbench import " + ShellQuote(file)}}}
	}
	sp, err := checkSchema(root)
	if err != nil {
		return nil, err
	}
	v.addSchemaProblems(sp)
	cfg := v.config(root, info)
	if len(v.problems) > 0 {
		v.sortProblems(root, v.problems)
		return nil, &Error{Problems: v.problems}
	}
	cfg.Warnings = v.warnings
	return cfg, nil
}

// looksLikeTOML reports whether data, which is not JSON, reads as TOML:
// its first line that is not blank or a comment is a table header
// ([mcp_servers.x]) or a key = value.
func looksLikeTOML(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			return strings.HasSuffix(line, "]") && !strings.ContainsAny(line, "{},:")
		}
		key, _, ok := strings.Cut(line, "=")
		return ok && strings.TrimSpace(key) != "" && strings.Trim(strings.TrimSpace(key), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.\"' ") == ""
	}
	return false
}

// ShellQuote quotes s, when it needs it, for the shell a user of this
// system types into (cmd.exe on Windows, a POSIX shell elsewhere:
// shellquote.ForOS), so that a command line in a message can be pasted
// as it is.
func ShellQuote(s string) string {
	return shellquote.ForOS(runtime.GOOS).Quote(s)
}
