package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// Compiling the configuration schema is most of the work a start of the
// workbench does itself (the schema is checked against its meta-schema
// as it compiles), and a host starts the workbench with the same file
// again and again. So a document that passed the check is remembered by
// a digest of what was checked (the schema, the validator's version and
// the expanded document): the next start with the same document skips
// compiling the schema. Only passes are remembered: a document with a
// problem is checked, and its problems reported, every time.

// maxChecks is how many passed documents the file remembers, the newest
// first: a user's few configurations and their latest edits.
const maxChecks = 32

// checksFile is the file of remembered passes, one hex digest a line; it
// is a cache: lost or damaged, the schema is compiled again.
type checksFile struct {
	mu     sync.Mutex
	path   string   // "" when off
	loaded bool     // digests read from path
	digest []string // newest first
}

// checks is the process's: off until [RememberChecks].
var checks = &checksFile{}

// schemaChecks counts the documents validated against the compiled schema.
var schemaChecks atomic.Int64

// RememberChecks keeps the digests of documents that passed the schema
// check in dir/config-checks (dir is made private if need be), so that
// other starts skip the compile. dir "" turns it off.
func RememberChecks(dir string) {
	checks.mu.Lock()
	defer checks.mu.Unlock()
	checks.path, checks.loaded, checks.digest = "", false, nil
	if dir != "" {
		checks.path = filepath.Join(dir, "config-checks")
	}
}

// DefaultChecksDir is the folder [RememberChecks] takes by default: the
// workbench's in the user's cache folder.
func DefaultChecksDir() (string, error) { return userfile.CacheDir("") }

// checkDigest is the hex SHA-256 of what a check of inst depends on. inst
// is marshalled as encoding/json does a map: keys sorted, so one document
// has one digest. It may hold secrets (expanded ${VAR}s); only the digest
// is kept.
func checkDigest(inst any) string {
	h := sha256.New()
	h.Write([]byte("mcp-workbench config check 1\x00"))
	h.Write([]byte(validatorVersion()))
	h.Write([]byte{0})
	h.Write(Schema)
	h.Write([]byte{0})
	if err := json.NewEncoder(h).Encode(inst); err != nil {
		return "" // cannot happen for decoded JSON; "" is never remembered
	}
	return hex.EncodeToString(h.Sum(nil))
}

// validatorVersion is the version of the JSON Schema module this binary
// is built with (another version may judge a document otherwise).
var validatorVersion = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/santhosh-tekuri/jsonschema/v6" {
				if m.Replace != nil {
					m = m.Replace
				}
				return m.Path + "@" + m.Version + " " + m.Sum
			}
		}
	}
	return "unknown"
})

// known reports whether digest passed before.
func (c *checksFile) known(digest string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.path == "" || digest == "" {
		return false
	}
	c.load()
	for _, d := range c.digest {
		if d == digest {
			return true
		}
	}
	return false
}

// add remembers digest, the newest, writing the file again. A file that
// cannot be written is left as it is: the next start compiles.
func (c *checksFile) add(digest string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.path == "" || digest == "" {
		return
	}
	c.load()
	kept := []string{digest}
	for _, d := range c.digest {
		if d != digest && len(kept) < maxChecks {
			kept = append(kept, d)
		}
	}
	c.digest = kept
	dir := filepath.Dir(c.path)
	if err := userfile.MakeDir(dir, "cache folder"); err != nil {
		return
	}
	_ = userfile.WriteAtomic(c.path, ".config-checks-*", []byte(strings.Join(kept, "\n")+"\n"))
}

// load reads the file once; c.mu is held. Lines that are not digests are
// dropped (a file damaged or of another version).
func (c *checksFile) load() {
	if c.loaded {
		return
	}
	c.loaded = true
	data, _, err := userfile.Read(c.path, 64<<10)
	if err != nil {
		return // missing, too large or unreadable: nothing remembered
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if isDigest(line) && len(c.digest) < maxChecks {
			c.digest = append(c.digest, string(line))
		}
	}
}

func isDigest(b []byte) bool {
	if len(b) != 2*sha256.Size {
		return false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
