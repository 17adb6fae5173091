package permissions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestApprovalsRecordShared: the used nonces are kept in a 0600 file
// beside the key, so that of several checkers (processes) racing with one
// approval exactly one takes it; a record that is not the workbench's is
// not trusted: approvals made before it was found so do not count, later
// ones do.
func TestApprovalsRecordShared(t *testing.T) {
	keyPath := filepath.Join(t.TempDir(), "mcp-workbench", "hook.key")
	now := time.Now()
	args := json.RawMessage(`{"id":1}`)
	token, err := SignApproval(keyPath, "dev", "a", "t", args, now)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	took := 0
	for range 8 {
		wg.Go(func() {
			if ok, _ := NewApprovals(keyPath).Take(token, "dev", "a", "t", args, now); ok {
				mu.Lock()
				took++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if took != 1 {
		t.Errorf("the approval was taken %d times, want once", took)
	}
	used := UsedPath(keyPath)
	if fi, err := os.Stat(used); err != nil {
		t.Fatalf("the record: %v", err)
	} else if runtime.GOOS == "windows" {
		t.Log("the record's mode is not checked: Windows has no file modes (ACLs decide)")
	} else if fi.Mode().Perm() != 0o600 {
		t.Fatalf("the record has mode %v; want a 0600 file", fi.Mode().Perm())
	}

	earlier, _ := SignApproval(keyPath, "dev", "a", "t", args, now)
	if err := os.WriteFile(used, []byte(`{"used": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, why := NewApprovals(keyPath).Take(earlier, "dev", "a", "t", args, now.Add(time.Second)); ok || why == "" {
		t.Errorf("an approval made before the record was lost: %v %q; want it not to count", ok, why)
	}
	later, _ := SignApproval(keyPath, "dev", "a", "t", args, now.Add(2*time.Second))
	if ok, why := NewApprovals(keyPath).Take(later, "dev", "a", "t", args, now.Add(2*time.Second)); !ok {
		t.Errorf("an approval made after: %s", why)
	}
	if ok, _ := NewApprovals(keyPath).Take(later, "dev", "a", "t", args, now.Add(3*time.Second)); ok {
		t.Error("taken twice after the record was rewritten")
	}
}
