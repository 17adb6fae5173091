package workbench

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestToolListIsCacheable: the workbench's own tools/list gives its two
// tools a long life (they change only on a reload, which sends
// list_changed), for this user only, and is the same bytes in every
// session and after a restart: hosts and prompt caches may keep it.
func TestToolListIsCacheable(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) { toolListIsCacheable(t, protocol) })
	}
}

func toolListIsCacheable(t *testing.T, protocol string) {
	e := newEnv(t)
	const text = `{"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": %s}}, "ops": {"description": "o", "mcpServers": {"b": %s}}}}`
	list := func(wb *Workbench) json.RawMessage {
		h := e.lineHost(wb, protocol)
		h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		var r struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(h.response("1"), &r); err != nil {
			t.Fatal(err)
		}
		return r.Result
	}
	newWB := func() *Workbench {
		cfg, err := parseConfig(fmt.Sprintf(text, fake("a"), fake("b")), e)
		if err != nil {
			t.Fatal(err)
		}
		return e.newWorkbench(cfg)
	}
	wb := newWB()
	first := list(wb)
	var res struct {
		TTLMs      int    `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
		Tools      []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(first, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 2 || res.TTLMs != toolListTTL || res.CacheScope != "private" {
		t.Errorf("tools/list = %s, want the two tools with ttlMs %d and cacheScope private", first, toolListTTL)
	}
	if again := list(wb); string(again) != string(first) {
		t.Errorf("a second session's tools/list differs:\n%s\n%s", first, again)
	}
	if restarted := list(newWB()); string(restarted) != string(first) {
		t.Errorf("tools/list after a restart differs:\n%s\n%s", first, restarted)
	}
}
