package agents

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestJobListOfAStatusMatchesTheGeneralStatement: a project's jobs of one status or one kind, read
// through ListProjectAgentJobsByStatus's or ListProjectAgentJobsByKind's generic plan (text
// jsonb), are byte for byte the page
// ListAgentJobs gives (binary jsonb), for pages, cursors (ties on the creation time included) and
// scopes; jobs with every optional column NULL and set, inputs of each JSON type, a creator that
// is gone and proposals.
func TestJobListOfAStatusMatchesTheGeneralStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, p := storetest.OpenWithProject(t)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := st.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
	}
	var user, gone uuid.UUID
	for _, u := range []struct {
		id    *uuid.UUID
		email string
	}{{&user, "zoë@example.com"}, {&gone, "gone@example.com"}} {
		if err := st.Pool.QueryRow(ctx, `INSERT INTO users (email, display_name, password_hash) VALUES ($1, $2, 'x') RETURNING id`,
			u.email, `Zoë "<&>" \ 日本`+"\u2028\x01 😀").Scan(u.id); err != nil {
			t.Fatal(err)
		}
	}
	inputs := []string{`{}`, `{"feature": "<b>&</b>", "n": [1, 2.50, null]}`, `null`, `[1]`, `"s"`, `3`}
	for i := range 24 {
		set := i%2 == 1
		var creator any
		switch i % 3 {
		case 1:
			creator = user
		case 2:
			creator = gone
		}
		var id uuid.UUID
		if err := st.Pool.QueryRow(ctx, `INSERT INTO agent_jobs (project_id, kind, status, input, max_seconds, max_tokens, tokens_used, progress, summary, error,
				actor_kind, actor_name, created_by, created_at, updated_at, started_at, finished_at)
			VALUES ($1, CASE WHEN $3 % 4 = 0 THEN 'llm' ELSE 'heal' END, (ARRAY['failed', 'succeeded', 'queued'])[$3 % 3 + 1], $2::jsonb, 60,
				CASE WHEN $4 THEN 1000 END, $3 * 7, $3 * 4, CASE WHEN $4 THEN 'sum "' || $3 || '" <&>' END, CASE WHEN $4 THEN E'err\n\t\\' END,
				'system', 's', $5::uuid, '2026-11-20 10:00:00+00'::timestamptz + ($3 / 3) * interval '0.5 second', '2026-11-22 10:00:00.000001+00',
				CASE WHEN $4 THEN '1999-12-31 23:59:59.5+00'::timestamptz END, CASE WHEN $4 THEN '2026-11-22 10:00:00.12+00'::timestamptz END)
			RETURNING id`, p.ID, inputs[i%len(inputs)], i, set, creator).Scan(&id); err != nil {
			t.Fatal(err)
		}
		for k := range i % 3 {
			exec(`INSERT INTO proposals (project_id, job_id, kind, status, title, confidence, created_at) VALUES ($1, $2, 'feature_patch', 'pending', 't', 0.5, now() + $3 * interval '1 second')`, p.ID, id, k)
		}
	}
	exec(`DELETE FROM users WHERE id = $1`, gone)
	s := New(st, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), Config{})
	// general is the page as ListAgentJobs's binary rows give it (what listJobs read before).
	general := func(params db.ListAgentJobsParams, limit int) Page {
		rows, err := st.QueryBinary(ctx, "job list", jobListOIDs[:], func(q *db.Queries) error {
			_, err := q.ListAgentJobs(ctx, params)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var page Page
		for rows.Next() {
			v := rows.RawValues()
			if page.N == limit {
				page.More = true
				break
			}
			if page.N > 0 {
				page.Items = append(page.Items, ',')
			}
			if page.Items, err = appendJobRow(page.Items, v, 1); err != nil {
				t.Fatal(err)
			}
			page.N++
			page.LastAt, _ = store.DecodeTimestamptz(v[jcCreatedAt])
			copy(page.LastID[:], v[jcID])
		}
		return page
	}
	slug, nowhere, failed, succeeded, queued, llm, heal := p.Slug, "nowhere", "failed", "succeeded", "queued", "llm", "heal"
	tie := time.Date(2026, 11, 20, 10, 0, 1, 0, time.UTC)
	for name, c := range map[string]struct {
		params db.ListAgentJobsParams
		limit  int
	}{
		"failed":            {db.ListAgentJobsParams{AllWorkspaces: true, Project: &slug, Status: &failed}, 50},
		"succeeded":         {db.ListAgentJobsParams{AllWorkspaces: true, Project: &slug, Status: &succeeded}, 50},
		"queued page of 2":  {db.ListAgentJobsParams{AllWorkspaces: true, Project: &slug, Status: &queued}, 2},
		"before a tie":      {db.ListAgentJobsParams{AllWorkspaces: true, Project: &slug, Status: &failed, BeforeAt: &tie, BeforeID: uuid.NullUUID{UUID: uuid.Max, Valid: true}}, 50},
		"before a tie, nil": {db.ListAgentJobsParams{AllWorkspaces: true, Project: &slug, Status: &failed, BeforeAt: &tie, BeforeID: uuid.NullUUID{Valid: true}}, 50},
		"member":            {db.ListAgentJobsParams{WorkspaceIds: []uuid.UUID{p.WorkspaceID}, Project: &slug, Status: &failed}, 50},
		"not a member":      {db.ListAgentJobsParams{WorkspaceIds: []uuid.UUID{uuid.New()}, Project: &slug, Status: &failed}, 50},
		"no such project":   {db.ListAgentJobsParams{AllWorkspaces: true, Project: &nowhere, Status: &failed}, 50},
		"llm":               {db.ListAgentJobsParams{AllWorkspaces: true, Project: &slug, Kind: &llm}, 50},
		"heal page of 3":    {db.ListAgentJobsParams{AllWorkspaces: true, Project: &slug, Kind: &heal}, 3},
		"heal before a tie": {db.ListAgentJobsParams{AllWorkspaces: true, Project: &slug, Kind: &heal, BeforeAt: &tie, BeforeID: uuid.NullUUID{UUID: uuid.Max, Valid: true}}, 50},
		"llm, member":       {db.ListAgentJobsParams{WorkspaceIds: []uuid.UUID{p.WorkspaceID}, Project: &slug, Kind: &llm}, 50},
		"llm, not a member": {db.ListAgentJobsParams{WorkspaceIds: []uuid.UUID{uuid.New()}, Project: &slug, Kind: &llm}, 50},
	} {
		c.params.RowLimit = int32(c.limit + 1)
		if c.params.WorkspaceIds == nil {
			c.params.WorkspaceIds = []uuid.UUID{}
		}
		got, err := s.listJobs(ctx, c.params, c.limit)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := general(c.params, c.limit)
		if want.N == 0 && name != "not a member" && name != "no such project" && name != "llm, not a member" {
			t.Fatalf("%s: nothing listed", name)
		}
		if string(got.Items) != string(want.Items) || got.N != want.N || got.More != want.More || !got.LastAt.Equal(want.LastAt) || got.LastID != want.LastID {
			t.Errorf("%s:\n got %d %v %s\nwant %d %v %s", name, got.N, got.More, got.Items, want.N, want.More, want.Items)
		}
	}
}
