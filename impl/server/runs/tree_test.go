package runs_test

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"testing"

	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestScenarioTreeDecodesBinaryRows checks the scenario tree's binary decoder against pgx's
// generic scan of the same rows: tags (none, empty, several, unicode), NULL example rows,
// durations and datasets, in execution order.
func TestScenarioTreeDecodesBinaryRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	p := runs.TestProject(t, st, "tree")
	var runID [16]byte
	if err := st.Pool.QueryRow(ctx, `INSERT INTO runs (project_id, status, trigger, source) VALUES ($1, 'passed', 'api', 'execute') RETURNING id`, p.ID).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool.Exec(ctx, `INSERT INTO run_scenarios (run_id, scenario_key, position, module, feature_path, feature_name, name, line, tags, example_row, status, attempts, duration_ms, dataset)
VALUES ($1, 'k3', 3, '', 'a/b.feature', 'B', 'third <&>', 9, '{}', NULL, 'failed', 2, NULL, NULL),
       ($1, 'k1', 1, 'm', 'm/a.feature', 'Fé', 'first "q"', 3, '{"@a","@日本","x y"}', 2, 'passed', 1, 1234567890123, 'users'),
       ($1, 'k2', 2, 'm', 'm/a.feature', 'Fé', '', 4, '{"@only"}', 0, 'skipped', 1, 0, NULL)`, runID); err != nil {
		t.Fatal(err)
	}
	svc := runs.New(st, nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), runs.Config{})
	got, err := svc.ScenarioTree(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	all, err := svc.Scenarios(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || len(all) != 3 {
		t.Fatalf("%d tree rows, %d scenarios; want 3", len(got), len(all))
	}
	for i := range all {
		want := all[i]
		want.ScenarioKey, want.Error, want.Steps, want.StartedAt, want.FinishedAt = "", nil, nil, nil, nil
		if (want.Tags == nil) != (got[i].Tags == nil) { // nil is written null, empty []
			t.Fatalf("row %d tags %#v, want %#v", i, got[i].Tags, want.Tags)
		}
		if !reflect.DeepEqual(got[i], want) {
			t.Fatalf("row %d\n got %+v\nwant %+v", i, got[i], want)
		}
	}
}
