package livefeed_test

import (
	"bufio"
	"context"

	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/livefeed"
)

// memSource is a subject's events kept in memory: the fan-out's logic, without a database.
type memSource struct {
	mu     sync.Mutex
	events []livefeed.Event
}

func (m *memSource) add(typ string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seq := int64(len(m.events) + 1)
	m.events = append(m.events, livefeed.Event{Seq: seq, Type: typ, Data: fmt.Appendf(nil, `{"type":%q,"n":%d}`, typ, seq)})
}

func (m *memSource) Events(_ context.Context, _ uuid.UUID, after int64, limit int32) ([]livefeed.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []livefeed.Event
	for _, e := range m.events {
		if e.Seq > after && len(out) < int(limit) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (m *memSource) Head(context.Context, uuid.UUID) (livefeed.Head, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return livefeed.Head{LastSeq: int64(len(m.events))}, nil
}

// connWriter is a connection as the HTTP handlers give it: it takes write deadlines, and a write
// that cannot finish before its deadline fails with os.ErrDeadlineExceeded. A stuck one never
// finishes a write. Each Write goes to a pipe read by a client.
type connWriter struct {
	pw     *io.PipeWriter
	stuck  bool
	mu     sync.Mutex
	dl     time.Time
	writes int
}

func (c *connWriter) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.dl = t
	c.mu.Unlock()
	return nil
}

func (c *connWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes++
	dl, stuck := c.dl, c.stuck && c.writes > 2
	c.mu.Unlock()
	if stuck {
		if dl.IsZero() {
			select {}
		}
		time.Sleep(time.Until(dl))
		return 0, os.ErrDeadlineExceeded
	}
	return c.pw.Write(p)
}

// sse is one event as an EventSource dispatches it.
type sse struct{ id, event, data string }

// parseSSE reads a stream as the server-sent events specification's parser does (fields,
// comments, multi-line data, CR LF or LF), independently of the server's formatter; comments are
// returned as events named ":".
func parseSSE(r io.Reader, got func(sse) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur sse
	var data []string
	lastID := ""
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if data != nil {
				cur.id, cur.data = lastID, strings.Join(data, "\n")
				if cur.event == "" {
					cur.event = "message"
				}
				if !got(cur) {
					return nil
				}
			}
			cur, data = sse{}, nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			if !got(sse{event: ":", data: line[1:]}) {
				return nil
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			lastID = value
		case "event":
			cur.event = value
		case "data":
			data = append(data, value)
		case "retry":
		default:
			return fmt.Errorf("unknown field %q", field)
		}
	}
	return sc.Err()
}

// subscribe opens a stream after after on w's pipe; its events arrive on the returned channel,
// which closes when the stream's bytes end.
func subscribe(t *testing.T, h *livefeed.Hub, id uuid.UUID, after int64, w *connWriter, pr *io.PipeReader) (<-chan sse, <-chan error) {
	t.Helper()
	events, done := make(chan sse, 1000), make(chan error, 1)
	go func() {
		err := h.Stream(context.Background(), id, after, w)
		w.pw.Close()
		done <- err
	}()
	go func() {
		defer close(events)
		_ = parseSSE(pr, func(e sse) bool { events <- e; return true })
	}()
	return events, done
}

func newConn(stuck bool) (*connWriter, *io.PipeReader) {
	pr, pw := io.Pipe()
	return &connWriter{pw: pw, stuck: stuck}, pr
}

