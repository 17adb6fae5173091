package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/oauth/oauthtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official MCP conformance suite (testdata/conformance, pinned with
// the Node it needs) runs its client authorization scenarios against the
// workbench: for each one it starts a server and an authorization server
// and runs a client command with the server's URL. That command is this
// test binary as conformanceClient, a user at a terminal: it writes a
// configuration with the server, runs `mcp-workbench login` with a
// browser that follows the authorization redirect, then `mcp-workbench
// call` of the scenario server's tool, and logs in again when the call
// says a login is needed (a step-up), a few times at most.

// envConformanceClient makes the re-executed test binary the suite's
// client under test.
const envConformanceClient = "WB_CONFORMANCE_CLIENT"

// conformanceSuites are the suites whose scenarios are all authorization
// scenarios: the current spec's, the 2025-03-26 ones, the draft's and the
// extensions.
var conformanceSuites = []string{"auth", "backcompat", "draft", "extensions"}

// conformanceSuite returns the suite's folder, its Node and its command
// line's script; it fails the test under CI when they are missing.
func conformanceSuite(t *testing.T) (dir, node, cli string) {
	t.Helper()
	dir = filepath.Join(fakeserver.RepoRoot(t), "testdata", "conformance")
	node = filepath.Join(dir, "node_modules", ".bin", "node")
	cli = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, p := range []string{node, cli} {
		if _, err := os.Stat(p); err != nil {
			msg := "the MCP conformance suite is not installed: run 'make test-deps' (npm ci in testdata/conformance)"
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return dir, node, cli
}

func TestConformanceClientAuth(t *testing.T) {
	dir, node, cli := conformanceSuite(t)
	if testing.Short() {
		t.Skip("the conformance suite starts Node and a dozen logins")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(exe, " \t'\"") {
		t.Fatalf("the test binary's path %q cannot be a command of the suite (it splits at spaces)", exe)
	}
	for _, suite := range conformanceSuites {
		t.Run(suite, func(t *testing.T) {
			out := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, cli, "client", "--suite", suite, "--command", exe,
				"--timeout", "30000", "--expected-failures", filepath.Join(dir, "expected-failures.yml"), "-o", out)
			cmd.Dir = out
			cmd.Env = append(os.Environ(), envConformanceClient+"=1", "HOME="+out, "XDG_CONFIG_HOME="+out, "XDG_CACHE_HOME="+out)
			b, err := cmd.CombinedOutput()
			t.Logf("conformance client --suite %s:\n%s", suite, b)
			if err != nil {
				t.Errorf("the %s suite failed: %v (a scenario not listed in testdata/conformance/expected-failures.yml failed, or one listed there passes)", suite, err)
			}
		})
	}
}

// conformanceClient is the client under test of one scenario; its last
// argument is the server's URL. It returns its exit status.
func conformanceClient() int {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "conformance client: no server URL")
		return 2
	}
	serverURL := os.Args[len(os.Args)-1]
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance client:", err)
		return 1
	}
	home, err := os.MkdirTemp("", "wb-conformance-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance client:", err)
		return 1
	}
	defer os.RemoveAll(home)

	entry := map[string]any{"type": "http", "url": serverURL}
	// Scenarios with a client registered beforehand say which.
	var sc struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" && json.Unmarshal([]byte(c), &sc) == nil && sc.ClientID != "" {
		oauth := map[string]any{"clientId": sc.ClientID}
		if sc.ClientSecret != "" {
			oauth["clientSecret"] = sc.ClientSecret
		}
		entry["oauth"] = oauth
	}
	cfg := map[string]any{"toolboxes": map[string]any{"conformance": map[string]any{
		"description": "The conformance suite's server", "mcpServers": map[string]any{"server": entry},
	}}}
	data, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(home, "workbench-config.json")
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "conformance client:", err)
		return 1
	}

	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envConformanceClient+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, envMain+"=1", "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_CACHE_HOME="+home,
		"BROWSER=env "+oauthtest.EnvBrowser+"=follow "+exe)
	workbench := func(args ...string) (int, string) {
		cmd := exec.Command(exe, append([]string{"--config", cfgPath}, args...)...)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = os.Stdout, &stderr
		err := cmd.Run()
		os.Stderr.WriteString(stderr.String())
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode(), stderr.String()
			}
			return -1, err.Error()
		}
		return 0, stderr.String()
	}
	if strings.HasPrefix(os.Getenv("MCP_CONFORMANCE_SCENARIO"), "elicitation") {
		return conformanceElicitation(exe, cfgPath, env)
	}
	// A user runs login, then the call; when the call says a login is
	// needed (a step-up to more scopes), log in again, a few times at most.
	for range 3 {
		if code, _ := workbench("login", "--timeout", "20s", "conformance", "server"); code != 0 {
			return code
		}
		code, stderr := workbench("call", "conformance", "server", "test-tool")
		if code == 0 || !strings.Contains(stderr, "run `mcp-workbench login") {
			return code
		}
	}
	return 1
}

// TestConformanceClientElicitation runs the suite's client elicitation
// scenario with the workbench between its server and a host: the
// server's elicitation reaches the host through the workbench, and the
// answer goes back, defaults applied as a client applies them.
func TestConformanceClientElicitation(t *testing.T) {
	_, node, cli := conformanceSuite(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, "client", "--scenario", "elicitation-sep1034-client-defaults", "--command", exe,
		"--timeout", "30000", "-o", out)
	cmd.Dir = out
	cmd.Env = append(os.Environ(), envConformanceClient+"=1", "HOME="+out, "XDG_CONFIG_HOME="+out, "XDG_CACHE_HOME="+out)
	b, err := cmd.CombinedOutput()
	t.Logf("conformance client --scenario elicitation-sep1034-client-defaults:\n%s", b)
	if err != nil {
		t.Errorf("the elicitation scenario failed: %v", err)
	}
}

// conformanceElicitation is the client of an elicitation scenario: a host
// with elicitation runs the workbench over stdio and calls the scenario
// server's tool through use_tool; the host accepts every form as it is
// (its defaults are the answer).
func conformanceElicitation(exe, cfgPath string, env []string) int {
	cmd := exec.Command(exe, "--config", cfgPath)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "conformance-host", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance host:", err)
		return 1
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "use_tool", Arguments: map[string]any{
		"tool": map[string]string{"toolbox": "conformance", "server": "server", "tool": "test_client_elicitation_defaults"}, "arguments": map[string]any{},
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance host:", err)
		return 1
	}
	b, _ := json.Marshal(res)
	fmt.Fprintln(os.Stderr, "conformance host: result:", string(b))
	if res.IsError {
		return 1
	}
	return 0
}
