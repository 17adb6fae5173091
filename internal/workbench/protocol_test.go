package workbench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"
)

// TestSessionlessRequestGetsTheNewEnvelope sends use_tool without any
// initialize, as the 2026-07-28 protocol allows when a request names its
// version in _meta: the result carries resultType and the server's
// identity, around the server's own result. A request that names no
// version before initialize is refused, as the SDK refuses every call then.
func TestSessionlessRequestGetsTheNewEnvelope(t *testing.T) {
	e := newEnv(t)
	cfg, err := parseConfig(fmt.Sprintf(oneServer, fake("a")), e)
	if err != nil {
		t.Fatal(err)
	}
	wb := e.newWorkbench(cfg)
	hostR, wbW := io.Pipe()
	wbR, hostW := io.Pipe()
	ss, err := wb.Connect(context.Background(), wbR, wbW)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hostW.Close(); ss.Close(); wbW.Close() })
	lines := make(chan []byte, 10)
	go func() {
		sc := bufio.NewScanner(hostR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	next := func() map[string]json.RawMessage {
		t.Helper()
		select {
		case line := <-lines:
			var m map[string]json.RawMessage
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("not JSON: %s", line)
			}
			return m
		case <-time.After(60 * time.Second):
			t.Fatal("no answer")
			return nil
		}
	}

	fmt.Fprintln(hostW, useLine("1", "a", "echo", `{"text":"early"}`, ""))
	if m := next(); m["error"] == nil || string(m["id"]) != "1" {
		t.Errorf("a call before initialize that names no version: %v, want an error", m)
	}

	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"h","version":"1"}}`
	fmt.Fprintln(hostW, useLine("2", "a", "echo", `{"text":"hi"}`, meta))
	m := next()
	var res struct {
		ResultType string `json:"resultType"`
		Meta       struct {
			ServerInfo struct{ Name, Version string } `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(m["result"], &res); err != nil || string(m["id"]) != "2" {
		t.Fatalf("sessionless call: %v (%v)", m, err)
	}
	if res.ResultType != "complete" || res.Meta.ServerInfo.Name != Name || len(res.Content) == 0 || res.Content[0].Text != `{"args":{"text":"hi"},"server":"a"}` {
		t.Errorf("sessionless result = %s", m["result"])
	}

	// What the SDK refuses of a request that names its version, the relay
	// refuses too, with the SDK's errors: a version it does not speak, and
	// a request without the client's capabilities.
	for _, c := range []struct {
		id, meta string
		code     int
	}{
		{"3", `{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}`, -32022},
		{"4", `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, -32602},
		{"5", `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"h"}`, -32602},
	} {
		fmt.Fprintln(hostW, useLine(c.id, "a", "echo", `{"text":"hi"}`, c.meta))
		m := next()
		var e struct{ Code int }
		if err := json.Unmarshal(m["error"], &e); err != nil || e.Code != c.code || string(m["id"]) != c.id {
			t.Errorf("request %s with _meta %s: id %s, error %s, result %s; want error %d", c.id, c.meta, m["id"], m["error"], m["result"], c.code)
		}
	}
}
