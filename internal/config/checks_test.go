package config

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// rememberIn turns the remembered checks on in a new folder for the test.
func rememberIn(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cache", "mcp-workbench")
	RememberChecks(dir)
	t.Cleanup(func() { RememberChecks("") })
	return filepath.Join(dir, "config-checks")
}

const checkedConfig = `{"toolboxes": {"t": {"description": "d", "mcpServers": {
	"s": {"command": "node", "args": ["s.js"], "env": {"API_KEY": "${TOKEN}"}}}}}}`

// A document that passed the schema check once is not validated against
// the compiled schema again; what Parse returns is the same.
func TestRememberedCheckSkipsTheSchema(t *testing.T) {
	file := rememberIn(t)
	before := schemaChecks.Load()
	first, err := Parse([]byte(checkedConfig), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if n := schemaChecks.Load() - before; n != 1 {
		t.Fatalf("first parse validated %d documents, want 1", n)
	}
	second, err := Parse([]byte(checkedConfig), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if n := schemaChecks.Load() - before; n != 1 {
		t.Errorf("a document that passed was validated again (%d validations)", n)
	}
	if !reflect.DeepEqual(first, second) {
		t.Errorf("parse with the check remembered = %+v, want %+v", second, first)
	}

	// Another process (a new file's reader) knows it too.
	RememberChecks(filepath.Dir(file))
	if _, err := Parse([]byte(checkedConfig), testEnv); err != nil {
		t.Fatal(err)
	}
	if n := schemaChecks.Load() - before; n != 1 {
		t.Errorf("a new reader of the file validated again (%d validations)", n)
	}

	// The digest is of the expanded document: another value is checked.
	other := env(map[string]string{"TOKEN": "another"})
	if _, err := Parse([]byte(checkedConfig), other); err != nil {
		t.Fatal(err)
	}
	if n := schemaChecks.Load() - before; n != 2 {
		t.Errorf("a document with another value was not validated (%d validations, want 2)", n)
	}

	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Fields(string(data)); len(lines) != 2 {
		t.Errorf("the file holds %q, want two digests", data)
	}
	if strings.Contains(string(data), "s3cr3t") || strings.Contains(string(data), "another") {
		t.Errorf("the file holds a value of the configuration: %q", data)
	}
	if runtime.GOOS == "windows" {
		t.Skip("the file's and folder's modes are not checked: Windows has no file modes (ACLs decide)")
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode is %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if fi, err := os.Stat(filepath.Dir(file)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the folder's mode is %v (%v), want 0700", fi.Mode().Perm(), err)
	}
}

// A document with a problem is never remembered: it is checked, and its
// problem reported at its path, every time.
func TestFailedCheckIsNotRemembered(t *testing.T) {
	file := rememberIn(t)
	bad := `{"toolboxes": {"t": {"description": "d", "mcpServers": {"s": {"command": "node", "args": "s.js"}}}}}`
	for i := range 2 {
		before := schemaChecks.Load()
		_, err := Parse([]byte(bad), testEnv)
		if err == nil || !strings.Contains(err.Error(), "toolboxes.t.mcpServers.s.args") {
			t.Fatalf("parse %d: %v, want the problem at toolboxes.t.mcpServers.s.args", i+1, err)
		}
		if schemaChecks.Load() == before {
			t.Errorf("parse %d did not validate the document", i+1)
		}
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("a failed check made the file (%v)", err)
	}
}

// The file is a cache: lines that are not digests are dropped, it keeps
// the newest maxChecks, and a file that cannot be read only costs a
// validation.
func TestRememberedChecksFile(t *testing.T) {
	file := rememberIn(t)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := range maxChecks + 5 {
		lines = append(lines, strings.Repeat(string("0123456789abcdef"[i%16]), 63)+string("0123456789abcdef"[i/16]))
	}
	junk := "not a digest\n" + strings.Join(lines, "\n") + "\nABCDEF\n"
	if err := os.WriteFile(file, []byte(junk), 0o600); err != nil {
		t.Fatal(err)
	}
	before := schemaChecks.Load()
	if _, err := Parse([]byte(checkedConfig), testEnv); err != nil {
		t.Fatal(err)
	}
	if schemaChecks.Load() == before {
		t.Fatal("the document was not validated")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(data))
	if len(got) != maxChecks || got[1] != lines[0] || got[maxChecks-1] != lines[maxChecks-2] {
		t.Errorf("the file holds %d lines %q, want the new digest, then the first %d", len(got), got, maxChecks-1)
	}
	for _, l := range got {
		if !isDigest([]byte(l)) {
			t.Errorf("kept %q, not a digest", l)
		}
	}

	// A file in the way of the folder: nothing remembered, nothing broken.
	RememberChecks(filepath.Join(file, "sub"))
	if _, err := Parse([]byte(checkedConfig), testEnv); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse([]byte(checkedConfig), testEnv); err != nil {
		t.Fatal(err)
	}
}
