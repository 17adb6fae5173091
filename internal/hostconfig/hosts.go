package hostconfig

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
)

// Host is an MCP host whose files import reads and install writes.
type Host struct {
	Name  string // as the command line names it: codex, vscode, …
	Title string // as people name it: Codex, VS Code, …
	// TOML is true for Codex's config.toml; every other host's file is
	// JSON (VS Code, Zed, OpenCode and Gemini CLI accept comments in it).
	TOML bool
	// Container is where in the file the servers are, by keys from the
	// root: ["mcpServers"], ["servers"], ["mcp"], ["context_servers"],
	// ["mcp_servers"].
	Container []string
	// entry is the host's entry that starts the workbench at exe with the
	// configuration cfg.
	entry func(exe, cfg string) Entry
	// command is the host's own command that adds the workbench as name,
	// or nil if it has none that takes the whole entry.
	command func(exe, cfg, name string) string
	// files are the host's user-level files on this machine, the first
	// the one install writes.
	files func(home, cfgDir string) []string
}

// Entry is the host's entry that starts the workbench at exe with the
// configuration file cfg.
func (h *Host) Entry(exe, cfg string) Entry { return h.entry(exe, cfg) }

// Command is the host's own command that adds the workbench as name, or
// "" if it has none.
func (h *Host) Command(exe, cfg, name string) string {
	if h.command == nil {
		return ""
	}
	return h.command(exe, cfg, name)
}

// UserFile is the user-level file of the host that install writes on this
// machine, or "" if the home folder is unknown.
func (h *Host) UserFile() string {
	files := h.Files()
	if len(files) == 0 {
		return ""
	}
	return files[0]
}

// Files are the host's user-level files on this machine that may hold
// servers (whether or not they exist), install's first.
func (h *Host) Files() []string {
	home, _ := os.UserHomeDir()
	cfgDir, _ := os.UserConfigDir()
	if home == "" {
		return nil
	}
	return h.files(home, cfgDir)
}

func args(cfg string) []string { return []string{"--config", cfg} }

func commandArgs(exe, cfg string) Entry {
	return Entry{{Key: "command", Value: exe}, {Key: "args", Value: args(cfg)}}
}

func sh(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = config.ShellQuote(w)
	}
	return strings.Join(q, " ")
}

// vscodeUser is the folder of VS Code's user settings: Code/User in the
// user's configuration folder (~/.config, ~/Library/Application Support,
// %APPDATA%).
func vscodeUser(cfgDir string) string { return filepath.Join(cfgDir, "Code", "User") }

