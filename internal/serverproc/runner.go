package serverproc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Package runners: commands that install a package on first use, then
// run it (npx, uvx, docker run, …). Their first start is an install, which
// takes as long as the network and the machine take; a stop in the middle
// of it can leave the runner's cache broken (npx: a half-filled
// _npx/<hash> folder that every later start trips on).

// PackageRunner names the package runner that cfg's command is ("npx",
// "npm exec", "pnpm dlx", "bunx", "uvx", "uv run", "pipx run",
// "docker run"), or returns "" for any other command.
func PackageRunner(command string, args []string) string {
	base := strings.ToLower(command[strings.LastIndexAny(command, `/\`)+1:])
	for _, ext := range []string{".cmd", ".exe", ".bat", ".ps1"} {
		base = strings.TrimSuffix(base, ext)
	}
	sub := ""
	for i, a := range args { // the first word that is not a flag
		if !strings.HasPrefix(a, "-") {
			sub = a
			if base == "uv" && a == "tool" && i+1 < len(args) {
				sub += " " + args[i+1]
			}
			break
		}
	}
	switch {
	case base == "npx", base == "pnpx", base == "bunx", base == "uvx":
		return base
	case base == "npm" && (sub == "exec" || sub == "x"):
		return "npm exec"
	case base == "pnpm" && sub == "dlx":
		return "pnpm dlx"
	case base == "bun" && sub == "x":
		return "bunx"
	case base == "uv" && (sub == "run" || sub == "tool run"):
		return "uv run"
	case base == "pipx" && sub == "run":
		return "pipx run"
	case (base == "docker" || base == "podman") && sub == "run":
		return base + " run"
	}
	return ""
}

// usesNPXCache reports whether runner keeps its packages in npm's
// _npx/<hash> folders.
func usesNPXCache(runner string) bool { return runner == "npx" || runner == "npm exec" }

// npxScan watches a server's stderr for the signs of a broken npx cache
// entry: a module or package not found, and a path inside _npx/<hash>.
// Node names the missing module on one line and the file that wanted it
// on that line (ES modules) or a few lines below (CommonJS), past the last
// lines an error keeps.
type npxScan struct {
	entry    string // the first _npx/<hash> folder named
	notFound bool
}

func (n *npxScan) line(s string) {
	if n.entry == "" {
		n.entry = npxEntryIn(s)
	}
	if !n.notFound {
		l := strings.ToLower(s)
		n.notFound = strings.Contains(l, "err_module_not_found") || strings.Contains(l, "cannot find module") ||
			strings.Contains(l, "cannot find package") || strings.Contains(l, "enoent") || strings.Contains(l, "enotdir")
	}
}

// broken returns the cache entry the server's stderr says is broken, or "".
func (n *npxScan) broken() string {
	if n.notFound {
		return n.entry
	}
	return ""
}

// npxEntryIn returns the _npx/<hash> folder a path in line lies in, or "".
func npxEntryIn(line string) string {
	for from := 0; ; {
		i := strings.Index(line[from:], "_npx")
		if i < 0 {
			return ""
		}
		i += from
		from = i + len("_npx")
		if from >= len(line) || (line[from] != '/' && line[from] != '\\') || (i > 0 && line[i-1] != '/' && line[i-1] != '\\') {
			continue
		}
		end := from + 1
		for end < len(line) && isHex(line[end]) {
			end++
		}
		if n := end - from - 1; n < 8 || n > 64 || (end < len(line) && line[end] != '/' && line[end] != '\\' && !strings.ContainsRune(`'"`+"` ,:)", rune(line[end]))) {
			continue
		}
		// The path starts after a quote or a parenthesis, or at a word
		// that starts an absolute path: folders may hold spaces
		// ("C:\Users\Jo Doe\…"), so each such word is a candidate, the
		// first that is a folder wins.
		start := i
		for start > 0 && !strings.ContainsRune("'\"`(", rune(line[start-1])) {
			start--
		}
		var first string
		for j := start; j < i; j++ {
			if j > start && line[j-1] != ' ' && line[j-1] != '\t' {
				continue
			}
			p := strings.TrimPrefix(line[j:end], "file://")
			if len(p) > 3 && p[0] == '/' && p[2] == ':' { // file:///C:/…
				p = p[1:]
			}
			if !filepath.IsAbs(p) && !(len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')) && p[0] != '/' {
				continue
			}
			if first == "" {
				first = p
			}
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				return p
			}
		}
		if first != "" {
			return first
		}
		return line[start:end]
	}
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// RemoveNPXEntry removes one of npx's cache entries, dir, so that the
// next start installs its package again. It removes nothing that is not
// such an entry: an absolute path to a real folder (no link) named by a
// hash in a folder named _npx, holding npx's package.json or node_modules.
func RemoveNPXEntry(dir string) error {
	dir = filepath.Clean(dir)
	name := filepath.Base(dir)
	if !filepath.IsAbs(dir) || filepath.Base(filepath.Dir(dir)) != "_npx" || len(name) < 8 || len(name) > 64 || strings.IndexFunc(name, func(r rune) bool { return !isHex(byte(r)) || r > 0x7f }) >= 0 {
		return fmt.Errorf("%s is not a cache entry of npx", dir)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	_, errPkg := os.Lstat(filepath.Join(dir, "package.json"))
	_, errMods := os.Lstat(filepath.Join(dir, "node_modules"))
	if errPkg != nil && errMods != nil {
		return errors.New(dir + " holds neither package.json nor node_modules: not a cache entry of npx")
	}
	return os.RemoveAll(dir)
}
