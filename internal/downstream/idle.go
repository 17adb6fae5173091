package downstream

import (
	"errors"
	"time"
)

// The idle stop: a connection whose server has an idleTimeoutMs ends after
// that long with no call in flight and none made. Its calls map is the
// count of calls in flight (relayed and SDK calls both register there), so
// the cost per call is a timer stopped when a call starts and re-armed
// when the last one ends, under the lock the call takes anyway.

// errIdle is why a connection stopped for idleness.
var errIdle = errors.New("stopped after idleTimeoutMs without calls")

// errNotSent is a call that found its connection closed, or stopping,
// before anything was sent: it can go to a new connection, whatever the
// tool.
var errNotSent = errors.New("the server's connection closed before the call was sent")

// startIdle arms the idle stop of a connection that has just started.
func (c *conn) startIdle() {
	d := c.s.cfg.IdleTimeout
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	if c.calls == nil {
		return // ended already
	}
	if len(c.calls) == 0 {
		c.idleSince = time.Now()
	}
	if d <= 0 {
		return
	}
	c.idle = time.AfterFunc(d, c.idleFired)
	if len(c.calls) > 0 {
		c.idle.Stop() // calls came first: the last one to end arms it
	}
}

// callStartedLocked notes a call registered in c.calls. callsMu is held.
func (c *conn) callStartedLocked() {
	if c.idle != nil {
		c.idle.Stop()
	}
}

// callEndedLocked notes a call removed from c.calls: the last one arms
// the idle stop. callsMu is held.
func (c *conn) callEndedLocked() {
	if len(c.calls) > 0 {
		return
	}
	c.idleSince = time.Now()
	if c.idle != nil {
		c.idle.Reset(c.s.cfg.IdleTimeout)
	}
}

// IdleFor is how long the server has had no call in flight, while it runs;
// 0 when it is not running or a call is in flight.
func (s *Server) IdleFor() time.Duration {
	s.mu.Lock()
	c := s.live
	s.mu.Unlock()
	if c == nil {
		return 0
	}
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	if len(c.calls) > 0 || c.idleSince.IsZero() {
		return 0
	}
	return time.Since(c.idleSince)
}

// idleFired ends the connection if it is still idle. A call that starts
// at the same moment either registered first (and the connection stays)
// or finds the connection stopping and goes to a new one: a call in
// flight is never cut.
func (c *conn) idleFired() {
	d := c.s.cfg.IdleTimeout
	c.callsMu.Lock()
	if c.calls == nil || len(c.calls) > 0 {
		c.callsMu.Unlock()
		return
	}
	if wait := d - time.Since(c.idleSince); wait > 0 {
		// A call came and went since the timer was set: it re-armed it.
		c.idle.Reset(wait)
		c.callsMu.Unlock()
		return
	}
	c.calls = nil // from here on, new calls go to a new connection
	c.callsMu.Unlock()
	c.s.log.Info("stopping the server: idle for idleTimeoutMs; the next call starts it again", "idle_timeout", d)
	c.end(errIdle, true)
}