// TestLiveBatchesReachEverySubscriberInOneWrite: with several subscribers in step, each live batch
// is one write per subscriber (the shared bytes), every subscriber parses every event in order,
// and the end event ends every stream.
func TestLiveBatchesReachEverySubscriberInOneWrite(t *testing.T) {
	src := &memSource{}
	src.add("log")
	writers := 2
	h := livefeed.New(src, livefeed.Options{Writers: &writers})
	id := uuid.New()
	const n = 150
	conns := make([]*connWriter, n)
	streams := make([]<-chan sse, n)
	dones := make([]<-chan error, n)
	for i := range n {
		w, pr := newConn(false)
		conns[i] = w
		streams[i], dones[i] = subscribe(t, h, id, 0, w, pr)
	}
	for h.Stats().Subscribers < n {
		time.Sleep(time.Millisecond)
	}
	// Every stream has read its history (event 1) before the live batches.
	for i := range n {
		if e := <-streams[i]; e.id != "1" || e.event != "log" {
			t.Fatalf("subscriber %d: first event %+v", i, e)
		}
	}
	const batches = 5
	for b := range batches {
		before := make([]int, n)
		for i, c := range conns {
			c.mu.Lock()
			before[i] = c.writes
			c.mu.Unlock()
		}
		for range 3 {
			src.add("step")
		}
		if b == batches-1 {
			src.add("end")
		}
		h.Publish(id)
		last := 1 + 3*(b+1)
		if b == batches-1 {
			last++
		}
		for i := range n {
			for {
				e, ok := <-streams[i]
				if !ok {
					t.Fatalf("subscriber %d: stream closed before event %d", i, last)
				}
				if e.id == fmt.Sprint(last) {
					break
				}
			}
			conns[i].mu.Lock()
			if w := conns[i].writes - before[i]; w != 1 {
				t.Errorf("batch %d: subscriber %d got %d writes", b, i, w)
			}
			conns[i].mu.Unlock()
		}
	}
	for i := range n {
		if err := <-dones[i]; err != nil {
			t.Fatalf("subscriber %d: %v", i, err)
		}
	}
	if st := h.Stats(); st.Dropped != 0 || st.Subscribers != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestStuckSubscriberIsDroppedAtItsDeadline: a subscriber whose writes never finish is dropped
// after WriteTimeout, without holding the others back; resuming after its last id gives the rest.
func TestStuckSubscriberIsDroppedAtItsDeadline(t *testing.T) {
	src := &memSource{}
	writers, timeout := 1, 50*time.Millisecond
	h := livefeed.New(src, livefeed.Options{Writers: &writers, WriteTimeout: &timeout})
	id := uuid.New()
	stuck, spr := newConn(true)
	stuckEvents, stuckDone := subscribe(t, h, id, 0, stuck, spr)
	fine, fpr := newConn(false)
	fineEvents, fineDone := subscribe(t, h, id, 0, fine, fpr)
	for h.Stats().Subscribers < 2 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // both past their (empty) history
	src.add("log")
	h.Publish(id)
	if e := <-fineEvents; e.id != "1" {
		t.Fatalf("fine: %+v", e)
	}
	if e := <-stuckEvents; e.id != "1" {
		t.Fatalf("stuck, before it stopped reading: %+v", e)
	}
	src.add("log")
	src.add("end")
	h.Publish(id)
	var fineGot []string
	for e := range fineEvents {
		fineGot = append(fineGot, e.id)
	}
	if strings.Join(fineGot, ",") != "2,3" || <-fineDone != nil {
		t.Fatalf("fine subscriber: %v", fineGot)
	}
	select {
	case err := <-stuckDone:
		if err != nil {
			t.Fatalf("dropped stream: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stuck stream was not dropped")
	}
	if h.Stats().Dropped != 1 {
		t.Fatalf("stats %+v", h.Stats())
	}
	for range stuckEvents {
		t.Fatal("the stuck subscriber received more")
	}
	// It resumes after the last id it received.
	again, pr := newConn(false)
	rest, done := subscribe(t, h, id, 1, again, pr)
	var got []string
	for e := range rest {
		got = append(got, e.id+":"+e.event)
	}
	if strings.Join(got, ",") != "2:log,3:end" || <-done != nil {
		t.Fatalf("resumed: %v", got)
	}
}

// TestIdleStreamSendsHeartbeats: a stream with nothing to send writes a comment line each
// Heartbeat, which the parser skips.
func TestIdleStreamSendsHeartbeats(t *testing.T) {
	src := &memSource{}
	beat := 20 * time.Millisecond
	h := livefeed.New(src, livefeed.Options{Heartbeat: &beat})
	id := uuid.New()
	w, pr := newConn(false)
	events, done := subscribe(t, h, id, 0, w, pr)
	for range 2 {
		if e := <-events; e.event != ":" || e.data != " heartbeat" {
			t.Fatalf("%+v", e)
		}
	}
	src.add("end")
	h.Publish(id)
	for e := range events {
		if e.event == "end" {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("no end event")
}
