package serverproc

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// envChild makes the re-executed test binary print its environment as one
// JSON-RPC line and exit: a real child process whose environment a test
// reads.
const envChild = "SERVERPROC_TEST_PRINT_ENV"

func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "1" {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{"env": os.Environ()}})
		fmt.Println(string(b))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childEnv starts cfg (the test binary) and returns the environment the
// child saw.
func childEnv(t *testing.T, cfg *config.Server) []string {
	t.Helper()
	_, env := startChild(t, cfg)
	return env
}

// startChild starts cfg (the test binary, with envChild set), stopped when
// the test ends, and returns it and the environment the child saw.
func startChild(t *testing.T, cfg *config.Server) (*Process, []string) {
	t.Helper()
	var stderr fakeserver.Buffer
	p, err := Start(cfg, "[tb/s]", &stderr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(0) })
	line, err := p.ReadLine()
	if err != nil {
		t.Fatalf("ReadLine: %v\n%s", err, stderr.String())
	}
	var msg struct {
		Result struct{ Env []string }
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return p, msg.Result.Env
}

// TestBaseEnv: a server with a BaseEnv sees those variables and its Env,
// none of the workbench's own; without one, it sees the workbench's.
func TestBaseEnv(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SERVERPROC_TEST_WORKBENCH_ONLY", "secret")
	base := []string{"HOME=/nowhere", "ONLY_BASE=1", "OVERRIDDEN=base"}
	cfg := &config.Server{Name: "s", Transport: config.Stdio, Command: exe, BaseEnv: base,
		Env: map[string]string{envChild: "1", "OVERRIDDEN": "env"}}
	got := childEnv(t, cfg)
	// Under wine (.ci/wine-test), whose processes all carry WINELOADER.
	underWine := runtime.GOOS == "windows" && os.Getenv("WINELOADER") != ""
	var names []string
	for _, kv := range got {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "MCP_WORKBENCH_TREE": // proctree's tag (Linux)
		case runtime.GOOS == "windows" && strings.EqualFold(name, "SYSTEMROOT"): // os/exec adds it
		case underWine && (strings.HasPrefix(name, "WINE") || name == "SystemDrive"):
			// wine, not Windows, adds these to every process it starts.
		default:
			names = append(names, kv)
		}
	}
	slices.Sort(names)
	want := []string{"HOME=/nowhere", "ONLY_BASE=1", "OVERRIDDEN=env", envChild + "=1"}
	if !slices.Equal(names, want) {
		t.Errorf("the child's environment = %q, want %q", names, want)
	}
	if !slices.Equal(base, []string{"HOME=/nowhere", "ONLY_BASE=1", "OVERRIDDEN=base"}) {
		t.Errorf("BaseEnv changed: %q", base)
	}

	cfg.BaseEnv = nil
	if got := childEnv(t, cfg); !slices.Contains(got, "SERVERPROC_TEST_WORKBENCH_ONLY=secret") {
		t.Errorf("without BaseEnv the child lacks the workbench's environment: %q", got)
	}
}
