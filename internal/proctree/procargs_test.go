package proctree

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// procargs2 lays out a KERN_PROCARGS2 buffer as the kernel does: argc,
// the executable path, NUL padding, the arguments, the environment, an
// empty string, then the apple strings.
func procargs2(argc int, exec string, pad int, strs ...string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(argc))
	b = append(b, exec...)
	b = append(b, make([]byte, 1+pad)...)
	for _, s := range strs {
		b = append(b, s...)
		b = append(b, 0)
	}
	return b
}

// TestParseProcArgs2: the environment of a KERN_PROCARGS2 buffer is told
// from the arguments before it (by argc) and the apple strings after it
// (by the empty string), whatever the padding; a malformed buffer is an
// error, never a panic or an environment read from the arguments.
func TestParseProcArgs2(t *testing.T) {
	cases := []struct {
		name    string
		buf     []byte
		exec    string
		args    []string
		env     []string
		wantErr string
	}{
		{"node server", procargs2(3, "/opt/homebrew/bin/node", 7, "node", "/u/lib/server.js", "--stdio", "HOME=/Users/me", "MCP_WORKBENCH_TREE=12-ab.3", "", "executable_path=/opt/homebrew/bin/node", "ptr_munge="),
			"/opt/homebrew/bin/node", []string{"node", "/u/lib/server.js", "--stdio"}, []string{"HOME=/Users/me", "MCP_WORKBENCH_TREE=12-ab.3"}, ""},
		{"no padding, no apple strings", procargs2(1, "/bin/sleep", 0, "sleep", "A=1", "B="),
			"/bin/sleep", []string{"sleep"}, []string{"A=1", "B="}, ""},
		{"an argument that looks like a variable", procargs2(2, "/bin/sh", 3, "sh", "X=1", "Y=2", ""),
			"/bin/sh", []string{"sh", "X=1"}, []string{"Y=2"}, ""},
		{"empty arguments are arguments", procargs2(3, "/bin/echo", 2, "echo", "", "", "Z=3"),
			"/bin/echo", []string{"echo", "", ""}, []string{"Z=3"}, ""},
		{"no environment", procargs2(1, "/bin/true", 1, "true", ""), "/bin/true", []string{"true"}, nil, ""},
		{"empty", nil, "", nil, nil, "shorter than argc"},
		{"argc only", []byte{1, 0, 0, 0}, "", nil, nil, "without its NUL"},
		{"fewer arguments than argc", procargs2(4, "/bin/ls", 0, "ls", "-l"), "/bin/ls", nil, nil, "fewer arguments"},
		{"argc past the buffer", procargs2(1<<30, "/bin/ls", 0, "ls"), "/bin/ls", nil, nil, "larger than the buffer"},
		{"argc negative as int32", procargs2(-1, "/bin/ls", 0, "ls"), "/bin/ls", nil, nil, "larger than the buffer"},
	}
	for _, c := range cases {
		got, err := parseProcArgs2(c.buf)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.exec != c.exec || !slices.Equal(got.args, c.args) || !slices.Equal(got.env, c.env) {
			t.Errorf("%s: got exec %q args %q env %q, want %q %q %q", c.name, got.exec, got.args, got.env, c.exec, c.args, c.env)
		}
	}
}
