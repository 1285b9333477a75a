package runs

import (
	"context"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
)

// Stream writes a run's events to w as server-sent events, after the event with sequence
// after: the stored history first, then each new event as it is recorded (on any process), with
// heartbeats in between; it returns after the run's end event (the stored one, or one made here
// for a run that ended without), when ctx ends, or when the stream fell too far behind (the
// client resumes with Last-Event-ID). Each call of w.Write is one chunk of whole events, meant to
// be flushed. The fan-out is impl/server/livefeed's.
func (s *Service) Stream(ctx context.Context, run uuid.UUID, after int64, w io.Writer) error {
	return s.hub.Stream(ctx, run, after, w)
}

// EndQueued records the end event of a run that ended without ever being claimed. Cancel queued
// the webhook deliveries of an executable run with the cancel; those of an ingested run, cancelled
// by the caller's own query, are queued here.
func (s *Service) EndQueued(r db.Run) {
	snk := &sink{s: s, run: r, seq: r.LastSeq}
	snk.appendEvent(apiEvent{Type: "end", Status: &r.Status, Message: ptr("cancelled before it started")})
	if r.Source == "ingest" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.st.WithTx(ctx, func(q *db.Queries) error { return s.queueDeliveries(ctx, q, r.ProjectID, r.ID, r.Status) }); err != nil {
			s.log.Warn("runs: queue webhook deliveries", "run_id", r.ID, "error", err)
		}
	}
}
