// Package catalog keeps the tools each downstream server listed, so that
// open_toolbox can answer at once while the servers start in the background.
//
// The catalog is a folder (by default os.UserCacheDir()/mcp-workbench/catalog)
// holding one file per server definition. A file is named by [Key]: a
// SHA-256 of everything that defines the server, secrets included, so that
// a changed command, token or filter makes a new entry and no secret is
// ever written in clear. The file holds the tools exactly as the server
// sent them, when they were stored, and the server's caching hint if it
// gave one.
//
// Several workbench processes may share the folder. Files are written to a
// temporary file in the same folder, synced, then renamed over the entry,
// so a reader sees the old entry or the new one, never a torn one; the
// last writer wins. Files are read defensively: anything that does not
// check out (bad JSON, a truncated file, another format version, another
// key, a checksum that does not match) is a miss with a reason, never
// trusted, and the next [Catalog.Put] replaces it.
package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/frame"

	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// formatVersion is the version of the entry file format. A file of another
// version is a miss (and is replaced by the next Put).
const formatVersion = 1

// keyVersion is mixed into every key, so that a change to what the key
// covers makes new keys rather than reusing entries made under old rules.
const keyVersion = 1

// maxFileSize bounds what Get reads: a tool list is kilobytes to a few
// megabytes; a bigger file is not an entry the workbench wrote. (A
// variable, so that a test need not write 64 MiB.)
var maxFileSize int64 = 64 << 20

// tempPrefix starts the name of every temporary file; Open removes old
// ones that a crashed writer left behind.
const tempPrefix = ".tmp-"

// staleTemp is the age after which a temporary file is surely abandoned.
const staleTemp = time.Hour

// unusedEntry is how long an entry may go unused before Open removes it:
// a server whose definition changed, or that left the configuration,
// leaves its entry behind. An entry in use is touched by Get at most once
// a day (touchAfter), so it never ages.
const (
	unusedEntry = 30 * 24 * time.Hour
	touchAfter  = 24 * time.Hour
)

// Catalog is a folder of entries, one per server definition. Its methods
// are safe for concurrent use, and several processes may use one folder.
type Catalog struct {
	dir string
	// now tells the time; tests replace it to age entries.
	now func() time.Time
}

// Hint is a server's advice on caching its tools/list result, as the MCP
// protocol of 2026-07-28 gives it on list results (SEP-2549, the go-sdk's
// mcp.Cacheable).
type Hint struct {
	// TTLMs is how long, in milliseconds, the list may be used after it was
	// received. 0 means the list is stale at once: such an entry is never
	// a hit.
	TTLMs int `json:"ttlMs"`
	// CacheScope is "public" (the protocol's default) or "private" (only
	// the requesting user's client may cache it). The catalog is private to
	// the user (0600 files in the user's cache folder), so both allow it.
	CacheScope string `json:"cacheScope,omitempty"`
}

// Entry is what the catalog holds for one server definition.
type Entry struct {
	Key string
	// Tools are the tool objects of tools/list, each exactly as the
	// server sent it (every page, in order).
	Tools []json.RawMessage
	// Stored is when the tools were put in the catalog.
	Stored time.Time
	// Hint is the server's caching advice, nil if it gave none (servers on
	// protocols before 2026-07-28 never do): the entry is then good until
	// replaced.
	Hint *Hint
}

// Expires returns when the entry stops being usable, and false if it has
// no end (no hint).
func (e *Entry) Expires() (time.Time, bool) { return e.expires() }

// Stamp identifies what the catalog holds for key now, by its file's size
// and modification time, without reading it: Put replaces a file whole
// (a rename), so an entry read under the same stamp is still the one
// stored. It returns "" when there is no entry.
func (c *Catalog) Stamp(key string) string {
	if !validKey(key) {
		return ""
	}
	return userfile.Stamp(c.path(key))
}

// expires returns when the entry stops being usable, and false if it has
// no end (no hint).
func (e *Entry) expires() (time.Time, bool) {
	if e.Hint == nil {
		return time.Time{}, false
	}
	return e.Stored.Add(time.Duration(e.Hint.TTLMs) * time.Millisecond), true
}

// DefaultDir returns the catalog folder in the user's cache folder:
// os.UserCacheDir()/mcp-workbench/catalog ($XDG_CACHE_HOME or ~/.cache on
// Linux, ~/Library/Caches on macOS, %LocalAppData% on Windows).
func DefaultDir() (string, error) { return userfile.CacheDir("catalog") }

// Open makes the folder dir if needed (0700, parents too), makes it
// private if it is not — never through a symbolic link, and never a folder
// of another user's, both of which it refuses — removes temporary files that crashed writers left
// behind and entries unused for 30 days, and returns the catalog kept
// there.
func Open(dir string) (*Catalog, error) {
	if err := userfile.MakeDir(dir, "catalog folder"); err != nil {
		return nil, err
	}
	c := &Catalog{dir: dir, now: time.Now}
	c.removeStale()
	return c, nil
}

