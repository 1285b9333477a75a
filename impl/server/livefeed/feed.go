// Package livefeed serves streams of stored, numbered events as server-sent events to many
// subscribers: the events of a run (impl/server/runs) and those of an agent job
// (impl/server/agents). A stream sends the stored history first, then each new event as it is
// recorded on any process; it resumes after a Last-Event-ID, and ends after the subject's stored
// end event (or, for a subject that ended without one, after an event the server makes).
//
// Per process, one listener (Listen) hears the notification of every committed batch of events;
// each subject with subscribers in the process has one feed, which reads the new events from the
// database once per notification, formats them once as server-sent events and hands the same bytes
// to every subscriber from memory. A subscriber that falls Options.Backlog batches behind is
// dropped: its stream ends, and the client resumes with Last-Event-ID (every event carries its
// id), so a slow reader never slows the writer or the other readers (docs/benchmarks.md, "Live
// events").
package livefeed

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Event is one stored event of a subject.
type Event struct {
	Seq  int64
	Type string // "end" ends the stream
	Data []byte // JSON
}

// Head is what a stream needs to know of its subject besides its events.
type Head struct {
	// LastSeq is the sequence number of the subject's last stored event.
	LastSeq int64
	// Over is set when the subject has ended. A subject that is over and has no stored event after
	// the stream's position ends the stream with End's event, once EndWait has passed (its stored
	// end event may still be on its way). A nil End means the subject always stores its end event.
	Over    bool
	EndWait time.Duration
	End     func(seq int64) []byte
}

// Source reads a kind of subject's events and head from the database.
type Source interface {
	// Events returns up to limit events of subject id after sequence number after, in order.
	Events(ctx context.Context, id uuid.UUID, after int64, limit int32) ([]Event, error)
	// Head returns the subject's head, or an error when it cannot be read.
	Head(ctx context.Context, id uuid.UUID) (Head, error)
}

// Options tune a Hub. The pointers are read at each use, so that a test may change the variable
// they point to while the hub runs; a nil pointer takes the default.
type Options struct {
	// Backlog is how many event batches a subscriber may have waiting before it is dropped (256).
	Backlog *int
	// Coalesce is the least time between two reads of a feed (DefaultCoalesce): the events
	// recorded meanwhile go out together.
	Coalesce *time.Duration
	// Heartbeat is how often an idle stream sends a comment line, so proxies keep it open (15 s).
	Heartbeat *time.Duration
	// Writers is how many goroutines write one batch to a feed's subscribers
	// (DefaultWriters()).
	Writers *int
	// WriteTimeout bounds a hub writer's write of a live batch to one subscriber
	// (DefaultWriteTimeout): a subscriber that takes longer is dropped and resumes with
	// Last-Event-ID.
	WriteTimeout *time.Duration
}

// DefaultWriteTimeout is Options.WriteTimeout's default. A write blocks only when the client's
// socket buffers are full, i.e. the client is far behind.
const DefaultWriteTimeout = 100 * time.Millisecond

// streamWriteTimeout bounds the writes of a stream's own goroutine (its history, heartbeats,
// batches that waited): a client that does not read for that long is dropped.
var streamWriteTimeout = 30 * time.Second

// DefaultWriters is Options.Writers's default: half the processors the Go scheduler uses (at least
// one), so that delivering a batch to many subscribers leaves the other half to the rest of the
// process and machine.
func DefaultWriters() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// DefaultCoalesce is a feed's least time between two reads when Options.Coalesce is nil: none, a
// feed reads as soon as it is notified. Batches coalesce by themselves when the process is busy:
// the notifications that arrive during a read make one more read, and a subscriber still writing
// one batch sends every batch waiting after it in one write.
const DefaultCoalesce = 0

// page is how many events one database read returns at most.
const page int32 = 500

// feedPoll is how often a feed reads without a notification (a lost one only delays an event).
var feedPoll = 2 * time.Second

// frame is one stored event formatted once as a server-sent event: batch.all[off:stop].
type frame struct {
	seq       int64
	end       bool
	off, stop int
}

// batch is what one read of a feed found, in sequence order; all is the frames' texts joined:
// the bytes every subscriber in step with the feed is sent, shared, with one write each.
type batch struct {
	frames []frame
	all    []byte
}

func (b *batch) first() int64 { return b.frames[0].seq }
func (b *batch) last() int64  { return b.frames[len(b.frames)-1].seq }
func (b *batch) ends() bool   { return b.frames[len(b.frames)-1].end }

// from returns the batch's events after sequence number after, up to its end event if it has
// one, as one slice of the shared bytes (nothing is copied), with the last sequence number it
// holds and whether that is the end event; nil when the batch has nothing after after.
func (b *batch) from(after int64) (text []byte, last int64, end bool) {
	i := 0
	for i < len(b.frames) && b.frames[i].seq <= after {
		i++
	}
	if i == len(b.frames) {
		return nil, after, false
	}
	j := i
	for j < len(b.frames)-1 && !b.frames[j].end {
		j++
	}
	return b.all[b.frames[i].off:b.frames[j].stop], b.frames[j].seq, b.frames[j].end
}

