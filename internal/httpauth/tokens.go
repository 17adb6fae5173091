package httpauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// TokenPrefix begins every static token, so that one found in a shell
// history, a CI variable or a secret scanner's report is recognisably the
// workbench's, and so that [Authenticator] knows a static token from a JWT
// without trying both.
const TokenPrefix = "mwb_"

// EnvTokens names the environment variable that overrides the token
// store's path, for `mcp-workbench token` and for serving alike.
const EnvTokens = "MCP_WORKBENCH_TOKENS"

// maxTokenFile bounds what is read of the token store: a store of
// thousands of tokens is far below it; a file above it is not one the
// workbench wrote.
const maxTokenFile = 4 << 20

// DefaultTokensPath is where the static tokens are kept unless
// configuration or $MCP_WORKBENCH_TOKENS says otherwise:
// <user config dir>/mcp-workbench/http/tokens.json.
func DefaultTokensPath() (string, error) {
	dir, err := userfile.ConfigDir("http")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "tokens.json"), nil
}

// TokensPath resolves the token store's path: flag (a --store flag or the
// configuration's "tokens"), else $MCP_WORKBENCH_TOKENS, else
// [DefaultTokensPath].
func TokensPath(flag string, getenv func(string) string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if p := getenv(EnvTokens); p != "" {
		return p, nil
	}
	return DefaultTokensPath()
}

// TokenInfo describes a stored token without any part of its secret: the
// store keeps only a hash, and a listing shows names and dates alone.
type TokenInfo struct {
	Name    string
	Created time.Time
}

// tokenFile is the JSON form of the store. Only the SHA-256 of each token
// is kept: the tokens are 32 random bytes, so a plain hash cannot be
// reversed or guessed, and a stolen file opens nothing.
type tokenFile struct {
	Version int          `json:"version"`
	Tokens  []tokenEntry `json:"tokens"`
}

type tokenEntry struct {
	Name    string    `json:"name"`
	Hash    string    `json:"sha256"` // hex
	Created time.Time `json:"created"`
}

// TokenStore is the file of static bearer tokens. Writers (Add, Revoke)
// take the file's lock and rewrite it whole; readers (Lookup) keep what
// they read and read again when the file changed, so that a token revoked
// by another process — `mcp-workbench token revoke`, or another replica
// on a shared volume — is refused from the next request on.
type TokenStore struct {
	path string
	now  func() time.Time // the clock of the checks' sharing; nil: time.Now (tests set one)

	mu      sync.Mutex
	entries []tokenEntry
	hashes  [][]byte    // entries' hashes, decoded
	seen    fs.FileInfo // the file entries were read from; nil: none there
	loadErr error       // why the file last could not be read: every token refused
	looked  time.Time   // when the file was last looked at (refreshLocked)
	stats   int         // the times it was, for tests
}

// recheckShared is how long a look at the token file answers the
// sessions' revocation checks ([Authenticator.StillValid]): every session
// of every user is checked each second or so, and one look at the file
// does for all of them, not one per session. A request's own lookup
// always looks.
const recheckShared = 500 * time.Millisecond

// OpenTokens opens the token store at path. A missing file is an empty
// store (no token is accepted until one is added); a file that cannot be
// read or is not a token store is an error naming it, never trusted.
func OpenTokens(path string) (*TokenStore, error) {
	s := &TokenStore{path: path}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *TokenStore) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// Path returns the file the store reads.
func (s *TokenStore) Path() string { return s.path }

