package httpauth

import (
	"strings"
	"testing"
)

func TestCheckName(t *testing.T) {
	for _, name := range []string{"alice", "A", "ci-bot_2.prod", "9lives", strings.Repeat("a", 64)} {
		if err := CheckName(name); err != nil {
			t.Errorf("CheckName(%q) = %v", name, err)
		}
	}
	for _, name := range []string{"", "-alice", ".hidden", "_x", "a b", "a/b", "é", "a\n", strings.Repeat("a", 65)} {
		if err := CheckName(name); err == nil || !strings.Contains(err.Error(), "use 1 to 64 letters") {
			t.Errorf("CheckName(%q) = %v, want the rule", name, err)
		}
	}
}
