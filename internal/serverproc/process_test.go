package serverproc

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingRelativeCommandSaysWhereItLooked: a relative command that
// does not exist is reported with the path it was looked for at.
func TestMissingRelativeCommandSaysWhereItLooked(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	msg := describeStartErr("./wd/fake.py", fs.ErrNotExist).Error()
	if want := filepath.Join(wd, "wd", "fake.py"); !strings.Contains(msg, "looked for "+want) || !strings.Contains(msg, "absolute path") {
		t.Errorf("relative command: %s", msg)
	}
	if msg := describeStartErr(filepath.Join(wd, "nope"), fs.ErrNotExist).Error(); strings.Contains(msg, "looked for") {
		t.Errorf("absolute command: %s", msg)
	}
}
