package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// installFixtures are a realistic file of each host, from testdata/import.
var installFixtures = map[string]string{
	"claude-code":    "claude-code-user.claude.json",
	"claude-desktop": "claude_desktop_config.json",
	"cursor":         "cursor-mcp.json",
	"codex":          "codex-config.toml",
	"vscode":         "vscode-mcp.json",
	"gemini-cli":     "gemini-settings.json",
	"copilot-cli":    "copilot-mcp-config.json",
	"opencode":       "opencode.json",
	"windsurf":       "windsurf-mcp_config.json",
	"zed":            "zed-settings.json",
	"cline":          "cline_mcp_settings.json",
}

// installGolden compares got, with the test binary's path and the
// configuration's made stable, with testdata/import/install/NAME.
func installGolden(t *testing.T, name string, got []byte, cfg string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got = bytes.ReplaceAll(got, []byte(exe), []byte("/usr/bin/mcp-workbench"))
	got = bytes.ReplaceAll(got, []byte(cfg), []byte("/home/me/.config/mcp-workbench/config.json"))
	compareGolden(t, filepath.Join("..", "..", "testdata", "import", "install", name), got)
}

// keptInOrder reports whether every line of before is in after, in order:
// install only adds lines (and the comma after the member it follows),
// except where it replaces its own entry.
func keptInOrder(before, after []byte) (string, bool) {
	rest := strings.Split(string(after), "\n")
	for _, line := range strings.Split(string(before), "\n") {
		i := 0
		for i < len(rest) && rest[i] != line && rest[i] != line+"," {
			i++
		}
		if i == len(rest) {
			return line, false
		}
		rest = rest[i+1:]
	}
	return "", true
}

// TestInstallRoundTrips writes the workbench into each host's realistic
// file: the file afterwards is the golden one (the host's own entry,
// everything else byte for byte: comments, order, indentation), a backup
// holds the file as it was, the mode is kept, and a second run changes
// nothing and says so.
func TestInstallRoundTrips(t *testing.T) {
	for host, fixture := range installFixtures {
		t.Run(host, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, fixture)
			orig, err := os.ReadFile(importFixture(fixture))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, orig, 0o640); err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(dir, "wb.json")
			code, stdout, stderr := runCmd(t, "", "install", host, "--file", file, "--config", cfg)
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			after, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			installGolden(t, fixture, after, cfg)
			if line, ok := keptInOrder(orig, after); !ok {
				t.Errorf("line %q of the host file is lost or moved:\n%s", line, after)
			}
			if !strings.Contains(stdout, "Added the workbench") || !strings.Contains(stdout, file+".bak") {
				t.Errorf("stdout: %s", stdout)
			}
			if backup, err := os.ReadFile(file + ".bak"); err != nil || !bytes.Equal(backup, orig) {
				t.Errorf("backup: %v, equal to the original: %v", err, bytes.Equal(backup, orig))
			}
			if info, err := os.Stat(file); err != nil || runtime.GOOS != "windows" && info.Mode().Perm() != 0o640 {
				t.Errorf("mode after install: %v, %v; want 0640 kept", info, err)
			}

			code, stdout, _ = runCmd(t, "", "install", host, "--file", file, "--config", cfg)
			if code != 0 || !strings.Contains(stdout, "nothing changed") {
				t.Errorf("second run: exit %d, stdout %s", code, stdout)
			}
			if again, _ := os.ReadFile(file); !bytes.Equal(again, after) {
				t.Errorf("the second run changed the file:\n%s", again)
			}
			if _, err := os.Stat(file + ".bak.2"); err == nil {
				t.Error("the second run made a backup")
			}
		})
	}
}

