package permissions

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// Approvals: a call that Claude Code's own prompt asked about (through
// the workbench's PreToolUse hook) is not asked again by the workbench.
// The hook, a separate process, cannot tell the workbench what the user
// answered; it can change the call's input. For a call the rules ask about
// it answers "ask" with the input plus "hostApproval": a token signed with
// a key only the user's processes can read (a 0600 file in the user's
// configuration folder), naming the tool, a hash of its arguments, an
// expiry and a nonce. If the user approves in Claude Code, the call reaches
// the workbench with the token; if not, it never comes. The workbench takes
// a token once, for that tool and those arguments, before it expires —
// once for the user, in whichever of their workbench processes it comes
// to (the record of used nonces is a file beside the key); any other (a
// model that writes one, a copy of an earlier one) is ignored and the call
// is asked about as usual.

// ApprovalField is use_tool's input member that carries a hook's approval.
const ApprovalField = "hostApproval"

// approvalTTL is how long an approval is good for: long enough for a
// person to answer Claude Code's prompt.
const approvalTTL = 10 * time.Minute

const approvalPrefix = "wbh1."

// KeyPath returns the approval key's file: mcp-workbench/hook.key in the
// user's configuration folder.
func KeyPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the user's configuration folder: %w", err)
	}
	return filepath.Join(dir, "mcp-workbench", "hook.key"), nil
}

// readKey reads the key at path; create makes one when there is none.
func readKey(path string, create bool) ([]byte, error) {
	key, _, err := userfile.Read(path, 32) // a longer file is not a key: made again
	if err == nil && len(key) == 32 {
		return key, nil
	}
	if !create {
		return nil, errors.New("no approval key")
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := userfile.MakePrivate(dir, "configuration folder"); err != nil {
		return nil, err
	}
	key = make([]byte, 32)
	_, _ = rand.Read(key)
	if err := userfile.WriteAtomic(path, ".hook.key-*", key); err != nil {
		return nil, err
	}
	return key, nil
}

type approval struct {
	Toolbox string `json:"b"`
	Server  string `json:"s"`
	Tool    string `json:"t"`
	Args    string `json:"a"` // SHA-256 of the arguments, as a JSON value
	Expiry  int64  `json:"e"`
	Nonce   string `json:"n"`
}

// argsHash hashes arguments as a JSON value, not as bytes: the host may
// write them again with other spacing or key order.
func argsHash(args json.RawMessage) string {
	var v any
	if len(args) > 0 {
		_ = json.Unmarshal(args, &v)
	}
	if v == nil {
		v = map[string]any{}
	}
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// SignApproval makes the approval of a call of tool of server in toolbox
// with args, with the key at keyPath (made if there is none).
func SignApproval(keyPath, toolbox, server, tool string, args json.RawMessage, now time.Time) (string, error) {
	key, err := readKey(keyPath, true)
	if err != nil {
		return "", err
	}
	a := approval{Toolbox: toolbox, Server: server, Tool: tool, Args: argsHash(args), Expiry: now.Add(approvalTTL).Unix(), Nonce: rand.Text()}
	payload, _ := json.Marshal(a)
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return approvalPrefix + base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil)), nil
}

// Approvals checks the approvals calls carry, each good once: the nonces
// used are kept in a file beside the key (hook.used), shared by every
// process of the user that checks approvals with that key — workbenches
// of other sessions, one started later, the replicas of one over HTTP
// that share the folder — so that a token used in one is refused in all.
type Approvals struct {
	keyPath string
}

// NewApprovals checks approvals with the key at keyPath; "": the key at
// [KeyPath], found at each check.
func NewApprovals(keyPath string) *Approvals {
	return &Approvals{keyPath: keyPath}
}

