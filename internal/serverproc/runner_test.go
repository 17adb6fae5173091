package serverproc

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestPackageRunner(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		args []string
		want string
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-memory"}, "npx"},
		{`C:\Program Files\nodejs\npx.cmd`, []string{"-y", "x"}, "npx"},
		{"/usr/bin/npm", []string{"exec", "--yes", "x"}, "npm exec"},
		{"npm", []string{"x", "x"}, "npm exec"},
		{"npm", []string{"run", "start"}, ""},
		{"pnpm", []string{"dlx", "x"}, "pnpm dlx"},
		{"pnpx", []string{"x"}, "pnpx"},
		{"bunx", []string{"x"}, "bunx"},
		{"bun", []string{"x", "x"}, "bunx"},
		{"uvx", []string{"mcp-server-time"}, "uvx"},
		{"uv", []string{"tool", "run", "x"}, "uv run"},
		{"uv", []string{"--directory", "/x", "run", "server.py"}, ""}, // the first word after a flag's value is not told apart
		{"pipx", []string{"run", "x"}, "pipx run"},
		{"docker", []string{"run", "-i", "--rm", "image"}, "docker run"},
		{"podman", []string{"run", "-i", "image"}, "podman run"},
		{"docker", []string{"exec", "-i", "c", "x"}, ""},
		{"node", []string{"server.js"}, ""},
		{"/opt/npx-tools/server", nil, ""},
	} {
		if got := PackageRunner(c.cmd, c.args); got != c.want {
			t.Errorf("PackageRunner(%q, %q) = %q, want %q", c.cmd, c.args, got, c.want)
		}
	}
}

func TestNPXEntryIn(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /home/u/.npm/_npx/15b07286cbcc3329/node_modules/@modelcontextprotocol/sdk/dist/esm/types.js",
			"/home/u/.npm/_npx/15b07286cbcc3329"},
		{"- /tmp/x y/.npm/_npx/0123456789abcdef/node_modules/a/index.js", "/tmp/x y/.npm/_npx/0123456789abcdef"},
		{`npm error enoent ENOENT: no such file or directory, open 'C:\Users\u\AppData\Local\npm-cache\_npx\0123456789abcdef\node_modules\zod\package.json'`,
			`C:\Users\u\AppData\Local\npm-cache\_npx\0123456789abcdef`},
		{"at file:///home/u/.npm/_npx/0123456789abcdef/node_modules/x.js:1:1", "/home/u/.npm/_npx/0123456789abcdef"},
		{"/home/u/.npm/_npx/0123456789abcdef", "/home/u/.npm/_npx/0123456789abcdef"},
		{"/home/u/my_npx/0123456789abcdef/x", ""},          // not a folder named _npx
		{"/home/u/.npm/_npx/abc/x", ""},                    // too short for npx's hash
		{"/home/u/.npm/_npx/0123456789abcdefg/x", ""},      // not a hash
		{"/home/u/.npm/_npx/../../0123456789abcdef/x", ""}, // no climbing out
		{"Cannot find module 'zod'", ""},
	} {
		if got := npxEntryIn(c.line); got != c.want {
			t.Errorf("npxEntryIn(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}

func TestNPXScanNeedsBothSigns(t *testing.T) {
	var n npxScan
	n.line("npm warn exec The following package was not found and will be installed: x")
	n.line("at /home/u/.npm/_npx/0123456789abcdef/node_modules/x/index.js:3:1")
	if n.broken() != "" {
		t.Fatal("a path alone counts as a broken entry")
	}
	n.line("Error: Cannot find module 'zod'")
	if got := n.broken(); got != "/home/u/.npm/_npx/0123456789abcdef" {
		t.Fatalf("broken() = %q", got)
	}
}

func TestRemoveNPXEntryRemovesOnlyAnEntry(t *testing.T) {
	dir := t.TempDir()
	entry := filepath.Join(dir, "_npx", "0123456789abcdef")
	if err := os.MkdirAll(filepath.Join(entry, "node_modules", "a"), 0o700); err != nil {
		t.Fatal(err)
	}
	sibling := filepath.Join(dir, "_npx", "fedcba9876543210")
	if err := os.MkdirAll(filepath.Join(sibling, "node_modules"), 0o700); err != nil {
		t.Fatal(err)
	}
	notEntry := filepath.Join(dir, "other", "0123456789abcdef")
	if err := os.MkdirAll(filepath.Join(notEntry, "node_modules"), 0o700); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "_npx", "00000000aaaaaaaa")
	if err := os.MkdirAll(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	refused := []string{notEntry, empty, "_npx/0123456789abcdef", filepath.Join(dir, "_npx")}
	link := filepath.Join(dir, "_npx", "1111111111111111")
	if err := os.Symlink(notEntry, link); err == nil {
		refused = append(refused, link)
	} else if runtime.GOOS == "windows" {
		t.Logf("a link in the cache is not tried: Windows makes symbolic links only with a privilege or developer mode: %v", err)
	} else {
		t.Fatal(err)
	}
	for _, p := range refused {
		if err := RemoveNPXEntry(p); err == nil {
			t.Errorf("RemoveNPXEntry(%s) removed what is no npx cache entry", p)
		}
	}
	if err := RemoveNPXEntry(entry); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{entry: false, sibling: true, notEntry: true, empty: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", p, err == nil, want)
		}
	}
}