// format writes one event as the stream sends it.
func format(dst []byte, e Event) []byte {
	dst = append(dst, "id: "...)
	dst = strconv.AppendInt(dst, e.Seq, 10)
	dst = append(dst, "\nevent: "...)
	dst = append(dst, e.Type...)
	dst = append(dst, "\ndata: "...)
	dst = append(dst, e.Data...)
	return append(dst, "\n\n"...)
}

func newBatch(events []Event) *batch {
	n := 0
	for _, e := range events {
		n += len(e.Type) + len(e.Data) + 40
	}
	b := &batch{frames: make([]frame, len(events)), all: make([]byte, 0, n)}
	for i, e := range events {
		start := len(b.all)
		b.all = format(b.all, e)
		b.frames[i] = frame{seq: e.Seq, end: e.Type == "end", off: start, stop: len(b.all)}
	}
	return b
}

// deadliner is a stream's writer that can bound its next write: the HTTP handlers' writers. The
// hub's writers write only to those; a stream whose writer cannot is written by its own goroutine.
type deadliner interface {
	SetWriteDeadline(time.Time) error
}

// Why a subscriber's stream is over.
const (
	running = iota
	overEnded
	overDropped // too slow: too many batches waiting, or a write past its deadline
	overFailed  // its write failed
	overClosed  // its stream returned
)

// subscriber is one event stream's place in a feed. Exactly one goroutine writes to its writer at
// a time, the one that set busy: a hub writer (a live batch, in step with the stream) or the
// stream's own goroutine (the history, a heartbeat, or batches that waited in pending).
type subscriber struct {
	w    io.Writer
	dl   deadliner // nil: only the stream's own goroutine writes
	wake chan struct{}

	mu      sync.Mutex
	idle    sync.Cond // busy cleared
	busy    bool
	live    bool  // past its history: a hub writer may write the feed's batches
	after   int64 // the last event written (while not busy)
	pending []*batch
	over    int
	err     error // overFailed's
}

func (s *subscriber) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// feed serves the subscribers of one subject in this process.
type feed struct {
	id   uuid.UUID
	kick chan struct{}
	done chan struct{}

	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	cursor int64 // the last event handed out; -1 until the first subscriber has read the history
	// scratch holds the subscribers of the batch being delivered (the feed's goroutine's).
	scratch []*subscriber
}

// Hub holds the feeds of the subjects this process's streams follow.
type Hub struct {
	src  Source
	opts Options

	mu    sync.Mutex
	feeds map[uuid.UUID]*feed
	// subscribers counts the open streams; reads and drops count the feeds' database reads and the
	// subscribers dropped for being slow.
	subscribers, reads, drops atomic.Int64
}

// New returns a hub that reads its subjects from src.
func New(src Source, opts Options) *Hub {
	return &Hub{src: src, opts: opts, feeds: map[uuid.UUID]*feed{}}
}

func (h *Hub) backlog() int {
	if h.opts.Backlog != nil {
		return max(*h.opts.Backlog, 1)
	}
	return 256
}

func (h *Hub) coalesce() time.Duration {
	if h.opts.Coalesce != nil {
		return *h.opts.Coalesce
	}
	return DefaultCoalesce
}

func (h *Hub) writers() int {
	if h.opts.Writers != nil {
		return max(*h.opts.Writers, 1)
	}
	return DefaultWriters()
}

func (h *Hub) writeTimeout() time.Duration {
	if h.opts.WriteTimeout != nil {
		return *h.opts.WriteTimeout
	}
	return DefaultWriteTimeout
}

func (h *Hub) heartbeat() time.Duration {
	if h.opts.Heartbeat != nil {
		return *h.opts.Heartbeat
	}
	return 15 * time.Second
}

// subscribe adds sub to the subject's feed, starting the feed when it is the first.
func (h *Hub) subscribe(id uuid.UUID, sub *subscriber) (*feed, func()) {
	h.mu.Lock()
	f := h.feeds[id]
	if f == nil {
		f = &feed{id: id, kick: make(chan struct{}, 1), done: make(chan struct{}), subs: map[*subscriber]struct{}{}, cursor: -1}
		h.feeds[id] = f
		go f.loop(h)
	}
	f.mu.Lock()
	f.subs[sub] = struct{}{}
	f.mu.Unlock()
	h.mu.Unlock()
	h.subscribers.Add(1)
	var once sync.Once
	return f, func() {
		once.Do(func() {
			h.subscribers.Add(-1)
			h.mu.Lock()
			defer h.mu.Unlock()
			f.mu.Lock()
			delete(f.subs, sub)
			empty := len(f.subs) == 0
			f.mu.Unlock()
			if empty && h.feeds[id] == f {
				delete(h.feeds, id)
				close(f.done)
			}
		})
	}
}

