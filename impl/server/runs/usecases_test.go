package runs_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// The use cases behind the runs handlers, on a real database: inputs checked before a run is
// queued, a queued run read back with its project, listed only for members, stopped once with an
// audit entry, and a second stop a conflict.
func TestRunUseCases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	p := runs.TestProject(t, st, "shop")
	svc := runs.New(st, nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), runs.Config{})

	for name, bad := range map[string]runs.CreateParams{
		"a tag expression that does not compile": {ProjectID: p.ID, Tags: ptr("@a and")},
		"an unknown environment":                 {ProjectID: p.ID, Environment: ptr("staging")},
		"an unknown dataset":                     {ProjectID: p.ID, Datasets: map[string]string{"users": "users"}},
		"a path without features":                {ProjectID: p.ID, Paths: []string{"checkout"}},
	} {
		if err := svc.CheckInputs(ctx, bad); apierr.From(err).Code != apierr.ValidationFailed {
			t.Errorf("%s: %v", name, err)
		}
	}
	params := runs.CreateParams{ProjectID: p.ID, Trigger: "api", Label: ptr("nightly")}
	if err := svc.CheckInputs(ctx, params); err != nil {
		t.Fatalf("a run of every feature: %v", err)
	}
	r, err := svc.Queue(ctx, params, p.Slug)
	if err != nil || r.Status != "queued" || r.ProjectID != p.ID || *r.Label != "nightly" {
		t.Fatalf("queue: %+v %v", r, err)
	}
	got, err := svc.Get(ctx, r.ID)
	if err != nil || got.Run.ID != r.ID || got.ProjectSlug != "web" || got.WorkspaceID != p.WorkspaceID {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := svc.Get(ctx, uuid.New()); !store.IsNotFound(err) {
		t.Fatalf("get of an unknown run: %v", err)
	}
	if all, err := svc.List(ctx, runs.ListFilter{AllWorkspaces: true, Limit: 10}); err != nil || len(all) != 1 || all[0].ProjectSlug != "web" {
		t.Fatalf("list of every workspace: %+v %v", all, err)
	}
	if mine, err := svc.List(ctx, runs.ListFilter{UserID: uuid.New(), Limit: 10}); err != nil || len(mine) != 0 {
		t.Fatalf("list of a user of no workspace: %+v %v", mine, err)
	}
	stopped, err := svc.Stop(ctx, got)
	if err != nil || stopped.Status != "cancelled" {
		t.Fatalf("stop: %+v %v", stopped, err)
	}
	got, _ = svc.Get(ctx, r.ID)
	if _, err := svc.Stop(ctx, got); apierr.From(err).Code != apierr.Conflict {
		t.Fatalf("stop of an ended run: %v", err)
	}
	var audited int
	if err := st.Pool.QueryRow(ctx, "SELECT count(*) FROM audit_entries WHERE target_kind = 'run' AND target_id = $1", r.ID.String()).Scan(&audited); err != nil || audited != 2 {
		t.Fatalf("audit entries of the run (queue, stop): %d %v", audited, err)
	}
}

func ptr[T any](v T) *T { return &v }