// validName says whether name may name a token (it appears in logs, in
// `token list`, and as the subject that toolbox access rules name): 1 to 64
// ASCII letters, digits, '.', '_' or '-', starting with a letter or digit.
// A loop, not a regular expression: {0,63} compiled at start took 60 KB
// and a millisecond of every workbench, over stdio too.
func validName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// CheckName says why name cannot name a token, or is nil.
func CheckName(name string) error {
	if !validName(name) {
		return fmt.Errorf("token name %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// Add makes a new token named name, stores its hash and returns it: the
// only time the token is seen. A name already in use is refused (revoke
// it first), so that a name always means one credential.
func (s *TokenStore) Add(ctx context.Context, name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return "", fmt.Errorf("making a token: %w", err)
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(secret[:])
	sum := sha256.Sum256([]byte(token))
	err := s.update(ctx, func(f *tokenFile) error {
		for _, e := range f.Tokens {
			if e.Name == name {
				return fmt.Errorf("a token named %q exists already in %s (revoke it first, or choose another name)", name, s.path)
			}
		}
		f.Tokens = append(f.Tokens, tokenEntry{Name: name, Hash: hex.EncodeToString(sum[:]), Created: time.Now().UTC().Truncate(time.Second)})
		return nil
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// Revoke removes the token named name: every process reading the file
// refuses it from its next lookup on.
func (s *TokenStore) Revoke(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	return s.update(ctx, func(f *tokenFile) error {
		for i, e := range f.Tokens {
			if e.Name == name {
				f.Tokens = append(f.Tokens[:i], f.Tokens[i+1:]...)
				return nil
			}
		}
		return fmt.Errorf("no token named %q in %s", name, s.path)
	})
}

// List returns the stored tokens' names and creation times, in the order
// they were added, as the file holds them now.
func (s *TokenStore) List() ([]TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return nil, err
	}
	out := make([]TokenInfo, len(s.entries))
	for i, e := range s.entries {
		out[i] = TokenInfo{Name: e.Name, Created: e.Created}
	}
	return out, nil
}

// Lookup returns the name of the stored token that token is, if any. It
// looks at the file first (one stat) and reads it again if it was
// replaced, so a revocation elsewhere counts at once. A store that cannot
// be read accepts no token.
func (s *TokenStore) Lookup(token string) (name string, ok bool) {
	name, ok, _ = s.lookup(token)
	return name, ok
}

// lookup is [TokenStore.Lookup] with the reason a store that cannot be
// read refuses everything, for the log. The presented token is hashed and
// compared with every stored hash in constant time, so neither the
// answer's timing nor an early exit says how close a guess was.
func (s *TokenStore) lookup(token string) (name string, ok bool, err error) {
	sum := sha256.Sum256([]byte(token))
	return s.lookupHash(sum[:], 0)
}

// lookupHash is lookup of a token by its SHA-256, with the file looked at
// again unless it was less than fresh ago.
func (s *TokenStore) lookupHash(sum []byte, fresh time.Duration) (name string, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fresh <= 0 || s.stats == 0 || s.clock().Sub(s.looked) >= fresh {
		err = s.refreshLocked()
	} else {
		err = s.loadErr
	}
	if err != nil {
		return "", false, err
	}
	found := -1
	for i, h := range s.hashes {
		if subtle.ConstantTimeCompare(h, sum) == 1 {
			found = i
		}
	}
	if found < 0 {
		return "", false, nil
	}
	return s.entries[found].Name, true, nil
}

// refreshLocked reads the file again if it is not the one last read. The
// file is compared by identity (WriteAtomic renames a new file over it,
// so a rewrite is a new inode), size and modification time: a file
// rewritten within one tick of a coarse clock to the same size is still
// told apart. A file that cannot be read is remembered as an error, and
// the entries read before are dropped: a store in doubt accepts nothing.
func (s *TokenStore) refreshLocked() error {
	s.looked = s.clock()
	s.stats++
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.entries, s.hashes, s.seen, s.loadErr = nil, nil, nil, nil
		return nil
	}
	if err == nil && s.seen != nil && os.SameFile(fi, s.seen) &&
		fi.Size() == s.seen.Size() && fi.ModTime().Equal(s.seen.ModTime()) {
		return s.loadErr // the file last read, good or bad
	}
	f, fi, err := s.read()
	if err != nil {
		// fi, when the file was read, keeps a bad file from being read
		// again at every lookup until it changes.
		s.entries, s.hashes, s.seen, s.loadErr = nil, nil, fi, err
		return err
	}
	hashes := make([][]byte, len(f.Tokens))
	for i, e := range f.Tokens {
		hashes[i], _ = hex.DecodeString(e.Hash) // checked by read
	}
	s.entries, s.hashes, s.seen, s.loadErr = f.Tokens, hashes, fi, nil
	return nil
}

// read reads and checks the file. A missing file is an empty store. The
// file's information comes back with a bad file too, once it was read.
func (s *TokenStore) read() (*tokenFile, fs.FileInfo, error) {
	data, fi, err := userfile.Read(s.path, maxTokenFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &tokenFile{Version: 1}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("the token store %s is %w", s.path, err)
	}
	var f tokenFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fi, fmt.Errorf("the token store %s is not valid JSON (%s); fix it or remove it and add the tokens again", s.path, jsonProblem(err))
	}
	if f.Version != 1 {
		return nil, fi, fmt.Errorf("the token store %s has version %d; this workbench reads version 1", s.path, f.Version)
	}
	names := make(map[string]bool, len(f.Tokens))
	for i, e := range f.Tokens {
		where := fmt.Sprintf("the token store %s, tokens[%d]", s.path, i)
		if err := CheckName(e.Name); err != nil {
			return nil, fi, fmt.Errorf("%s: %w", where, err)
		}
		if names[e.Name] {
			return nil, fi, fmt.Errorf("%s: the name %q is used twice", where, e.Name)
		}
		names[e.Name] = true
		if h, err := hex.DecodeString(e.Hash); err != nil || len(h) != sha256.Size {
			return nil, fi, fmt.Errorf("%s (%q): \"sha256\" is not a SHA-256 in hex", where, e.Name)
		}
	}
	return &f, fi, nil
}

// jsonProblem says where a JSON document went wrong without quoting it.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("at byte %d", syn.Offset)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if typ.Field != "" {
			return fmt.Sprintf("%q has the wrong type", typ.Field)
		}
		return "not an object with \"version\" and \"tokens\""
	}
	if strings.Contains(err.Error(), "unexpected end") {
		return "it ends early"
	}
	return "unreadable"
}

// update changes the file under its lock: the file is read afresh (not
// from what this process last saw), changed by change, and written whole.
func (s *TokenStore) update(ctx context.Context, change func(*tokenFile) error) error {
	dir := filepath.Dir(s.path)
	if err := userfile.MakeDir(dir, "token store folder"); err != nil {
		return err
	}
	unlock, err := userfile.Lock(ctx, s.path+".lock")
	if err != nil {
		return fmt.Errorf("locking the token store %s: %w", s.path, err)
	}
	defer unlock()
	f, _, err := s.read()
	if err != nil {
		return err
	}
	if err := change(f); err != nil {
		return err
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := userfile.WriteAtomic(s.path, ".tokens-*", append(data, '\n')); err != nil {
		return fmt.Errorf("writing the token store %s: %w", s.path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshLocked()
}
