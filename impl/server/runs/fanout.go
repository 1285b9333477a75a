package runs

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
)

// Live events (issue 31): the process's one listener (listen.go) hears every run's NOTIFY; each
// run that has subscribers in this process has one feed, which reads the new events from the
// database once per notification batch and hands the same formatted bytes to every subscriber
// from memory. A subscriber that falls SubscriberBacklog batches behind is dropped: its stream
// ends, and the client resumes with Last-Event-ID (every event carries its id), so a slow
// reader never slows the run or the other readers.

// SubscriberBacklog is how many event batches a subscriber may have waiting before it is dropped.
var SubscriberBacklog = 256

// FeedCoalesce is the least time between two reads of a feed: the events recorded meanwhile go
// out together, one write per subscriber instead of one per event, which is what keeps the CPU of
// a thousand subscribers small. It bounds the lag it adds.
var FeedCoalesce = 25 * time.Millisecond

// feedPoll is how often a feed reads without a notification (a lost one only delays an event).
var feedPoll = 2 * time.Second

// frame is one stored event formatted once as a server-sent event.
type frame struct {
	seq  int64
	end  bool
	text []byte
}

// batch is what one read of a feed found, in sequence order; all is the frames' texts joined,
// written with one call when a subscriber needs the whole batch.
type batch struct {
	frames []frame
	all    []byte
}

func (b *batch) first() int64 { return b.frames[0].seq }
func (b *batch) last() int64  { return b.frames[len(b.frames)-1].seq }

// formatEvent writes one event as the stream sends it.
func formatEvent(dst []byte, e db.RunEvent) []byte {
	dst = append(dst, "id: "...)
	dst = strconv.AppendInt(dst, e.Seq, 10)
	dst = append(dst, "\nevent: "...)
	dst = append(dst, e.Type...)
	dst = append(dst, "\ndata: "...)
	dst = append(dst, e.Data...)
	return append(dst, "\n\n"...)
}

func newBatch(events []db.RunEvent) *batch {
	n := 0
	for _, e := range events {
		n += len(e.Type) + len(e.Data) + 40
	}
	b := &batch{frames: make([]frame, len(events)), all: make([]byte, 0, n)}
	for i, e := range events {
		start := len(b.all)
		b.all = formatEvent(b.all, e)
		b.frames[i] = frame{seq: e.Seq, end: e.Type == "end", text: b.all[start:len(b.all):len(b.all)]}
	}
	return b
}

// loadEvents reads up to limit events of a run after seq.
type loadEvents func(ctx context.Context, run uuid.UUID, after int64, limit int32) ([]db.RunEvent, error)

// subscriber is one event stream's place in a feed.
type subscriber struct {
	ch chan *batch // closed when the subscriber is dropped
}

// feed serves the subscribers of one run in this process.
type feed struct {
	run  uuid.UUID
	load loadEvents
	kick chan struct{}
	done chan struct{}

	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	cursor int64 // the last event handed out; -1 until the first subscriber has read the history
}

// hub holds the feeds of the runs this process's streams follow.
type hub struct {
	mu    sync.Mutex
	feeds map[uuid.UUID]*feed
	// subscribers counts the open streams (for /metrics); reads and drops count the feeds'
	// database reads and the subscribers dropped for being slow.
	subscribers, reads, drops atomic.Int64
}

func newHub() *hub { return &hub{feeds: map[uuid.UUID]*feed{}} }

// subscribe adds a subscriber to the run's feed, starting the feed when it is the first.
func (h *hub) subscribe(run uuid.UUID, load loadEvents) (*subscriber, *feed, func()) {
	sub := &subscriber{ch: make(chan *batch, SubscriberBacklog)}
	h.mu.Lock()
	f := h.feeds[run]
	if f == nil {
		f = &feed{run: run, load: load, kick: make(chan struct{}, 1), done: make(chan struct{}), subs: map[*subscriber]struct{}{}, cursor: -1}
		h.feeds[run] = f
		go f.loop(h)
	}
	f.mu.Lock()
	f.subs[sub] = struct{}{}
	f.mu.Unlock()
	h.mu.Unlock()
	h.subscribers.Add(1)
	var once sync.Once
	return sub, f, func() {
		once.Do(func() {
			h.subscribers.Add(-1)
			h.mu.Lock()
			defer h.mu.Unlock()
			f.mu.Lock()
			delete(f.subs, sub)
			empty := len(f.subs) == 0
			f.mu.Unlock()
			if empty && h.feeds[run] == f {
				delete(h.feeds, run)
				close(f.done)
			}
		})
	}
}

// publish tells the run's feed, if this process has one, that the run has new events.
func (h *hub) publish(run uuid.UUID) {
	h.mu.Lock()
	f := h.feeds[run]
	h.mu.Unlock()
	if f != nil {
		f.poke()
	}
}

// count reports the open streams.
func (h *hub) count() int64 { return h.subscribers.Load() }

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

func (f *feed) loop(h *hub) {
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
		if wait := FeedCoalesce - time.Since(last); wait > 0 {
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
func (f *feed) read(h *hub) {
	f.mu.Lock()
	cursor := f.cursor
	f.mu.Unlock()
	if cursor < 0 {
		return
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		events, err := f.load(ctx, f.run, cursor, streamPage)
		cancel()
		h.reads.Add(1)
		if err != nil || len(events) == 0 {
			return // the next notification or poll tries again
		}
		b := newBatch(events)
		f.mu.Lock()
		for sub := range f.subs {
			select {
			case sub.ch <- b:
			default:
				// Too far behind: dropped, to resume with Last-Event-ID.
				delete(f.subs, sub)
				close(sub.ch)
				h.drops.Add(1)
			}
		}
		f.cursor = b.last()
		f.mu.Unlock()
		cursor = b.last()
		if len(events) < int(streamPage) {
			return
		}
	}
}

// streamPage is how many events one database read returns at most.
const streamPage int32 = 500

// Subscribers is the number of event streams this process serves.
func (s *Service) Subscribers() int64 { return s.hub.count() }

// StreamStats are the live-event counters of this process.
type StreamStats struct {
	Subscribers, FeedReads, Dropped int64
}

// StreamStats reports the live-event counters of this process.
func (s *Service) StreamStats() StreamStats {
	return StreamStats{Subscribers: s.hub.count(), FeedReads: s.hub.reads.Load(), Dropped: s.hub.drops.Load()}
}

// StreamCounts reports the open streams, the feeds' database reads and the streams dropped for
// being slow (for /metrics).
func (s *Service) StreamCounts() (subscribers, feedReads, dropped int64) {
	st := s.StreamStats()
	return st.Subscribers, st.FeedReads, st.Dropped
}
