package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/ui"
)

// TestUIPrintsItsAddressFirst: mcp-workbench ui --no-browser prints the
// page's address with its token as the first line of stdout, serves the
// page with that token (and refuses without), logs no token, refuses an
// address that is not loopback, and ends when its context does.
func TestUIPrintsItsAddressFirst(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "workbench-config.json")
	if err := os.WriteFile(cfg, []byte(`{"toolboxes": {"t": {"mcpServers": {"s": {"command": "true"}}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, "", "ui", "--config", cfg, "--listen", "0.0.0.0:0", "--no-browser")
	if code != 2 || !strings.Contains(stderr, "loopback") {
		t.Errorf("--listen 0.0.0.0:0: exit %d, stderr %q", code, stderr)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var errOut strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"ui", "--config", cfg, "--no-browser"}, strings.NewReader(""), outW, &syncBuilder{b: &errOut})
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSpace(line)
	base, token, ok := strings.Cut(addr, "/?token=")
	if !ok || !strings.HasPrefix(base, "http://127.0.0.1:") || len(token) < 32 {
		t.Fatalf("first line %q is not the page's address with a token", line)
	}
	go io.Copy(io.Discard, outR)
	get := func(h map[string]string) int {
		req, _ := http.NewRequest("GET", base+"/api/now", nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := get(map[string]string{ui.HeaderName: token}); c != http.StatusOK {
		t.Errorf("with the token: status %d", c)
	}
	if c := get(nil); c != http.StatusUnauthorized {
		t.Errorf("without the token: status %d", c)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ui ended with %v", err)
	}
	if strings.Contains(errOut.String(), token) {
		t.Errorf("the log shows the token:\n%s", errOut.String())
	}
}

// syncBuilder is a strings.Builder safe for the log's writes while the
// test reads it at the end.
type syncBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