// Take reports whether token approves this call, and if it does, uses it
// up; why says what is wrong with one that does not.
func (a *Approvals) Take(token, toolbox, server, tool string, args json.RawMessage, now time.Time) (ok bool, why string) {
	body, found := strings.CutPrefix(token, approvalPrefix)
	enc, sig, found2 := strings.Cut(body, ".")
	payload, err := base64.RawURLEncoding.DecodeString(enc)
	got, err2 := base64.RawURLEncoding.DecodeString(sig)
	if !found || !found2 || err != nil || err2 != nil {
		return false, "not an approval the hook made"
	}
	keyPath := a.keyPath
	if keyPath == "" {
		var err error
		if keyPath, err = KeyPath(); err != nil {
			return false, err.Error()
		}
	}
	key, err := readKey(keyPath, false)
	if err != nil {
		return false, "no approval key to check it with"
	}
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	if !hmac.Equal(got, m.Sum(nil)) {
		return false, "its signature does not check out"
	}
	var ap approval
	if json.Unmarshal(payload, &ap) != nil {
		return false, "not an approval the hook made"
	}
	switch {
	case ap.Toolbox != toolbox || ap.Server != server || ap.Tool != tool:
		return false, "it approves another tool"
	case ap.Args != argsHash(args):
		return false, "it approves other arguments"
	case now.Unix() > ap.Expiry:
		return false, "it has expired"
	}
	return takeNonce(keyPath, ap, now)
}

// The record of used approvals: hook.used beside the key, a JSON object
// of the nonces used and their expiries, and notBefore: a record that
// could not be read (changed by something else than the workbench, cut
// short) is never trusted; it is written anew, and an approval made
// before that (its expiry less approvalTTL) does not count, since it may
// have been used. Written atomically under hook.used.lock.
type usedRecord struct {
	NotBefore int64            `json:"notBefore,omitempty"`
	Used      map[string]int64 `json:"used"`
}

const (
	// maxUsed bounds the approvals in use at once (within approvalTTL of
	// each other); past it, an approval does not count.
	maxUsed      = 10000
	maxUsedBytes = 1 << 20
	// lockWait is how long a check waits for another process that
	// holds the record's lock.
	lockWait = 10 * time.Second
)

// UsedPath is the file of the approvals used already, for the key at
// keyPath.
func UsedPath(keyPath string) string {
	return filepath.Join(filepath.Dir(keyPath), "hook.used")
}

// takeNonce records ap's nonce as used, and reports whether it was not.
func takeNonce(keyPath string, ap approval, now time.Time) (bool, string) {
	path := UsedPath(keyPath)
	ctx, cancel := context.WithTimeout(context.Background(), lockWait)
	defer cancel()
	unlock, err := userfile.Lock(ctx, path+".lock")
	if err != nil {
		return false, "the record of used approvals cannot be locked: " + err.Error()
	}
	defer unlock()
	var rec usedRecord
	data, _, err := userfile.Read(path, maxUsedBytes)
	if errors.Is(err, fs.ErrNotExist) {
		rec.Used = map[string]int64{}
	} else if err != nil || json.Unmarshal(data, &rec) != nil || rec.Used == nil {
		// Not trusted: every approval made until now may have been used.
		rec = usedRecord{NotBefore: now.Unix(), Used: map[string]int64{}}
	}
	for n, exp := range rec.Used {
		if now.Unix() > exp {
			delete(rec.Used, n)
		}
	}
	why := ""
	switch _, dup := rec.Used[ap.Nonce]; {
	case dup:
		return false, "it was used already"
	case ap.Expiry-int64(approvalTTL/time.Second) < rec.NotBefore:
		why = "it was made before the record of used approvals was lost, and may have been used"
	case len(rec.Used) >= maxUsed:
		return false, fmt.Sprintf("%d approvals are in use already", maxUsed)
	default:
		rec.Used[ap.Nonce] = ap.Expiry
	}
	// Written back even when the approval does not count: a record that
	// was not trusted is replaced by a good one.
	b, _ := json.Marshal(rec)
	if err := userfile.WriteAtomic(path, ".hook.used-*", b); err != nil {
		return false, "the record of used approvals cannot be written: " + err.Error()
	}
	if why != "" {
		return false, why
	}
	return true, ""
}
