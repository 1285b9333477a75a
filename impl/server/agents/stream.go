package agents

import (
	"context"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/livefeed"
)

// HeartbeatEvery is how often an idle event stream sends a comment line.
var HeartbeatEvery = 15 * time.Second

// Stream writes a job's events after sequence after to w as server-sent events: the stored
// history first, then each new event as it is recorded on any process; it returns after the end
// event (every job stores one when it ends), when ctx ends, or when the stream fell too far behind
// (the client resumes with Last-Event-ID). The fan-out is impl/server/livefeed's, as for runs.
func (s *Service) Stream(ctx context.Context, job uuid.UUID, after int64, w io.Writer) error {
	return s.hub.Stream(ctx, job, after, w)
}

// Start listens for the job events of every process until ctx ends.
func (s *Service) Start(ctx context.Context) {
	go livefeed.Listen(ctx, s.st.Pool, "sdods_agent_events", s.log, func(payload string) {
		if id, err := uuid.Parse(payload); err == nil {
			s.hub.Publish(id)
		}
	})
}

func newHub(st jobEventStore) *livefeed.Hub {
	return livefeed.New(jobEvents{st}, livefeed.Options{Heartbeat: &HeartbeatEvery})
}

type jobEventStore interface {
	ListAgentJobEvents(context.Context, db.ListAgentJobEventsParams) ([]db.AgentJobEvent, error)
	GetAgentJob(context.Context, uuid.UUID) (db.GetAgentJobRow, error)
}

// jobEvents is the livefeed source of agent jobs.
type jobEvents struct{ st jobEventStore }

func (j jobEvents) Events(ctx context.Context, job uuid.UUID, after int64, limit int32) ([]livefeed.Event, error) {
	rows, err := j.st.ListAgentJobEvents(ctx, db.ListAgentJobEventsParams{JobID: job, Seq: after, RowLimit: limit})
	out := make([]livefeed.Event, len(rows))
	for i, e := range rows {
		out[i] = livefeed.Event{Seq: e.Seq, Type: e.Type, Data: e.Data}
	}
	return out, err
}

// Head never ends a stream by itself: a job records its end event in the transaction that ends it.
func (j jobEvents) Head(ctx context.Context, job uuid.UUID) (livefeed.Head, error) {
	row, err := j.st.GetAgentJob(ctx, job)
	if err != nil {
		return livefeed.Head{}, err
	}
	return livefeed.Head{LastSeq: row.LastSeq}, nil
}
