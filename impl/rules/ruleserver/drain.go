package ruleserver

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// idleGrace is how long a drain waits for a keep-alive connection that has not sent a request
// since the listener closed before closing it. A client that is using its connection sends the
// next request well within it, gets its answer with Connection: close, and the connection is
// closed after that answer; only a connection the client left idle is closed unasked, as an idle
// timeout would close it.
const idleGrace = time.Second

// connTracker follows the server's connections (http.Server.ConnState) so that the drain closes
// a connection only after it has answered, never while a request may be on its way. Per request
// it costs two atomic stores on the connection; the set changes once per connection.
type connTracker struct {
	mu  sync.Mutex
	all map[*errorConn]struct{}
}

func newConnTracker() *connTracker { return &connTracker{all: map[*errorConn]struct{}{}} }

func (t *connTracker) hook(c net.Conn, st http.ConnState) {
	ec, ok := c.(*errorConn)
	if !ok {
		return
	}
	switch st {
	case http.StateNew:
		ec.idle.Store(true)
		t.mu.Lock()
		t.all[ec] = struct{}{}
		t.mu.Unlock()
	case http.StateActive:
		ec.idle.Store(false)
		ec.requests.Add(1)
	case http.StateIdle:
		ec.idle.Store(true)
	case http.StateClosed, http.StateHijacked:
		t.mu.Lock()
		delete(t.all, ec)
		t.mu.Unlock()
	}
}

// idleSeen is what a sweep saw of an idle connection: its request count and since when.
type idleSeen struct {
	requests uint64
	since    time.Time
}

// sweep closes the connections that have stayed idle, without a new request, for grace since
// the previous sweeps first saw them idle, and returns how many connections are still open.
func (t *connTracker) sweep(seen map[*errorConn]idleSeen, now time.Time, grace time.Duration) int {
	t.mu.Lock()
	open := make([]*errorConn, 0, len(t.all))
	for c := range t.all {
		open = append(open, c)
	}
	t.mu.Unlock()
	for _, c := range open {
		n := c.requests.Load()
		if !c.idle.Load() {
			delete(seen, c)
			continue
		}
		s, ok := seen[c]
		if !ok || s.requests != n {
			seen[c] = idleSeen{requests: n, since: now}
			continue
		}
		if now.Sub(s.since) >= grace && !c.unread() {
			_ = c.Close()
			delete(seen, c)
		}
	}
	return len(open)
}

// acceptProbe is the drain's own connection to its listener while acceptQueued waits for the
// server to accept it.
type acceptProbe struct {
	mu    sync.Mutex
	local string              // the probe's local address once its dial has returned, "" before
	early map[string]struct{} // remote addresses accepted while the dial had not returned
	taken chan struct{}       // closed when the server has accepted the probe
}

// took reports whether c is the probe's connection (its other end), and then marks it taken.
func (p *acceptProbe) took(c net.Conn) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.taken == nil {
		return false // no drain is waiting
	}
	remote := c.RemoteAddr().String()
	if p.local == "" {
		p.early[remote] = struct{}{}
		return false
	}
	if remote != p.local {
		return false
	}
	close(p.taken)
	p.taken = nil
	return true
}

// acceptQueued returns once the server has accepted every connection the kernel has queued on ln
// (or after limit). The kernel completes a TCP handshake by itself and queues the connection
// until the process accepts it; closing a listening socket resets the connections still queued,
// and their clients, whose connect succeeded and whose request is sent, read "connection reset
// by peer". The queue is first in, first out: the drain connects to the listener itself and
// returns once the server has accepted that connection, every one queued before it having been
// accepted (and tracked: net/http runs ConnState(StateNew) before its next Accept) by then.
func acceptQueued(ln net.Listener, p *acceptProbe, limit time.Duration) {
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return
	}
	target := *addr
	if target.IP.IsUnspecified() {
		if target.IP.To4() != nil {
			target.IP = net.IPv4(127, 0, 0, 1)
		} else {
			target.IP = net.IPv6loopback
		}
	}
	taken := make(chan struct{})
	p.mu.Lock()
	p.local, p.early, p.taken = "", map[string]struct{}{}, taken
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.local, p.early, p.taken = "", nil, nil
		p.mu.Unlock()
	}()
	deadline := time.Now().Add(limit)
	c, err := net.DialTimeout("tcp", target.String(), limit)
	if err != nil {
		return // nothing to wait for: the listener closes as it would have
	}
	defer c.Close()
	local := c.LocalAddr().String()
	p.mu.Lock()
	_, accepted := p.early[local]
	if accepted {
		p.taken = nil // accepted as an ordinary connection: it closes when c does
	} else {
		p.local = local
	}
	p.mu.Unlock()
	if accepted {
		return
	}
	select {
	case <-taken:
	case <-time.After(time.Until(deadline)):
	}
}

// closeOnDrain adds Connection: close to a response whose header is written after the drain has
// begun, requests that were already running included, so that every keep-alive client learns
// of the drain from its next answer and reconnects elsewhere.
type closeOnDrain struct {
	http.ResponseWriter
	draining *atomic.Bool
	wrote    bool
}

func (w *closeOnDrain) WriteHeader(code int) {
	if !w.wrote && code >= 200 {
		w.wrote = true
		if w.draining.Load() {
			w.ResponseWriter.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *closeOnDrain) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *closeOnDrain) Unwrap() http.ResponseWriter { return w.ResponseWriter }
