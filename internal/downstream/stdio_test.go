package downstream

import (
	"bufio"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestFrameWriterNeverBlocksTheSender fills a pipe nobody reads: sends
// return at once, and once the reader comes, every frame arrives whole and
// in order.
func TestFrameWriterNeverBlocksTheSender(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fw := newFrameWriter(w, defaultMaxQueued)
	const frames = 2000 // about 1 MiB: many times what a pipe holds
	payload := make([]byte, 500)
	for i := range payload {
		payload[i] = 'x'
	}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := range frames {
			if err := fw.send(fmt.Appendf(nil, "%d %s\n", i, payload)); err != nil {
				t.Errorf("send %d: %v", i, err)
				return
			}
		}
	}()
	select {
	case <-sent:
	case <-time.After(30 * time.Second):
		t.Fatal("send blocked on a pipe nobody reads")
	}
	fw.close()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		if want := fmt.Sprintf("%d %s", n, payload); sc.Text() != want {
			t.Fatalf("frame %d is %.40q…", n, sc.Text())
		}
		n++
	}
	if n != frames {
		t.Errorf("read %d frames, want %d", n, frames)
	}
	select {
	case <-fw.done:
	case <-time.After(30 * time.Second):
		t.Error("the writer did not close the pipe after the last frame")
	}
}
