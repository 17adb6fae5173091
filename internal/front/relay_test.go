package front

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// lines reads newline-terminated lines from r onto a channel, closed at
// the end.
func lines(r io.Reader) <-chan string {
	ch := make(chan string, 16)
	go func() {
		defer close(ch)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			ch <- strings.TrimSuffix(line, "\n")
		}
	}()
	return ch
}

// next is the next line from ch, bounded by a minute.
func next(t *testing.T, ch <-chan string, what string) string {
	t.Helper()
	select {
	case l, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the stream ended", what)
		}
		return l
	case <-time.After(time.Minute):
		t.Fatalf("%s: nothing came", what)
	}
	return ""
}

// envelope is what the test reads of a JSON-RPC message.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func parse(t *testing.T, line string) envelope {
	t.Helper()
	var e envelope
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		t.Fatalf("not JSON: %q", line)
	}
	return e
}

// startRelay runs a session relay on backend first until the test ends;
// a new backend, when it wants one, is another(). It returns the lines
// the host gets and how the host sends one.
func startRelay(t *testing.T, first io.ReadWriteCloser, another func() io.ReadWriteCloser) (<-chan string, func(string)) {
	hostIn, toRelay := io.Pipe()
	fromRelay, hostOut := io.Pipe()
	r := &sessionRelay{log: slog.New(slog.DiscardHandler), out: hostOut}
	r.connect = func(context.Context) (io.ReadWriteCloser, error) { return another(), nil }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = r.run(ctx, hostIn, first); close(done) }()
	t.Cleanup(func() {
		toRelay.Close()
		cancel()
		<-done
	})
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(toRelay, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	return lines(fromRelay), send
}

// TestRelayCarriesTheSessionToANewBackend: the backend ends with a request
// in flight; that request gets an error, once; the next request goes to a
// new backend, which is told the host's initialize (its answer kept from
// the host) and initialized before it.
func TestRelayCarriesTheSessionToANewBackend(t *testing.T) {
	first, firstEnd := net.Pipe()
	second, secondEnd := net.Pipe()
	var connects atomic.Int32
	host, send := startRelay(t, first, func() io.ReadWriteCloser {
		connects.Add(1)
		return second
	})

	b1 := lines(firstEnd)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
	send(initialize)
	if got := next(t, b1, "the first backend's initialize"); got != initialize {
		t.Fatalf("the first backend got %q", got)
	}
	if _, err := io.WriteString(firstEnd, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if e := parse(t, next(t, host, "the initialize's answer")); string(e.ID) != "1" || e.Error != nil {
		t.Fatalf("the host's initialize answer: %+v", e)
	}
	const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	send(initialized)
	next(t, b1, "initialized")
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"use_tool"}}`)
	next(t, b1, "the call")
	firstEnd.Close() // the shared workbench dies with the call in flight

	if e := parse(t, next(t, host, "the call's error")); string(e.ID) != "2" || e.Error == nil || !strings.Contains(e.Error.Message, "the shared workbench ended during this request") {
		t.Fatalf("the call in flight when the backend ended: %+v", e)
	}

	b2 := lines(secondEnd)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"use_tool"}}`)
	replay := parse(t, next(t, b2, "the replayed initialize"))
	var want, got any
	_ = json.Unmarshal(parse(t, initialize).Params, &want)
	_ = json.Unmarshal(replay.Params, &got)
	if replay.Method != "initialize" || !strings.HasPrefix(string(replay.ID), `"wb-replay-`) || !jsonEqual(want, got) {
		t.Fatalf("the new backend's first message: %+v", replay)
	}
	if _, err := io.WriteString(secondEnd, `{"jsonrpc":"2.0","id":`+string(replay.ID)+`,"result":{}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if got := next(t, b2, "initialized, replayed"); got != initialized {
		t.Fatalf("the new backend's second message: %q", got)
	}
	if e := parse(t, next(t, b2, "the next call")); string(e.ID) != "3" {
		t.Fatalf("the new backend's third message: %+v", e)
	}
	if _, err := io.WriteString(secondEnd, `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if e := parse(t, next(t, host, "the next call's answer")); string(e.ID) != "3" || e.Error != nil {
		t.Fatalf("the host got %+v, want the answer to 3 (and never the replayed initialize's)", e)
	}
	if n := connects.Load(); n != 1 {
		t.Errorf("%d new backends, want 1", n)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// brokenPipe is a backend connection whose peer has gone but whose reader
// has not yet seen it: writes fail, reads wait (as after stop-shared, when
// the host's next call comes before the relay has read the end).
type brokenPipe struct {
	net.Conn
	broken atomic.Bool
}

func (b *brokenPipe) Write(p []byte) (int, error) {
	if b.broken.Load() {
		return 0, syscall.EPIPE
	}
	return b.Conn.Write(p)
}

// TestRelayResendsALineThatNeverReachedTheBackend: a request whose write
// to the backend fails did not run there; it goes to a new backend (told
// the host's initialize first) and its answer comes back, where it was
// answered with an error as one lost in flight.
func TestRelayResendsALineThatNeverReachedTheBackend(t *testing.T) {
	firstConn, firstEnd := net.Pipe()
	first := &brokenPipe{Conn: firstConn}
	second, secondEnd := net.Pipe()
	host, send := startRelay(t, first, func() io.ReadWriteCloser { return second })
	b1 := lines(firstEnd)
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`)
	next(t, b1, "the first backend's initialize")
	if _, err := io.WriteString(firstEnd, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	next(t, host, "the initialize's answer")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	next(t, b1, "initialized")

	first.broken.Store(true)
	b2 := lines(secondEnd)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"use_tool"}}`)
	replay := parse(t, next(t, b2, "the replayed initialize"))
	if replay.Method != "initialize" {
		t.Fatalf("the new backend's first message: %+v", replay)
	}
	if _, err := io.WriteString(secondEnd, `{"jsonrpc":"2.0","id":`+string(replay.ID)+`,"result":{}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	next(t, b2, "initialized, replayed")
	if e := parse(t, next(t, b2, "the call, sent again")); string(e.ID) != "2" || e.Method != "tools/call" {
		t.Fatalf("the new backend's third message: %+v", e)
	}
	if _, err := io.WriteString(secondEnd, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if e := parse(t, next(t, host, "the call's answer")); string(e.ID) != "2" || e.Error != nil {
		t.Fatalf("the host got %+v, want the new backend's answer to 2", e)
	}
}
