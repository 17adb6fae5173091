package downstream

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

func TestRequestTimeoutCancelsTheCall(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("slow")
	cfg.RequestTimeout = 200 * time.Millisecond
	s := h.server(cfg)
	_, err := s.Call(ctxT(t), "sleep", json.RawMessage(`{"ms":30000}`), nil)
	if err == nil || !strings.Contains(err.Error(), "no response within 200ms (requestTimeoutMs)") {
		t.Fatalf("err = %v", err)
	}
	fakeserver.Eventually(t, "the server to see the cancellation", func() bool {
		return contains(h.lines(fakeserver.CancelsFile), "sleep")
	})
	// The server is still healthy: it answers, and was not started again.
	// The echo has the same 200ms to answer, which a slow machine can
	// miss; a miss is a timeout, never a restart, so the echo is tried
	// until it is answered.
	var err2 error
	fakeserver.Eventually(t, "an echo after the timeout", func() bool {
		_, err2 = s.Call(ctxT(t), "echo", nil, nil)
		if err2 != nil && !strings.Contains(err2.Error(), "(requestTimeoutMs)") {
			t.Fatalf("after a timeout: %v", err2)
		}
		return err2 == nil
	})
	if n := len(h.lines(fakeserver.StartsFile)); n != 1 {
		t.Errorf("%d starts, want 1: a timed-out call must not end the server", n)
	}
}

func TestProgressRestartsTheTimeoutAndIsRelayed(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("busy")
	// 25 steps 100ms apart take 2.5s at least, longer than the timeout
	// whatever the machine's speed; the gaps are a twentieth of it, so
	// that a busy machine does not stretch one past it.
	cfg.RequestTimeout = 2 * time.Second
	s := h.server(cfg)
	var mu sync.Mutex
	var got []float64
	res, err := s.Call(ctxT(t), "progress", json.RawMessage(`{"steps":25,"delayMs":100}`), func(p Progress) {
		var n float64
		var msg string
		if json.Unmarshal(p.Progress, &n) != nil || string(p.Total) != "25" || json.Unmarshal(p.Message, &msg) != nil || !strings.HasPrefix(msg, "step ") {
			t.Errorf("progress = %s, %s, %s", p.Progress, p.Total, p.Message)
		}
		mu.Lock()
		got = append(got, n)
		mu.Unlock()
	})
	if err != nil {
		t.Fatalf("a call that reports progress timed out: %v", err)
	}
	if text := resultText(t, res); text != "done after 25 steps" {
		t.Errorf("result %q", text)
	}
	mu.Lock()
	defer mu.Unlock()
	// The last notification races the result and may be dropped (progress
	// is never relayed after a result); every other one must arrive.
	if len(got) != 25 && len(got) != 24 {
		t.Errorf("relayed %d progress notifications, want 25 (or 24)", len(got))
	}
	for i, p := range got {
		if p != float64(i+1) {
			t.Errorf("progress out of order: %v", got)
			break
		}
	}
}

func TestCallerCancellationReachesTheServer(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("f"))
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() {
		_, err := s.Call(ctx, "sleep", json.RawMessage(`{"ms":30000}`), nil)
		done <- err
	}()
	fakeserver.Eventually(t, "the call to arrive", func() bool { return contains(h.lines(fakeserver.CallsFile), "sleep") })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	fakeserver.Eventually(t, "the server to see the cancellation", func() bool {
		return contains(h.lines(fakeserver.CancelsFile), "sleep")
	})
}

func TestCloseEndsCallsInFlight(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("f"))
	done := make(chan error, 1)
	go func() {
		_, err := s.Call(ctxT(t), "sleep", json.RawMessage(`{"ms":30000}`), nil)
		done <- err
	}()
	fakeserver.Eventually(t, "the call to arrive", func() bool { return contains(h.lines(fakeserver.CallsFile), "sleep") })
	s.Close()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "shutting down") {
			t.Errorf("err = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close left a call hanging")
	}
}

func TestDeathIsNoticedWithoutACall(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("victim"))
	res, err := s.Call(ctxT(t), "whoami", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var who struct{ PID int }
	_ = json.Unmarshal([]byte(resultText(t, res)), &who)
	proc, err := os.FindProcess(who.PID)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	fakeserver.Eventually(t, "the death to be noticed", func() bool { return s.State().Status == StatusError })
	killed := "signal: killed"
	if runtime.GOOS == "windows" {
		killed = "exit status 1" // Process.Kill is TerminateProcess with status 1
	}
	if st := s.State(); !strings.Contains(st.Err.Error(), killed) {
		t.Errorf("state error = %v", st.Err)
	}
	if _, err := s.Call(ctxT(t), "echo", nil, nil); err != nil {
		t.Errorf("the next call did not start the server again: %v", err)
	}
	if n := len(h.lines(fakeserver.StartsFile)); n != 2 {
		t.Errorf("%d starts, want 2", n)
	}
}