// TestInstallRefusesBrokenFiles checks that a host file that does not
// parse, or whose servers are not an object, is left as it is, with an
// error that names the file and the place.
func TestInstallRefusesBrokenFiles(t *testing.T) {
	for _, tc := range []struct{ host, name, content, want string }{
		{"codex", "config.toml", "model = \"o3\"\n[mcp_servers.memory\ncommand = \"npx\"\n", "invalid TOML"},
		{"codex", "config.toml", "mcp_servers = { memory = { command = \"npx\" } }\n", "inline table or dotted keys"},
		{"codex", "config.toml", "[mcp_servers]\nworkbench = { command = \"old\" }\n", "not written as a [mcp_servers.workbench] table"},
		{"cursor", "mcp.json", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},,\n  }\n}\n", "invalid JSON"},
		{"vscode", "mcp.json", "{\"servers\": [\"a\"]}", "servers is not an object"},
		{"zed", "settings.json", "[1, 2]", "not an object"},
	} {
		t.Run(tc.host+"/"+tc.want, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), tc.name)
			if err := os.WriteFile(file, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runCmd(t, "", "install", tc.host, "--file", file, "--config", "/x/wb.json")
			if code != 1 || !strings.Contains(stderr, file) || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "unchanged") {
				t.Errorf("exit %d, stderr %s; want %q", code, stderr, tc.want)
			}
			if got, _ := os.ReadFile(file); string(got) != tc.content {
				t.Errorf("the file changed:\n%s", got)
			}
			entries, _ := os.ReadDir(filepath.Dir(file))
			if len(entries) != 1 {
				t.Errorf("files left beside it: %v", entries)
			}
		})
	}
}

// TestInstallNewFile checks a host that has no file yet: it is made, 0600,
// in a folder made 0700, holding the entry alone.
func TestInstallNewFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	t.Setenv("USERPROFILE", home)
	cfg := filepath.Join(home, "wb.json")
	code, stdout, stderr := runCmd(t, "", "install", "codex", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	file := filepath.Join(home, ".codex", "config.toml")
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v\nstdout: %s", err, stdout)
	}
	exe, _ := os.Executable()
	want := "[mcp_servers.workbench]\ncommand = " + tomlQuoted(exe) + "\nargs = [\"--config\", " + tomlQuoted(cfg) + "]\n"
	// and the workbench's hook (install_codex_hook_test.go)
	if !strings.HasPrefix(string(got), want+"\n# The workbench's permission rules") {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if runtime.GOOS != "windows" {
		for path, mode := range map[string]os.FileMode{file: 0o600, filepath.Dir(file): 0o700} {
			if info, err := os.Stat(path); err != nil || info.Mode().Perm() != mode {
				t.Errorf("%s: %v, %v; want %v", path, info, err, mode)
			}
		}
	}
	if !strings.Contains(stdout, "does not exist yet") {
		t.Errorf("stdout does not say the configuration is missing: %s", stdout)
	}
}

