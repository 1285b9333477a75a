package runs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
)

// HeartbeatEvery is how often an idle event stream sends a comment line, so proxies keep it open.
var HeartbeatEvery = 15 * time.Second

// endGrace is how long a stream waits for the stored end event of a run that has just ended: the
// worker records the run's status first and its end event right after.
var endGrace = 5 * time.Second

// Stream writes a run's events to w as server-sent events, after the event with sequence
// after: the stored history first, then each new event as it is recorded (on any process), with
// heartbeats in between; it returns after the run's end event, when ctx ends, or when the stream
// fell too far behind (the client resumes with Last-Event-ID). Each call of w.Write is one
// chunk of whole events, meant to be flushed.
func (s *Service) Stream(ctx context.Context, run uuid.UUID, after int64, w io.Writer) error {
	sub, f, unsubscribe := s.hub.subscribe(run, s.loadEvents)
	defer unsubscribe()
	if _, err := io.WriteString(w, "retry: 2000\n\n"); err != nil {
		return err
	}
	r, err := s.st.GetRun(ctx, run)
	if err != nil {
		return err
	}
	// New events come from the feed, which starts (if this stream is its first) after what is
	// stored now, whatever Last-Event-ID this client sent; the history is read by this stream.
	f.seed(r.Run.LastSeq)
	if ended, err := s.catchUp(ctx, run, &after, w); ended || err != nil {
		return err
	}
	var grace <-chan time.Time
	if ended, wait, err := s.endedWithoutEvent(ctx, &r, after, w); ended || err != nil {
		return err
	} else if wait > 0 {
		grace = time.After(wait)
	}
	heartbeat := time.NewTicker(HeartbeatEvery)
	defer heartbeat.Stop()
	var buf bytes.Buffer
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case b, ok := <-sub.ch:
			if !ok {
				return nil // dropped for being slow: the client resumes after the last id it has
			}
			// Whatever else is already waiting goes out in the same write.
			batches := []*batch{b}
			for more := true; more; {
				select {
				case b, ok := <-sub.ch:
					if !ok {
						more = false
						break
					}
					batches = append(batches, b)
				default:
					more = false
				}
			}
			buf.Reset()
			ended := false
			for _, b := range batches {
				if b.last() <= after {
					if b.frames[len(b.frames)-1].end {
						ended = true // the client is past the run's end already
						break
					}
					continue
				}
				if b.first() > after+1 {
					// Events this stream has not seen came before the feed's batch (the feed started
					// from another stream's history): read them, then go on with the batch.
					if buf.Len() > 0 {
						if _, err := w.Write(buf.Bytes()); err != nil {
							return err
						}
						buf.Reset()
					}
					if done, err := s.catchUp(ctx, run, &after, w); done || err != nil {
						return err
					}
					if b.last() <= after {
						continue
					}
				}
				if b.first() == after+1 && buf.Len() == 0 && len(batches) == 1 {
					if _, err := w.Write(b.all); err != nil {
						return err
					}
				} else {
					for _, fr := range b.frames {
						if fr.seq > after {
							buf.Write(fr.text)
						}
					}
				}
				after = b.last()
				if b.frames[len(b.frames)-1].end {
					ended = true
					break
				}
			}
			if buf.Len() > 0 {
				if _, err := w.Write(buf.Bytes()); err != nil {
					return err
				}
			}
			if ended {
				return nil
			}
		case <-heartbeat.C:
			if _, err := io.WriteString(w, ": heartbeat\n\n"); err != nil {
				return err
			}
			if ended, _, err := s.endedWithoutEvent(ctx, s.runRow(ctx, run), after, w); ended || err != nil {
				return err
			}
		case <-grace:
			grace = nil
			if ended, err := s.catchUp(ctx, run, &after, w); ended || err != nil {
				return err
			}
			if ended, _, err := s.endedWithoutEvent(ctx, s.runRow(ctx, run), after, w); ended || err != nil {
				return err
			}
		}
	}
}

func (s *Service) loadEvents(ctx context.Context, run uuid.UUID, after int64, limit int32) ([]db.RunEvent, error) {
	return s.st.ListRunEvents(ctx, db.ListRunEventsParams{RunID: run, Seq: after, RowLimit: limit})
}

// catchUp writes the stored events after *after, a page per write, moving *after; it reports
// whether it wrote the end event.
func (s *Service) catchUp(ctx context.Context, run uuid.UUID, after *int64, w io.Writer) (bool, error) {
	for {
		events, err := s.loadEvents(ctx, run, *after, streamPage)
		if err != nil || len(events) == 0 {
			return false, err
		}
		b := newBatch(events)
		end := -1
		for i, fr := range b.frames {
			if fr.end {
				end = i
				break
			}
		}
		if end >= 0 {
			n := 0 // the batch up to its end event
			for _, fr := range b.frames[:end+1] {
				n += len(fr.text)
			}
			b.all = b.all[:n]
		}
		if _, err := w.Write(b.all); err != nil {
			return false, err
		}
		if end >= 0 {
			*after = b.frames[end].seq
			return true, nil
		}
		*after = b.last()
		if len(events) < int(streamPage) {
			return false, nil
		}
	}
}

// endedWithoutEvent ends the stream of a run that is over but has no end event to send: one
// ingested, or one that ended before end events existed. A run that has just ended gets wait
// (> 0) to let its stored end event arrive first.
func (s *Service) endedWithoutEvent(ctx context.Context, r *db.GetRunRow, after int64, w io.Writer) (bool, time.Duration, error) {
	if r == nil {
		return false, 0, ctx.Err() // not readable now: the next heartbeat looks again
	}
	if !Terminal(r.Run.Status) || r.Run.LastSeq > after {
		return false, 0, nil
	}
	if r.Run.Source == "execute" && r.Run.FinishedAt != nil {
		if left := endGrace - time.Since(*r.Run.FinishedAt); left > 0 {
			return false, left, nil
		}
	}
	_, err := fmt.Fprintf(w, "event: end\ndata: {\"type\":\"end\",\"runId\":%q,\"status\":%q,\"sequence\":%d}\n\n", r.Run.ID, r.Run.Status, after+1)
	return true, 0, err
}

// runRow reads the run, or returns nil when it cannot be read now.
func (s *Service) runRow(ctx context.Context, run uuid.UUID) *db.GetRunRow {
	r, err := s.st.GetRun(ctx, run)
	if err != nil {
		return nil
	}
	return &r
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
