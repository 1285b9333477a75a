package agents_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/agents"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestLostJobIsFailed: a running job whose process stopped heartbeating is failed with a reason
// and its end event; a job still heartbeating is left alone.
func TestLostJobIsFailed(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, storetest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, err := st.CreateOrg(ctx, db.CreateOrgParams{Slug: "o", Name: "O"})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := st.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: org.ID, Slug: "w", Name: "W"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.CreateProject(ctx, db.CreateProjectParams{WorkspaceID: ws.ID, Slug: "p", Name: "P", Settings: []byte("{}")})
	if err != nil {
		t.Fatal(err)
	}
	svc := agents.New(st, nil, agents.NewRegistry(), slog.Default(), agents.Config{StaleAfter: 2 * time.Second})
	mk := func(age time.Duration) db.AgentJob {
		j, err := st.CreateAgentJob(ctx, db.CreateAgentJobParams{ProjectID: p.ID, Kind: "triage", Input: []byte("{}"), MaxSeconds: 60, ActorKind: "system", ActorName: "test"})
		if err != nil {
			t.Fatal(err)
		}
		w := "gone"
		if _, err := st.ClaimAgentJob(ctx, db.ClaimAgentJobParams{ID: j.ID, WorkerID: &w}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Pool.Exec(ctx, "UPDATE agent_jobs SET heartbeat_at = now() - $2::interval WHERE id = $1", j.ID, age.String()); err != nil {
			t.Fatal(err)
		}
		return j
	}
	lost, alive := mk(time.Minute), mk(0)
	n, err := svc.ReconcileLost(ctx)
	if err != nil || n != 1 {
		t.Fatalf("reconciled %d, %v", n, err)
	}
	l, _ := svc.GetJob(ctx, lost.ID)
	if l.Status != "failed" || l.Error == nil || !strings.Contains(*l.Error, "process working the job stopped") || l.FinishedAt == nil {
		t.Fatalf("lost job %+v", l)
	}
	events, _ := st.ListAgentJobEvents(ctx, db.ListAgentJobEventsParams{JobID: lost.ID, Seq: 0, RowLimit: 10})
	var last map[string]any
	_ = json.Unmarshal(events[len(events)-1].Data, &last)
	if last["type"] != "end" || last["status"] != "failed" {
		t.Fatalf("last event %v", last)
	}
	var audited int
	if err := st.Pool.QueryRow(ctx, "SELECT count(*) FROM audit_entries WHERE actor_kind = 'system' AND target_id = $1", lost.ID.String()).Scan(&audited); err != nil || audited != 1 {
		t.Fatalf("audit of the lost job: %d %v", audited, err)
	}
	if a, _ := svc.GetJob(ctx, alive.ID); a.Status != "running" {
		t.Fatalf("a live job was failed: %+v", a)
	}
}
