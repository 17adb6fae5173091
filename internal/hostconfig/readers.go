package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
)

// Found is what [ReadHost] found in a host's file.
type Found struct {
	// Host is the host whose file it is; nil for the files whose entries
	// are the workbench's own shape (Claude Desktop, Claude Code, Cursor),
	// copied as they are.
	Host    *Host
	Servers []Server
	// Warnings name, for each thing the workbench cannot carry over or
	// supplies another way, the file, the server and the key.
	Warnings []string
}

// ReadHost reads the servers of the host file src, whose content is data:
// the host named from if it is not "", else the host the file's name and
// shape say. Each entry is turned into the workbench's own: a key that
// means the same is kept, one the workbench says otherwise is rewritten
// (Codex's enabled_tools is toolFilters), and one it cannot carry over
// is left out with a warning. Entries already in the workbench's shape
// are copied as the file has them.
func ReadHost(src string, data []byte, from string) (Found, error) {
	var h *Host
	if from != "" {
		if h = HostNamed(from); h == nil {
			return Found{}, fmt.Errorf("unknown host %q for --from: want one of %s", from, HostNames())
		}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if h == nil && (strings.HasSuffix(src, ".toml") || looksTOML(data)) {
		h = HostNamed("codex")
	}
	if h != nil && h.TOML {
		return readCodex(src, data)
	}
	blank := blankJSONC(data)
	if h == nil || h.Name == "claude-code" || h.Name == "claude-desktop" || h.Name == "cursor" {
		if doc, err := config.ReadDocument(blank); err == nil && h == nil {
			h = detect(src, doc.Root())
		}
	}
	if h == nil || h.Name == "claude-code" || h.Name == "claude-desktop" || h.Name == "cursor" {
		// These hosts read strict JSON: a comment or a trailing comma
		// breaks the file for them too, and is reported.
		servers, err := Read(src, data)
		return Found{Servers: servers}, err
	}
	if !jsonc[h.Name] {
		blank = data
	}
	doc, err := config.ReadDocument(blank)
	if err != nil {
		if _, err := Read(src, blank); err != nil {
			return Found{}, err // the same words for every host's file
		}
		return Found{}, err
	}
	root := doc.Root()
	if root.Kind() != "object" {
		return Found{}, fmt.Errorf("%s is not %s's file: it holds a JSON %s, not an object", src, h.Title, root.Kind())
	}
	// A key twice among the servers: the hosts run the last one, the
	// JSON reader keeps the first. Neither is a safe guess of what the
	// user meant, so the file is refused, as Claude Code's and Cursor's
	// are (Read): one rule for every host.
	for _, d := range doc.Duplicates {
		if under(d.Path, h.Container[0]) {
			return Found{}, fmt.Errorf("%s: %s appears twice in its object (%s uses the last one; keep only that one)", src, d.Path, h.Title)
		}
	}
	servers, ok := root.Get(h.Container[0])
	if !ok || servers.Kind() == "object" && len(servers.Members()) == 0 {
		return Found{}, fmt.Errorf("no MCP servers found in %s: it has no non-empty %q object (%s keeps its servers there)", src, h.Container[0], h.Title)
	}
	if servers.Kind() != "object" {
		return Found{}, fmt.Errorf("%s: %s must be an object mapping server names to servers, not a JSON %s", src, servers.Path, servers.Kind())
	}
	r := &reader{src: src, host: h}
	switch h.Name {
	case "vscode":
		r.vscodeInputs(root)
	}
	for _, m := range servers.Members() {
		if m.Value.Kind() != "object" {
			return Found{}, fmt.Errorf("%s: %s must be an object, not a JSON %s", src, m.Value.Path, m.Value.Kind())
		}
		r.server(m.Key, m.Value)
	}
	if h.Name == "gemini-cli" {
		// Gemini CLI's lists of the servers it starts, by name: which
		// servers run is the workbench's file's to say ("disabled").
		if mcp, ok := root.Get("mcp"); ok {
			for _, key := range []string{"allowed", "excluded"} {
				if list, ok := mcp.Get(key); ok {
					names := strings.Join(r.strings("", "mcp."+key, list), ", ")
					if names == "" {
						names = "an empty list"
					}
					what := map[string]string{"allowed": "starts", "excluded": "does not start"}[key]
					r.warnings = append(r.warnings, fmt.Sprintf("%s: mcp.%s: Gemini CLI's list of the servers it %s (%s) is not carried over: every server imported is started; give those it did not start \"disabled\": true", src, key, what, names))
				}
			}
		}
	}
	if h.Name == "opencode" {
		if tools, ok := root.Get("tools"); ok && tools.Kind() == "object" && len(tools.Members()) > 0 {
			r.warnings = append(r.warnings, fmt.Sprintf("%s: tools: OpenCode's switches of tools by name (%s) are not carried over: give a server \"toolFilters\" (the tools offered) or \"permissions\" (deny) instead", src, memberNames(tools)))
		}
	}
	return Found{Host: h, Servers: r.servers, Warnings: r.warnings}, r.err
}

// under reports whether the JSON path p is key or inside it.
func under(p, key string) bool {
	return p == key || strings.HasPrefix(p, key+".") || strings.HasPrefix(p, key+"[")
}

// jsonc are the hosts that take comments and trailing commas in their
// JSON files.
var jsonc = map[string]bool{"vscode": true, "zed": true, "opencode": true, "gemini-cli": true}

// looksTOML tells a TOML file from a JSON one by its first significant
// character, for a file whose name does not say.
func looksTOML(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		return !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "//") && !strings.HasPrefix(t, "/*") && !strings.HasPrefix(t, "[")
	}
	return false
}