func TestCrashMidCall(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("f"))
	_, err := s.Call(ctxT(t), "crash", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("err = %v, want the exit status", err)
	}
	// crash is not read-only or idempotent: never retried.
	if calls := h.lines(fakeserver.CallsFile); len(calls) != 1 {
		t.Errorf("calls = %v, want one crash", calls)
	}
	if _, err := s.Call(ctxT(t), "echo", nil, nil); err != nil {
		t.Errorf("after a crash: %v", err)
	}
}

func TestReadOnlyCallIsRetriedOnceAfterACrash(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("f"))
	res, err := s.Call(ctxT(t), "crash_once", nil, nil)
	if err != nil {
		t.Fatalf("a read-only call lost to a crash was not retried: %v", err)
	}
	if text := resultText(t, res); text != "survived" {
		t.Errorf("result %q", text)
	}
	if calls := h.lines(fakeserver.CallsFile); len(calls) != 2 {
		t.Errorf("calls = %v, want exactly two (one retry)", calls)
	}
	if !strings.Contains(h.logs.String(), "retry it once") {
		t.Error("the retry was not logged")
	}
}

// TestRetriedCallsProgressKeepsIncreasing: a read-only call retried after a
// crash reports its progress again from the start (1, 2, crash; 1, 2, 3);
// the caller sees progress that only increases (1, 2, 3), as the MCP spec
// asks, whether the call went through Call or was relayed by Start.
func TestRetriedCallsProgressKeepsIncreasing(t *testing.T) {
	for _, how := range []string{"Call", "Start"} {
		t.Run(how, func(t *testing.T) {
			h := newHarness(t)
			s := h.server(h.config("f"))
			var mu sync.Mutex
			var seen []string
			progress := func(p Progress) {
				mu.Lock()
				seen = append(seen, string(p.Progress))
				mu.Unlock()
			}
			var res json.RawMessage
			var err error
			if how == "Call" {
				res, err = s.Call(ctxT(t), "crash_once", nil, progress)
			} else {
				// A running server: Start relays the call as frames.
				if _, err := s.Call(ctxT(t), "echo", json.RawMessage(`{"text":"x"}`), nil); err != nil {
					t.Fatal(err)
				}
				type answer struct {
					res json.RawMessage
					err error
				}
				ch := make(chan answer, 1)
				s.Start("crash_once", nil, progress, func(r json.RawMessage, e error) { ch <- answer{r, e} })
				select {
				case a := <-ch:
					res, err = a.res, a.err
				case <-time.After(30 * time.Second):
					t.Fatal("no answer to the relayed call")
				}
			}
			if err != nil {
				t.Fatalf("the read-only call was not retried: %v", err)
			}
			if text := resultText(t, res); text != "survived" {
				t.Errorf("result %q", text)
			}
			mu.Lock()
			defer mu.Unlock()
			if got := strings.Join(seen, ","); got != "1,2,3" {
				t.Errorf("progress seen = %s, want 1,2,3", got)
			}
		})
	}
}

func TestJunkOnStdoutIsSkipped(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("noisy", fakeserver.EnvJunk, "1"))
	for range 3 {
		if _, err := s.Call(ctxT(t), "echo", json.RawMessage(`{"text":"x"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, junk := range []string{"this line is not JSON-RPC", `{"level":"info","msg":"a JSON log line`} {
		if !strings.Contains(h.stderr.String(), "[tb/noisy] (workbench) stdout line is not JSON-RPC, ignored: "+junk) {
			t.Errorf("junk %q was not reported on stderr:\n%s", junk, h.stderr)
		}
	}
}

func TestServerSpeakingOnlyJunkTimesOut(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("junk", fakeserver.EnvHangInit, "1", fakeserver.EnvJunk, "1")
	cfg.ConnectionTimeout = 300 * time.Millisecond
	_, err := h.server(cfg).Connect(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Errorf("err = %v", err)
	}
}

func TestFloodedStderrIsBounded(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("flood", fakeserver.EnvFlood, "20000"))
	if _, err := s.Call(ctxT(t), "echo", nil, nil); err != nil {
		t.Fatal(err)
	}
	s.Close() // the forwarder reports what it dropped when stderr ends
	out := h.stderr.String()
	forwarded := strings.Count(out, "flood line")
	if forwarded == 0 || forwarded >= 20000 {
		t.Errorf("forwarded %d of 20000 flood lines; want some, not all", forwarded)
	}
	if !strings.Contains(out, "lines of stderr dropped") {
		t.Error("dropped lines were not reported")
	}
}

func TestToolListChangeIsFollowed(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("f"))
	if _, err := s.Call(ctxT(t), "change_tools", nil, nil); err != nil {
		t.Fatal(err)
	}
	fakeserver.Eventually(t, "the new tool to be listed", func() bool {
		return s.State().Tools.Lookup("added_1") != nil
	})
	res, err := s.Call(ctxT(t), "added_1", nil, nil)
	if err != nil || resultText(t, res) != "added_1" {
		t.Errorf("added_1: %v", err)
	}
}

