package hostconfig

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"
)

// readCodex reads Codex's config.toml: a [mcp_servers.NAME] table per
// server, in file order, each made the workbench's entry.
func readCodex(src string, data []byte) (Found, error) {
	h := HostNamed("codex")
	if line := tomlTooDeepAt(data); line > 0 {
		return Found{}, fmt.Errorf("%s: line %d: tables, arrays or dotted keys nested deeper than %d levels: not read", src, line, frame.MaxDepth)
	}
	doc, md, err := decodeTOML(data)
	if err != nil {
		return Found{}, fmt.Errorf("%s: %v", src, strings.TrimPrefix(err.Error(), ErrUnparsable.Error()+": "))
	}
	all, ok := doc["mcp_servers"].(map[string]any)
	if !ok || len(all) == 0 {
		return Found{}, fmt.Errorf("no MCP servers found in %s: it has no [mcp_servers.NAME] table (Codex keeps its servers there)", src)
	}
	// The decoder's map has no order; its metadata lists keys as the
	// file has them.
	var names []string
	keyOrder := map[string][]string{}
	seen := map[string]bool{}
	for _, k := range md.Keys() {
		if len(k) < 2 || k[0] != "mcp_servers" {
			continue
		}
		if !seen[k[1]] {
			seen[k[1]] = true
			names = append(names, k[1])
		}
		if len(k) >= 3 {
			// "name" for a server's keys, "name\x00env" for the keys of
			// its env (and headers) tables.
			at := strings.Join(k[1:len(k)-1], "\x00")
			keyOrder[at] = append(keyOrder[at], k[len(k)-1])
		}
	}
	r := &reader{src: src, host: h}
	for _, name := range names {
		t, ok := all[name].(map[string]any)
		if !ok {
			return Found{}, fmt.Errorf("%s: mcp_servers.%s must be a table, not %T", src, name, all[name])
		}
		r.codexServer(name, t, keyOrder[name], func(table string) []string { return keyOrder[name+"\x00"+table] })
	}
	return Found{Host: h, Servers: r.servers, Warnings: r.warnings}, r.err
}

