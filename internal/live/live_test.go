package live

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "wb-live-test-")
	if err != nil {
		panic(err)
	}
	for _, v := range []string{"HOME", "USERPROFILE", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "LOCALAPPDATA", "APPDATA"} {
		os.Setenv(v, filepath.Join(home, v))
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// TestPublisherWritesOnChangeAndRemovesAtClose: a poke writes the state
// (0600) within the debounce; ReadStates returns it; a file of a process
// that is gone, and one that is not JSON, are not returned; Close removes
// the file.
func TestPublisherWritesOnChangeAndRemovesAtClose(t *testing.T) {
	status := "starting"
	p := NewPublisher("cfg.json", "v1", func() []Server {
		return []Server{{Toolbox: "tb", Server: "s", Status: status, Tools: 3}}
	})
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	// A state of a process that ended, and a damaged one of this process.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	dead, _ := json.Marshal(State{PID: cmd.Process.Pid, Config: "x"})
	deadPath := filepath.Join(dir, stateName(cmd.Process.Pid, 1))
	os.WriteFile(deadPath, dead, 0o600)
	os.WriteFile(filepath.Join(dir, stateName(os.Getpid(), 999)), []byte("{not json"), 0o600)

	p.Poke()
	var got []State
	for range 200 {
		got, err = ReadStates()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(got) != 1 || got[0].PID != os.Getpid() || len(got[0].Servers) != 1 || got[0].Servers[0].Status != "starting" || got[0].Command != "serve" {
		t.Fatalf("states: %+v", got)
	}
	if !filepath.IsAbs(got[0].Config) {
		t.Errorf("config %q is not absolute", got[0].Config)
	}
	if _, err := os.Stat(deadPath); !os.IsNotExist(err) {
		t.Errorf("the dead process's state file is still there: %v", err)
	}
	fi, err := os.Stat(p.path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	p.Close()
	if _, err := os.Stat(p.path); !os.IsNotExist(err) {
		t.Errorf("the state file is left after Close: %v", err)
	}
}

// TestActivityRecord: calls recorded are read back newest first, as
// written (the hand-written JSON decodes to the same call), with a line
// that is not a call and an over-long line skipped; the file is 0600.
func TestActivityRecord(t *testing.T) {
	base := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	calls := []Call{
		{Time: base, PID: os.Getpid(), Toolbox: "tb", Server: "s", Tool: "first \"quoted\"", Ms: 12, Outcome: "ok", Bytes: 100, ArgBytes: 2},
		{Time: base.Add(time.Second), PID: os.Getpid(), Toolbox: "tb", Server: "s", Tool: "second", Ms: 3, Outcome: "error", Bytes: 40, ArgBytes: 9, Checked: true, Permission: "allow: accepted, this call (user)", Host: "claude \"code\"", HostVersion: "2.1"},
	}
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	junk := "not json\n" + `{"tool":"` + strings.Repeat("x", maxLine) + `"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "activity-1.jsonl"), []byte(junk), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		Record(c)
	}
	var got []Call
	for range 200 {
		if got, err = ReadActivity(10); err != nil {
			t.Fatal(err)
		}
		if len(got) == len(calls) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(got) != 2 || !got[0].Time.Equal(calls[1].Time) || !got[1].Time.Equal(calls[0].Time) {
		t.Fatalf("read %+v", got)
	}
	got[0].Time, got[1].Time = calls[1].Time, calls[0].Time
	if got[0].Host != `claude "code" 2.1` {
		t.Errorf("host %q", got[0].Host)
	}
	got[0].Host, got[0].HostVersion = calls[1].Host, calls[1].HostVersion
	if got[0] != calls[1] || got[1] != calls[0] {
		t.Errorf("read back\n%+v\n%+v\nwant\n%+v\n%+v", got[0], got[1], calls[1], calls[0])
	}
	fi, err := os.Stat(filepath.Join(dir, activityName(os.Getpid())))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

// TestFlushLeavesTheFolderFree: once Flush returns, every call recorded
// before is in the record and the writer holds no file in the folder, so
// that it can be removed (a workbench closing, a test's home) and stays
// removed.
func TestFlushLeavesTheFolderFree(t *testing.T) {
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		Record(Call{Time: time.Now(), PID: os.Getpid(), Toolbox: "tb", Server: "s", Tool: "t" + strconv.Itoa(i), Outcome: "ok"})
	}
	Flush(time.Minute)
	got, err := ReadActivity(1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range got {
		if c.Toolbox == "tb" && strings.HasPrefix(c.Tool, "t") {
			n++
		}
	}
	if n < 50 {
		t.Errorf("after Flush the record holds %d of the 50 calls", n)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the folder came back after Flush and its removal: %v", err)
	}
}
