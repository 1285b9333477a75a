package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"testing"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestAmbiguousHealIsNotVerified: a recurring heal whose runner-up came within the margin in one
// of its runs (the runner marked it ambiguous) is proposed with the closest runner-up and its
// score, marked ambiguous with a confidence scaled by the gap, and never verified automatically
// (no verification run is started).
func TestAmbiguousHealIsNotVerified(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, storetest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, _ := st.CreateOrg(ctx, db.CreateOrgParams{Slug: "o", Name: "O"})
	ws, _ := st.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: org.ID, Slug: "w", Name: "W"})
	p, err := st.CreateProject(ctx, db.CreateProjectParams{WorkspaceID: ws.ID, Slug: "p", Name: "P", Settings: []byte("{}")})
	if err != nil {
		t.Fatal(err)
	}
	content := "Feature: F\n  Scenario: S\n    When I click \"#a\"\n"
	if _, err := st.InsertFeature(ctx, db.InsertFeatureParams{ProjectID: p.ID, Path: "f.feature", Module: ".", Content: content, Etag: features.ETag(content),
		Tags: []string{}, ScenarioCount: 1, SizeBytes: int32(len(content))}); err != nil {
		t.Fatal(err)
	}
	for i, ru := range []map[string]any{{"selector": "#y", "score": 0.5}, {"selector": "#y", "score": 0.85}} {
		var run string
		if err := st.Pool.QueryRow(ctx, "INSERT INTO runs (project_id, status) VALUES ($1, 'passed') RETURNING id", p.ID).Scan(&run); err != nil {
			t.Fatal(err)
		}
		steps, _ := json.Marshal([]map[string]any{{"keyword": "When ", "text": `I click "#a"`, "status": "passed",
			"heals": []map[string]any{{"oldSelector": "#a", "newSelector": "#x", "strategy": "id", "score": 0.9, "runnerUp": ru, "ambiguous": ru["score"] == 0.85}}}})
		if _, err := st.Pool.Exec(ctx, `INSERT INTO run_scenarios (run_id, scenario_key, position, module, feature_path, name, line, status, steps)
			VALUES ($1, $2, 0, '.', 'f.feature', 'S', 2, 'passed', $3)`, run, fmt.Sprint("k", i), steps); err != nil {
			t.Fatal(err)
		}
	}
	svc := New(st, nil, NewRegistry(), slog.Default(), Config{})
	row, err := st.CreateAgentJob(ctx, db.CreateAgentJobParams{ProjectID: p.ID, Kind: "heal", Input: []byte("{}"), MaxSeconds: 60, ActorKind: "system", ActorName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	j := &Job{s: svc, Row: row}
	if err := runHeal(ctx, j); err != nil {
		t.Fatal(err)
	}
	if j.summary != "1 patch(es) proposed, 0 verified" {
		t.Fatalf("summary %q", j.summary)
	}
	props, _ := st.ListInboxProposals(ctx, db.ListInboxProposalsParams{AllWorkspaces: true, WorkspaceIds: nil, RowLimit: 10})
	// 0.9 × gap 0.05 / margin 0.1
	if len(props) != 1 || props[0].Status != "pending" || math.Abs(float64(props[0].Confidence)-0.45) > 0.001 {
		t.Fatalf("proposals %+v", props)
	}
	var ev map[string]any
	_ = json.Unmarshal(props[0].Evidence, &ev)
	ru, _ := ev["runnerUp"].(map[string]any)
	if ev["ambiguous"] != true || ev["newSelector"] != "#x" || ru["selector"] != "#y" || ru["score"] != 0.85 || ev["gap"] != 0.05 || ev["score"] != 0.9 {
		t.Fatalf("evidence %v", ev)
	}
	var agentRuns int
	_ = st.Pool.QueryRow(ctx, "SELECT count(*) FROM runs WHERE trigger = 'agent'").Scan(&agentRuns)
	if agentRuns != 0 {
		t.Fatalf("%d verification runs for an ambiguous heal", agentRuns)
	}
}
