package downstream

import (
	"errors"
	"testing"
)

// TestPoolUsers: equal definitions from two loads find one server, which
// keeps the first acquirer's configuration; a server that is not shared
// is its owner's alone; an owner's second Acquire needs a second Release;
// a Release by who does not use it changes nothing; the last Release
// closes with its reason; after Close, Acquire gives a closed server.
func TestPoolUsers(t *testing.T) {
	h := newHarness(t)
	p := NewPool(h.opts)
	t.Cleanup(p.Close)
	type owner struct{ name string }
	o1, o2, o3 := &owner{"1"}, &owner{"2"}, &owner{"3"}
	c1, c2 := h.config("a"), h.config("a")
	c1.Shared, c2.Shared = true, true
	s1 := p.Acquire(o1, "tb", c1, nil)
	s2 := p.Acquire(o2, "tb", c2, nil)
	if s1 != s2 || s2.Config() != c1 {
		t.Fatalf("equal definitions: servers %p %p, config of the first acquirer %v", s1, s2, s2.Config() == c1)
	}
	if other := p.Acquire(o1, "other", c2, nil); other == s1 {
		t.Error("another toolbox shares the server")
	} else {
		p.Release(o1, other)
	}
	c3 := h.config("a")
	c3.Shared = true
	c3.Args = []string{"x"}
	if other := p.Acquire(o3, "tb", c3, nil); other == s1 {
		t.Error("another definition shares the server")
	} else {
		p.Release(o3, other)
	}
	own1, own2 := h.config("own"), h.config("own")
	if a, b := p.Acquire(o1, "tb", own1, nil), p.Acquire(o2, "tb", own2, nil); a == b {
		t.Error("a server that is not shared went to two owners")
	} else {
		p.Release(o1, a)
		p.Release(o2, b)
	}

	if _, err := s1.Connect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	p.Acquire(o1, "tb", c1, nil) // o1 twice
	p.Release(o3, s1)            // not a user
	p.Release(o2, s1)
	p.Release(o1, s1)
	if ents := p.Entries(); len(ents) != 1 || ents[0].Users != 1 || ents[0].State.Status != StatusConnected {
		t.Fatalf("o1 holds it once more: %+v", ents)
	}
	p.ReleaseFor(o1, s1, ErrRemoved)
	if ents := p.Entries(); len(ents) != 0 {
		t.Errorf("entries after the last release: %+v", ents)
	}
	if _, err := s1.Connect(ctxT(t)); !errors.Is(err, ErrRemoved) {
		t.Errorf("the last release closed it with %v, want ErrRemoved", err)
	}
	if n := len(h.lines("starts")); n != 1 {
		t.Errorf("%d starts, want 1", n)
	}

	kept := p.Acquire(o1, "tb", c1, nil)
	if _, err := kept.Connect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if _, err := kept.Connect(ctxT(t)); !errors.Is(err, errClosed) {
		t.Errorf("after Close: %v", err)
	}
	late := p.Acquire(o2, "tb", c2, nil)
	if _, err := late.Connect(ctxT(t)); !errors.Is(err, errClosed) {
		t.Errorf("acquired after Close: %v", err)
	}
	p.Release(o2, late)
}
