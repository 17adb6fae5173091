package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary, re-executed with DEMO_PRINT_FOLDERS=1,
// print the folders a process of the environment it was given writes its
// configuration and cache to: the folders the workbench keeps its pins,
// logins and tool catalog in (internal/userfile).
func TestMain(m *testing.M) {
	if os.Getenv("DEMO_PRINT_FOLDERS") == "1" {
		config, err1 := os.UserConfigDir()
		cache, err2 := os.UserCacheDir()
		home, err3 := os.UserHomeDir()
		if err := errors.Join(err1, err2, err3); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		_ = json.NewEncoder(os.Stdout).Encode([]string{config, cache, home})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// make demo's workbench writes its pins and tool catalog in the demo's
// temporary folder, never in the user's own configuration and cache
// folders; npm keeps the user's cache and settings.
func TestDemoLeavesTheUsersFoldersAlone(t *testing.T) {
	user := t.TempDir() // the user's home, as the demo finds it
	t.Setenv("HOME", user)
	t.Setenv("USERPROFILE", user)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(user, ".config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(user, ".cache"))
	t.Setenv("APPDATA", filepath.Join(user, "AppData", "Roaming"))
	t.Setenv("LOCALAPPDATA", filepath.Join(user, "AppData", "Local"))
	tmp := t.TempDir()
	env, err := isolate(os.Environ(), tmp, filepath.Join(user, ".npm"))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(env, "DEMO_PRINT_FOLDERS=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the workbench's environment: %v", err)
	}
	var folders []string
	if err := json.Unmarshal(out, &folders); err != nil || len(folders) != 3 {
		t.Fatalf("%q: %v", out, err)
	}
	for i, what := range []string{"configuration folder (pins, logins)", "cache folder (tool catalog)", "home"} {
		if rel, err := filepath.Rel(tmp, folders[i]); err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("the workbench's %s is %s, outside the demo's folder %s", what, folders[i], tmp)
		}
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := vars[k]; dup {
			t.Errorf("%s is set twice", k)
		}
		vars[k] = v
	}
	if vars["npm_config_cache"] != filepath.Join(user, ".npm") || vars["npm_config_userconfig"] != filepath.Join(user, ".npmrc") {
		t.Errorf("npm's cache %q and settings %q are not the user's", vars["npm_config_cache"], vars["npm_config_userconfig"])
	}
	if vars["TMPDIR"] != tmp {
		t.Errorf("TMPDIR is %q, not the demo's folder", vars["TMPDIR"])
	}
}
