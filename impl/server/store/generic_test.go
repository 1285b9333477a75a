package store_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestQueryGenericPlansOnceAndRestoresCustomPlans: QueryGeneric's statements run under their
// generic plan (pg_prepared_statements counts it), every other statement of the connection is
// still planned with its values afterwards, also after a statement of the round trip failed, and
// the rows are the statement's.
func TestQueryGenericPlansOnceAndRestoresCustomPlans(t *testing.T) {
	ctx := context.Background()
	_, dbURL := storetest.Open(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "1") // one connection: what a statement changed, the next one sees
	u.RawQuery = q.Encode()
	st, err := store.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o, err := st.CreateOrg(ctx, db.CreateOrgParams{Slug: "gen", Name: "G"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: o.ID, Slug: "gen", Name: "G"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.CreateProject(ctx, db.CreateProjectParams{WorkspaceID: w.ID, Slug: "gen", Name: "G", Settings: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	for i, status := range []string{"paused", "active", "paused"} {
		if _, err := st.Pool.Exec(ctx, `INSERT INTO schedules (project_id, name, cron, timezone, template, overlap, catch_up_window_seconds, catch_up_max,
				jitter_seconds, status, created_at) VALUES ($1, $2, '0 2 * * *', 'UTC', '{"label": "x"}', 'skip', 0, 1, 0, $3, now() + $4 * interval '1 second')`,
			p.ID, "s"+status+string(rune('0'+i)), status, i); err != nil {
			t.Fatal(err)
		}
	}
	// ListProjectSchedulesByStatus's column types (as impl/server/schedules checks them).
	u4, i4, tx, ts := uint32(pgtype.UUIDOID), uint32(pgtype.Int4OID), uint32(pgtype.TextOID), uint32(pgtype.TimestamptzOID)
	scheduleOIDs := []uint32{u4, u4, tx, tx, tx, pgtype.JSONBOID, tx, i4, i4, i4, ts, ts, tx, ts, u4, tx, i4, ts, ts, ts, u4, ts, ts, tx, u4, tx, tx, tx, tx}
	list := func(oids []uint32, limit int32) ([]string, error) {
		var names []string
		err := st.QueryGeneric(ctx, "schedules", store.GenericStatement{
			OIDs: oids,
			Call: func(q *db.Queries) error {
				_, err := q.ListProjectSchedulesByStatus(ctx, db.ListProjectSchedulesByStatusParams{Project: "gen", Status: "paused", AllWorkspaces: true,
					WorkspaceIds: []uuid.UUID{}, RowLimit: limit})
				return err
			},
			Read: func(rows pgx.Rows) error {
				for rows.Next() {
					v := rows.RawValues()
					template, err := store.JSONBText(v[5], rows.FieldDescriptions()[5].Format)
					if err != nil {
						return err
					}
					names = append(names, string(v[2])+" "+string(v[12])+" "+string(template))
				}
				return nil
			},
		})
		return names, err
	}
	// The column check comes first: three types for 29 columns is an error, not a panic.
	if _, err := list(scheduleOIDs[:3], 10); err == nil || !strings.Contains(err.Error(), "29 columns, want 3") {
		t.Fatalf("a wrong column list: %v", err)
	}
	setting := func() string {
		var s string
		if err := st.Pool.QueryRow(ctx, `SELECT current_setting('plan_cache_mode')`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := setting(); got != "force_custom_plan" {
		t.Fatalf("after a round trip that failed its check: plan_cache_mode %s", got)
	}
	// A negative LIMIT fails in the executor, after the round trip's set_config ran.
	if _, err := list(scheduleOIDs, -1); err == nil {
		t.Fatal("LIMIT -1: no error")
	}
	if got := setting(); got != "force_custom_plan" {
		t.Fatalf("after a failed statement: plan_cache_mode %s", got)
	}
	for range 3 {
		got, err := list(scheduleOIDs, 10)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{`spaused0 paused {"label": "x"}`, `spaused2 paused {"label": "x"}`}; strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("rows %q, want %q", got, want)
		}
		if got := setting(); got != "force_custom_plan" {
			t.Fatalf("after a round trip: plan_cache_mode %s", got)
		}
	}
	var generic, custom int64
	if err := st.Pool.QueryRow(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '-- name: ListProjectSchedulesByStatus %'`).Scan(&generic, &custom); err != nil {
		t.Fatal(err)
	}
	if custom != 0 || generic < 3 {
		t.Fatalf("ListProjectSchedulesByStatus: %d generic plans, %d custom plans; want every execution generic", generic, custom)
	}
	// And a statement sent on its own is still planned with its values.
	if _, err := st.ListSchedules(ctx, db.ListSchedulesParams{AllWorkspaces: true, WorkspaceIds: []uuid.UUID{}, RowLimit: 5}); err != nil {
		t.Fatal(err)
	}
	if err := st.Pool.QueryRow(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '-- name: ListSchedules %'`).Scan(&generic, &custom); err != nil {
		t.Fatal(err)
	}
	if generic != 0 || custom != 1 {
		t.Fatalf("ListSchedules: %d generic plans, %d custom plans; want one custom", generic, custom)
	}
}
