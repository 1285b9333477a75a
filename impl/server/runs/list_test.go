package runs_test

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestListDecodesBinaryRows checks the run list's binary decoder against pgx's scan of the same
// statement (the list as read before): every optional column NULL and set, paths NULL-free but
// empty, one and several (unicode) elements, counts as PostgreSQL writes them, times with
// microseconds and before 2000, for several filters and pages. The handler builds the page from
// these values alone, so equal values are an equal page.
func TestListDecodesBinaryRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	p := runs.TestProject(t, st, "listbin")
	var sched uuid.UUID
	if err := st.Pool.QueryRow(ctx, `INSERT INTO schedules (project_id, name, cron) VALUES ($1, 'nightly', '0 3 * * *') RETURNING id`, p.ID).Scan(&sched); err != nil {
		t.Logf("no schedule row (%v): schedule ids are random uuids", err)
		sched = uuid.New()
	}
	if _, err := st.Pool.Exec(ctx, `INSERT INTO runs (project_id, status, trigger, source, label, paths, tags, environment, branch, commit_sha,
  process_name, schedule_id, created_at, updated_at, started_at, finished_at, counts) VALUES
 ($1, 'queued', 'api', 'execute', NULL, '{}', NULL, NULL, NULL, NULL, NULL, NULL, '2026-01-02 03:04:05.123456+00', '2026-01-02 03:04:05.123456+00', NULL, NULL, '{}'),
 ($1, 'passed', 'schedule', 'ingest', 'nightly "é"', '{"a/b.feature","日本/x y"}', '@smoke and not @slow', 'staging', 'main', 'abc123',
  'release', $2, '2026-01-03 00:00:00+00', '2026-01-03 00:10:00.5+00', '2026-01-03 00:00:01.000001+00', '2026-01-03 00:09:59+00',
  '{"total": 10, "passed": 7, "failed": 1, "flaky": 1, "skipped": 1, "pending": 0, "undefined": 0, "quarantined": 2}'),
 ($1, 'running', 'ui', 'execute', '', '{"one"}', '', '', '', '', '', NULL, '1999-12-31 23:59:59.999999+00', '2026-01-04 00:00:00+00',
  '1999-12-31 23:59:59.999999+00', NULL, '{"total": 3}'),
 ($1, 'failed', 'process', 'execute', 'l', '{}', NULL, 'env', NULL, 'c', NULL, $2, '2026-01-05 00:00:00+00', '2026-01-05 00:00:00+00',
  NULL, '2026-01-05 00:00:00+00', '{"total": 1, "failed": 1, "x": 1.5}')`, p.ID, sched); err != nil {
		t.Fatal(err)
	}
	svc := runs.New(st, nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), runs.Config{})
	slug := p.Slug
	before := time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC)
	// Every list is compared again once all were decoded: the decoders' buffers are reused
	// between requests, and a run may keep none of them.
	kept, wanted := map[string][]runs.ProjectRun{}, map[string][]runs.ProjectRun{}
	for name, f := range map[string]runs.ListFilter{
		"all":              {AllWorkspaces: true, Limit: 51},
		"project":          {AllWorkspaces: true, Project: &slug, Limit: 51},
		"page of 2":        {AllWorkspaces: true, Project: &slug, Limit: 2},
		"before":           {AllWorkspaces: true, Project: &slug, BeforeAt: &before, BeforeID: uuid.Max, Limit: 51},
		"schedule":         {AllWorkspaces: true, ScheduleID: &sched, Limit: 51},
		"none":             {AllWorkspaces: true, Statuses: []string{"cancelled"}, Limit: 51},
		"only empty paths": {AllWorkspaces: true, Statuses: []string{"queued", "failed"}, Limit: 51}, // no path in the page
		"not a member":     {UserID: uuid.New(), Limit: 51},
	} {
		got, err := svc.List(ctx, f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := runs.ListScanned(svc, ctx, f)
		if err != nil {
			t.Fatalf("%s: scanned: %v", name, err)
		}
		if len(want) == 0 && name != "none" && name != "not a member" {
			t.Fatalf("%s: no runs", name)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d runs, want %d", name, len(got), len(want))
		}
		for i := range want {
			if (got[i].Run.Paths == nil) != (want[i].Run.Paths == nil) { // nil is written null, empty []
				t.Fatalf("%s: run %d paths %#v, want %#v", name, i, got[i].Run.Paths, want[i].Run.Paths)
			}
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("%s: run %d\n got %+v\nwant %+v", name, i, got[i], want[i])
			}
		}
		kept[name], wanted[name] = got, want
	}
	for name, got := range kept {
		if !reflect.DeepEqual(got, wanted[name]) {
			t.Fatalf("%s: changed by the lists decoded after it\n got %+v\nwant %+v", name, got, wanted[name])
		}
	}
}