// Publish tells the subject's feed, if this process has one, that the subject has new events.
func (h *Hub) Publish(id uuid.UUID) {
	h.mu.Lock()
	f := h.feeds[id]
	h.mu.Unlock()
	if f != nil {
		f.poke()
	}
}

// Stats are a hub's counters.
type Stats struct {
	// Subscribers is the number of open streams; FeedReads the feeds' database reads; Dropped the
	// streams ended for being too far behind.
	Subscribers, FeedReads, Dropped int64
}

// Stats reports the hub's counters.
func (h *Hub) Stats() Stats {
	return Stats{Subscribers: h.subscribers.Load(), FeedReads: h.reads.Load(), Dropped: h.drops.Load()}
}

func (f *feed) poke() {
	select {
	case f.kick <- struct{}{}:
	default: // a read is already due; it reads everything new
	}
}

// seed sets where the feed starts reading, once: after the history the first subscriber read.
func (f *feed) seed(seq int64) {
	f.mu.Lock()
	if f.cursor < 0 {
		f.cursor = seq
	}
	f.mu.Unlock()
	f.poke()
}

func (f *feed) loop(h *Hub) {
	tick := time.NewTicker(feedPoll)
	defer tick.Stop()
	var last time.Time
	for {
		select {
		case <-f.done:
			return
		case <-f.kick:
		case <-tick.C:
		}
		if wait := h.coalesce() - time.Since(last); wait > 0 {
			select {
			case <-f.done:
				return
			case <-time.After(wait):
			}
			select { // the kicks of the window are read by this read
			case <-f.kick:
			default:
			}
		}
		last = time.Now()
		f.read(h)
	}
}

// read hands every event after the cursor to every subscriber, one database read per page.
func (f *feed) read(h *Hub) {
	f.mu.Lock()
	cursor := f.cursor
	f.mu.Unlock()
	if cursor < 0 {
		return
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		events, err := h.src.Events(ctx, f.id, cursor, page)
		cancel()
		h.reads.Add(1)
		if err != nil || len(events) == 0 {
			return // the next notification or poll tries again
		}
		b := newBatch(events)
		f.mu.Lock()
		subs := f.scratch[:0]
		for sub := range f.subs {
			subs = append(subs, sub)
		}
		f.cursor = b.last()
		f.mu.Unlock()
		h.deliver(subs, b)
		clear(subs) // no stream is kept alive by the scratch list
		f.scratch = subs
		cursor = b.last()
		if len(events) < int(page) {
			return
		}
	}
}

// deliver hands batch b to subs: up to Options.Writers goroutines (this one included) take the
// subscribers in turn and write the batch's shared bytes to each one in step with the feed, one
// write per subscriber, bounded by Options.WriteTimeout; the others get it queued for their own
// goroutine. It returns when every subscriber has been served, so the events that arrive meanwhile
// make the next batch.
func (h *Hub) deliver(subs []*subscriber, b *batch) {
	timeout := h.writeTimeout()
	var next atomic.Int64
	work := func() {
		for {
			i := next.Add(1) - 1
			if i >= int64(len(subs)) {
				return
			}
			h.offer(subs[i], b, timeout)
		}
	}
	// A writer per 64 subscribers at most: below that, starting one costs more than it saves.
	n := min(h.writers(), (len(subs)+63)/64)
	var wg sync.WaitGroup
	for range n - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// offer writes b to sub if sub is in step with the feed and no one is writing to it; otherwise it
// queues b for the stream's goroutine (dropping the subscriber when too many are waiting).
func (h *Hub) offer(sub *subscriber, b *batch, timeout time.Duration) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	switch {
	case sub.over != running:
		return
	case !sub.live || sub.busy || sub.dl == nil || len(sub.pending) > 0 || b.first() > sub.after+1:
		// Not in step (its history, a heartbeat, a batch waiting, or events it has not seen
		// before this batch, which its goroutine reads): its goroutine writes it.
		if len(sub.pending) >= h.backlog() {
			// Too far behind: dropped, to resume with Last-Event-ID.
			sub.over, sub.pending = overDropped, nil
			h.drops.Add(1)
			sub.signal()
			return
		}
		sub.pending = append(sub.pending, b)
		if !sub.busy {
			sub.signal()
		}
		return
	}
	text, last, end := b.from(sub.after)
	if text == nil {
		if b.ends() {
			sub.over = overEnded // the client is past the subject's end already
			sub.signal()
		}
		return
	}
	sub.busy = true
	sub.mu.Unlock()
	err := sub.dl.SetWriteDeadline(time.Now().Add(timeout))
	if err == nil {
		_, err = sub.w.Write(text)
	}
	sub.mu.Lock()
	sub.busy = false
	sub.idle.Broadcast()
	switch {
	case sub.over != running:
	case errors.Is(err, os.ErrDeadlineExceeded):
		sub.over = overDropped
		h.drops.Add(1)
	case err != nil:
		sub.over, sub.err = overFailed, err
	case end:
		sub.after, sub.over = last, overEnded
	default:
		sub.after = last
	}
	if sub.over != running || len(sub.pending) > 0 {
		sub.signal()
	}
}
