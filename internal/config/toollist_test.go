package config

import (
	"errors"
	"testing"
)

// TestToolListBounds checks that maxTools and maxToolListBytes are read at
// the top level as defaults, that a server's own value wins, and that bad
// values are reported at their path.
func TestToolListBounds(t *testing.T) {
	doc := `{"maxTools": 50, "toolboxes": {"dev": {"description": "d", "mcpServers": {
		"s": {"command": "x", "maxTools": 20000, "maxToolListBytes": 100000000},
		"other": {"command": "y"}}}}}`
	cfg, err := Parse([]byte(doc), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %q", cfg.Warnings)
	}
	if s := cfg.Toolbox("dev").Server("s"); s.MaxTools != 20000 || s.MaxToolListBytes != 100000000 {
		t.Errorf("s: maxTools %d, maxToolListBytes %d", s.MaxTools, s.MaxToolListBytes)
	}
	if o := cfg.Toolbox("dev").Server("other"); o.MaxTools != 50 || o.MaxToolListBytes != DefaultMaxToolListBytes {
		t.Errorf("other: maxTools %d, maxToolListBytes %d", o.MaxTools, o.MaxToolListBytes)
	}

	_, err = Parse([]byte(`{"maxToolListBytes": 0, "toolboxes": {"dev": {"description": "d", "mcpServers": {
		"s": {"command": "x", "maxTools": "10"}}}}}`), env(nil))
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	want := map[string]bool{"maxToolListBytes": false, "toolboxes.dev.mcpServers.s.maxTools": false}
	for _, p := range ce.Problems {
		if _, ok := want[p.Path]; ok {
			want[p.Path] = true
		}
	}
	for path, seen := range want {
		if !seen {
			t.Errorf("no problem reported at %s: %v", path, err)
		}
	}
}
