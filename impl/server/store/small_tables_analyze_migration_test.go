package store_test

import (
	"context"
	"testing"

	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5"
)

// Schema 000033 lowers autovacuum's analyse threshold of the small tables every list joins
// (orgs, org_members, workspaces, workspace_members, projects, users) and analyses them; on the
// way down the thresholds go back to the server's. The rows stay as they were both ways.
func TestSmallTablesAnalyzeMigration(t *testing.T) {
	m, conn := migratedTo(t, 32)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `
		INSERT INTO orgs (slug, name) VALUES ('o33', 'o33');
		INSERT INTO workspaces (org_id, slug, name) SELECT id, 'w33', 'w33' FROM orgs WHERE slug = 'o33';
		INSERT INTO projects (workspace_id, slug, name) SELECT w.id, 'p33-' || i, 'p33' FROM workspaces w, generate_series(1, 30) i WHERE w.slug = 'w33'`); err != nil {
		t.Fatal(err)
	}
	// Each table's reloptions (empty when none), in table order.
	const options = `SELECT string_agg(relname || ' ' || coalesce(array_to_string(reloptions, ','), ''), E'\n' ORDER BY relname)
		FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace
		AND relname IN ('orgs', 'org_members', 'workspaces', 'workspace_members', 'projects', 'users', 'schedules')`
	const none = "org_members \norgs \nprojects \nschedules \nusers \nworkspace_members \nworkspaces "
	const projectRows = `SELECT string_agg(slug, ',' ORDER BY slug) FROM projects`
	var got, before, after string
	var tuples float32
	if err := conn.QueryRow(ctx, options).Scan(&got); err != nil || got != none {
		t.Fatalf("at 32: reloptions\n%s\n(%v); want none", got, err)
	}
	if err := conn.QueryRow(ctx, projectRows).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'projects'::regclass`).Scan(&tuples); err != nil || tuples == 30 {
		t.Fatalf("at 32: projects.reltuples %v (%v); want them not yet counted", tuples, err)
	}

	if err := m.Migrate(33); err != nil {
		t.Fatalf("up to 33: %v", err)
	}
	const set = "autovacuum_analyze_threshold=5,autovacuum_analyze_scale_factor=0.05"
	want := "org_members " + set + "\norgs " + set + "\nprojects " + set + "\nschedules \nusers " + set +
		"\nworkspace_members " + set + "\nworkspaces " + set
	if err := conn.QueryRow(ctx, options).Scan(&got); err != nil || got != want {
		t.Fatalf("at 33: reloptions\n%s\n(%v); want\n%s", got, err, want)
	}
	// Analysed by the migration itself: the planner knows the 30 projects.
	if err := conn.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'projects'::regclass`).Scan(&tuples); err != nil || tuples != 30 {
		t.Fatalf("at 33: projects.reltuples %v (%v); want 30", tuples, err)
	}

	if err := m.Migrate(32); err != nil {
		t.Fatalf("down to 32: %v", err)
	}
	if err := conn.QueryRow(ctx, options).Scan(&got); err != nil || got != none {
		t.Fatalf("after the down migration: reloptions\n%s\n(%v); want none", got, err)
	}
	if err := conn.QueryRow(ctx, projectRows).Scan(&after); err != nil || after != before {
		t.Fatalf("projects after the down migration: %v\n%s\nwant\n%s", err, after, before)
	}
	if err := m.Migrate(33); err != nil {
		t.Fatalf("up to 33 again: %v", err)
	}
}