// Hosts are the hosts import reads and install writes, by name.
var Hosts = []*Host{
	{
		Name: "claude-code", Title: "Claude Code", Container: []string{"mcpServers"},
		entry: func(exe, cfg string) Entry {
			// Claude Code defers MCP tools behind its tool search; the
			// workbench's two tools are what the model starts from.
			return append(append(Entry{{Key: "type", Value: "stdio"}}, commandArgs(exe, cfg)...), Field{Key: "alwaysLoad", Value: true})
		},
		command: func(exe, cfg, name string) string {
			e := Entry{{Key: "type", Value: "stdio"}, {Key: "command", Value: exe}, {Key: "args", Value: args(cfg)}, {Key: "alwaysLoad", Value: true}}
			return "claude mcp add-json --scope user " + sh(name, compactJSON(e))
		},
		files: func(home, _ string) []string { return []string{filepath.Join(home, ".claude.json")} },
	},
	{
		Name: "claude-desktop", Title: "Claude Desktop", Container: []string{"mcpServers"},
		entry: commandArgs,
		files: func(home, cfgDir string) []string {
			switch runtime.GOOS {
			case "darwin":
				return []string{filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")}
			case "windows":
				if appData := os.Getenv("APPDATA"); appData != "" {
					return []string{filepath.Join(appData, "Claude", "claude_desktop_config.json")}
				}
			}
			return []string{filepath.Join(cfgDir, "Claude", "claude_desktop_config.json")}
		},
	},
	{
		Name: "cursor", Title: "Cursor", Container: []string{"mcpServers"},
		entry: commandArgs,
		files: func(home, _ string) []string { return []string{filepath.Join(home, ".cursor", "mcp.json")} },
	},
	{
		Name: "codex", Title: "Codex", TOML: true, Container: []string{"mcp_servers"},
		entry: commandArgs,
		command: func(exe, cfg, name string) string {
			return "codex mcp add " + sh(name) + " -- " + sh(exe, "--config", cfg)
		},
		files: func(home, _ string) []string {
			if dir := os.Getenv("CODEX_HOME"); dir != "" {
				return []string{filepath.Join(dir, "config.toml")}
			}
			return []string{filepath.Join(home, ".codex", "config.toml")}
		},
	},
	{
		Name: "vscode", Title: "VS Code", Container: []string{"servers"},
		entry: func(exe, cfg string) Entry {
			return append(Entry{{Key: "type", Value: "stdio"}}, commandArgs(exe, cfg)...)
		},
		command: func(exe, cfg, name string) string {
			e := append(Entry{{Key: "name", Value: name}, {Key: "type", Value: "stdio"}}, commandArgs(exe, cfg)...)
			return "code --add-mcp " + sh(compactJSON(e))
		},
		files: func(_, cfgDir string) []string { return []string{filepath.Join(vscodeUser(cfgDir), "mcp.json")} },
	},
	{
		Name: "gemini-cli", Title: "Gemini CLI", Container: []string{"mcpServers"},
		entry: commandArgs,
		command: func(exe, cfg, name string) string {
			return "gemini mcp add --scope user " + sh(name, exe) + " -- " + sh("--config", cfg)
		},
		files: func(home, _ string) []string { return []string{filepath.Join(home, ".gemini", "settings.json")} },
	},
	{
		Name: "copilot-cli", Title: "GitHub Copilot CLI", Container: []string{"mcpServers"},
		entry: func(exe, cfg string) Entry {
			return append(append(Entry{{Key: "type", Value: "local"}}, commandArgs(exe, cfg)...), Field{Key: "tools", Value: []string{"*"}})
		},
		files: func(home, _ string) []string {
			if dir := os.Getenv("COPILOT_HOME"); dir != "" {
				return []string{filepath.Join(dir, "mcp-config.json")}
			}
			return []string{filepath.Join(home, ".copilot", "mcp-config.json")}
		},
	},
	{
		Name: "opencode", Title: "OpenCode", Container: []string{"mcp"},
		entry: func(exe, cfg string) Entry {
			return Entry{{Key: "type", Value: "local"}, {Key: "command", Value: []string{exe, "--config", cfg}}, {Key: "enabled", Value: true}}
		},
		files: func(home, _ string) []string {
			// OpenCode keeps its files in ~/.config/opencode on every
			// system (XDG_CONFIG_HOME if set), not in the OS's folder.
			base := os.Getenv("XDG_CONFIG_HOME")
			if base == "" {
				base = filepath.Join(home, ".config")
			}
			return []string{filepath.Join(base, "opencode", "opencode.json"), filepath.Join(base, "opencode", "opencode.jsonc")}
		},
	},
	{
		Name: "windsurf", Title: "Windsurf", Container: []string{"mcpServers"},
		entry: commandArgs,
		files: func(home, _ string) []string {
			return []string{filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")}
		},
	},
	{
		Name: "zed", Title: "Zed", Container: []string{"context_servers"},
		entry: commandArgs,
		files: func(home, cfgDir string) []string {
			if runtime.GOOS == "windows" {
				return []string{filepath.Join(cfgDir, "Zed", "settings.json")}
			}
			base := os.Getenv("XDG_CONFIG_HOME")
			if base == "" {
				base = filepath.Join(home, ".config")
			}
			return []string{filepath.Join(base, "zed", "settings.json")}
		},
	},
	{
		Name: "cline", Title: "Cline", Container: []string{"mcpServers"},
		entry: func(exe, cfg string) Entry {
			return append(append(Entry{{Key: "type", Value: "stdio"}}, commandArgs(exe, cfg)...), Field{Key: "disabled", Value: false})
		},
		files: func(home, cfgDir string) []string {
			// The VS Code extension's file first, then the Cline CLI's.
			return []string{
				filepath.Join(vscodeUser(cfgDir), "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"),
				filepath.Join(home, ".cline", "data", "settings", "cline_mcp_settings.json"),
			}
		},
	},
}

// HostNamed returns the host called name, or nil.
func HostNamed(name string) *Host {
	for _, h := range Hosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// HostNames lists the hosts' names, sorted, for messages.
func HostNames() string {
	names := make([]string, len(Hosts))
	for i, h := range Hosts {
		names[i] = h.Name
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func compactJSON(e Entry) string { return e.Compact() }
