package ruleserver

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// tcpPair returns the two ends of a loopback TCP connection, the server's as an errorConn.
func tcpPair(t *testing.T) (*errorConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return &errorConn{Conn: server}, client
}

// closedByServer reports whether the server closed c (EOF or reset) rather than leaving it open.
func closedByServer(t *testing.T, c net.Conn) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

// A sweep closes a connection idle for the grace, unless a request has arrived on it that the
// server has not read yet (its goroutine not yet scheduled, as after the process had no CPU).
func TestSweepLeavesAConnectionWithAnUnreadRequest(t *testing.T) {
	waiting, waitingClient := tcpPair(t)
	quiet, quietClient := tcpPair(t)
	tr := newConnTracker()
	for _, c := range []*errorConn{waiting, quiet} {
		tr.hook(c, 0) // http.StateNew: idle, no request yet
	}
	if _, err := io.WriteString(waitingClient, "POST /evaluations HTTP/1.1\r\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // loopback: the bytes are in the server's receive queue
	long := time.Now().Add(-time.Hour)
	seen := map[*errorConn]idleSeen{waiting: {since: long}, quiet: {since: long}}
	if n := tr.sweep(seen, time.Now(), time.Second); n != 2 {
		t.Fatalf("sweep counted %d connections, want 2", n)
	}
	if closedByServer(t, waitingClient) {
		t.Fatal("the connection with an unread request was closed as idle")
	}
	if !closedByServer(t, quietClient) {
		t.Fatal("the idle connection was left open after the grace")
	}
}

// acceptQueued returns only once the server has accepted every connection queued before its
// probe: closing the listener then resets none of them.
func TestAcceptQueuedTakesTheQueuedConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const queued = 3
	var clients []net.Conn
	for i := 0; i < queued; i++ { // completed by the kernel, not accepted yet
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	probe := &acceptProbe{}
	done := make(chan struct{})
	go func() { acceptQueued(ln, probe, 10*time.Second); close(done) }()
	time.Sleep(50 * time.Millisecond) // the probe is queued behind the clients
	var mu sync.Mutex
	var accepted []net.Conn
	go func() {
		el := errorListener{Listener: ln, probe: probe}
		for {
			c, err := el.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted = append(accepted, c)
			mu.Unlock()
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("acceptQueued did not return")
	}
	mu.Lock()
	got := append([]net.Conn(nil), accepted...)
	mu.Unlock()
	if len(got) != queued {
		t.Fatalf("%d connections accepted when acceptQueued returned, want %d (the probe not among them)", len(got), queued)
	}
	_ = ln.Close()
	for i, c := range clients {
		if _, err := io.WriteString(c, "ping"); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	for i, sc := range got {
		defer sc.Close()
		b := make([]byte, 4)
		_ = sc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(sc, b); err != nil || string(b) != "ping" {
			t.Fatalf("accepted connection %d: %q, %v", i, b, err)
		}
	}
}
