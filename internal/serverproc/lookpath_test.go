package serverproc

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// TestUsualFolders: Windows' folders come from its variables (one not set
// is left out); elsewhere Homebrew's, the home's installers' and nvm's
// newest Node (by version, not by name: v22.11.0 after v9.1.0 and v22.2.0).
func TestUsualFolders(t *testing.T) {
	env := map[string]string{"APPDATA": `C:\Users\me\AppData\Roaming`, "ProgramFiles": `C:\Program Files`, "LOCALAPPDATA": `C:\Users\me\AppData\Local\`}
	win := usualFolders("windows", `C:\Users\me`, func(k string) string { return env[k] })
	for _, want := range []string{`C:\Users\me\AppData\Roaming\npm`, `C:\Program Files\nodejs`, `C:\Users\me\AppData\Local\Volta\bin`, `C:\Users\me\.local\bin`} {
		if !slices.Contains(win, want) {
			t.Errorf("windows: %q lacks %q", win, want)
		}
	}
	if slices.Contains(win, "") || slices.Contains(win, `\`) {
		t.Errorf("windows: an unset variable made a folder: %q", win)
	}

	home := t.TempDir()
	for _, v := range []string{"v9.1.0", "v22.2.0", "v22.11.0", "system", "v23.x"} {
		if err := os.MkdirAll(filepath.Join(home, ".nvm", "versions", "node", v, "bin"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	got := usualFolders("darwin", home, func(string) string { return "" })
	for _, want := range []string{"/opt/homebrew/bin", "/usr/local/bin", filepath.Join(home, ".volta", "bin"), filepath.Join(home, ".local", "bin"), filepath.Join(home, ".cargo", "bin"), filepath.Join(home, ".bun", "bin"), filepath.Join(home, ".nvm", "versions", "node", "v22.11.0", "bin")} {
		if !slices.Contains(got, want) {
			t.Errorf("darwin: %q lacks %q", got, want)
		}
	}
	for _, d := range got {
		if filepath.Base(filepath.Dir(d)) != "v22.11.0" && filepath.Base(filepath.Dir(filepath.Dir(d))) == "node" {
			t.Errorf("darwin: not the newest Node: %s", d)
		}
	}
}

// TestWithPathFirst: the folder goes first in PATH, which is made if
// missing; the environment given is not changed.
func TestWithPathFirst(t *testing.T) {
	sep := string(filepath.ListSeparator)
	env := []string{"A=1", "PATH=/usr/bin" + sep + "/bin"}
	got := withPathFirst(env, "/opt/x")
	if want := []string{"A=1", "PATH=/opt/x" + sep + "/usr/bin" + sep + "/bin"}; !slices.Equal(got, want) {
		t.Errorf("withPathFirst = %q, want %q", got, want)
	}
	if env[1] != "PATH=/usr/bin"+sep+"/bin" {
		t.Errorf("the environment given changed: %q", env)
	}
	if got := withPathFirst([]string{"A=1"}, "/opt/x"); !slices.Equal(got, []string{"A=1", "PATH=/opt/x"}) {
		t.Errorf("without PATH: %q", got)
	}
	if runtime.GOOS == "windows" {
		if got := withPathFirst([]string{`Path=C:\Windows`}, `C:\n`); !slices.Equal(got, []string{`Path=C:\n;C:\Windows`}) {
			t.Errorf("Windows' Path: %q", got)
		}
	}
}
