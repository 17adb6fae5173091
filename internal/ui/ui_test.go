package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
	"github.com/mcpworkbench/mcp-workbench/internal/pins"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
)

func TestMain(m *testing.M) { fakeserver.TestMain(m) }

// fake is the JSON of a fake server entry: the test binary re-executed,
// tagged, with extra environment.
func fake(t *testing.T, tag, name string, extra ...string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{fakeserver.EnvServer: "1", fakeserver.EnvName: name, fakeserver.EnvStateDir: t.TempDir(), fakeserver.TagVar: tag}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	b, _ := json.Marshal(map[string]any{"command": exe, "env": env, "maxRetries": 0})
	return string(b)
}

// uiTest is a UI server on 127.0.0.1 for one test, with its configuration
// file, and what it logged.
type uiTest struct {
	t      *testing.T
	s      *Server
	base   string // http://127.0.0.1:PORT
	config string
	logs   *fakeserver.Buffer
	tag    string
	pins   *pins.Store
}

func newUITest(t *testing.T, configText func(tag string) string) *uiTest {
	t.Helper()
	// A home of its own: the state files, activity records and questions
	// of the test's workbenches are the only ones its page sees.
	home := t.TempDir()
	for _, v := range fakeserver.HomeVars {
		t.Setenv(v, filepath.Join(home, strings.ToLower(v)))
	}
	u := &uiTest{t: t, logs: &fakeserver.Buffer{}, tag: fmt.Sprintf("wb-ui-%d", time.Now().UnixNano())}
	u.config = filepath.Join(t.TempDir(), "workbench-config.json")
	if err := os.WriteFile(u.config, []byte(configText(u.tag)), 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := pins.Open(filepath.Join(t.TempDir(), "pins"))
	if err != nil {
		t.Fatal(err)
	}
	u.pins = store
	log := slog.New(slog.NewTextHandler(u.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := New(Options{ConfigPath: u.config, Version: "test", Logger: log, Poll: 100 * time.Millisecond,
		NewWorkbench: func(cfg *config.Config) *workbench.Workbench {
			return u.workbench(cfg, log)
		}})
	if err != nil {
		t.Fatal(err)
	}
	u.s = s
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.base = "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if left := fakeserver.WaitUntagged(u.tag, 20*time.Second); len(left) > 0 {
			t.Errorf("processes left behind: %v", left)
		}
		if t.Failed() {
			t.Logf("logs:\n%s", u.logs)
		}
	})
	return u
}

// workbench is a workbench of the test's configuration with short waits
// and the test's pin store: the Try page's, or one standing for a host's.
func (u *uiTest) workbench(cfg *config.Config, log *slog.Logger) *workbench.Workbench {
	return workbench.New(cfg, workbench.Options{Version: "test", Logger: log, Stderr: u.logs, Pins: u.pins, Downstream: &downstream.Options{
		StopGrace: 500 * time.Millisecond,
		Backoff:   func(int) time.Duration { return 10 * time.Millisecond },
	}})
}

// hostWorkbench is a running workbench of the test's configuration, as a
// host's would be: it writes its state file.
func (u *uiTest) hostWorkbench() *workbench.Workbench {
	cfg, err := config.Load(u.config)
	if err != nil {
		u.t.Fatal(err)
	}
	wb := u.workbench(cfg, slog.New(slog.NewTextHandler(u.logs, nil)))
	u.t.Cleanup(wb.Close)
	return wb
}

// request sends a request with the given headers (Host too) and returns
// the status and the body.
func (u *uiTest) request(method, path, body string, headers map[string]string) (int, string) {
	u.t.Helper()
	req, err := http.NewRequest(method, u.base+path, strings.NewReader(body))
	if err != nil {
		u.t.Fatal(err)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// authed is the headers of the page's own script: the token and the
// page's origin.
func (u *uiTest) authed() map[string]string {
	return map[string]string{HeaderName: u.s.Token(), "Origin": u.base}
}
