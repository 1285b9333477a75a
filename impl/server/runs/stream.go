package runs

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
)

// HeartbeatEvery is how often an idle event stream sends a comment line, so proxies keep it open.
var HeartbeatEvery = 15 * time.Second

// Stream writes a run's events to w as server-sent events, after the event with sequence
// after: the stored history first, then each new event as it is recorded (on any process), with
// heartbeats in between; it returns after the run's end event, or when ctx ends.
func (s *Service) Stream(ctx context.Context, run uuid.UUID, after int64, w io.Writer) error {
	signal, unsubscribe := s.hub.subscribe(run)
	defer unsubscribe()
	heartbeat := time.NewTicker(HeartbeatEvery)
	defer heartbeat.Stop()
	if _, err := io.WriteString(w, "retry: 2000\n\n"); err != nil {
		return err
	}
	for {
		events, err := s.st.ListRunEvents(ctx, db.ListRunEventsParams{RunID: run, Seq: after, RowLimit: 500})
		if err != nil {
			return err
		}
		for _, e := range events {
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, e.Data); err != nil {
				return err
			}
			after = e.Seq
			if e.Type == "end" {
				return nil
			}
		}
		if len(events) == 500 {
			continue
		}
		r, err := s.st.GetRun(ctx, run)
		if err != nil {
			return err
		}
		if Terminal(r.Run.Status) && r.Run.LastSeq <= after {
			// Ended without an end event of its own (for example before the end event existed).
			_, err := fmt.Fprintf(w, "event: end\ndata: {\"type\":\"end\",\"runId\":%q,\"status\":%q,\"sequence\":%d}\n\n", run, r.Run.Status, after+1)
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-signal:
		case <-heartbeat.C:
			if _, err := io.WriteString(w, ": heartbeat\n\n"); err != nil {
				return err
			}
		case <-time.After(2 * time.Second): // a lost notification only delays an event
		}
	}
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