func (r *reader) codexServer(name string, t map[string]any, order []string, subOrder func(table string) []string) {
	var e Entry
	set := func(k string, v any) { e = append(e, Field{Key: k, Value: v}) }
	var env, headers Entry
	var filters, deny []string
	allowList := false // enabled_tools given, even empty
	// Codex passes every string as written: a "${" of its own must reach
	// the server as it is, not be expanded by the workbench.
	lit := func(key, s string) string {
		if !strings.Contains(s, "${") {
			return s
		}
		// The value is not quoted: it may be a secret.
		r.warn(name, key, "holds \"${\", which Codex passes as written: written \"$${\" (the workbench's escape), so that the server still gets it unchanged")
		return strings.ReplaceAll(s, "${", "$${")
	}
	for _, k := range order {
		v := t[k]
		switch k {
		case "command", "url", "cwd":
			if s, ok := v.(string); ok {
				set(k, lit(k, s))
			} else {
				r.warn(name, k, "a %s where Codex has a string: left out", tomlKind(v))
			}
		case "args":
			set("args", lits(k, r.tomlStrings(name, k, v), lit))
		case "env":
			for _, kv := range pairsInOrder(v, subOrder(k)) {
				env = append(env, Field{Key: lit(k, kv[0]), Value: lit(k+"."+kv[0], kv[1])})
			}
		case "env_vars":
			var passed []string
			for _, item := range asList(v) {
				n := ""
				switch item := item.(type) {
				case string:
					n = item
				case map[string]any:
					n, _ = item["name"].(string)
					if src, _ := item["source"].(string); src != "" && src != "local" {
						r.warn(name, k, "Codex took %s from its %s environment; the workbench takes it from its own", n, src)
					}
				}
				if n == "" {
					r.warn(name, k, "an item without a name: left out")
					continue
				}
				env = append(env, Field{Key: n, Value: "${" + n + "}"})
				passed = append(passed, n)
			}
			if len(passed) > 0 {
				r.warn(name, k, "Codex passed %s through from its own environment; the workbench takes each from its own (${VAR} in \"env\"): set it where the host starts the workbench", strings.Join(passed, ", "))
			}
		case "enabled":
			if b, ok := v.(bool); ok && !b {
				set("disabled", true)
			}
		case "enabled_tools":
			allowList = true
			filters = append(filters, lits(k, r.tomlStrings(name, k, v), lit)...)
		case "disabled_tools":
			deny = append(deny, lits(k, r.tomlStrings(name, k, v), lit)...)
		case "startup_timeout_sec", "startup_timeout_ms", "tool_timeout_sec":
			f, ok := number(v)
			if !ok || f <= 0 {
				r.warn(name, k, "not a positive number: left out")
				continue
			}
			ms := f
			if strings.HasSuffix(k, "_sec") {
				ms = f * 1000
			}
			key := "connectionTimeoutMs"
			if k == "tool_timeout_sec" {
				key = "requestTimeoutMs"
			}
			set(key, int64(math.Round(ms)))
		case "bearer_token_env_var":
			if s, ok := v.(string); ok {
				headers = append(headers, Field{Key: "Authorization", Value: "Bearer ${" + s + "}"})
			}
		case "http_headers":
			for _, kv := range pairsInOrder(v, subOrder(k)) {
				headers = append(headers, Field{Key: lit(k, kv[0]), Value: lit(k+"."+kv[0], kv[1])})
			}
		case "env_http_headers":
			for _, kv := range pairsInOrder(v, subOrder(k)) {
				headers = append(headers, Field{Key: kv[0], Value: "${" + kv[1] + "}"})
			}
		case "required":
			if b, _ := v.(bool); b {
				r.warn(name, k, "Codex refused to start if this server failed; the workbench starts it when its toolbox is opened and reports a failure there (mcp-workbench check tests it beforehand)")
			}
		default:
			r.warn(name, k, "not carried over (the workbench has no such setting)")
		}
	}
	if len(env) > 0 {
		e = insertAfter(e, Field{Key: "env", Value: env}, "args", "command")
	}
	if len(headers) > 0 {
		e = insertAfter(e, Field{Key: "headers", Value: headers}, "url")
	}
	switch {
	case len(filters) > 0:
		set("toolFilters", filters)
	case allowList:
		set("toolFilters", []string{})
		r.warn(name, "enabled_tools", "an empty list: Codex offered none of this server's tools, and neither does the workbench (\"toolFilters\": []); list the tools to offer there")
	}
	if len(deny) > 0 {
		var rules Entry
		for _, tool := range deny {
			rules = append(rules, Field{Key: tool, Value: "deny"})
		}
		set("permissions", Entry{{Key: "tools", Value: rules}})
		r.warn(name, "disabled_tools", "Codex hid %s; the workbench still lists them, but refuses every call (permissions: deny)", strings.Join(deny, ", "))
	}
	if !has(e, "command") && !has(e, "url") {
		r.warn(name, "command", "neither a command nor a url: not imported")
		return
	}
	r.add(name, "", e)
}

// lits is lit applied to each of list.
func lits(key string, list []string, lit func(key, s string) string) []string {
	for i, s := range list {
		list[i] = lit(key, s)
	}
	return list
}

// insertAfter puts f after the first of keys that e has, else at the end.
func insertAfter(e Entry, f Field, keys ...string) Entry {
	for _, k := range keys {
		for i := range e {
			if e[i].Key == k {
				out := append(append(append(Entry{}, e[:i+1]...), f), e[i+1:]...)
				return out
			}
		}
	}
	return append(e, f)
}

func (r *reader) tomlStrings(server, key string, v any) []string {
	var out []string
	for _, item := range asList(v) {
		s, ok := item.(string)
		if !ok {
			r.warn(server, key, "%v is not a string: left out", item)
			continue
		}
		out = append(out, s)
	}
	return out
}

func asList(v any) []any {
	switch v := v.(type) {
	case []any:
		return v
	case []map[string]any:
		out := make([]any, len(v))
		for i, m := range v {
			out[i] = m
		}
		return out
	}
	return nil
}

// pairsInOrder returns a TOML table of strings as key, value pairs in
// the file's order (order, from the decoder's metadata), any key it lacks
// after them sorted.
func pairsInOrder(v any, order []string) [][2]string {
	m, _ := v.(map[string]any)
	var out [][2]string
	var keys []string
	seen := map[string]bool{}
	for _, k := range order {
		if _, ok := m[k]; ok && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, k := range memberKeys(m) {
		if !seen[k] {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		s, ok := m[k].(string)
		if !ok {
			s = fmt.Sprint(m[k])
		}
		out = append(out, [2]string{k, s})
	}
	return out
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

func tomlKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case map[string]any:
		return "table"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	}
	return frame.Quote(fmt.Sprint(v))
}

// memberKeys lists a table's keys, sorted.
func memberKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
