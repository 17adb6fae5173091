package serverproc

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/proctree"
)

// A host started from the Dock, Finder, the Start menu or a desktop
// launcher passes its servers the short PATH of the session manager
// (launchd's /usr/bin:/bin:/usr/sbin:/sbin on macOS), not the one the
// user's terminal has: npx, uvx or docker installed by Homebrew, nvm,
// Volta, uv or npm are then "not found" though they run in the terminal.
// So when a command named without a folder is not found in PATH, the
// workbench looks where the user's login shell would (the PATH it sets up,
// read once per process) and in the folders the usual installers use, and
// gives the server a PATH with the folder where it was found first, so
// that what it starts in turn (a "#!/usr/bin/env node" script, npx's own
// children) is found too. A command found in PATH is never looked up
// anywhere else. A PATH in the server's "env" is looked in first: the
// server runs with it, but the command itself is looked up before.

// Found says where a command that was not in PATH was found.
type Found struct {
	Dir  string // the folder, put first in the server's PATH
	From string // the server's "env" PATH, the login shell's, or the usual folders
}

// findElsewhere looks for the program name, which the workbench's PATH
// does not have, in the PATH the server's "env" sets (serverPath, may be
// ""), the login shell's PATH and then the usual folders, skipping folders
// of the workbench's PATH. It returns the program's path and where it was
// found, or "".
func findElsewhere(name, serverPath string) (string, Found) {
	inPath := map[string]bool{}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		inPath[d] = true
	}
	home, _ := os.UserHomeDir()
	sources := []struct {
		from string
		dirs func() []string
	}{
		{`the PATH of the server's "env"`, func() []string { return filepath.SplitList(serverPath) }},
		{"the login shell's PATH", loginShellPath},
		{"the usual folders", func() []string { return usualFolders(runtime.GOOS, home, os.Getenv) }},
	}
	for _, s := range sources {
		for _, dir := range s.dirs() {
			if !filepath.IsAbs(dir) || inPath[dir] {
				continue
			}
			// LookPath of a path checks that it is an executable file
			// (and, on Windows, tries PATHEXT's extensions).
			if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
				return p, Found{Dir: dir, From: s.from}
			}
		}
	}
	return "", Found{}
}

