package hostconfig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
)

// ListFiles returns the listing of mcp-workbench import without a PATH:
// the host files on this machine (the user's, then the project's in the
// current folder) and the servers each holds, as text from the files
// (names, errors quoting them) for the caller to make visible. Each read
// is bounded and of regular files only ([ReadFile]), so none should
// block; still the files are read in a goroutine, and ListFiles returns
// an error as soon as ctx ends (SIGINT, SIGTERM), even while a file is
// being read. before, if not nil, is called before each file is read.
func ListFiles(ctx context.Context, before func(path string)) (string, error) {
	done := make(chan string, 1)
	go func() {
		var b strings.Builder
		listFiles(&b, before)
		done <- b.String()
	}()
	select {
	case out := <-done:
		return out, nil
	case <-ctx.Done():
		return "", errors.New("import: stopped while reading the host files")
	}
}

// projectFiles are the hosts' files of a project, in the folder import
// runs in.
var projectFiles = []struct{ host, path string }{
	{"claude-code", ".mcp.json"},
	{"cursor", filepath.Join(".cursor", "mcp.json")},
	{"codex", filepath.Join(".codex", "config.toml")},
	{"vscode", filepath.Join(".vscode", "mcp.json")},
	{"gemini-cli", filepath.Join(".gemini", "settings.json")},
	{"opencode", "opencode.json"},
	{"opencode", "opencode.jsonc"},
	{"zed", filepath.Join(".zed", "settings.json")},
}

// maxProjectFile bounds a project's host file that import with no PATH
// reads from the current folder.
const maxProjectFile = 1 << 20

// listFiles writes the host files on this machine (the user's, then the
// project's in the current folder) and the servers each holds, for
// import without a PATH; before, if not nil, is called before each file
// is read.
func listFiles(stdout io.Writer, before func(path string)) {
	type file struct {
		host, path string
		limit      int64
	}
	var files []file
	for _, h := range Hosts {
		for _, f := range h.Files() {
			files = append(files, file{h.Name, f, MaxFileSize})
		}
	}
	// A project's files come with the repository: a megabyte is far more
	// than their servers take, and bounds what parsing them costs.
	for _, f := range projectFiles {
		files = append(files, file{f.host, f.path, maxProjectFile})
	}
	n := 0
	for _, f := range files {
		if before != nil {
			before(f.path)
		}
		// A cloned repository's files may be anything: a named pipe or a
		// device is refused, a file is read up to a bound.
		data, err := ReadFile(f.path, f.limit)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		h := HostNamed(f.host)
		if n == 0 {
			fmt.Fprintln(stdout, "Host files on this machine:")
		}
		n++
		what := ""
		if err != nil {
			what = err.Error()
		} else if read, err := ReadHost(f.path, data, f.host); err != nil {
			what = "no servers to import: " + err.Error()
		} else {
			names := make([]string, len(read.Servers))
			for i, s := range read.Servers {
				names[i] = s.Name
			}
			what = fmt.Sprintf("%d server(s): %s", len(names), strings.Join(names, ", "))
		}
		fmt.Fprintf(stdout, "  %s  %s\n      %s\n", h.Title, f.path, what)
	}
	if n == 0 {
		fmt.Fprintln(stdout, "No host file with MCP servers found on this machine (nor in this folder's .mcp.json, .vscode/mcp.json, …).")
		fmt.Fprintln(stdout, "Give the file to import: mcp-workbench import PATH [--from HOST]")
		return
	}
	fmt.Fprintln(stdout, "\nImport one with: mcp-workbench import PATH --out FILE")
}