// TestToolListChangeDuringStartUp has the server announce a new tool
// while the workbench is still connecting (some servers do so during
// initialize): the connection must survive and the tool appear.
func TestToolListChangeDuringStartUp(t *testing.T) {
	for range 5 {
		h := newHarness(t)
		s := h.server(h.config("early", fakeserver.EnvChangeEarly, "1"))
		if _, err := s.Connect(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		fakeserver.Eventually(t, "the early tool to be listed", func() bool { return s.State().Tools.Lookup("early") != nil })
	}
}

// TestUnchangedToolListIsNotNews: a server that announces a change of its
// tools and lists the same ones (as many do while starting) is not logged
// at info level; a real change is.
func TestUnchangedToolListIsNotNews(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("same", fakeserver.EnvChangeEarly, "same"))
	if _, err := s.Connect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	fakeserver.Eventually(t, "the announced change to be listed", func() bool {
		return strings.Contains(h.logs.String(), "the same tools are listed")
	})
	if strings.Contains(h.logs.String(), `level=INFO msg="tool list changed"`) {
		t.Errorf("an unchanged list was logged as a change:\n%s", h.logs)
	}
	if _, err := s.Call(ctxT(t), "change_tools", nil, nil); err != nil {
		t.Fatal(err)
	}
	fakeserver.Eventually(t, "the real change to be logged", func() bool {
		return strings.Contains(h.logs.String(), `level=INFO msg="tool list changed"`)
	})
}

func TestExternalRefsAreNeverLoaded(t *testing.T) {
	h := newHarness(t)
	// If the workbench loaded this file, {"x": 5} would fail validation.
	ref := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(ref, []byte(`{"type":"string"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := h.server(h.config("f", fakeserver.EnvRefFile, ref))
	res, err := s.Call(ctxT(t), "ref", json.RawMessage(`{"x":5}`), nil)
	if err != nil || resultText(t, res) != "ref ran" {
		t.Fatalf("ref: %v", err)
	}
	if !strings.Contains(h.logs.String(), "is not loaded") {
		t.Error("the refused $ref was not logged")
	}
}

func TestSlowCallDoesNotDelayOthers(t *testing.T) {
	h := newHarness(t)
	s := h.server(h.config("f"))
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		_, _ = s.Call(ctxT(t), "sleep", json.RawMessage(`{"ms":30000}`), nil)
	}()
	fakeserver.Eventually(t, "the slow call to arrive", func() bool { return contains(h.lines(fakeserver.CallsFile), "sleep") })
	for i := range 20 {
		res, err := s.Call(ctxT(t), "echo", json.RawMessage(`{"text":"`+strconv.Itoa(i)+`"}`), nil)
		if err != nil || !strings.Contains(resultText(t, res), `"text":"`+strconv.Itoa(i)+`"`) {
			t.Fatalf("echo %d: %v", i, err)
		}
	}
	select {
	case <-slowDone:
		t.Fatal("the slow call finished first: the test proves nothing")
	default:
	}
	s.Close()
	<-slowDone
}

func TestDefaultBackoffIsExponentialAndCapped(t *testing.T) {
	var o Options
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}
	for i, w := range want {
		if got := o.backoff(i + 1); got != w {
			t.Errorf("backoff before retry %d = %v, want %v", i+1, got, w)
		}
	}
	for _, retry := range []int{33, 64, 100} {
		if got := o.backoff(retry); got != 8*time.Second {
			t.Errorf("backoff before retry %d = %v, want the 8s ceiling", retry, got)
		}
	}
}
