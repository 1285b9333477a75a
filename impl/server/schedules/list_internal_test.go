package schedules

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestListMatchesScan: the schedule list decoded from binary rows (list.go) is what viewWith made
// of pgx's scan of the same statement (the list before): every optional column NULL and set,
// paused with and without pauser and note, a creator who is gone, templates of each JSON type and
// with members of the wrong type, unicode and odd characters, times with and without a fraction,
// pages.
func TestListMatchesScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, p := storetest.OpenWithProject(t)
	const odd = `<b>Zoë & "Ann"</b> \ 日本 ` + "\u2028\t\x01 😀"
	var ann, gone uuid.UUID
	for _, u := range []struct {
		id    *uuid.UUID
		email string
	}{{&ann, "ann@example.com"}, {&gone, "gone@example.com"}} {
		if err := st.Pool.QueryRow(ctx, `INSERT INTO users (email, display_name, password_hash) VALUES ($1, $2, 'x') RETURNING id`, u.email, odd).Scan(u.id); err != nil {
			t.Fatal(err)
		}
	}
	templates := []string{`{}`, `{"paths": ["a.feature", "` + "é" + `"], "tags": "@x and not @y", "environment": "staging", "variables": {"K": "<v>&", "E": ""},
		"label": "L", "timeoutSeconds": 60, "retries": 2}`, `null`, `{"paths": [], "variables": {}, "tags": null}`, `{"tags": 5, "label": ["x"]}`, `[1]`,
		`{"retries": 1.5, "timeoutSeconds": "x", "paths": ["a", 1, null]}`}
	for i, tmpl := range templates {
		set := i%2 == 1
		if _, err := st.Pool.Exec(ctx, `INSERT INTO schedules (project_id, name, cron, timezone, template, overlap, catch_up_window_seconds, catch_up_max, jitter_seconds,
				start_at, end_at, status, paused_at, paused_by, pause_note, pause_after_failures, next_fire_at, created_by, created_at, updated_at)
			VALUES ($1, $2, '0 2 * * *', CASE WHEN $3 THEN 'Europe/Paris' ELSE 'UTC' END, $4::jsonb, CASE WHEN $3 THEN 'buffer_all' ELSE 'skip' END,
				$5::int, 10, $5::int, CASE WHEN $3 THEN '2026-11-01 00:00:00.25+00'::timestamptz END, CASE WHEN $3 THEN '2027-01-01 00:00:00+00'::timestamptz END,
				CASE WHEN $5::int % 3 = 2 THEN 'paused' ELSE 'active' END, CASE WHEN $5::int = 2 OR $5::int = 5 THEN '2026-11-25 09:00:00.999999+00'::timestamptz END,
				CASE WHEN $5::int = 5 THEN $6::uuid END, CASE WHEN $5::int = 5 THEN $7 END, CASE WHEN $3 THEN 3 END,
				CASE WHEN $5::int <> 0 THEN '2026-11-28 02:00:00+00'::timestamptz END, CASE WHEN $3 THEN $6::uuid WHEN $5::int = 4 THEN $8::uuid END,
				'2026-11-20 10:00:00+00'::timestamptz + $5::int * interval '0.5 second', '2026-11-26 10:00:00.1+00')`,
			p.ID, fmt.Sprintf("s%d %s", i, odd), set, tmpl, i, ann, odd, gone); err != nil {
			t.Fatal(err)
		}
	}
	// A creator whose user is gone.
	if _, err := st.Pool.Exec(ctx, `DELETE FROM users WHERE id = $1`, gone); err != nil {
		t.Fatal(err)
	}
	s := &Service{st: st}
	// A project and a status read through ListProjectSchedulesByStatus's generic plan; the rest,
	// and the reference below, through ListSchedules.
	paused, active, slug, other := "paused", "active", p.Slug, "nope"
	after := time.Date(2026, 11, 20, 10, 0, 1, 0, time.UTC)
	for i, c := range []struct {
		params db.ListSchedulesParams
		limit  int
	}{
		{db.ListSchedulesParams{AllWorkspaces: true, WorkspaceIds: []uuid.UUID{}}, 50},
		{db.ListSchedulesParams{AllWorkspaces: true, WorkspaceIds: []uuid.UUID{}}, 3},
		{db.ListSchedulesParams{AllWorkspaces: true, WorkspaceIds: []uuid.UUID{}, Project: &slug, Status: &paused}, 50},
		{db.ListSchedulesParams{AllWorkspaces: true, WorkspaceIds: []uuid.UUID{}, Project: &slug, Status: &active}, 50},
		{db.ListSchedulesParams{AllWorkspaces: true, WorkspaceIds: []uuid.UUID{}, Project: &slug, Status: &active}, 2},
		{db.ListSchedulesParams{AllWorkspaces: true, WorkspaceIds: []uuid.UUID{}, Project: &slug, Status: &active, AfterAt: &after, AfterID: uuid.NullUUID{UUID: uuid.Max, Valid: true}}, 50},
		{db.ListSchedulesParams{AllWorkspaces: true, WorkspaceIds: []uuid.UUID{}, Project: &slug, Status: &paused, AfterAt: &after, AfterID: uuid.NullUUID{Valid: true}}, 50},
		{db.ListSchedulesParams{AllWorkspaces: true, WorkspaceIds: []uuid.UUID{}, Project: &slug, Status: &paused, AfterAt: &after, AfterID: uuid.NullUUID{UUID: uuid.Max, Valid: true}}, 50},
		{db.ListSchedulesParams{WorkspaceIds: []uuid.UUID{p.WorkspaceID}, Project: &slug, Status: &active}, 50},
		{db.ListSchedulesParams{WorkspaceIds: []uuid.UUID{uuid.New()}, Project: &slug, Status: &active}, 50},
		{db.ListSchedulesParams{AllWorkspaces: true, WorkspaceIds: []uuid.UUID{}, Project: &other, Status: &active}, 50},
	} {
		limit, params := c.limit, c.params
		params.RowLimit = int32(limit + 1)
		got, more, err := s.list(ctx, params, limit)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := st.ListSchedules(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		wantMore := len(rows) > limit
		if wantMore {
			rows = rows[:limit]
		}
		user := func(id uuid.NullUUID, email, name *string) *User {
			if !id.Valid || email == nil || name == nil {
				return nil
			}
			return &User{ID: id.UUID, Email: *email, DisplayName: *name}
		}
		want := make([]Schedule, 0, len(rows))
		for _, r := range rows {
			want = append(want, s.viewWith(r.Schedule, r.ProjectSlug, r.WorkspaceID, user(r.Schedule.CreatedBy, r.CreatorEmail, r.CreatorName),
				user(r.Schedule.PausedBy, r.PauserEmail, r.PauserName)))
		}
		if more != wantMore || (len(want) == 0) != (i >= 9) {
			t.Fatalf("case %d: more %v, want %v (%d schedules)", i, more, wantMore, len(want))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("case %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
}
