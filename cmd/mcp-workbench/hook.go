package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/catalog"
	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/permissions"
)

const hookUsage = `Usage: mcp-workbench hook claude-code|codex|gemini-cli [--config PATH]

The host's pre-tool hook for the workbench's use_tool: reads the hook's
JSON on stdin, applies the configuration's permission rules to the tool
that use_tool calls (toolbox, server, tool), and answers in the host's
format. Install it with the workbench's name in the host's MCP servers in
place of "workbench".

claude-code: answers allow, ask or deny, so that Claude Code's own
permission prompt names the inner tool (an approved call is not asked
again by the workbench); a call whose questions the configuration asks in
the web UI's page ("askIn": "page") is allowed on, and the workbench
asks there. In Claude Code's settings (~/.claude/settings.json
or .claude/settings.json):

  "hooks": {"PreToolUse": [{"matcher": "mcp__workbench__use_tool",
    "hooks": [{"type": "command", "command": "mcp-workbench hook claude-code --config /path/to/workbench-config.json"}]}]}

codex: Codex takes deny from a hook, not ask: a denied call is blocked
before it reaches the workbench, with the rule that denies it; for an
allowed or asked one the hook says nothing, and the workbench asks itself
(through Codex's elicitation prompt) where a rule says ask. In Codex's
config.toml ($CODEX_HOME, else ~/.codex), then trusted once in Codex's
/hooks (Codex runs no hook it has not been told to trust):

  [[hooks.PreToolUse]]
  matcher = "^mcp__workbench__use_tool$"
  [[hooks.PreToolUse.hooks]]
  type = "command"
  command = "mcp-workbench hook codex --config /path/to/workbench-config.json"

gemini-cli: as for Codex, a denied call is blocked with the rule that
denies it, and the hook says nothing of other calls (Gemini CLI declares
no elicitation: a call a rule asks for is refused by the workbench, with a
message saying so). In Gemini CLI's settings.json (~/.gemini, or the
project's .gemini):

  "hooks": {"BeforeTool": [{"matcher": "^mcp_workbench_use_tool$",
    "hooks": [{"type": "command", "command": "mcp-workbench hook gemini-cli --config /path/to/workbench-config.json"}]}]}

A decision that depends on a tool's annotations reads them from the tool
catalog (what the servers listed before); without them, the strictest
decision they could lead to applies. Input that is not the host's
hook input, or a configuration that does not load, blocks the call
(exit status 2, the reason on stderr). The hook reads only the rules: a
${VAR} in a server's env, headers, args or url need not be set where the
host runs it (the host sets it for the workbench, in its entry's env);
one in a toolbox's or server's name or in "permissions" must be.
` + globalFlagsHelp

// maxHookInput bounds the hook's stdin: a tool call's input.
const maxHookInput = 16 << 20

// hookInput is the part of a host's pre-tool hook input the hook reads
// (Claude Code's and Codex's PreToolUse, Gemini CLI's BeforeTool).
type hookInput struct {
	HookEventName *string         `json:"hook_event_name"`
	ToolName      *string         `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	// MCPContext is Gemini CLI's: the MCP server and tool of the call.
	MCPContext *struct {
		ToolName string `json:"tool_name"`
	} `json:"mcp_context"`
}

// geminiHookOutput is Gemini CLI's BeforeTool decision.
type geminiHookOutput struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// hookOutput is Claude Code's PreToolUse decision.
type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		// UpdatedInput is use_tool's input with the approval of this
		// call (permissions.Approvals), for an asked call: approved in
		// Claude Code's prompt, it is not asked again by the workbench.
		UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	} `json:"hookSpecificOutput"`
}

// hookHost is a host whose pre-tool hook the workbench answers.
type hookHost struct {
	title    string // the name messages give it
	event    string // the hook's event
	settings string // where its hooks are set
	// useTool tells a call of a workbench's use_tool from the hook input.
	useTool func(in hookInput) bool
	// denyOnly: the host takes deny from the hook and nothing else, so
	// the hook says nothing of other calls; an asked one is asked (or
	// refused, for a host without elicitation) by the workbench itself.
	// Codex 0.171 counts allow without a changed input, and ask, as the
	// hook failing, and runs the call; an approval in use_tool's input
	// would skip the question instead of carrying its answer.
	denyOnly bool
	// deny is the host's answer that blocks a call, with the reason; nil
	// for Claude Code's hookOutput.
	deny func(reason string) any
}

// hookHosts are the hosts whose pre-tool hook the workbench answers.
var hookHosts = map[string]hookHost{
	"claude-code": {title: "Claude Code", event: "PreToolUse", settings: `"PreToolUse" in Claude Code's settings`, useTool: isUseTool},
	"codex":       {title: "Codex", event: "PreToolUse", settings: "[[hooks.PreToolUse]] in Codex's config.toml", useTool: isUseTool, denyOnly: true},
	"gemini-cli": {title: "Gemini CLI", event: "BeforeTool", settings: `"hooks": {"BeforeTool": …} in Gemini CLI's settings.json`, useTool: isGeminiUseTool, denyOnly: true,
		deny: func(reason string) any { return geminiHookOutput{Decision: "deny", Reason: reason} }},
}

