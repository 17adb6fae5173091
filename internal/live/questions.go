package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// Question is a permission question waiting in the web UI for the
// user's answer: one a workbench could not ask through its host, or one
// its rules ask there ("askIn": "page").
type Question struct {
	ID       string    `json:"id"`
	PID      int       `json:"pid"`
	Time     time.Time `json:"time"`
	Deadline time.Time `json:"deadline"`
	Toolbox  string    `json:"toolbox"`
	Server   string    `json:"server"`
	Tool     string    `json:"tool"`
	Rule     string    `json:"rule"`      // the rule that asks
	Args     string    `json:"arguments"` // as the host's form shows them: secrets masked
	// AskIn is "page" for a question the rules ask in the web UI, whatever
	// the host can do; "" for one the host could not ask.
	AskIn string `json:"askIn,omitempty"`
	// Why the question is here: why the host could not ask; for AskIn
	// "page", where the configuration says so ("page" at its JSON path).
	Why string `json:"why"`
}

// The answers to a question.
const (
	AllowOnce    = "once"
	AllowSession = "session"
	Deny         = "deny"
)

const (
	uiPrefix       = "ui-"
	questionPrefix = "question-"
	answerPrefix   = "answer-"
	pollAnswer     = 200 * time.Millisecond
)

// MarkUI says that a web UI of this process runs and answers questions,
// until the returned func removes the mark.
func MarkUI() (func(), error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	if err := userfile.MakeDir(dir, "web UI's state folder"); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s%d.json", uiPrefix, os.Getpid()))
	if err := userfile.WriteAtomic(path, "ui-*.tmp", []byte(`{}`)); err != nil {
		return nil, err
	}
	return func() { os.Remove(path) }, nil
}

// UIRuns reports whether a web UI of the user runs (its process is alive):
// only then is a question put to it.
func UIRuns() bool {
	dir, err := Dir()
	if err != nil {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if name := e.Name(); strings.HasPrefix(name, uiPrefix) {
			if pid, ok := pidOf(name); ok && Alive(pid) {
				return true
			}
		}
	}
	return false
}

// validID is an id this package made: hex only, so that it never walks
// out of the folder as a file name.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// AskUI puts q to the web UI and waits for the answer until wait has
// passed or ctx ends: AllowOnce, AllowSession or Deny; "" when nobody
// answered. The question and its answer are removed either way.
func AskUI(ctx context.Context, q Question, wait time.Duration) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	q.ID, q.PID, q.Time, q.Deadline = hex.EncodeToString(b), os.Getpid(), time.Now(), time.Now().Add(wait)
	data, err := json.Marshal(q)
	if err != nil {
		return "", err
	}
	// No web UI may have run yet: one started while the call waits reads
	// the question from here.
	if err := userfile.MakeDir(dir, "web UI's state folder"); err != nil {
		return "", err
	}
	qPath := filepath.Join(dir, questionPrefix+q.ID+".json")
	aPath := filepath.Join(dir, answerPrefix+q.ID+".json")
	if err := userfile.WriteAtomic(qPath, "question-*.tmp", data); err != nil {
		return "", err
	}
	defer os.Remove(qPath)
	defer os.Remove(aPath)
	tick := time.NewTicker(pollAnswer)
	defer tick.Stop()
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	for {
		if data, _, err := userfile.Read(aPath, 4096); err == nil {
			var a struct{ Action string }
			if json.Unmarshal(data, &a) == nil {
				switch a.Action {
				case AllowOnce, AllowSession, Deny:
					return a.Action, nil
				}
			}
			return Deny, nil // an answer that is none of them is no allowance
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-timeout.C:
			return "", nil
		case <-tick.C:
		}
	}
}

// ReadQuestions returns the questions waiting for an answer, oldest
// first: those of live processes whose deadline has not passed.
func ReadQuestions() []Question {
	out := []Question{}
	dir, err := Dir()
	if err != nil {
		return out
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	now := time.Now()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, questionPrefix) || !strings.HasSuffix(name, ".json") {
			continue
		}
		data, _, err := userfile.Read(filepath.Join(dir, name), 64<<10)
		if err != nil {
			continue
		}
		var q Question
		if json.Unmarshal(data, &q) != nil || !validID(q.ID) || name != questionPrefix+q.ID+".json" || now.After(q.Deadline) || !Alive(q.PID) {
			continue
		}
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// ErrNoQuestion is an answer to a question that no longer waits.
var ErrNoQuestion = errors.New("that question no longer waits for an answer (it was answered, or its call gave up)")

// AnswerQuestion gives the answer action to the waiting question id.
func AnswerQuestion(id, action string) error {
	switch action {
	case AllowOnce, AllowSession, Deny:
	default:
		return fmt.Errorf("the answer %q is none of %q, %q and %q", action, AllowOnce, AllowSession, Deny)
	}
	if !validID(id) {
		return ErrNoQuestion
	}
	dir, err := Dir()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, questionPrefix+id+".json")); err != nil {
		return ErrNoQuestion
	}
	data, _ := json.Marshal(map[string]string{"action": action})
	return userfile.WriteNew(filepath.Join(dir, answerPrefix+id+".json"), "answer-*.tmp", data)
}
