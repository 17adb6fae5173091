package front

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// countingBody is a request body that counts what its readers take: the
// bytes, and the reads after it said it had ended.
type countingBody struct {
	r       io.Reader
	bytes   int
	ended   bool
	pastEnd int
}

func (b *countingBody) Read(p []byte) (int, error) {
	if b.ended {
		b.pastEnd++
	}
	n, err := b.r.Read(p)
	b.bytes += n
	if err == io.EOF {
		b.ended = true
	}
	return n, err
}

func (b *countingBody) Close() error { return nil }

// TestHTTPReadsABodyOnce: a POST of the 2026-07-28 protocol that names its
// version only in its _meta is looked into twice before the SDK reads it
// (is it sessionless? does it carry inputResponses?): through the real
// handler chain, its body is read from the connection once, never again
// past its end, and the SDK still reads it whole and answers.
func TestHTTPReadsABodyOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, []byte(`{"toolboxes": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	logs := &fakeserver.Buffer{}
	f := newHTTPFront(cfg, HTTPOptions{Options: Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), LogOut: logs}}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080})
	defer f.close()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`
	for _, c := range []struct {
		name, text string
		hdr        http.Header
		code       int
		says       string
	}{
		// Looked into for its _meta, then by the SDK's stateful handler.
		{"a 2025 initialize", initBody, mcpHeaders(), http.StatusOK, `"protocolVersion":"2025-11-25"`},
		// Looked into for its _meta, then for inputResponses, then by
		// the SDK's stateless handler, which wants the version in a
		// header too (its answer names the request's id: it read it).
		{"2026-07-28 in _meta only", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + meta + `,"inputResponses":{}}}`, mcpHeaders(), http.StatusBadRequest, `"id":7`},
		// Looked into for inputResponses, then by the SDK.
		{"2026-07-28", `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{` + meta + `}}`, mcpHeaders("MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"), http.StatusOK, `"use_tool"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := &countingBody{r: strings.NewReader(c.text)}
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", body)
			req.Header = c.hdr
			w := httptest.NewRecorder()
			f.handler().ServeHTTP(w, req)
			if w.Code != c.code || !strings.Contains(w.Body.String(), c.says) {
				t.Fatalf("the answer: %d %s; want %d with %s", w.Code, w.Body, c.code, c.says)
			}
			if body.bytes != len(c.text) || body.pastEnd != 0 {
				t.Errorf("the body gave %d bytes of %d and was read %d times past its end; want it read once", body.bytes, len(c.text), body.pastEnd)
			}
		})
	}
}
