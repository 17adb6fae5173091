package hostconfig

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// listingHome points the user's folders at an empty temporary home and
// the current folder at an empty project, which it returns.
func listingHome(t *testing.T) string {
	home, project := t.TempDir(), t.TempDir()
	for _, v := range []string{"HOME", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "XDG_CONFIG_HOME"} {
		t.Setenv(v, home)
	}
	t.Setenv("CODEX_HOME", "")
	t.Setenv("COPILOT_HOME", "")
	t.Chdir(project)
	return project
}

// ListFiles lists a project's host file in the current folder.
func TestListFiles(t *testing.T) {
	project := listingHome(t)
	if err := os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(`{"mcpServers": {"a": {"command": "x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := ListFiles(context.Background(), nil)
	if err != nil || !strings.Contains(out, ".mcp.json\n      1 server(s): a\n") {
		t.Errorf("%v\n%s", err, out)
	}
}

// ListFiles returns once its context ends, even while a read blocks (a
// signal ends import with no PATH: cmd/mcp-workbench's
// TestImportListingStopsOnSignal).
func TestListFilesStopsWhenTheContextEnds(t *testing.T) {
	listingHome(t)
	reading := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := true
	go func() {
		<-reading
		cancel()
	}()
	out, err := ListFiles(ctx, func(string) {
		if first {
			first = false
			close(reading)
			// A read that never ends: the listing reads nothing more,
			// so nothing after the test's home is restored.
			select {}
		}
	})
	if err == nil || err.Error() != "import: stopped while reading the host files" || out != "" {
		t.Errorf("%q, %v", out, err)
	}
}