// runHook answers one pre-tool hook of Claude Code, Codex or Gemini CLI.
func runHook(_ context.Context, e *env, args []string) error {
	var opts globalOptions
	fs := e.flagSet("hook", &opts)
	positional, err := parse(fs, args)
	if err != nil {
		return e.usageError("hook", err)
	}
	if len(positional) != 1 || hookHosts[positional[0]].title == "" {
		return e.usageError("hook", errors.New("name the host whose hook this is: claude-code, codex or gemini-cli"))
	}
	host := hookHosts[positional[0]]
	if _, _, err := e.logger("hook", opts); err != nil {
		return err // a bad --log-level
	}
	block := func(format string, a ...any) error {
		fmt.Fprintf(e.stderr, "mcp-workbench hook: "+format+"\n", a...)
		return &exitError{code: 2}
	}
	data, err := io.ReadAll(io.LimitReader(e.stdin, maxHookInput+1))
	if err != nil {
		return block("reading the hook's input: %v", err)
	}
	if len(data) > maxHookInput {
		return block("the hook's input is longer than %d MiB; the call is blocked", maxHookInput>>20)
	}
	var in hookInput
	if err := json.Unmarshal(data, &in); err != nil || in.HookEventName == nil || in.ToolName == nil {
		return block("the input is not %s's %s hook input (a JSON object with hook_event_name, tool_name and tool_input); the call is blocked", host.title, host.event)
	}
	if *in.HookEventName != host.event {
		return block("the hook runs for %s, not %q: install it under %s; the call is blocked", host.event, *in.HookEventName, host.settings)
	}
	if !host.useTool(in) {
		return nil // not the workbench's: no decision, the host's own rules apply
	}
	var ti struct {
		Tool struct {
			Toolbox, Server, Tool string
		} `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(in.ToolInput, &ti) != nil || ti.Tool.Toolbox == "" || ti.Tool.Server == "" || ti.Tool.Tool == "" {
		// The workbench refuses such a call itself, with its own words.
		return nil
	}
	path := config.ResolvePath(opts.configPath, os.LookupEnv)
	// Only the rules are read: a ${VAR} of a server's env, headers or args
	// is set where the host starts the workbench, not in the hook's
	// environment (the host's), and the hook does not need it.
	cfg, err := config.LoadRules(path, os.LookupEnv)
	if err != nil {
		return block("%v; the call is blocked until the configuration loads", err)
	}
	ref := ti.Tool
	out := hookOutput{}
	out.HookSpecificOutput.HookEventName = "PreToolUse"
	tc := cfg.Toolbox(ref.Toolbox)
	var sc *config.Server
	if tc != nil {
		sc = tc.Server(ref.Server)
	}
	if sc == nil {
		return nil // the workbench says what is wrong
	}
	pol := permissions.Policy{Top: cfg.Permissions, Toolbox: tc.Permissions, Server: sc.Permissions}
	hints := hookHints(pol, sc, ref.Server, ref.Tool)
	if hints == nil && host.denyOnly && pol.NeedsHints(ref.Server, ref.Tool) && unsetIn(cfg, ref.Toolbox, ref.Server) {
		// The catalog knows a server by its values, and one of them is a
		// variable set only where the host starts the workbench: the
		// workbench, which has it, decides by the tool's annotations (the
		// hook only stops a denied call earlier).
		return nil
	}
	v := pol.Decide(ref.Server, ref.Tool, hints)
	names := fmt.Sprintf("tool '%s' of server '%s' (toolbox '%s')", ref.Tool, ref.Server, ref.Toolbox)
	out.HookSpecificOutput.PermissionDecision = v.Decision.String()
	switch v.Decision {
	case permissions.Deny:
		out.HookSpecificOutput.PermissionDecisionReason = fmt.Sprintf("The workbench configuration denies %s: %s.", names, v.By)
	case permissions.Ask:
		if where, whereBy := pol.AskIn(); where == permissions.AskInPage {
			// The configuration asks in the web UI's page: Claude Code's
			// prompt does not ask (an approval there would skip the page);
			// the call goes on to the workbench, which asks there.
			out.HookSpecificOutput.PermissionDecision = permissions.Allow.String()
			out.HookSpecificOutput.PermissionDecisionReason = fmt.Sprintf("%s is asked about in the workbench's web UI, not here: the workbench configuration asks, by %s, in its web UI's Questions page (\"askIn\": %s). "+
				"The call goes on to the workbench, which waits there for the user's answer (mcp-workbench ui shows the question).", upperFirst(names), v.By, whereBy)
			break
		}
		// Claude Code shows the reason in its prompt; in -p mode, where it
		// cannot prompt, it refuses the call and the model reads the reason:
		// it must read as a question and as a refusal.
		out.HookSpecificOutput.PermissionDecisionReason = fmt.Sprintf("%s needs the user's approval: the workbench configuration asks, by %s. "+
			"Where the user cannot be asked (claude -p without --permission-prompt-tool) the call is refused and did not run: "+
			"to allow it there, make that \"ask\" an \"allow\" in %s, or give claude -p a --permission-prompt-tool.", upperFirst(names), v.By, path)
		out.HookSpecificOutput.UpdatedInput = approvedInput(in.ToolInput, ref.Toolbox, ref.Server, ref.Tool, ti.Arguments)
	default:
		out.HookSpecificOutput.PermissionDecisionReason = fmt.Sprintf("The workbench configuration allows %s: %s.", names, v.By)
	}
	if host.denyOnly && v.Decision != permissions.Deny {
		return nil
	}
	var answer any = out
	if host.deny != nil {
		answer = host.deny(out.HookSpecificOutput.PermissionDecisionReason)
	}
	b, err := json.MarshalIndent(answer, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "%s\n", b)
	return err
}

// unsetIn reports whether a value of the server (its env, headers, args,
// …) names a variable not set in the hook's environment (a warning of
// [config.LoadRules]).
func unsetIn(cfg *config.Config, toolbox, server string) bool {
	at := config.JoinPath("toolboxes", toolbox, "mcpServers", server)
	for _, w := range cfg.Warnings {
		if (strings.HasPrefix(w, at+".") || strings.HasPrefix(w, at+"[")) && strings.Contains(w, "is not set here") {
			return true
		}
	}
	return false
}

// upperFirst writes s with its first letter capital (s is ASCII here).
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// isUseTool reports whether Claude Code's (and Codex's) name of the tool
// is a workbench's use_tool: mcp__<server>__use_tool, whatever the
// workbench is called.
func isUseTool(in hookInput) bool {
	name := *in.ToolName
	return strings.HasPrefix(name, "mcp__") && strings.HasSuffix(name, "__use_tool")
}

// isGeminiUseTool reports whether Gemini CLI's call is of a workbench's
// use_tool: mcp_<server>_use_tool, the MCP tool use_tool.
func isGeminiUseTool(in hookInput) bool {
	name := *in.ToolName
	return in.MCPContext != nil && in.MCPContext.ToolName == "use_tool" &&
		strings.HasPrefix(name, "mcp_") && strings.HasSuffix(name, "_use_tool")
}

// hookHints returns the annotations of the tool from the catalog, when
// the decision may depend on them; nil when it does not or they are not
// known.
func hookHints(pol permissions.Policy, sc *config.Server, server, tool string) *permissions.Hints {
	if !pol.NeedsHints(server, tool) {
		return nil
	}
	dir, err := catalog.DefaultDir()
	if err != nil {
		return nil
	}
	cat, err := catalog.Open(dir)
	if err != nil {
		return nil
	}
	entry, ok, _ := cat.Get(catalog.Key(sc, downstream.ProtocolVersion))
	if !ok {
		return nil
	}
	for _, raw := range entry.Tools {
		var t struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &t) == nil && t.Name == tool {
			h := permissions.HintsOf(raw)
			return &h
		}
	}
	return nil
}

// approvedInput returns use_tool's input with the approval of the call
// added, or nil (no change) if none can be made: the workbench then asks
// again itself.
func approvedInput(input json.RawMessage, toolbox, server, tool string, args json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &obj) != nil || obj == nil {
		return nil
	}
	keyPath, err := permissions.KeyPath()
	if err != nil {
		return nil
	}
	token, err := permissions.SignApproval(keyPath, toolbox, server, tool, args, time.Now())
	if err != nil {
		return nil
	}
	obj[permissions.ApprovalField] = json.RawMessage(frame.Quote(token))
	b, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return b
}
