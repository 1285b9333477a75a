package store_test

import (
	"context"
	"strings"
	"testing"

	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/jackc/pgx/v5"
)

// Schema 000034 adds the index of the job list without a project (every project's jobs, newest
// first) and takes it away on the way down; the jobs stored stay as they were both ways.
func TestAgentJobsListMigration(t *testing.T) {
	m, conn := migratedTo(t, 33)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `
		INSERT INTO orgs (slug, name) VALUES ('o34', 'o34');
		INSERT INTO workspaces (org_id, slug, name) SELECT id, 'w34', 'w34' FROM orgs WHERE slug = 'o34';
		INSERT INTO projects (workspace_id, slug, name) SELECT id, 'p34-' || i, 'p34' FROM workspaces, generate_series(1, 3) i WHERE slug = 'w34';
		INSERT INTO agent_jobs (project_id, kind, input, max_seconds, actor_kind, actor_name, created_at)
		SELECT p.id, 'heal', '{}', 60, 'user', 'u34', timestamptz '2026-11-27 00:00:00Z' + i * interval '1 minute'
		FROM projects p, generate_series(1, 20) i WHERE p.slug LIKE 'p34-%'`); err != nil {
		t.Fatal(err)
	}
	const rows = `SELECT string_agg(id || ' ' || status || ' ' || created_at, ', ' ORDER BY created_at, id) FROM agent_jobs`
	const index = `SELECT coalesce(string_agg(indexdef, ''), '') FROM pg_indexes WHERE tablename = 'agent_jobs' AND indexname = 'agent_jobs_list_idx'`
	var before, idx string
	if err := conn.QueryRow(ctx, rows).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, index).Scan(&idx); err != nil || idx != "" {
		t.Fatalf("at 33: list index %q, %v; want none", idx, err)
	}
	if err := m.Migrate(34); err != nil {
		t.Fatalf("up to 34: %v", err)
	}
	if err := conn.QueryRow(ctx, index).Scan(&idx); err != nil {
		t.Fatal(err)
	}
	if want := "agent_jobs_list_idx ON public.agent_jobs USING btree (created_at DESC, id DESC)"; !strings.Contains(idx, want) {
		t.Errorf("at 34: %q, want %s", idx, want)
	}
	// Every project's jobs, newest first, read from the index in order (no sort), as
	// ListAgentJobs asks for them without a project (the table is too small here for the planner to
	// prefer the index on its own).
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	lines, err := tx.Query(ctx, `EXPLAIN (COSTS OFF) SELECT j.id FROM agent_jobs j
		WHERE (j.created_at, j.id) < (timestamptz '2026-11-27 00:30:00Z', 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid)
		ORDER BY j.created_at DESC, j.id DESC LIMIT 5`)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := pgx.CollectRows(lines, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if plan := strings.Join(steps, "\n"); !strings.Contains(plan, "agent_jobs_list_idx") || strings.Contains(plan, "Sort") {
		t.Errorf("plan of every project's jobs: %s", plan)
	}
	tx.Rollback(ctx)
	if err := m.Migrate(33); err != nil {
		t.Fatalf("down to 33 again: %v", err)
	}
	var after string
	if err := conn.QueryRow(ctx, index).Scan(&idx); err != nil || idx != "" {
		t.Fatalf("after the down migration: list index %q, %v; want none", idx, err)
	}
	if err := conn.QueryRow(ctx, rows).Scan(&after); err != nil || after != before {
		t.Fatalf("jobs after the down migration: %v\n%.200s\nwant\n%.200s", err, after, before)
	}
	if err := m.Migrate(34); err != nil {
		t.Fatalf("up to 34 again: %v", err)
	}
}
