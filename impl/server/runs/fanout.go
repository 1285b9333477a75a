package runs

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/livefeed"
)

// Live events (issue 31): the process's one listener (listen.go) hears every run's NOTIFY, and
// impl/server/livefeed fans each batch out to the run's subscribers in this process from memory.

// SubscriberBacklog is how many event batches a subscriber may have waiting before it is dropped.
var SubscriberBacklog = 256

// FeedCoalesce is the least time between two reads of a run's feed: the events recorded
// meanwhile go out together. None by default: the runner already writes its events in batches
// (batch.go), one notification each, and a busy process coalesces the rest by itself
// (livefeed.DefaultCoalesce); docs/benchmarks.md measures both.
var FeedCoalesce time.Duration = livefeed.DefaultCoalesce

// FeedWriters is how many goroutines write one batch to a run's subscribers in this process
// (livefeed.Options.Writers).
var FeedWriters = livefeed.DefaultWriters()

// HeartbeatEvery is how often an idle event stream sends a comment line, so proxies keep it open.
var HeartbeatEvery = 15 * time.Second

// endGrace is how long a stream waits for the stored end event of a run that has just ended: the
// worker records the run's status first and its end event right after.
var endGrace = 5 * time.Second

func newHub(st runEventStore) *livefeed.Hub {
	return livefeed.New(runEvents{st}, livefeed.Options{Backlog: &SubscriberBacklog, Coalesce: &FeedCoalesce, Heartbeat: &HeartbeatEvery, Writers: &FeedWriters})
}

type runEventStore interface {
	ListRunEvents(context.Context, db.ListRunEventsParams) ([]db.ListRunEventsRow, error)
	GetRun(context.Context, uuid.UUID) (db.GetRunRow, error)
}

// runEvents is the livefeed source of runs.
type runEvents struct{ st runEventStore }

func (r runEvents) Events(ctx context.Context, run uuid.UUID, after int64, limit int32) ([]livefeed.Event, error) {
	rows, err := r.st.ListRunEvents(ctx, db.ListRunEventsParams{RunID: run, Seq: after, RowLimit: limit})
	out := make([]livefeed.Event, len(rows))
	for i, e := range rows {
		out[i] = livefeed.Event{Seq: e.Seq, Type: e.Type, Data: e.Data}
	}
	return out, err
}

// Head is over for a run with a final status. A run that is over with no stored event after a
// stream's position ends it with an end event made here: one ingested, or one that ended before
// end events existed; an executed run that has just finished gets what is left of endGrace first.
func (r runEvents) Head(ctx context.Context, run uuid.UUID) (livefeed.Head, error) {
	row, err := r.st.GetRun(ctx, run)
	if err != nil {
		return livefeed.Head{}, err
	}
	h := livefeed.Head{LastSeq: row.Run.LastSeq, Over: Terminal(row.Run.Status)}
	if !h.Over {
		return h, nil
	}
	if row.Run.Source == "execute" && row.Run.FinishedAt != nil {
		h.EndWait = max(endGrace-time.Since(*row.Run.FinishedAt), 0)
	}
	id, status := row.Run.ID, row.Run.Status
	h.End = func(seq int64) []byte {
		return fmt.Appendf(nil, "event: end\ndata: {\"type\":\"end\",\"runId\":%q,\"status\":%q,\"sequence\":%d}\n\n", id, status, seq)
	}
	return h, nil
}

// Subscribers is the number of event streams this process serves.
func (s *Service) Subscribers() int64 { return s.hub.Stats().Subscribers }

// StreamStats are the live-event counters of this process.
type StreamStats = livefeed.Stats

// StreamStats reports the live-event counters of this process.
func (s *Service) StreamStats() StreamStats { return s.hub.Stats() }

// StreamCounts reports the open streams, the feeds' database reads and the streams dropped for
// being slow (for /metrics).
func (s *Service) StreamCounts() (subscribers, feedReads, dropped int64) {
	st := s.StreamStats()
	return st.Subscribers, st.FeedReads, st.Dropped
}
