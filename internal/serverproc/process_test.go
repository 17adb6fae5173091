package serverproc

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestMissingRelativeCommandSaysWhereItLooked: a relative command that
// does not exist is reported with the path it was looked for at.
func TestMissingRelativeCommandSaysWhereItLooked(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	msg := describeStartErr("./wd/fake.py", "", fs.ErrNotExist).Error()
	if want := filepath.Join(wd, "wd", "fake.py"); !strings.Contains(msg, "looked for "+want) || !strings.Contains(msg, "absolute path") {
		t.Errorf("relative command: %s", msg)
	}
	// With a cwd, exec.Cmd takes a relative command from there.
	cwd := filepath.Join(t.TempDir(), "srv")
	msg = describeStartErr("./wd/fake.py", cwd, fs.ErrNotExist).Error()
	if want := filepath.Join(cwd, "wd", "fake.py"); !strings.Contains(msg, "looked for "+want+":") || !strings.Contains(msg, `server's "cwd"`) {
		t.Errorf("relative command with a cwd: %s", msg)
	}
	if msg := describeStartErr(filepath.Join(wd, "nope"), cwd, fs.ErrNotExist).Error(); strings.Contains(msg, "looked for") {
		t.Errorf("absolute command: %s", msg)
	}
}

// TestClip cuts at a character's start, so a log line stays UTF-8.
func TestClip(t *testing.T) {
	for in, want := range map[string]string{"short": "short", "abcdefgh": "abcde…", "abcdé!": "abcd…", "日本語": "日…"} {
		if got := Clip(in, 5); got != want || !utf8.ValidString(got) {
			t.Errorf("Clip(%q, 5) = %q, want %q", in, got, want)
		}
	}
}