// usualFolders lists where the usual installers put programs on goos,
// for a user whose home folder is home: Homebrew, npm's and Node's,
// Volta's, nvm's newest Node, uv's and pipx's ~/.local/bin, cargo's,
// bun's, Docker Desktop's.
func usualFolders(goos, home string, getenv func(string) string) []string {
	if goos == "windows" {
		var dirs []string
		add := func(base string, elem ...string) {
			if base != "" {
				dirs = append(dirs, strings.Join(append([]string{strings.TrimRight(base, `\/`)}, elem...), `\`))
			}
		}
		add(getenv("APPDATA"), "npm")
		add(getenv("ProgramFiles"), "nodejs")
		add(getenv("NVM_SYMLINK"))
		add(getenv("LOCALAPPDATA"), "Volta", "bin")
		add(getenv("ProgramFiles"), "Volta")
		add(getenv("LOCALAPPDATA"), "Microsoft", "WinGet", "Links")
		add(getenv("LOCALAPPDATA"), "Programs", "nodejs")
		add(getenv("ProgramFiles"), "Docker", "Docker", "resources", "bin")
		add(home, ".local", "bin")
		add(home, ".cargo", "bin")
		add(home, ".bun", "bin")
		return dirs
	}
	dirs := []string{"/opt/homebrew/bin", "/usr/local/bin"}
	if home == "" {
		return dirs
	}
	dirs = append(dirs, filepath.Join(home, ".volta", "bin"), filepath.Join(home, ".local", "bin"), filepath.Join(home, ".cargo", "bin"))
	nvm := getenv("NVM_DIR")
	if nvm == "" {
		nvm = filepath.Join(home, ".nvm")
	}
	if dir := newestNode(filepath.Join(nvm, "versions", "node")); dir != "" {
		dirs = append(dirs, dir)
	}
	dirs = append(dirs, filepath.Join(home, ".bun", "bin"), "/snap/bin", "/home/linuxbrew/.linuxbrew/bin")
	return dirs
}

// newestNode returns the bin folder of the newest Node version nvm
// installed in versions (v22.11.0 is newer than v9.1.0), or "".
func newestNode(versions string) string {
	entries, err := os.ReadDir(versions)
	if err != nil {
		return ""
	}
	best, bestV := "", []int(nil)
	for _, e := range entries {
		v, ok := parseVersion(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		if bestV == nil || slices.Compare(v, bestV) > 0 {
			best, bestV = e.Name(), v
		}
	}
	if best == "" {
		return ""
	}
	return filepath.Join(versions, best, "bin")
}

// parseVersion reads "v22.11.0" as [22 11 0].
func parseVersion(s string) ([]int, bool) {
	s, ok := strings.CutPrefix(s, "v")
	if !ok {
		return nil, false
	}
	var v []int
	for f := range strings.SplitSeq(s, ".") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, false
		}
		v = append(v, n)
	}
	return v, len(v) > 0
}

// loginShellBound bounds the login shell's start: a profile that waits on
// something (a prompt, the network) is killed at the bound, and the usual
// folders are looked in all the same.
var loginShellBound = 5 * time.Second

// loginShellPath is the PATH the user's login shell sets up, read once
// per process (see [readLoginShellPath]).
var loginShellPath = sync.OnceValue(readLoginShellPath)

// pathMarker brackets the PATH in the login shell's output, so that what
// its profile prints (a banner, a fortune, nvm's notices) is ignored.
const pathMarker = "_MCP_WORKBENCH_PATH_"

// readLoginShellPath runs $SHELL as a login shell (-l -c) that prints
// its PATH between markers, with no terminal and stdin at its end, and
// kills it (and whatever it started) at loginShellBound. Not on Windows,
// where PATH comes from the registry, not from a shell's profile.
func readLoginShellPath() []string {
	shell := os.Getenv("SHELL")
	if runtime.GOOS == "windows" || !filepath.IsAbs(shell) {
		return nil
	}
	// printf and "$PATH" mean the same in sh, bash, zsh, ksh and fish
	// (fish joins a quoted path variable with colons).
	cmd := exec.Command(shell, "-l", "-c", `printf '`+pathMarker+`%s`+pathMarker+`' "$PATH"`)
	var out bytes.Buffer
	cmd.Stdout = &limitedBuffer{buf: &out, max: 1 << 20}
	cmd.Env = proctree.Untagged(os.Environ())
	cmd.WaitDelay = time.Second // a descendant that keeps stdout open does not hold Wait
	g, err := proctree.Start(cmd)
	if err != nil {
		return nil
	}
	done := make(chan struct{})
	go func() {
		_ = g.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(loginShellBound):
		g.Kill()
		<-done
	}
	g.Kill() // what the profile left running in the background
	_, rest, ok := bytes.Cut(out.Bytes(), []byte(pathMarker))
	if !ok {
		return nil
	}
	path, _, ok := bytes.Cut(rest, []byte(pathMarker))
	if !ok {
		return nil
	}
	return filepath.SplitList(string(path))
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// envPath returns the PATH that env sets (Path, on Windows), or "".
func envPath(env map[string]string) string {
	for k, v := range env {
		if k == "PATH" || (runtime.GOOS == "windows" && strings.EqualFold(k, "PATH")) {
			return v
		}
	}
	return ""
}

// withPathFirst returns env with dir at the front of its PATH (Path, on
// Windows, where names are not case-sensitive), or PATH=dir if it has
// none.
func withPathFirst(env []string, dir string) []string {
	out := slices.Clone(env)
	for i, kv := range out {
		name, val, _ := strings.Cut(kv, "=")
		if name == "PATH" || (runtime.GOOS == "windows" && strings.EqualFold(name, "PATH")) {
			if val == "" {
				out[i] = name + "=" + dir
			} else {
				out[i] = name + "=" + dir + string(filepath.ListSeparator) + val
			}
			return out
		}
	}
	return append(out, "PATH="+dir)
}
