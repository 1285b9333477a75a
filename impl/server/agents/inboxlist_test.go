package agents

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestInboxDecodesBinaryRows checks the inbox's binary decoder against pgx's scan of the same
// statements and the merge it fed (the list as read before, scannedInbox): proposals and visual
// checks with every optional column NULL and set, a decider and a deleted one, unicode, documents
// of each JSON type, times with microseconds and before 2000, equal creation times across both
// lists, for several filters and pages. The handler builds the page from these values alone, so
// equal values are an equal page.
func TestInboxDecodesBinaryRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := st.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
	}
	var org, ws, project, run, user, job, gone uuid.UUID
	for _, q := range []struct {
		sql  string
		dst  *uuid.UUID
		args []any
	}{
		{`INSERT INTO orgs (slug, name) VALUES ('inboxbin', 'o') RETURNING id`, &org, nil},
		{`INSERT INTO workspaces (org_id, slug, name) VALUES ($1, 'inboxbin', 'w') RETURNING id`, &ws, []any{&org}},
		{`INSERT INTO projects (workspace_id, slug, name) VALUES ($1, 'inboxbin', 'p') RETURNING id`, &project, []any{&ws}},
		{`INSERT INTO runs (project_id, status) VALUES ($1, 'passed') RETURNING id`, &run, []any{&project}},
		{`INSERT INTO users (email, display_name, password_hash) VALUES ('zoë@example.com', 'Zoë "<&>" 日本` + "\u2028\x01" + `', 'x') RETURNING id`, &user, nil},
		{`INSERT INTO users (email, display_name, password_hash) VALUES ('gone@example.com', 'gone', 'x') RETURNING id`, &gone, nil},
		{`INSERT INTO agent_jobs (project_id, kind, max_seconds, actor_kind, actor_name) VALUES ($1, 'heal', 60, 'system', 's') RETURNING id`, &job, []any{&project}},
	} {
		args := make([]any, len(q.args))
		for i, a := range q.args {
			args[i] = *a.(*uuid.UUID)
		}
		if err := st.Pool.QueryRow(ctx, q.sql, args...).Scan(q.dst); err != nil {
			t.Fatalf("%v\n%s", err, q.sql)
		}
	}
	targets := []string{`{}`, `{"featurePath": "features/a.feature", "etag": "\"e1\"", "scenario": "日本", "exampleRow": 3, "extra": "x"}`, `null`, `[1]`, `"s"`, `{"runId": 5}`}
	for i, target := range targets {
		set := i%2 == 1
		var decider any
		switch i % 3 {
		case 1:
			decider = user
		case 2:
			decider = gone
		}
		exec(`INSERT INTO proposals (project_id, job_id, kind, status, title, target, diff, evidence, confidence, decided_by, decided_at, reason, created_at, updated_at)
			VALUES ($1, CASE WHEN $2 THEN $9::uuid END, 'feature_patch', CASE WHEN $2 THEN 'rejected' ELSE 'pending' END, $3, $4::jsonb,
				CASE WHEN $2 THEN 'diff ' || $3 END, $5::jsonb, $6, $7::uuid, CASE WHEN $2 THEN '1999-12-31 23:59:59.999999+00'::timestamptz END,
				CASE WHEN $2 THEN 'no: ' || $3 END, '2026-11-20 10:00:00+00'::timestamptz + ($8 / 2) * interval '1 second', '2026-11-22 10:00:00.000001+00')`,
			project, set, "p é "+string(rune('a'+i)), target, targets[(i+1)%len(targets)], []float32{0, 0.55, 1, 0.333333, 1e-7, 0.1}[i], decider, i, job)
	}
	exec(`DELETE FROM users WHERE id = $1`, gone) // a decider whose user is gone
	exec(`INSERT INTO proposals (project_id, kind, status, title, confidence, created_at) VALUES ($1, 'quarantine', 'stale', 'old', 0.9, '2026-11-20 10:00:00+00')`, project)
	for i, status := range []string{"pending", "failed", "accepted", "pending"} {
		var id uuid.UUID
		if err := st.Pool.QueryRow(ctx, `INSERT INTO visual_checks (run_id, project_id, scenario_id, step_index, name, browser, viewport, status,
				mismatch_pixels, mismatch_ratio, accepted_by, accepted_at, created_at)
			VALUES ($1, $2, gen_random_uuid(), 0, $3, 'chromium', '640x400', $4, CASE WHEN $5 > 0 THEN 120 END, 0.0123, CASE WHEN $4 = 'accepted' THEN $6::uuid END,
				CASE WHEN $4 = 'accepted' THEN now() END, '2026-11-20 10:00:00+00'::timestamptz + ($5 / 2) * interval '1 second') RETURNING id`,
			run, project, "check 日本", status, i, user).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if status == "failed" {
			exec(`INSERT INTO visual_check_rejections (check_id, reason, decided_by) VALUES ($1, 'not now', $2)`, id, user)
		}
	}
	svc := New(st, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), Config{})
	slug, pending, baseline, feature, stale, verified := "inboxbin", "pending", "baseline_update", "feature_patch", "stale", "verified"
	rejected, accepted, nowhere := "rejected", "accepted", "nowhere"
	before := time.Date(2026, 11, 20, 10, 0, 1, 0, time.UTC)
	for name, c := range map[string]struct {
		sc Scope
		f  ProposalFilter
	}{
		"all":             {Scope{AllWorkspaces: true}, ProposalFilter{Limit: 50}},
		"project":         {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Limit: 50}},
		"workspace":       {Scope{WorkspaceIDs: []uuid.UUID{ws}}, ProposalFilter{Limit: 50}},
		"not a member":    {Scope{WorkspaceIDs: []uuid.UUID{uuid.New()}}, ProposalFilter{Limit: 50}},
		"pending":         {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Status: &pending, Limit: 50}},
		"page of 3":       {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Limit: 3}},
		"before":          {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, BeforeAt: &before, BeforeID: uuid.Max, Limit: 50}},
		"visual checks":   {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Kind: &baseline, Limit: 50}},
		"stale":           {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Status: &stale, Limit: 50}},
		"verified":        {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Status: &verified, Limit: 50}},
		"feature patches": {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Kind: &feature, MinConfidence: 0.2, Limit: 50}},
		// A project and a status without a job: both statements' generic plans in one round trip.
		"pending page of 1":       {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Status: &pending, Limit: 1}},
		"pending before":          {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Status: &pending, BeforeAt: &before, BeforeID: uuid.Max, Limit: 50}},
		"pending before nil":      {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Status: &pending, BeforeAt: &before, Limit: 50}},
		"rejected":                {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Status: &rejected, Limit: 50}},
		"accepted":                {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Status: &accepted, Limit: 50}},
		"pending visual checks":   {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Status: &pending, Kind: &baseline, Limit: 50}},
		"pending feature patches": {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Status: &pending, Kind: &feature, MinConfidence: 0.2, Limit: 50}},
		"pending member":          {Scope{WorkspaceIDs: []uuid.UUID{ws}}, ProposalFilter{Project: &slug, Status: &pending, Limit: 50}},
		"pending not a member":    {Scope{WorkspaceIDs: []uuid.UUID{uuid.New()}}, ProposalFilter{Project: &slug, Status: &pending, Limit: 50}},
		"pending no project":      {Scope{AllWorkspaces: true}, ProposalFilter{Project: &nowhere, Status: &pending, Limit: 50}},
		"rejected of the job":     {Scope{AllWorkspaces: true}, ProposalFilter{Project: &slug, Status: &rejected, JobID: uuid.NullUUID{UUID: job, Valid: true}, Limit: 50}},
	} {
		got, err := svc.ListProposals(ctx, c.sc, c.f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := scannedInbox(ctx, svc, c.sc, c.f)
		if err != nil {
			t.Fatalf("%s: scanned: %v", name, err)
		}
		if len(want) == 0 && name != "not a member" && name != "verified" && name != "pending not a member" && name != "pending no project" {
			t.Fatalf("%s: nothing listed", name)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
}

// scannedInbox is ListProposals as it read the inbox before: pgx's scan of both statements (the
// visual checks' whatever the status filter) and the merge of their rows.
func scannedInbox(ctx context.Context, s *Service, sc Scope, f ProposalFilter) ([]ProposalView, error) {
	before := uuid.NullUUID{UUID: f.BeforeID, Valid: f.BeforeAt != nil}
	props, err := s.st.ListInboxProposals(ctx, db.ListInboxProposalsParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: nonNilIDs(sc.WorkspaceIDs),
		Project: f.Project, Status: f.Status, Kind: f.Kind, JobID: f.JobID, MinConfidence: f.MinConfidence, BeforeAt: f.BeforeAt, BeforeID: before,
		RowLimit: int32(f.Limit)})
	if err != nil {
		return nil, err
	}
	var checks []db.ListInboxVisualChecksRow
	if (f.Kind == nil || *f.Kind == "baseline_update") && !f.JobID.Valid {
		checks, err = s.st.ListInboxVisualChecks(ctx, db.ListInboxVisualChecksParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: nonNilIDs(sc.WorkspaceIDs),
			Project: f.Project, Status: f.Status, MinConfidence: f.MinConfidence, BeforeAt: f.BeforeAt, BeforeID: before, RowLimit: int32(f.Limit)})
		if err != nil {
			return nil, err
		}
	}
	view := func(r db.ListInboxProposalsRow) ProposalView {
		return ProposalView{Proposal: db.Proposal{ID: r.ID, ProjectID: r.ProjectID, JobID: r.JobID, Kind: r.Kind, Status: r.Status, Title: r.Title,
			Target: r.Target, Diff: r.Diff, Evidence: r.Evidence, Confidence: r.Confidence, DecidedBy: r.DecidedBy, DecidedAt: r.DecidedAt, Reason: r.Reason,
			CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, ProjectSlug: r.ProjectSlug, WorkspaceID: r.WorkspaceID,
			Decider: creatorOf(r.DecidedBy, r.DeciderEmail, r.DeciderName), DeciderRead: true}
	}
	out := make([]ProposalView, 0, min(f.Limit, len(props)+len(checks)))
	i, j := 0, 0
	for len(out) < f.Limit && (i < len(props) || j < len(checks)) {
		if j == len(checks) || (i < len(props) && newerFirst(props[i].CreatedAt, props[i].ID, checks[j].CreatedAt, checks[j].ID)) {
			out = append(out, view(props[i]))
			i++
		} else {
			out = append(out, view(db.ListInboxProposalsRow(checks[j])))
			j++
		}
	}
	return out, nil
}
