//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envImportStall makes the listing of import with no PATH, in a
// re-executed workbench, write the file it names and then never finish
// reading: how a read that blocks (a named pipe, a hung network mount)
// looks to the command.
const envImportStall = "WB_TEST_IMPORT_STALL"

func init() {
	if marker := os.Getenv(envImportStall); marker != "" {
		importReadHook = func(string) {
			_ = os.WriteFile(marker, nil, 0o600)
			for {
				time.Sleep(time.Hour)
			}
		}
	}
}

// importProcess starts `mcp-workbench import` (this test binary as main)
// in the folder dir with HOME at home.
func importProcess(t *testing.T, dir, home string, env ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer, chan error) {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "import")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), envMain+"=1", "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "CODEX_HOME=", "COPILOT_HOME=")
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	return cmd, &stdout, &stderr, done
}

// waitExit waits for the process to end, failing the test if it has not
// after a bound far above any run's time (the machine may be busy).
func waitExit(t *testing.T, done chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		done <- err // for the clean-up
		return err
	case <-time.After(3 * time.Minute):
		t.Fatalf("%s: the process has not ended", what)
		return nil
	}
}

// TestImportListingRefusesSpecialFiles checks that import with no PATH,
// run in a cloned repository whose host files are a named pipe, a link to
// /dev/zero and a folder, and whose VS Code envFile names a named pipe
// and /dev/zero, ends, naming each file that is not read and why, instead
// of blocking for good or reading until memory runs out. Importing the
// VS Code file names its envFiles.
func TestImportListingRefusesSpecialFiles(t *testing.T) {
	home, repo := t.TempDir(), t.TempDir()
	fifo := filepath.Join(repo, "secrets.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".vscode", ".codex", ".gemini/settings.json"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	vscode := filepath.Join(repo, ".vscode", "mcp.json")
	if err := os.WriteFile(vscode, []byte(`{"servers": {
  "a": {"command": "a-server", "envFile": "`+fifo+`"},
  "b": {"command": "b-server", "envFile": "/dev/zero"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(repo, ".codex", "config.toml"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(repo, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	// A project's file is read up to a megabyte: this one would take
	// gigabytes once parsed.
	huge := `{"mcp": {"a": {"type": "local", "command": ["x"]}}, "x": [` + strings.Repeat("1,", 1<<20) + `1]}`
	if err := os.WriteFile(filepath.Join(repo, "opencode.json"), []byte(huge), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stdout, stderr, done := importProcess(t, repo, home)
	if err := waitExit(t, done, "import with no PATH"); err != nil {
		t.Fatalf("%v\nstderr: %s", err, stderr)
	}
	for _, want := range []string{
		".mcp.json is a device, not a regular file: not read",
		filepath.Join(".codex", "config.toml") + " is a named pipe (FIFO), not a regular file: not read",
		filepath.Join(".gemini", "settings.json") + " is a folder, not a regular file: not read",
		filepath.Join(".vscode", "mcp.json") + "\n      2 server(s): a, b",
		"opencode.json is larger than 1 MiB: not read",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}

	// Given as PATH, a named pipe is refused too.
	code, _, errOut := runImportCmd(t, fifo, "--out", filepath.Join(t.TempDir(), "wb.json"))
	if want := "cannot read the host configuration: " + fifo + " is a named pipe (FIFO), not a regular file: not read"; code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("import FIFO: exit %d, stderr lacks %q:\n%s", code, want, errOut)
	}

	// Importing the VS Code file names each envFile that is not read.
	t.Chdir(repo)
	code, _, errOut = runImportCmd(t, vscode, "--out", filepath.Join(t.TempDir(), "wb.json"))
	for _, want := range []string{fifo + " (it is a named pipe (FIFO), not a regular file: not read)", "/dev/zero (it is a device, not a regular file: not read)"} {
		if code != 0 || !strings.Contains(errOut, want) {
			t.Errorf("exit %d, stderr lacks %q:\n%s", code, want, errOut)
		}
	}
}

// TestImportListingStopsOnSignal checks that SIGTERM and SIGINT end
// import with no PATH while a file is being read (the workbench catches
// both signals for its clean-up; the listing must heed them too).
func TestImportListingStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			home, repo := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(repo, ".mcp.json"), []byte(`{"mcpServers": {"a": {"command": "x"}}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(t.TempDir(), "reading")
			cmd, _, stderr, done := importProcess(t, repo, home, envImportStall+"="+marker)
			for i := 0; ; i++ {
				if _, err := os.Stat(marker); err == nil {
					break
				}
				select {
				case err := <-done:
					t.Fatalf("ended before reading: %v\n%s", err, stderr)
				default:
				}
				if i == 3000 {
					t.Fatal("the listing never started reading")
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := waitExit(t, done, "import after "+sig.String())
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "stopped while reading the host files") {
				t.Errorf("%v, want exit status 1 and a message\nstderr: %s", err, stderr)
			}
		})
	}
}
