package pins

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCanonical canonicalizes the captured tool lists of 16 real
// servers: the work an open does per tool it has not seen in this process.
func BenchmarkCanonical(b *testing.B) {
	files, _ := filepath.Glob("../../testdata/search/tools/*.json")
	var tools []json.RawMessage
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		var doc struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			b.Fatal(err)
		}
		tools = append(tools, doc.Tools...)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range tools {
			if _, err := Canonical(t); err != nil {
				b.Fatal(err)
			}
		}
	}
}
