package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// Record is what a login leaves on disk for one server: the tokens and
// what is needed to refresh them. It is keyed by (server URL, issuer,
// client): one file per server URL, and a record whose client
// (oauth.clientId) or authorization server (oauth.authServerMetadataUrl)
// is not the one the configuration names is not used.
type Record struct {
	ServerURL string `json:"server_url"`
	Issuer    string `json:"issuer"`
	// MetadataURL is the entry's oauth.authServerMetadataUrl at login, if
	// it had one.
	MetadataURL string `json:"metadata_url,omitempty"`
	ClientID    string `json:"client_id"`
	// ClientSecret is kept only when dynamic registration issued it; a
	// configured clientSecret stays in the configuration.
	ClientSecret string           `json:"client_secret,omitempty"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style"`
	Scopes       []string         `json:"scopes,omitempty"`
	// StepUp are the scopes the server asked for since the login (a 403
	// insufficient_scope): the next login asks for them too.
	StepUp     []string      `json:"step_up_scopes,omitempty"`
	Token      *oauth2.Token `json:"token"`
	LoggedInAt time.Time     `json:"logged_in_at"`
}

// usable reports whether the access token can be sent without a refresh:
// not expired, with a margin for the trip to the server.
func (r *Record) usable() bool {
	if r == nil || r.Token == nil || r.Token.AccessToken == "" {
		return false
	}
	return r.Token.Expiry.IsZero() || time.Until(r.Token.Expiry) > margin(r.Token)
}

// expiryMargin is how long before its expiry a token is refreshed, for the
// trip to the server: at most 30 s, and a quarter of the token's lifetime
// for tokens that live less than 2 minutes, which a fixed margin would
// have refreshed at every request (or at once, for one shorter than it).
const expiryMargin = 30 * time.Second

// margin is the refresh margin of tok: expiryMargin, or a quarter of its
// lifetime (expires_in) if that is shorter.
func margin(tok *oauth2.Token) time.Duration {
	if life := time.Duration(tok.ExpiresIn) * time.Second; life > 0 {
		return min(expiryMargin, life/4)
	}
	return expiryMargin
}

// noteLifetime sets tok's expires_in from its expiry, just received, when
// the token response was not JSON (oauth2 keeps expires_in from JSON
// only): the refresh margin is scaled by it.
func noteLifetime(tok *oauth2.Token) {
	if tok.ExpiresIn == 0 && !tok.Expiry.IsZero() {
		tok.ExpiresIn = int64(time.Until(tok.Expiry).Round(time.Second) / time.Second)
	}
}

// Store keeps one token file per server URL in Dir, mode 0600 in a 0700
// folder, shared by every workbench process of the user. Writes are atomic
// (a temporary file in the same folder, synced, then renamed), and
// read-modify-write sequences hold the server's lock file, so that two
// processes refreshing at once never lose a rotated refresh token.
type Store struct {
	Dir string
}

// DefaultStore is the store in the user's configuration folder:
// $XDG_CONFIG_HOME/mcp-workbench/oauth on Linux, ~/Library/Application
// Support/mcp-workbench/oauth on macOS, %AppData%\mcp-workbench\oauth on
// Windows.
func DefaultStore() (*Store, error) {
	dir, err := userfile.ConfigDir("oauth")
	if err != nil {
		return nil, err
	}
	return &Store{Dir: dir}, nil
}

// Path is the token file of a server URL: readable host, then a hash of the
// whole URL (paths and queries tell servers of one host apart).
func (s *Store) Path(serverURL string) string {
	sum := sha256.Sum256([]byte(serverURL))
	host := "server"
	if u, err := url.Parse(serverURL); err == nil && u.Hostname() != "" {
		host = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
				return r
			}
			return '_'
		}, strings.ToLower(u.Hostname()))
	}
	return filepath.Join(s.Dir, host+"-"+hex.EncodeToString(sum[:8])+".json")
}

// fileError is a token file or folder that cannot be trusted. Its text
// never holds the file's content.
type fileError struct {
	Path   string
	Reason string
}

func (e *fileError) Error() string { return e.Path + ": " + e.Reason }

// checkPrivate refuses a file or folder that other users may read.
func checkPrivate(path string, info fs.FileInfo) error {
	if runtime.GOOS == "windows" {
		return nil // permissions are ACLs there; the user's AppData is private
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		what, want, fix := "file", "0600", "remove it with mcp-workbench logout and log in again"
		if info.IsDir() {
			what, want, fix = "folder", "0700", "chmod 700 "+path
		}
		return &fileError{Path: path, Reason: fmt.Sprintf("refusing a token %s that other users can read (mode %04o, want %s): %s", what, perm, want, fix)}
	}
	return nil
}

