package store_test

import (
	"context"
	"testing"

	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5"
)

// Schema 000035 applies a finished run's statistics rollup after its transaction: at 34 a finish
// writes the rollup; at 35 it records the run in stats_rollup_pending and stats_rollup_drain
// applies it; on the way down the pending runs are applied first. At every step the rollup holds
// what a rebuild from the results of the applied runs holds.
func TestStatsRollupDeferredMigration(t *testing.T) {
	m, conn := migratedTo(t, 34)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`INSERT INTO orgs (slug, name) VALUES ('o35', 'o35');
		INSERT INTO workspaces (org_id, slug, name) SELECT id, 'w35', 'w35' FROM orgs WHERE slug = 'o35';
		INSERT INTO projects (workspace_id, slug, name) SELECT id, 'p35', 'p35' FROM workspaces WHERE slug = 'w35'`)
	// finish writes a run of n results as the runner does: running, its results, then its finish.
	finish := func(label string, hour, n int) {
		t.Helper()
		exec(`WITH r AS (INSERT INTO runs (project_id, status, trigger, source, label, created_at, started_at)
		          SELECT id, 'running', 'api', 'execute', $1, '2026-06-01'::timestamptz + $2::int * interval '1 hour', '2026-06-01'::timestamptz + $2::int * interval '1 hour'
		          FROM projects WHERE slug = 'p35' RETURNING id)
		      INSERT INTO run_scenarios (run_id, scenario_key, position, module, feature_path, feature_name, name, line, tags, status, attempts, duration_ms, steps)
		      SELECT r.id, 'k' || s, s, 'm', 'f.feature', 'F', 'scenario ' || s, s, '{}', CASE WHEN (s + $2::int) % 3 = 0 THEN 'failed' ELSE 'passed' END, 1, 10 * s,
		             jsonb_build_array(jsonb_build_object('keyword', 'Given ', 'text', 'step ' || s, 'status', 'passed', 'durationMs', s))
		      FROM r, generate_series(1, $3::int) s`, label, hour, n)
		exec(`UPDATE runs SET status = 'failed', finished_at = started_at + interval '1 minute', counts = '{}' WHERE label = $1`, label)
	}
	tables := []string{"stats_scenario_days", "stats_failure_days", "stats_run_days", "stats_step_days"}
	snapshot := func() string {
		t.Helper()
		var all string
		for _, tb := range tables {
			var s string
			if err := conn.QueryRow(ctx, `SELECT coalesce(string_agg(x::text, E'\n' ORDER BY x::text), '') FROM `+tb+` x`).Scan(&s); err != nil {
				t.Fatal(err)
			}
			all += tb + "\n" + s + "\n"
		}
		return all
	}
	// asRebuilt fails unless the rollup is what a rebuild makes of it (in a rolled-back
	// transaction, so that the rollup itself is left as it is).
	asRebuilt := func(step string) {
		t.Helper()
		before := snapshot()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, `SELECT stats_rollup_rebuild(id) FROM projects`); err != nil {
			t.Fatal(err)
		}
		var rebuilt string
		for _, tb := range tables {
			var s string
			if err := tx.QueryRow(ctx, `SELECT coalesce(string_agg(x::text, E'\n' ORDER BY x::text), '') FROM `+tb+` x`).Scan(&s); err != nil {
				t.Fatal(err)
			}
			rebuilt += tb + "\n" + s + "\n"
		}
		if before != rebuilt {
			t.Fatalf("%s: the rollup\n%s\nrebuilt\n%s", step, before, rebuilt)
		}
	}
	pending := func() int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM stats_rollup_pending`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	finish("a", 1, 30)
	at34 := snapshot()
	asRebuilt("at 34")

	if err := m.Migrate(35); err != nil {
		t.Fatalf("up to 35: %v", err)
	}
	if got := snapshot(); got != at34 {
		t.Fatalf("the migration changed the rollup:\n%s\nwas\n%s", got, at34)
	}
	finish("b", 3, 30)
	finish("c", 2, 20) // earlier than b: applied in run-time order
	if n := pending(); n != 2 {
		t.Fatalf("at 35: %d pending runs after two finishes, want 2", n)
	}
	if got := snapshot(); got != at34 {
		t.Fatal("at 35: a finish wrote the rollup")
	}
	asRebuilt("at 35, two runs pending")
	// An applied run that changes recomputes its day without the pending runs.
	exec(`UPDATE runs SET status = 'passed' WHERE label = 'a'`)
	asRebuilt("at 35, an applied run changed")
	var applied int
	if err := conn.QueryRow(ctx, `SELECT stats_rollup_drain(id, 1) FROM projects WHERE slug = 'p35'`).Scan(&applied); err != nil || applied != 1 || pending() != 1 {
		t.Fatalf("a drain of one: applied %d (%v), %d left pending", applied, err, pending())
	}
	asRebuilt("at 35, one run applied")
	finish("d", 4, 10)

	if err := m.Migrate(34); err != nil {
		t.Fatalf("down to 34: %v", err)
	}
	var table *string
	if err := conn.QueryRow(ctx, `SELECT to_regclass('stats_rollup_pending')::text`).Scan(&table); err != nil || table != nil {
		t.Fatalf("after the down migration: stats_rollup_pending %v (%v); want none", table, err)
	}
	asRebuilt("down at 34, the pending runs applied")
	// At 34 a finish writes the rollup again.
	finish("e", 5, 10)
	asRebuilt("down at 34, a finish")
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM stats_run_days`).Scan(&applied); err != nil || applied != 1 {
		t.Fatalf("run days %d (%v), want 1", applied, err)
	}
	var runs int
	if err := conn.QueryRow(ctx, `SELECT runs FROM stats_run_days`).Scan(&runs); err != nil || runs != 5 {
		t.Fatalf("the day counts %d runs (%v), want 5", runs, err)
	}
}