func tomlQuoted(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// TestInstallFollowsSymlinks checks a host file that is a link into a
// dotfiles folder: the file it points at is edited, the link stays.
func TestInstallFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("{\"mcpServers\": {}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "mcp.json")
	if err := os.Symlink(real, link); err != nil {
		if runtime.GOOS == "windows" {
			t.Skip("this Windows account may not make symbolic links:", err)
		}
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, "", "install", "cursor", "--file", link, "--config", "/x/wb.json"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
	if got, _ := os.ReadFile(real); !strings.Contains(string(got), `"workbench"`) {
		t.Errorf("the linked file lacks the entry:\n%s", got)
	}
}

// TestInstallRemoveMoved checks --remove-moved: the servers that import
// moved into toolboxes leave the host's file in the same write (commented
// out in Codex's TOML, removed from JSON), the rest stays, and a second
// run changes nothing.
func TestInstallRemoveMoved(t *testing.T) {
	for _, tc := range []struct{ host, fixture, gone, kept string }{
		{"codex", "codex-config.toml", "\n[mcp_servers.memory]\n", "# [mcp_servers.memory]\n"},
		{"vscode", "vscode-mcp.json", `"perplexity": {`, `"inputs": [`},
		{"zed", "zed-settings.json", `"postgres": {`, `"from-extension": {`}, // not imported: stays
	} {
		t.Run(tc.host, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, tc.fixture)
			orig, err := os.ReadFile(importFixture(tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, orig, 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(dir, "wb.json")
			if code, _, stderr := runImportCmd(t, file, "--out", cfg); code != 0 {
				t.Fatalf("import: exit %d: %s", code, stderr)
			}
			code, stdout, stderr := runCmd(t, "", "install", tc.host, "--file", file, "--config", cfg, "--remove-moved")
			if code != 0 || !strings.Contains(stdout, "the servers now in the workbench's toolboxes") {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			after, _ := os.ReadFile(file)
			if strings.Contains(string(after), tc.gone) || !strings.Contains(string(after), tc.kept) || !strings.Contains(string(after), `workbench`) {
				t.Errorf("after --remove-moved:\n%s", after)
			}
			if backup, _ := os.ReadFile(file + ".bak"); !bytes.Equal(backup, orig) {
				t.Error("the backup is not the file as it was")
			}
			if code, stdout, _ := runCmd(t, "", "install", tc.host, "--file", file, "--config", cfg, "--remove-moved"); code != 0 || !strings.Contains(stdout, "nothing changed") {
				t.Errorf("second run: exit %d, %s", code, stdout)
			}
			if again, _ := os.ReadFile(file); !bytes.Equal(again, after) {
				t.Errorf("the second run changed the file:\n%s", again)
			}
		})
	}
}

// TestInstallAnotherConfigKeepsUsersKeys: install run again with another
// --config writes the new args (and command) and keeps what the user
// added to the entry: Codex's approval mode, timeout and env table,
// Claude Code's env, Cline's autoApprove, comments.
func TestInstallAnotherConfigKeepsUsersKeys(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ host, file, text string }{
		{"codex", "config.toml", "model = \"o3\"\n\n[mcp_servers.workbench]\ncommand = \"/old/mcp-workbench\"\n# my timeout\ntool_timeout_sec = 120\nargs = [\"--config\", \"OLD\"]\ndefault_tools_approval_mode = \"approve\"\n\n[mcp_servers.workbench.env]\nGH_TOKEN = \"tok\"\n\n# another\n[mcp_servers.x]\ncommand = \"x\"\n"},
		{"claude-code", ".claude.json", "{\n  \"mcpServers\": {\n    \"workbench\": {\n      \"type\": \"stdio\",\n      \"command\": \"/old/mcp-workbench\",\n      \"args\": [\"--config\", \"OLD\"],\n      \"env\": {\"GH_TOKEN\": \"tok\"},\n      \"alwaysLoad\": false\n    }\n  }\n}\n"},
		{"cline", "cline_mcp_settings.json", "{\n  \"mcpServers\": {\n    \"workbench\": {\n      // mine\n      \"command\": \"/old/mcp-workbench\",\n      \"args\": [\"--config\", \"OLD\"],\n      \"autoApprove\": [\"open_toolbox\"],\n      \"env\": {\"GH_TOKEN\": \"tok\"}\n    }\n  }\n}\n"},
	} {
		t.Run(tc.host, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, tc.file)
			if err := os.WriteFile(file, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(dir, "new.json")
			code, stdout, stderr := runCmd(t, "", "install", tc.host, "--file", file, "--config", cfg)
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			after, _ := os.ReadFile(file)
			got := string(after)
			if strings.Contains(got, "OLD") || strings.Contains(got, "/old/") || !strings.Contains(got, cfg) || !strings.Contains(got, exe) {
				t.Errorf("the entry still starts the old workbench, or not the new one:\n%s", got)
			}
			// Every line the user wrote but command and args is there, in order.
			var mine []string
			for _, l := range strings.Split(tc.text, "\n") {
				if !strings.Contains(l, "OLD") && !strings.Contains(l, "/old/") {
					mine = append(mine, strings.TrimSuffix(l, ","))
				}
			}
			if line, ok := keptInOrder([]byte(strings.Join(mine, "\n")), []byte(strings.ReplaceAll(got, ",\n", "\n"))); !ok {
				t.Errorf("the user's line %q is lost or moved:\n%s", line, got)
			}
			if code, stdout, _ := runCmd(t, "", "install", tc.host, "--file", file, "--config", cfg); code != 0 || !strings.Contains(stdout, "nothing changed") {
				t.Errorf("second run: exit %d, %s", code, stdout)
			}
		})
	}
}

// TestInstallCodexBOM: a config.toml that starts with a byte order mark
// (Codex and import read it) takes the entry and the hook, the mark kept,
// and --remove-moved comments out a table on its first line after it.
func TestInstallCodexBOM(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.toml")
	orig := "\ufeff[mcp_servers.memory]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-memory\"]\n"
	if err := os.WriteFile(file, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "wb.json")
	if err := os.WriteFile(cfg, []byte(`{"toolboxes": {"mem": {"description": "memory", "mcpServers": {"memory": {"command": "npx"}}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "", "install", "codex", "--file", file, "--config", cfg, "--remove-moved")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	after, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(after), "\ufeff# [mcp_servers.memory]\n") || !strings.Contains(string(after), "\n[mcp_servers.workbench]\n") || !strings.Contains(string(after), "[[hooks.PreToolUse]]") {
		t.Errorf("after install:\n%q", after)
	}
}

// TestInstallLinks: a dangling symbolic link (a dotfiles link made before
// its file) keeps the link and gets its target made; a file with another
// hard link is written in place, both names still one file; a read-only
// file is refused with a clear message and left as it was.
func TestInstallLinks(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wb.json")

	link := filepath.Join(dir, "mcp.json")
	if err := os.Symlink(filepath.Join("dotfiles", "cursor", "mcp.json"), link); err != nil {
		if runtime.GOOS == "windows" {
			t.Skip("this Windows account may not make symbolic links:", err)
		}
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, "", "install", "cursor", "--file", link, "--config", cfg); code != 0 {
		t.Fatalf("a dangling link: exit %d: %s", code, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the dangling link was replaced: %v, %v", fi, err)
	}
	target := filepath.Join(dir, "dotfiles", "cursor", "mcp.json")
	if got, err := os.ReadFile(target); err != nil || !strings.Contains(string(got), `"workbench"`) {
		t.Errorf("the link's target: %v\n%s", err, got)
	}

	file, other := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if err := os.WriteFile(file, []byte("{\"mcpServers\": {}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(file, other); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "", "install", "cursor", "--file", file, "--config", cfg)
	if code != 0 {
		t.Fatalf("a hard-linked file: exit %d: %s", code, stderr)
	}
	a, _ := os.Stat(file)
	b, _ := os.Stat(other)
	if got, _ := os.ReadFile(other); !os.SameFile(a, b) || !strings.Contains(string(got), `"workbench"`) {
		t.Errorf("the other hard link no longer names the file written (same file: %v):\n%s", os.SameFile(a, b), got)
	}
	if runtime.GOOS != "windows" && !strings.Contains(stdout, "other hard links: it was written in place") {
		t.Errorf("install did not say it wrote in place: %s", stdout)
	}
	if backup, _ := os.ReadFile(file + ".bak"); string(backup) != "{\"mcpServers\": {}}\n" {
		t.Errorf("the backup: %q", backup)
	}

	ro := filepath.Join(dir, "ro.json")
	if err := os.WriteFile(ro, []byte("{}\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd(t, "", "install", "cursor", "--file", ro, "--config", cfg)
	got, _ := os.ReadFile(ro)
	if _, err := os.Stat(ro + ".bak"); code != 1 || string(got) != "{}\n" || err == nil || !strings.Contains(stderr, ro+" is read-only") || !strings.Contains(stderr, "chmod u+w") {
		t.Errorf("a read-only file: exit %d, backup made %v, stderr %q, file %q", code, err == nil, stderr, got)
	}
}

// TestInstallShortHostNames: what people type for a host (gemini,
// copilot, claude) gets one line naming the host meant, not the whole
// usage; a name that is no host's start gets one line naming them all.
func TestInstallShortHostNames(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for given, want := range map[string]string{
		"gemini":  `unknown host "gemini": did you mean gemini-cli?`,
		"copilot": `unknown host "copilot": did you mean copilot-cli?`,
		"claude":  `unknown host "claude": did you mean claude-code or claude-desktop?`,
		"emacs":   `unknown host "emacs": want one of claude-code, claude-desktop, cline, codex, copilot-cli, cursor, gemini-cli, opencode, vscode, windsurf, zed`,
	} {
		code, stdout, stderr := runCmd(t, "", "install", given)
		if code != 2 || stdout != "" || stderr != "mcp-workbench: install: "+want+"\n" {
			t.Errorf("install %s: exit %d, stdout %q, stderr %q; want 2 and the one line %q", given, code, stdout, stderr, want)
		}
	}
}

// TestInstallCodexRefusesDeepTOML: install codex checks a config.toml's
// nesting before the TOML decoder recurses into it, as import does (a
// few megabytes of "[[[[" overflow the decoder's stack and end the
// process); the refusal names the line and the file is left as it was.
func TestInstallCodexRefusesDeepTOML(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.toml")
	const depth = 1500
	orig := "model = \"m\"\n\nx = " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"
	if err := os.WriteFile(file, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "wb.json")
	if err := os.WriteFile(cfg, []byte(`{"toolboxes": {"mem": {"description": "memory", "mcpServers": {"memory": {"command": "npx"}}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "", "install", "codex", "--file", file, "--config", cfg)
	if code == 0 || !strings.Contains(stderr, "line 3") || !strings.Contains(stderr, "nested deeper than 1000 levels") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if after, _ := os.ReadFile(file); string(after) != orig {
		t.Errorf("the file was changed")
	}
}
