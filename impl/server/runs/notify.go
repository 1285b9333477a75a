package runs

import (
	"encoding/json"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/integrations"
	"github.com/sdods/sdods/impl/server/results"
)

// outcome is what the project's webhooks are told about a finished run.
func outcome(r db.GetRunRow) integrations.RunOutcome {
	out := integrations.RunOutcome{RunID: r.Run.ID, Project: r.ProjectSlug, Status: r.Run.Status, Counts: runCountsJSON(r.Run.Counts)}
	if r.Run.FinishedAt != nil {
		out.FinishedAt = *r.Run.FinishedAt
		if r.Run.StartedAt != nil {
			out.DurationMs = r.Run.FinishedAt.Sub(*r.Run.StartedAt).Milliseconds()
		}
	}
	return out
}

func runCountsJSON(raw []byte) any {
	var c results.Counts
	if json.Unmarshal(raw, &c) != nil {
		return nil
	}
	return c
}
