package store_test

import (
	"context"
	"strings"
	"testing"

	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/jackc/pgx/v5"
)

// Schema 000031 adds the schedule list's indexes (a project's schedules of one status, a
// project's, every project's, each in the list's order), and takes them away on the way down;
// the schedules stored stay as they were both ways.
func TestSchedulesListMigration(t *testing.T) {
	m, conn := migratedTo(t, 30)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `
		INSERT INTO orgs (slug, name) VALUES ('o31', 'o31');
		INSERT INTO workspaces (org_id, slug, name) SELECT id, 'w31', 'w31' FROM orgs WHERE slug = 'o31';
		INSERT INTO projects (workspace_id, slug, name) SELECT id, 'p31', 'p31' FROM workspaces WHERE slug = 'w31';
		INSERT INTO schedules (project_id, name, cron, status, created_at)
		SELECT p.id, 's' || i, '0 2 * * *', CASE WHEN i % 3 = 0 THEN 'paused' ELSE 'active' END, timestamptz '2026-11-27 00:00:00Z' + i * interval '1 minute'
		FROM projects p, generate_series(1, 30) i WHERE p.slug = 'p31'`); err != nil {
		t.Fatal(err)
	}
	const rows = `SELECT string_agg(name || ' ' || status || ' ' || created_at, ', ' ORDER BY created_at, id) FROM schedules`
	const indexes = `SELECT coalesce(string_agg(indexdef, E'\n' ORDER BY indexname), '') FROM pg_indexes
		WHERE tablename = 'schedules' AND indexname IN ('schedules_project_status_list_idx', 'schedules_project_list_idx', 'schedules_list_idx')`
	var before, idx string
	if err := conn.QueryRow(ctx, rows).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, indexes).Scan(&idx); err != nil || idx != "" {
		t.Fatalf("at 30: list indexes %q, %v; want none", idx, err)
	}
	if err := m.Migrate(31); err != nil {
		t.Fatalf("up to 31: %v", err)
	}
	if err := conn.QueryRow(ctx, indexes).Scan(&idx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"schedules_list_idx ON public.schedules USING btree (created_at, id)",
		"schedules_project_list_idx ON public.schedules USING btree (project_id, created_at, id)",
		"schedules_project_status_list_idx ON public.schedules USING btree (project_id, status, created_at, id)",
	} {
		if !strings.Contains(idx, want) {
			t.Errorf("at 31: no %s in\n%s", want, idx)
		}
	}
	// A project's paused schedules, oldest first, read from a list index in order (no sort), as
	// ListSchedules asks for them (the table is too small here for the planner to tell the
	// project's two indexes apart).
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var plan string
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	lines, err := tx.Query(ctx, `EXPLAIN (COSTS OFF) SELECT s.id FROM schedules s
		WHERE s.project_id = (SELECT id FROM projects WHERE slug = 'p31') AND s.status = 'paused' ORDER BY s.created_at, s.id LIMIT 5`)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := pgx.CollectRows(lines, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	plan = strings.Join(steps, "\n")
	if !strings.Contains(plan, "list_idx on schedules") || strings.Contains(plan, "Sort") {
		t.Errorf("plan of a project's paused schedules: %s", plan)
	}
	tx.Rollback(ctx)
	if err := m.Migrate(30); err != nil {
		t.Fatalf("down to 30 again: %v", err)
	}
	var after string
	if err := conn.QueryRow(ctx, indexes).Scan(&idx); err != nil || idx != "" {
		t.Fatalf("after the down migration: list indexes %q, %v; want none", idx, err)
	}
	if err := conn.QueryRow(ctx, rows).Scan(&after); err != nil || after != before {
		t.Fatalf("schedules after the down migration: %v\n%.200s\nwant\n%.200s", err, after, before)
	}
	if err := m.Migrate(31); err != nil {
		t.Fatalf("up to 31 again: %v", err)
	}
}
