package runs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/integrations"
)

// notifyFinished tells the project's webhooks how a run ended. It runs on its own goroutine with
// its own deadline: a slow receiver must not hold a worker.
func (s *Service) notifyFinished(id uuid.UUID) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := s.st.GetRun(ctx, id)
		if err != nil {
			s.log.Warn("runs: webhook: load run", "run_id", id, "error", err)
			return
		}
		out := integrations.RunOutcome{RunID: r.Run.ID, Project: r.ProjectSlug, Status: r.Run.Status, Counts: runCountsJSON(r.Run.Counts)}
		if r.Run.FinishedAt != nil {
			out.FinishedAt = *r.Run.FinishedAt
			if r.Run.StartedAt != nil {
				out.DurationMs = r.Run.FinishedAt.Sub(*r.Run.StartedAt).Milliseconds()
			}
		}
		if err := s.cfg.Webhook.NotifyRunFinished(ctx, s.st.Queries, s.box, r.Run.ProjectID, out); err != nil {
			s.log.Warn("runs: webhook delivery failed", "run_id", id, "error", err)
		}
	}()
}

func runCountsJSON(raw []byte) any {
	var c serverapi.Counts
	if json.Unmarshal(raw, &c) != nil {
		return nil
	}
	return c
}
