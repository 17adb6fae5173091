package pins

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

const formatVersion = 1

// maxFileSize bounds what Load reads.
const maxFileSize = 64 << 20

// Pin is what the store holds for one tool.
type Pin struct {
	Hash string          `json:"sha256"`
	Def  json.RawMessage `json:"def"`
	// Approved is set when the user approved the definition (tools
	// approve), rather than it being trusted on first sight: a flagged
	// tool that the user approved is no longer withheld by
	// blockFlaggedTools.
	Approved bool `json:"approved,omitempty"`
	// Whole is set on pins of the whole definition (every member but
	// _meta). A pin without it was made by an older workbench, of the
	// six [Fields] only: it matches a tool whose Fields are the same
	// (see [Pin.Matches]), and the next live list pins the whole
	// definition in its place ([Pin.Upgrade]).
	Whole bool `json:"whole,omitempty"`
}

// Matches reports whether d is the pinned definition.
func (p Pin) Matches(d Def) bool {
	return p.Hash == d.Hash || !p.Whole && p.Hash == d.Legacy
}

// Upgrade returns the pin of d that replaces p, an older workbench's pin
// that d matches (see [Pin.Whole]), and whether there is one to replace.
func (p Pin) Upgrade(d Def) (Pin, bool) {
	if p.Whole || !p.Matches(d) {
		return p, false
	}
	return Pin{Hash: d.Hash, Def: d.Canon, Approved: p.Approved, Whole: true}, true
}

// State says what Load found.
type State int

const (
	Missing State = iota // no file: the server was never seen
	OK
	Corrupt // a file that does not check out: nothing in it is trusted
)

// Store is a folder of pin files, one per server identity.
type Store struct{ dir string }

// DefaultDir returns os.UserConfigDir()/mcp-workbench/pins.
func DefaultDir() (string, error) { return userfile.ConfigDir("pins") }

// Open makes dir (0700) if needed and returns the store kept there.
func Open(dir string) (*Store, error) {
	if err := userfile.MakeDir(dir, "pin folder"); err != nil {
		return nil, err
	}
	return &Store{dir: dir}, nil
}

// Dir returns the store's folder.
func (s *Store) Dir() string { return s.dir }

// Path returns the file that holds key's pins.
func (s *Store) Path(key string) string { return filepath.Join(s.dir, key+".json") }

type file struct {
	Version int            `json:"version"`
	Key     string         `json:"key"`
	Tools   map[string]Pin `json:"tools"`
	// Servers are the servers that used the file, each as its
	// configuration file and "toolbox/server": when a server's identity
	// changes, its previous pins are found by them ([Store.Find]).
	Servers []string `json:"servers,omitempty"`
	// Sum is the SHA-256 of the tools' canonical encoding: a file edited
	// by hand, or damaged, does not check out.
	Sum string `json:"sum"`
}

func toolsSum(tools map[string]Pin) string {
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		p := tools[n]
		fmt.Fprintf(h, "%d:%s%d:%s%v%d:", len(n), n, len(p.Hash), p.Hash, p.Approved, len(p.Def))
		h.Write(p.Def)
		if p.Whole { // left out when unset: older files check out
			h.Write([]byte("whole"))
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Stamp identifies the file's current content without reading it.
func (s *Store) Stamp(key string) string {
	if stamp := userfile.Stamp(s.Path(key)); stamp != "" {
		return stamp
	}
	return "none"
}

// Load returns key's pins, and what it found. A corrupt file (bad JSON,
// another version or key, a sum or a hash that does not check out) gives
// Corrupt, the reason, and no pins: nothing in it is trusted.
func (s *Store) Load(key string) (map[string]Pin, State, string) {
	data, _, err := userfile.Read(s.Path(key), maxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Missing, ""
	}
	if err != nil {
		return nil, Corrupt, err.Error() // too large, or unreadable
	}
	var fl file
	if err := json.Unmarshal(data, &fl); err != nil {
		return nil, Corrupt, "not the workbench's JSON: " + err.Error()
	}
	switch {
	case fl.Version != formatVersion:
		return nil, Corrupt, fmt.Sprintf("format version %d, want %d", fl.Version, formatVersion)
	case fl.Key != key:
		return nil, Corrupt, "the file holds another server's pins"
	case fl.Tools == nil:
		return nil, Corrupt, "no tools"
	case fl.Sum != toolsSum(fl.Tools):
		return nil, Corrupt, "checksum mismatch (edited or damaged)"
	}
	for name, p := range fl.Tools {
		if p.Hash != hashOf(p.Def) {
			return nil, Corrupt, fmt.Sprintf("the pin of tool %q does not match its definition", name)
		}
	}
	return fl.Tools, OK, ""
}

// Update changes key's pins under the store's lock: change gets the pins
// as they are now (empty if there are none, or the file is corrupt) and
// says whether to write them. It returns whether it wrote.
func (s *Store) Update(key string, change func(map[string]Pin) bool) (bool, error) {
	return s.UpdateFor(key, "", change)
}

// UpdateFor is [Store.Update] by server (see [Store.Find]; "": none),
// which the file then names among its servers.
func (s *Store) UpdateFor(key, server string, change func(map[string]Pin) bool) (bool, error) {
	unlock, err := s.lock(key)
	if err != nil {
		return false, err
	}
	defer unlock()
	cur, _, _ := s.Load(key)
	if cur == nil {
		cur = map[string]Pin{}
	}
	if !change(cur) {
		return false, nil
	}
	servers := s.servers(key)
	if server != "" && !slices.Contains(servers, server) {
		servers = append(servers, server)
	}
	// Definitions are stored byte for byte as hashed: no HTML escaping
	// (which would also escape U+2028 and U+2029).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(file{Version: formatVersion, Key: key, Tools: cur, Servers: servers, Sum: toolsSum(cur)}); err != nil {
		return false, err
	}
	if err := userfile.WriteAtomic(s.Path(key), ".tmp-*", buf.Bytes()); err != nil {
		return false, fmt.Errorf("pins: %w", err)
	}
	return true, nil
}

// servers returns the servers key's file names.
func (s *Store) servers(key string) []string {
	data, _, err := userfile.Read(s.Path(key), maxFileSize)
	if err != nil {
		return nil
	}
	var fl struct {
		Servers []string `json:"servers"`
	}
	_ = json.Unmarshal(data, &fl)
	return fl.Servers
}

// Find returns the key of the pins that server used last (see
// [Store.UpdateFor]) other than not, if any file that checks out names it.
func (s *Store) Find(server, not string) (string, bool) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return "", false
	}
	var best string
	var newest time.Time
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || key == not || !e.Type().IsRegular() || !slices.Contains(s.servers(key), server) {
			continue
		}
		if _, st, _ := s.Load(key); st != OK {
			continue
		}
		if fi, err := e.Info(); err == nil && (best == "" || fi.ModTime().After(newest)) {
			best, newest = key, fi.ModTime()
		}
	}
	return best, best != ""
}

// lock takes key's lock file, waiting (a bounded while) for another
// process that holds it.
func (s *Store) lock(key string) (func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a holder writes one small file
	defer cancel()
	unlock, err := userfile.Lock(ctx, filepath.Join(s.dir, key+".lock"))
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, errors.New("pins: another workbench holds the pin file's lock")
	}
	if err != nil {
		return nil, fmt.Errorf("pins: locking: %w", err)
	}
	return unlock, nil
}