// Dir returns the catalog's folder.
func (c *Catalog) Dir() string { return c.dir }

func (c *Catalog) removeStale() {
	des, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	for _, de := range des {
		name := de.Name()
		maxAge := staleTemp
		switch {
		case strings.HasPrefix(name, tempPrefix):
		case strings.HasSuffix(name, ".json") && validKey(strings.TrimSuffix(name, ".json")):
			maxAge = unusedEntry
		default:
			continue // not the catalog's
		}
		if fi, err := de.Info(); err == nil && fi.Mode().IsRegular() && c.now().Sub(fi.ModTime()) > maxAge {
			os.Remove(filepath.Join(c.dir, name))
		}
	}
}

// keyDoc is the canonical encoding of a server definition that [Key]
// hashes. Maps become lists of pairs sorted by name, so that the encoding
// does not depend on map order.
type keyDoc struct {
	V           int         `json:"v"`
	Protocol    string      `json:"protocol"`
	Transport   string      `json:"transport"`
	Command     string      `json:"command"`
	Args        []string    `json:"args"`
	Env         [][2]string `json:"env"`
	Cwd         string      `json:"cwd"`
	URL         string      `json:"url"`
	Headers     [][2]string `json:"headers"`
	ToolFilters []string    `json:"toolFilters"`
	// AllTools tells a missing toolFilters (every tool) from an empty one
	// (no tool).
	AllTools bool `json:"allTools"`
	// OAuth is who logs in and with which scopes, which may change what a
	// remote server lists; absent without an oauth object, so that the
	// keys of other servers stay as they were.
	OAuth *oauthDoc `json:"oauth,omitempty"`
}

type oauthDoc struct {
	ClientID    string `json:"clientId"`
	Scopes      string `json:"scopes"`
	MetadataURL string `json:"authServerMetadataUrl"`
}

