package store_test

import (
	"context"
	"strings"
	"testing"
)

// Schema 000036 adds pg_trgm, btree_gin, the runs' tags trigram index (keyed by the project as
// text) and the index of a project's runs by trigger, and takes them away on the way down; the
// runs stay as they were both ways.
func TestRunListFiltersMigration(t *testing.T) {
	m, conn := migratedTo(t, 35)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `
		INSERT INTO orgs (slug, name) VALUES ('o36', 'o36');
		INSERT INTO workspaces (org_id, slug, name) SELECT id, 'w36', 'w36' FROM orgs WHERE slug = 'o36';
		INSERT INTO projects (workspace_id, slug, name) SELECT id, 'p36', 'p36' FROM workspaces WHERE slug = 'w36';
		SET session_replication_role = replica;
		INSERT INTO runs (project_id, status, tags, created_at)
		SELECT p.id, 'passed', CASE WHEN i % 3 = 0 THEN '@nightly' WHEN i % 3 = 1 THEN '@smoke and not @slow' END,
		       timestamptz '2026-11-27 00:00:00Z' + i * interval '1 minute'
		FROM projects p, generate_series(1, 30) i WHERE p.slug = 'p36';
		RESET session_replication_role`); err != nil {
		t.Fatal(err)
	}
	const rows = `SELECT string_agg(id || ' ' || coalesce(tags, '-') || ' ' || created_at, ', ' ORDER BY created_at, id) FROM runs`
	const index = `SELECT coalesce(string_agg(indexdef, E'\n' ORDER BY indexname), '') FROM pg_indexes
		WHERE tablename = 'runs' AND indexname IN ('runs_project_tags_idx', 'runs_project_trigger_idx')`
	const extensions = `SELECT coalesce(string_agg(extname, ',' ORDER BY extname), '') FROM pg_extension WHERE extname IN ('pg_trgm', 'btree_gin')`
	var before, idx, exts string
	if err := conn.QueryRow(ctx, rows).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, index).Scan(&idx); err != nil || idx != "" {
		t.Fatalf("at 35: indexes %q, %v; want none", idx, err)
	}
	if err := conn.QueryRow(ctx, extensions).Scan(&exts); err != nil || exts != "" {
		t.Fatalf("at 35: extensions %q, %v; want none", exts, err)
	}
	if err := m.Migrate(36); err != nil {
		t.Fatalf("up to 36: %v", err)
	}
	if err := conn.QueryRow(ctx, index).Scan(&idx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"runs_project_tags_idx ON public.runs USING gin (((project_id)::text), tags gin_trgm_ops) WITH (fastupdate=off)",
		"runs_project_trigger_idx ON public.runs USING btree (project_id, trigger, created_at DESC, id DESC)"} {
		if !strings.Contains(idx, want) {
			t.Errorf("at 36: %q, want %s", idx, want)
		}
	}
	if err := conn.QueryRow(ctx, extensions).Scan(&exts); err != nil || exts != "btree_gin,pg_trgm" {
		t.Fatalf("at 36: extensions %q, %v", exts, err)
	}
	// The index answers the tags of a project as ListProjectRunsByTags asks (the table is too
	// small here for the planner to prefer it on its own), the same runs as without it.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	const q = `SELECT string_agg(r.id::text, ',' ORDER BY r.id) FROM runs r
		WHERE r.project_id::text = (SELECT id::text FROM projects WHERE slug = 'p36') AND r.tags ILIKE ANY('{%NIGHT%,%not @slow%}')`
	var seq, viaIndex, plan string
	if err := tx.QueryRow(ctx, q).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off`); err != nil {
		t.Fatal(err)
	}
	lines, err := tx.Query(ctx, "EXPLAIN (COSTS OFF) "+q)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for lines.Next() {
		var l string
		if err := lines.Scan(&l); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, l)
	}
	lines.Close()
	if plan = strings.Join(steps, "\n"); !strings.Contains(plan, "Bitmap Index Scan on runs_project_tags_idx") {
		t.Errorf("plan of a project's tags: %s", plan)
	}
	if err := tx.QueryRow(ctx, q).Scan(&viaIndex); err != nil || viaIndex != seq || strings.Count(seq, ",") != 19 {
		t.Errorf("runs through the index %q, %v; want %q (20 runs)", viaIndex, err, seq)
	}
	tx.Rollback(ctx)
	if err := m.Migrate(35); err != nil {
		t.Fatalf("down to 35 again: %v", err)
	}
	var after string
	if err := conn.QueryRow(ctx, index).Scan(&idx); err != nil || idx != "" {
		t.Fatalf("after the down migration: indexes %q, %v; want none", idx, err)
	}
	if err := conn.QueryRow(ctx, extensions).Scan(&exts); err != nil || exts != "" {
		t.Fatalf("after the down migration: extensions %q, %v; want none", exts, err)
	}
	if err := conn.QueryRow(ctx, rows).Scan(&after); err != nil || after != before {
		t.Fatalf("runs after the down migration: %v\n%.200s\nwant\n%.200s", err, after, before)
	}
	if err := m.Migrate(36); err != nil {
		t.Fatalf("up to 36 again: %v", err)
	}
}
