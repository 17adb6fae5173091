package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// rawHidden returns the characters of s that a terminal would obey or
// hide rather than show: controls other than newline and tab, format
// characters (bidi, tags) and the line and paragraph separators.
func rawHidden(s string) []rune {
	var out []rune
	for _, r := range s {
		if r != '\n' && r != '\t' && (unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029') {
			out = append(out, r)
		}
	}
	return out
}

// TestImportShowsControlCharactersEscaped checks that server and project
// names holding terminal escapes (an OSC title change, a screen clear,
// C1's CSI), a carriage return, U+2028 and a bidi override are printed
// escaped by the listing and by import's report and errors, never raw.
func TestImportShowsControlCharactersEscaped(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("APPDATA", filepath.Join(home, "AppData"))
	t.Setenv("CODEX_HOME", "")
	t.Setenv("COPILOT_HOME", "")
	t.Chdir(t.TempDir())
	evil := []string{`\u001b]0;owned\u0007title`, `clear\u001b[2J`, `csi\u009b2J`, `over\rwrite`, `line\u2028sep`, `rtl\u202egpj.exe`}
	var entries []string
	for _, name := range evil {
		entries = append(entries, `"`+name+`": {"command": "x"}`)
	}
	claude := filepath.Join(home, ".claude.json")
	content := `{"projects": {"/p\u001b[31m": {"mcpServers": {` + strings.Join(entries, ", ") + `}}}}`
	if err := os.WriteFile(claude, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runImportCmd(t)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if raw := rawHidden(stdout); len(raw) > 0 || !strings.Contains(stdout, `\u001b]0;owned\u0007title`) || !strings.Contains(stdout, `line\u2028sep`) {
		t.Errorf("the listing prints %q raw:\n%s", raw, stdout)
	}

	code, stdout, stderr = runImportCmd(t, claude, "--out", filepath.Join(t.TempDir(), "wb.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if raw := rawHidden(stdout + stderr); len(raw) > 0 || !strings.Contains(stdout, `rtl\u202egpj.exe`) || !strings.Contains(stdout, `/p\u001b[31m`) {
		t.Errorf("import prints %q raw:\nstdout: %s\nstderr: %s", raw, stdout, stderr)
	}

	// An error that quotes the file.
	bad := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(bad, []byte(`{"servers": {"a\u001b]0;x\u0007": 1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runImportCmd(t, bad, "--out", filepath.Join(t.TempDir(), "wb.json"))
	if raw := rawHidden(stdout + stderr); code != 1 || len(raw) > 0 || !strings.Contains(stderr, `a\u001b]0;x\u0007`) {
		t.Errorf("exit %d, %q raw:\n%s", code, raw, stderr)
	}
}
