package runs

import (
	"context"
	"slices"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/integrations"
	"github.com/sdods/sdods/impl/server/jobs"
	"github.com/sdods/sdods/impl/server/store"
)

// WebhookArgs is the River job that delivers one event of a finished run (run.finished,
// run.<status>) to its project's webhook. It is inserted in the transaction that finishes the run,
// and retried with River's backoff (1 s, 16 s, 81 s, … about 80 minutes over its 8 attempts) while
// the endpoint fails.
type WebhookArgs struct {
	RunID uuid.UUID `json:"run_id"`
	Event string    `json:"event"`
}

// Kind names webhook deliveries in river_job.
func (WebhookArgs) Kind() string { return "webhook_delivery" }

// InsertOpts gives a delivery 8 attempts, and a run one delivery of each event however often its
// end is recorded.
func (WebhookArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 8, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// queueDeliveries inserts, through q (the transaction finishing the run), a delivery job for each
// event of the run's status its project's enabled webhook subscribes to.
func (s *Service) queueDeliveries(ctx context.Context, q *db.Queries, projectID, runID uuid.UUID, status string) error {
	rows, err := q.EnabledWebhooks(ctx, projectID)
	if err != nil {
		return err
	}
	for _, row := range rows {
		c, err := integrations.LoadWebhook(s.box, row)
		if err != nil {
			s.log.Warn("runs: webhook configuration unreadable; no delivery", "run_id", runID, "error", err)
			continue
		}
		for _, event := range c.Wants(status) {
			if _, err := jobs.InsertTx(ctx, q, WebhookArgs{RunID: runID, Event: event}, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

type webhookWorker struct {
	river.WorkerDefaults[WebhookArgs]
	s *Service
}

// Work posts the event with the run's outcome to the project's webhook as configured now: nothing
// when the run, the webhook or its subscription to the event is gone. An error (unreachable, not
// 2xx) makes River try again later.
func (w *webhookWorker) Work(ctx context.Context, j *river.Job[WebhookArgs]) error {
	s := w.s
	r, err := s.st.GetRun(ctx, j.Args.RunID)
	if store.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	rows, err := s.st.EnabledWebhooks(ctx, r.Run.ProjectID)
	if err != nil {
		return err
	}
	for _, row := range rows {
		c, err := integrations.LoadWebhook(s.box, row)
		if err != nil {
			return river.JobCancel(err) // no attempt can succeed until it is configured again
		}
		if !slices.Contains(c.Wants(r.Run.Status), j.Args.Event) {
			continue
		}
		if err := s.cfg.Webhook.Deliver(ctx, c, j.Args.Event, outcome(r)); err != nil {
			return err
		}
	}
	return nil
}