// Load reads the record of serverURL: nil, nil if there is none. A file
// that is corrupt, open to other users, or for another server is refused
// with a *fileError saying why.
func (s *Store) Load(serverURL string) (*Record, error) {
	path := s.Path(serverURL)
	if info, err := os.Stat(s.Dir); err == nil {
		if err := checkPrivate(s.Dir, info); err != nil {
			return nil, err
		}
	}
	f, err := userfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading token file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading token file: %w", err)
	}
	if err := checkPrivate(path, info); err != nil {
		return nil, err
	}
	var rec Record
	dec := json.NewDecoder(f)
	if err := dec.Decode(&rec); err != nil {
		return nil, &fileError{Path: path, Reason: "corrupt token file (not the JSON a login writes); log in again to replace it"}
	}
	switch {
	case rec.Token == nil || rec.Token.AccessToken == "" || rec.ClientID == "" || rec.TokenURL == "":
		return nil, &fileError{Path: path, Reason: "corrupt token file (a token, client or token URL is missing); log in again to replace it"}
	case rec.ServerURL != serverURL:
		return nil, &fileError{Path: path, Reason: "the token file belongs to another server; log in again to replace it"}
	}
	return &rec, nil
}

// Save writes rec atomically: a temporary file in the same folder, synced,
// then renamed over the old one. Readers see the old record or the new
// one, never half of one.
func (s *Store) Save(rec *Record) error {
	if err := s.mkdir(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return writeTokenFile(s.Path(rec.ServerURL), append(data, '\n'))
}

// Delete removes the record of serverURL. It reports whether there was one.
func (s *Store) Delete(serverURL string) (bool, error) {
	err := userfile.Remove(s.Path(serverURL))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("removing token file: %w", err)
	}
	return true, nil
}

func (s *Store) mkdir() error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("creating the token folder: %w", err)
	}
	info, err := os.Stat(s.Dir)
	if err != nil {
		return fmt.Errorf("creating the token folder: %w", err)
	}
	return checkPrivate(s.Dir, info)
}

// lockWait bounds how long a process waits for another one's lock: a
// refresh is one HTTP round trip.
var lockWait = 30 * time.Second

// Lock takes the lock of serverURL's record, shared by every process of
// the user, and returns its release. The lock file stays; the lock goes
// with the process if it dies.
func (s *Store) Lock(ctx context.Context, serverURL string) (func(), error) {
	if err := s.mkdir(); err != nil {
		return nil, err
	}
	path := strings.TrimSuffix(s.Path(serverURL), ".json") + ".lock"
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	unlock, err := userfile.Lock(ctx, path)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("locking token file %s: another process holds it (%w)", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("locking token file: %w", err)
	}
	return unlock, nil
}

// writeTokenFile writes a file of the store (tokens, a challenge) whole:
// private, atomic.
func writeTokenFile(path string, data []byte) error {
	if err := userfile.WriteAtomic(path, ".token-*.tmp", data); err != nil {
		return fmt.Errorf("writing token file: %w", err)
	}
	return nil
}

// challenge is a server's request for a login (its WWW-Authenticate
// header) that the workbench was given while it had none stored, for a
// request that the login's own probe does not make (a tool's call): the
// next login starts from it. It holds no secret.
type challenge struct {
	ServerURL       string   `json:"server_url"`
	WWWAuthenticate []string `json:"www_authenticate"`
}

// response is the 401 the challenge stands for, as an answer to req.
func (c *challenge) response(req *http.Request) *http.Response {
	h := http.Header{}
	for _, v := range c.WWWAuthenticate {
		h.Add("WWW-Authenticate", v)
	}
	return &http.Response{Status: "401 Unauthorized", StatusCode: http.StatusUnauthorized, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: http.NoBody, Request: req}
}

func (s *Store) challengePath(serverURL string) string {
	return strings.TrimSuffix(s.Path(serverURL), ".json") + ".challenge.json"
}

// saveChallenge notes a server's WWW-Authenticate values, atomically.
func (s *Store) saveChallenge(serverURL string, values []string) error {
	if err := s.mkdir(); err != nil {
		return err
	}
	data, err := json.Marshal(&challenge{ServerURL: serverURL, WWWAuthenticate: values})
	if err != nil {
		return err
	}
	return writeTokenFile(s.challengePath(serverURL), data)
}

// maxChallengeFile bounds a challenge file read back: far more than the
// WWW-Authenticate values of any server's 401.
const maxChallengeFile = 1 << 20

// loadChallenge returns the noted challenge of serverURL, or nil.
func (s *Store) loadChallenge(serverURL string) (*challenge, error) {
	data, _, err := userfile.Read(s.challengePath(serverURL), maxChallengeFile)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, userfile.ErrTooLarge) {
		return nil, nil // a longer one is not one this store wrote
	}
	if err != nil {
		return nil, err
	}
	var c challenge
	if json.Unmarshal(data, &c) != nil || c.ServerURL != serverURL || len(c.WWWAuthenticate) == 0 {
		return nil, nil // not one this store wrote for this server: ignored
	}
	return &c, nil
}

func (s *Store) deleteChallenge(serverURL string) { _ = userfile.Remove(s.challengePath(serverURL)) }