// Key returns the catalog key of a server definition: the hex SHA-256 of
// a canonical encoding of its transport, command, args, env, cwd, url,
// headers, toolFilters and oauth client and scopes, and of the protocol version the workbench asks
// the server for (a server may list other tools under another version).
// Anything else (name, timeouts, retries, disabled, catalog, idle timeout,
// sharing, the environment it starts from, a cwd that is only the host
// session's folder) does not change what the server lists, or not more
// than the folder the host starts a workbench in does, and is left out, so
// renaming a server or changing its timeouts keeps its entry.
//
// Env and header values are secrets: they go into the hash only. The hash
// is not salted; a secret that could be guessed from its hash could also
// be read from the configuration file by whoever can read the catalog.
func Key(s *config.Server, protocol string) string {
	doc := keyDoc{
		V:           keyVersion,
		Protocol:    protocol,
		Transport:   string(s.Transport),
		Command:     s.Command,
		Args:        nonNil(s.Args),
		Env:         pairs(s.Env),
		URL:         s.URL,
		Headers:     pairs(s.Headers),
		ToolFilters: nonNil(s.ToolFilters),
		AllTools:    s.ToolFilters == nil,
	}
	if !s.SessionCwd { // the host's folder, as a server without cwd has in any case
		doc.Cwd = s.Cwd
	}
	if o := s.OAuth; o != nil {
		doc.OAuth = &oauthDoc{ClientID: o.ClientID, Scopes: o.Scopes, MetadataURL: o.AuthServerMetadataURL}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func pairs(m map[string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for k, v := range m {
		out = append(out, [2]string{k, v})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// validKey reports whether key is what Key returns: 64 lower-case hex
// digits. Anything else could name a file outside the folder.
func validKey(key string) bool {
	if len(key) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(key); i++ {
		if !(key[i] >= '0' && key[i] <= '9' || key[i] >= 'a' && key[i] <= 'f') {
			return false
		}
	}
	return true
}

func (c *Catalog) path(key string) string {
	return filepath.Join(c.dir, key+".json")
}

// fileHeader is the entry file without its tools. The file is written as
// {"version":…,"key":…,"stored":…,"hint":…,"sum":…,"tools":[…]} with each
// tool's bytes copied unchanged.
type fileHeader struct {
	Version int       `json:"version"`
	Key     string    `json:"key"`
	Stored  time.Time `json:"stored"`
	Hint    *Hint     `json:"hint,omitempty"`
	// Sum is the hex SHA-256 of the tools (see toolsSum): a file that
	// decodes but was damaged inside a string still does not check out.
	Sum string `json:"sum"`
}

type file struct {
	fileHeader
	Tools []json.RawMessage `json:"tools"`
}

// toolsSum hashes the tools with each one's length, so that moving bytes
// from one tool to the next changes the sum.
func toolsSum(tools []json.RawMessage) string {
	h := sha256.New()
	var n [8]byte
	for _, t := range tools {
		binary.BigEndian.PutUint64(n[:], uint64(len(t)))
		h.Write(n[:])
		h.Write(t)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Miss reasons (the tests look for them); other reasons describe a file
// that did not check out.
const (
	reasonNone    = "no entry"
	reasonExpired = "expired"
)

// Get returns the entry for key. On a miss it returns false and why, for
// a debug log: reasonNone, reasonExpired (the server's ttlMs has passed),
// or what is wrong with the file. A file that does not check out is never
// trusted, and the next Put replaces it.
func (c *Catalog) Get(key string) (*Entry, bool, string) {
	if !validKey(key) {
		return nil, false, "not a catalog key"
	}
	data, fi, err := userfile.Read(c.path(key), maxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, reasonNone
	}
	if err != nil {
		return nil, false, "corrupt: " + err.Error()
	}
	var fl file
	if err := json.Unmarshal(data, &fl); err != nil {
		return nil, false, fmt.Sprintf("corrupt: %v", err)
	}
	switch {
	case fl.Version != formatVersion:
		return nil, false, fmt.Sprintf("format version %d, want %d", fl.Version, formatVersion)
	case fl.Key != key:
		return nil, false, "corrupt: the file holds another key"
	case fl.Stored.IsZero():
		return nil, false, "corrupt: no time stored"
	case fl.Tools == nil:
		return nil, false, "corrupt: no tools"
	case fl.Sum != toolsSum(fl.Tools):
		return nil, false, "corrupt: checksum mismatch"
	case fl.Hint != nil && fl.Hint.TTLMs < 0:
		return nil, false, "corrupt: negative ttlMs"
	}
	for i, t := range fl.Tools {
		var tool struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(t, &tool); err != nil || tool.Name == "" {
			return nil, false, fmt.Sprintf("corrupt: tool %d is not a tool object", i)
		}
	}
	e := &Entry{Key: key, Tools: fl.Tools, Stored: fl.Stored, Hint: fl.Hint}
	if exp, ok := e.expires(); ok && !c.now().Before(exp) {
		return nil, false, reasonExpired
	}
	if c.now().Sub(fi.ModTime()) > touchAfter {
		now := c.now()
		_ = os.Chtimes(c.path(key), now, now) // in use: not to be removed as unused
	}
	return e, true, ""
}

// Put stores tools (each a tool object as the server sent it) under key,
// with the server's caching hint or nil, replacing any entry. The file is
// written whole to a temporary file in the folder, synced, then renamed
// over the entry: a concurrent reader in any process sees the old entry or
// the new one.
func (c *Catalog) Put(key string, tools []json.RawMessage, hint *Hint) error {
	if !validKey(key) {
		return errors.New("catalog: not a catalog key")
	}
	if hint != nil && hint.TTLMs < 0 {
		return errors.New("catalog: negative ttlMs")
	}
	trimmed := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		t = bytes.TrimSpace(t)
		if !json.Valid(t) || len(t) == 0 || t[0] != '{' {
			return fmt.Errorf("catalog: tool %d is not a JSON object", i)
		}
		trimmed[i] = t
	}
	head, err := json.Marshal(fileHeader{
		Version: formatVersion,
		Key:     key,
		Stored:  c.now().UTC(),
		Hint:    hint,
		Sum:     toolsSum(trimmed),
	})
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	buf := append(head[:len(head)-1:len(head)-1], `,"tools":`...) // without the header's closing brace
	buf = frame.AppendArray(buf, trimmed)
	buf = append(buf, "}\n"...)
	if err := userfile.WriteAtomic(c.path(key), tempPrefix+"*", buf); err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	return nil
}

// Delete removes the entry for key, if there is one.
func (c *Catalog) Delete(key string) error {
	if !validKey(key) {
		return errors.New("catalog: not a catalog key")
	}
	if err := userfile.Remove(c.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("catalog: %w", err)
	}
	return nil
}

// HintFrom reads the caching hint of a tools/list result: its ttlMs and
// cacheScope (MCP 2026-07-28). Given every page of a list, it returns the
// most cautious hint: the smallest ttlMs, and "private" if any page says
// so. It returns nil when no page carries ttlMs (older protocols), and
// ignores pages that are not JSON objects.
func HintFrom(pages ...json.RawMessage) *Hint {
	var out *Hint
	for _, p := range pages {
		var r struct {
			TTLMs      *int   `json:"ttlMs"`
			CacheScope string `json:"cacheScope"`
		}
		if json.Unmarshal(p, &r) != nil || r.TTLMs == nil {
			continue
		}
		ttl := max(*r.TTLMs, 0)
		if out == nil {
			out = &Hint{TTLMs: ttl, CacheScope: r.CacheScope}
			continue
		}
		out.TTLMs = min(out.TTLMs, ttl)
		if r.CacheScope == "private" {
			out.CacheScope = "private"
		}
	}
	return out
}