// detect says whose file root is, from the key that holds its servers,
// the keys only one host's entries have, then the file's name; nil for
// the workbench's own shape.
func detect(src string, root config.Value) *Host {
	base := strings.ToLower(filepath.Base(src))
	servers, ok := root.Get("mcpServers")
	if !ok || servers.Kind() != "object" {
		// Gemini CLI's settings have an "mcp" object of their own
		// (allowed, excluded) beside "mcpServers", and VS Code's user
		// settings once held "mcp": {"servers"}: only a file without
		// "mcpServers" is told by these keys, and "mcp" only when it
		// holds no "servers".
		for _, key := range []string{"servers", "mcp", "context_servers"} {
			v, ok := root.Get(key)
			if !ok || v.Kind() != "object" {
				continue
			}
			if _, vscode := v.Get("servers"); key == "mcp" && vscode {
				continue
			}
			for _, h := range Hosts {
				if h.Container[0] == key {
					return h
				}
			}
		}
		return nil
	}
	has := func(keys ...string) bool {
		for _, m := range servers.Members() {
			for _, k := range keys {
				if _, ok := m.Value.Get(k); ok {
					return true
				}
			}
		}
		return false
	}
	hasType := func(types ...string) bool {
		for _, m := range servers.Members() {
			if t, ok := m.Value.Get("type"); ok {
				if s, _ := t.Text(); containsString(types, s) {
					return true
				}
			}
		}
		return false
	}
	switch {
	case has("serverUrl", "disabledTools") || base == "mcp_config.json":
		return HostNamed("windsurf")
	case has("httpUrl", "includeTools", "excludeTools", "trust") || base == "settings.json" && strings.Contains(filepath.ToSlash(src), ".gemini/"):
		return HostNamed("gemini-cli")
	case hasType("local") || has("tools") || base == "mcp-config.json":
		return HostNamed("copilot-cli")
	case has("autoApprove") || hasType("streamableHttp") || base == "cline_mcp_settings.json":
		return HostNamed("cline")
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func memberNames(v config.Value) string {
	var names []string
	for _, m := range v.Members() {
		names = append(names, m.Key)
	}
	return strings.Join(names, ", ")
}

// reader turns one host file's entries into the workbench's.
type reader struct {
	src      string
	host     *Host
	servers  []Server
	warnings []string
	err      error
	// inputs are VS Code's prompted values by id: the variable that
	// stands for each, and what VS Code asked.
	inputs map[string]input
	warned map[string]bool // each input's warning once per server
	// taken are the variables the file's values stand for, each by the
	// input id it stands for ("" for a variable of the host's own
	// environment): two inputs never share one.
	taken map[string]string
}

type input struct{ varName, description string }

func (r *reader) warn(server, key, format string, args ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf("%s: server %q: %s: %s", r.src, server, key, fmt.Sprintf(format, args...)))
}

// add appends the server name with the entry e.
func (r *reader) add(name, description string, e Entry) {
	raw := []byte(e.JSON("", "  "))
	doc, err := config.ReadDocument(raw)
	if err != nil {
		r.err = fmt.Errorf("%s: server %q: %v", r.src, name, err) // cannot happen: e is ours
		return
	}
	r.servers = append(r.servers, Server{Name: name, Entry: raw, entry: doc.Root(), Description: description})
}

// copyAsIs adds a server whose entry has only keys that mean to the
// workbench what they mean to the host: copied as the file has it.
func (r *reader) copyAsIs(name string, v config.Value) {
	r.servers = append(r.servers, Server{Name: name, Entry: v.Raw(), entry: v})
}

// Keys every host means as the workbench does.
var sameKeys = map[string]bool{"command": true, "args": true, "env": true, "cwd": true, "url": true, "headers": true}

// server turns one JSON host entry into the workbench's.
func (r *reader) server(name string, v config.Value) {
	h := r.host.Name
	// An entry of the workbench's own shape, with no variable syntax of
	// the host's, is copied as it is.
	plain := true
	for _, m := range v.Members() {
		k := m.Key
		ok := sameKeys[k] || k == "disabled" && (h == "windsurf" || h == "cline") ||
			k == "type" && h != "copilot-cli" && h != "opencode" && h != "gemini-cli" && !(h == "cline" && isText(m.Value, "stdio"))
		if !ok || h == "zed" || h == "opencode" {
			plain = false
		}
		m.Value.EachString("", func(_, s string) {
			if r.rewrite(name, "", s) != s {
				plain = false
			}
		})
		// Gemini CLI's url is SSE (the workbench's is streamable HTTP);
		// relative folders are taken from elsewhere.
		if (h == "gemini-cli" || h == "cline") && (k == "url" || k == "cwd") || h == "vscode" && k == "cwd" {
			plain = false
		}
	}
	if plain {
		r.copyAsIs(name, v)
		return
	}
	var e Entry
	var filters []string
	allowList := false // an allow-list given, even empty
	var deny, fromFile []string
	description := ""
	set := func(k string, val any) { e = append(e, Field{Key: k, Value: val}) }
	for _, m := range v.Members() {
		k, val := m.Key, m.Value
		switch {
		case k == "command" && h == "opencode":
			words := r.strings(name, k, val)
			if len(words) == 0 {
				r.warn(name, k, "an empty command: left out")
				continue
			}
			set("command", words[0])
			if len(words) > 1 {
				set("args", words[1:])
			}
		case k == "command" && h == "zed" && val.Kind() == "object":
			// Zed's earlier form: "command": {"path", "args", "env"}.
			for _, c := range val.Members() {
				switch c.Key {
				case "path":
					set("command", r.str(name, "command.path", c.Value))
				case "args":
					set("args", r.strings(name, "command.args", c.Value))
				case "env":
					if env := r.strMap(name, "command.env", c.Value); len(env) > 0 {
						set("env", env)
					}
				default:
					r.warn(name, "command."+c.Key, "not carried over (the workbench has no such setting)")
				}
			}
		case k == "command" || k == "url" || k == "serverUrl" || k == "httpUrl":
			key := k
			if k == "serverUrl" || k == "httpUrl" {
				key = "url"
			}
			set(key, r.str(name, k, val))
			if k == "httpUrl" {
				set("type", "http")
			}
			if k == "url" && (h == "gemini-cli" || h == "cline") {
				// Gemini CLI's url is SSE (httpUrl is streamable HTTP),
				// as is Cline's without a type.
				if _, typed := v.Get("type"); !typed {
					set("type", "sse")
				}
			}
		case k == "args":
			set("args", r.strings(name, k, val))
		case k == "env" || k == "environment" || k == "headers":
			key := k
			if k == "environment" {
				key = "env"
			}
			if m := r.strMap(name, k, val); len(m) > 0 {
				set(key, m)
			}
		case k == "cwd":
			cwd := r.str(name, k, val)
			if !filepath.IsAbs(cwd) && !strings.HasPrefix(cwd, "${") {
				r.warn(name, k, "%s starts the server in %s from the folder it runs in; the workbench takes a relative cwd from its configuration's folder: make it absolute if that is not the same folder", r.host.Title, frame.Quote(cwd))
			}
			set("cwd", cwd)
		case k == "type":
			t := r.str(name, k, val)
			switch t {
			case "stdio", "local":
				// the workbench's default with a command
			case "http", "sse", "streamableHttp", "streamable-http":
				set("type", t)
			case "remote":
				set("type", "http")
			default:
				r.warn(name, k, "%s is not a transport the workbench knows: left out", frame.Quote(t))
			}
		case k == "disabled":
			if b, ok := boolOf(val); ok && b {
				set("disabled", true)
			}
		case k == "enabled":
			if b, ok := boolOf(val); ok && !b {
				set("disabled", true)
			}
		case k == "includeTools" || k == "tools" && h == "copilot-cli":
			tools := r.strings(name, k, val)
			if !(len(tools) == 1 && tools[0] == "*") {
				filters = append(filters, tools...)
				allowList = allowList || val.Kind() == "array"
			}
		case k == "excludeTools" || k == "disabledTools":
			deny = append(deny, r.strings(name, k, val)...)
		case k == "timeout" && h == "gemini-cli":
			if ms, ok := intOf(val); ok {
				set("requestTimeoutMs", ms)
			}
		case k == "timeout" && h == "cline":
			if sec, ok := intOf(val); ok {
				set("requestTimeoutMs", sec*1000)
			}
		case k == "timeout" && h == "opencode":
			// OpenCode waits this long for a server's tools.
			if ms, ok := intOf(val); ok {
				set("connectionTimeoutMs", ms)
			}
		case k == "description" && h == "gemini-cli":
			description = r.str(name, k, val)
		case k == "trust" && h == "gemini-cli":
			if b, _ := boolOf(val); b {
				r.warn(name, k, "Gemini CLI ran this server's tools without asking; in the workbench its \"permissions\" decide (allow is the default)")
			}
		case k == "autoApprove" && h == "cline":
			if tools := r.strings(name, k, val); len(tools) > 0 {
				r.warn(name, k, "Cline ran %s without asking; in the workbench \"permissions\" decide which calls are asked (allow is the default)", strings.Join(tools, ", "))
			}
		case k == "source" && h == "zed":
			if s, _ := val.Text(); s == "extension" {
				r.warn(name, k, "a Zed extension's server: Zed starts it from the extension, which the workbench cannot; not imported")
				return
			}
		case k == "settings" && h == "zed" && len(val.Members()) == 0:
		case k == "oauth" && h == "opencode":
			if b, ok := boolOf(val); ok && !b {
				continue // OpenCode's "no OAuth": the workbench logs in only when asked
			}
			r.warn(name, k, "OpenCode's OAuth settings are not carried over: the workbench logs in to a server that asks (mcp-workbench login)")
		case k == "envFile" && h == "vscode":
			fromFile = r.envFile(name, r.str(name, k, val))
		default:
			r.warn(name, k, "not carried over (the workbench has no such setting)")
		}
	}
	if len(fromFile) > 0 {
		var env Entry
		at := -1
		for i, f := range e {
			if f.Key == "env" {
				env, at = f.Value.(Entry), i
			}
		}
		for _, n := range fromFile {
			if !has(env, n) {
				env = append(env, Field{Key: n, Value: "${" + n + "}"})
			}
		}
		if at >= 0 {
			e[at].Value = env
		} else {
			set("env", env)
		}
	}
	if len(filters) == 0 && allowList {
		// An empty allow-list offers none of the server's tools; left
		// out, it would offer every one.
		set("toolFilters", []string{})
		r.warn(name, "tools offered", "an empty list: %s offered none of this server's tools, and neither does the workbench (\"toolFilters\": []); list the tools to offer there", r.host.Title)
	}
	if len(filters) > 0 {
		set("toolFilters", filters)
		if len(deny) > 0 {
			r.warn(name, "excluded tools", "%s offered only the listed tools, less the excluded ones; the workbench offers the listed ones (toolFilters) and refuses calls of the excluded", r.host.Title)
		}
	}
	if len(deny) > 0 {
		var rules Entry
		for _, t := range deny {
			rules = append(rules, Field{Key: t, Value: "deny"})
		}
		set("permissions", Entry{{Key: "tools", Value: rules}})
		r.warn(name, "excluded tools", "%s hid %s; the workbench still lists them, but refuses every call (permissions: deny)", r.host.Title, strings.Join(deny, ", "))
	}
	if command, url := has(e, "command"), has(e, "url"); !command && !url {
		r.warn(name, "command", "neither a command nor a url: not imported")
		return
	}
	r.add(name, description, e)
}

func has(e Entry, key string) bool {
	for _, f := range e {
		if f.Key == key {
			return true
		}
	}
	return false
}

func isText(v config.Value, s string) bool {
	t, ok := v.Text()
	return ok && t == s
}

func boolOf(v config.Value) (bool, bool) {
	switch string(v.Raw()) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func intOf(v config.Value) (int64, bool) {
	var f float64
	if json.Unmarshal(v.Raw(), &f) != nil || f <= 0 {
		return 0, false
	}
	return int64(f + 0.5), true
}

// str is a string value with the host's variable syntax rewritten.
func (r *reader) str(server, key string, v config.Value) string {
	s, ok := v.Text()
	if !ok {
		r.warn(server, key, "a JSON %s where %s has a string", v.Kind(), r.host.Title)
		return string(v.Raw())
	}
	return r.rewrite(server, key, s)
}

func (r *reader) strings(server, key string, v config.Value) []string {
	var out []string
	if v.Kind() != "array" {
		r.warn(server, key, "a JSON %s where %s has an array of strings: left out", v.Kind(), r.host.Title)
		return nil
	}
	var arr []json.RawMessage
	_ = json.Unmarshal(v.Raw(), &arr)
	for _, raw := range arr {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			r.warn(server, key, "%s is not a string: left out", raw)
			continue
		}
		out = append(out, r.rewrite(server, key, s))
	}
	return out
}

func (r *reader) strMap(server, key string, v config.Value) Entry {
	var e Entry
	for _, m := range v.Members() {
		e = append(e, Field{Key: m.Key, Value: r.str(server, key+"."+m.Key, m.Value)})
	}
	return e
}

var (
	vscodeVar = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\$\{(input|env|workspaceFolder|userHome|pathSeparator)(?::([^}]*))?\}`)
	})
	openCodeVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{(env|file):([^}]*)\}`) })
	bareVar     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`) })
)

// rewrite turns the host's variable syntax in s into the workbench's
// ${VAR}, warning where a value the host supplied must now come from the
// workbench's environment.
func (r *reader) rewrite(server, key, s string) string {
	switch r.host.Name {
	case "vscode", "windsurf", "cline":
		return vscodeVar().ReplaceAllStringFunc(s, func(m string) string {
			p := vscodeVar().FindStringSubmatch(m)
			switch p[1] {
			case "env":
				return "${" + p[2] + "}"
			case "userHome":
				return "${HOME}"
			case "input":
				in, ok := r.inputs[p[2]]
				if !ok {
					in = input{varName: r.inputVar(p[2])}
					if r.inputs == nil {
						r.inputs = map[string]input{}
					}
					r.inputs[p[2]] = in
				}
				if key != "" && !r.warned[server+"\x00"+p[2]] {
					if r.warned == nil {
						r.warned = map[string]bool{}
					}
					r.warned[server+"\x00"+p[2]] = true
					what := ""
					if in.description != "" {
						what = " (" + frame.Quote(in.description) + ")"
					}
					r.warn(server, key, "VS Code asked for input %s%s; the workbench takes it from the variable %s: set it where the workbench runs", frame.Quote(p[2]), what, in.varName)
				}
				return "${" + in.varName + "}"
			case "workspaceFolder":
				if dir := r.workspace(); dir != "" {
					return dir
				}
				if key != "" {
					r.warn(server, key, "${workspaceFolder} is VS Code's open folder; the workbench has none: written as ${WORKSPACE_FOLDER}, set it or write the path")
				}
				return "${WORKSPACE_FOLDER}"
			}
			return m
		})
	case "opencode":
		return openCodeVar().ReplaceAllStringFunc(s, func(m string) string {
			p := openCodeVar().FindStringSubmatch(m)
			if p[1] == "env" {
				return "${" + p[2] + "}"
			}
			if key != "" {
				r.warn(server, key, "OpenCode put the content of the file %s here; the workbench does not read files into values: write it, or a ${VAR}, in its place", p[2])
			}
			return m
		})
	case "gemini-cli":
		// Gemini CLI expands $VAR as well as ${VAR}; the workbench only
		// the latter.
		return bareVar().ReplaceAllString(s, "$${$1}")
	}
	return s
}

// workspace is the folder VS Code's ${workspaceFolder} stands for when the
// file is a workspace's .vscode/mcp.json, else "".
func (r *reader) workspace() string {
	dir := filepath.Dir(r.src)
	if filepath.Base(dir) != ".vscode" {
		return ""
	}
	abs, err := filepath.Abs(filepath.Dir(dir))
	if err != nil {
		return ""
	}
	return abs
}

func varName(id string) string {
	var b strings.Builder
	for _, c := range strings.ToUpper(id) {
		if c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// inputVar is the variable that stands for VS Code's input id: its id in
// capitals, with _ for what is neither a letter nor a digit. Ids that
// would share one ("api-key" and "api_key") are distinct inputs, each
// with its own value: the later gets API_KEY_2 (_3, …), with a warning,
// so that no server is given another's secret. So does an input whose
// name is a variable the file takes from the host's environment.
func (r *reader) inputVar(id string) string {
	if r.taken == nil {
		r.taken = map[string]string{}
	}
	base := varName(id)
	name := base
	for n := 2; ; n++ {
		if _, ok := r.taken[name]; !ok {
			break
		}
		name = fmt.Sprintf("%s_%d", base, n)
	}
	if name != base {
		whose := "the host's environment variable " + base
		if other := r.taken[base]; other != "" {
			whose = "VS Code's input " + frame.Quote(other)
		}
		r.warnings = append(r.warnings, fmt.Sprintf("%s: input %s would be ${%s}, as is %s: it is ${%s}, so that each keeps its own value", r.src, frame.Quote(id), base, whose, name))
	}
	r.taken[name] = id
	return name
}

// vscodeInputs reads VS Code's "inputs": the values it prompts for. The
// variables the file takes from the host's environment (${env:NAME},
// ${userHome}) are noted first, so that no input is given their name.
func (r *reader) vscodeInputs(root config.Value) {
	r.inputs = map[string]input{}
	r.taken = map[string]string{}
	for _, m := range vscodeVar().FindAllStringSubmatch(string(root.Raw()), -1) {
		switch m[1] {
		case "env":
			r.taken[m[2]] = ""
		case "userHome":
			r.taken["HOME"] = ""
		case "workspaceFolder":
			r.taken["WORKSPACE_FOLDER"] = ""
		}
	}
	inputs, ok := root.Get("inputs")
	if !ok {
		return
	}
	var list []struct {
		ID          string `json:"id"`
		Description string `json:"description"`
	}
	if inputs.Kind() == "array" && json.Unmarshal(inputs.Raw(), &list) == nil {
		for _, in := range list {
			if _, dup := r.inputs[in.ID]; !dup {
				r.inputs[in.ID] = input{varName: r.inputVar(in.ID), description: in.Description}
			}
		}
	}
}

// envFile returns the names of the variables VS Code's envFile at path
// holds, if it can be read, with a warning saying where they came from.
func (r *reader) envFile(server, path string) []string {
	if !filepath.IsAbs(path) {
		r.warn(server, "envFile", "VS Code read variables from %s; the workbench does not read env files: set them where it runs, or write them in \"env\"", path)
		return nil
	}
	// A project's file may name any path: a named pipe, /dev/zero.
	data, err := ReadFile(path, maxEnvFileSize)
	if err != nil {
		why := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			why = "it is not there"
		} else if rest, ok := strings.CutPrefix(why, path+" is "); ok {
			why = "it is " + rest
		}
		r.warn(server, "envFile", "VS Code read variables from %s (%s); the workbench does not read env files: set them where it runs, or write them in \"env\"", path, why)
		return nil
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "export "))
		if k, _, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") && strings.TrimSpace(k) != "" {
			names = append(names, strings.TrimSpace(k))
		}
	}
	r.warn(server, "envFile", "VS Code read %s from %s; the workbench takes each from its own environment (${NAME} in \"env\"): set them where it runs", strings.Join(names, ", "), path)
	return names
}
