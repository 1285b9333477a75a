package store_test

import (
	"context"
	"testing"

	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5"
)

// Schema 000030 moves a run's stored events from one row each (run_events) into one row per batch
// (run_event_batches), and back on the way down: every event keeps its run, number, time, type and
// document; runs of consecutive numbers become batches of at most 1,000 events, never across a gap.
func TestRunEventBatchesMigration(t *testing.T) {
	m, conn := migratedTo(t, 29)
	ctx := context.Background()
	// Run a: 2,500 events (three batches: 1,000, 1,000, 500); run b: 1–3 and 7–8 (a gap: two batches);
	// run c: one event holding an escaped NUL, which json keeps.
	const a, b, c = "00000000-0000-0000-0000-00000000000a", "00000000-0000-0000-0000-00000000000b", "00000000-0000-0000-0000-00000000000c"
	if _, err := conn.Exec(ctx, `
		INSERT INTO run_events (run_id, seq, at, type, data)
		SELECT $1::uuid, g, timestamptz '2026-11-27 00:00:00Z' + g * interval '1 ms', CASE WHEN g % 3 = 0 THEN 'log' ELSE 'step.finished' END,
		       ('{"sequence": ' || g || ', "type": "x"}')::json FROM generate_series(1, 2500) g
		UNION ALL SELECT $2::uuid, g, now(), 'log', ('{"sequence":' || g || '}')::json FROM unnest('{1,2,3,7,8}'::bigint[]) g
		UNION ALL SELECT $3::uuid, 1, now(), 'log', '{"message":"a\u0000b"}'::json`, a, b, c); err != nil {
		t.Fatal(err)
	}
	const all = `SELECT string_agg(run_id::text || ' ' || seq || ' ' || at || ' ' || type || ' ' || data::text, E'\n' ORDER BY run_id, seq) FROM run_events`
	var before string
	if err := conn.QueryRow(ctx, all).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if err := m.Migrate(30); err != nil {
		t.Fatalf("up to 30: %v", err)
	}
	var after, batches string
	if err := conn.QueryRow(ctx, all).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("events through the view differ from the rows migrated:\n%.300s\nwant\n%.300s", after, before)
	}
	if err := conn.QueryRow(ctx, `SELECT string_agg(right(run_id::text, 1) || ' ' || first_seq || '-' || last_seq, ', ' ORDER BY run_id, last_seq)
		FROM run_event_batches`).Scan(&batches); err != nil {
		t.Fatal(err)
	}
	if want := "a 1-1000, a 1001-2000, a 2001-2500, b 1-3, b 7-8, c 1-1"; batches != want {
		t.Fatalf("batches %s, want %s", batches, want)
	}
	// A batch whose arrays do not match its numbers is refused.
	if _, err := conn.Exec(ctx, `INSERT INTO run_event_batches VALUES ($1, 12, 10, '{now,now}', '{log,log}', '{"{}","{}"}')`, b); err == nil {
		t.Fatal("a batch of two events numbered 10–12 was stored")
	}
	if err := m.Migrate(29); err != nil {
		t.Fatalf("down to 29 again: %v", err)
	}
	var back string
	if err := conn.QueryRow(ctx, all).Scan(&back); err != nil {
		t.Fatal(err)
	}
	if back != before {
		t.Fatalf("events after the down migration differ:\n%.300s\nwant\n%.300s", back, before)
	}
	var kind string
	if err := conn.QueryRow(ctx, `SELECT relkind FROM pg_class WHERE relname = 'run_events'`).Scan(&kind); err != nil || kind != "r" {
		t.Fatalf("run_events after the down migration: relkind %q, %v; want a table", kind, err)
	}
}
