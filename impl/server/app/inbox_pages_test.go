package app_test

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestInboxPagesMergeProposalsAndVisualChecks: the review inbox is read as two lists (proposals,
// visual checks) merged by the service. Its pages, followed by nextCursor, concatenate to the
// inbox in the order of the one query it replaced (inbox_items, newest first, then id
// descending), with many items sharing a created_at across both lists, for every filter.
func TestInboxPagesMergeProposalsAndVisualChecks(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	for _, slug := range []string{"shop", "other"} {
		if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: slug, Name: slug, WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
			t.Fatalf("create project: %v %s", err, r.Body)
		}
	}
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	// Few distinct times, so that most items tie on created_at with items of the other list.
	rnd := rand.New(rand.NewSource(31))
	base := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	at := func() time.Time { return base.Add(time.Duration(rnd.Intn(6)) * time.Minute) }
	for _, slug := range []string{"shop", "other"} {
		var project, run uuid.UUID
		if err := conn.QueryRow(ctx, `SELECT id FROM projects WHERE slug = $1`, slug).Scan(&project); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(ctx, `INSERT INTO runs (project_id, status) VALUES ($1, 'passed') RETURNING id`, project).Scan(&run); err != nil {
			t.Fatal(err)
		}
		kinds := []string{"feature_patch", "quarantine", "classification", "baseline_update"}
		statuses := []string{"pending", "verified", "accepted", "rejected", "stale"}
		for i := 0; i < 40; i++ {
			st := statuses[rnd.Intn(len(statuses))]
			if _, err := conn.Exec(ctx, `INSERT INTO proposals (project_id, kind, status, title, confidence, reason, created_at)
				VALUES ($1, $2, $3, $4, $5, CASE WHEN $3 = 'rejected' THEN 'no' END, $6)`,
				project, kinds[rnd.Intn(len(kinds))], st, fmt.Sprintf("p%d", i), float32(rnd.Intn(11))/10, at()); err != nil {
				t.Fatal(err)
			}
		}
		checks := []string{"passed", "failed", "pending", "accepted"}
		for i := 0; i < 30; i++ {
			var id uuid.UUID
			var pixels *int64
			if rnd.Intn(3) > 0 {
				pixels = new(int64)
			}
			if err := conn.QueryRow(ctx, `INSERT INTO visual_checks (run_id, project_id, scenario_id, step_index, name, browser, viewport, status, mismatch_pixels, mismatch_ratio, created_at)
				VALUES ($1, $2, gen_random_uuid(), 0, $3, 'chromium', '640x400', $4, $5, $6, $7) RETURNING id`,
				run, project, fmt.Sprintf("c%d", i), checks[rnd.Intn(len(checks))], pixels, float64(rnd.Intn(11))/100, at()).Scan(&id); err != nil {
				t.Fatal(err)
			}
			if rnd.Intn(3) == 0 {
				if _, err := conn.Exec(ctx, `INSERT INTO visual_check_rejections (check_id, reason) SELECT id, 'no' FROM visual_checks WHERE id = $1 AND status IN ('failed', 'pending')`, id); err != nil {
					t.Fatal(err)
				}
			}
		}
	}

	status := func(v string) *serverclient.ProposalStatus { return ptr(serverclient.ProposalStatus(v)) }
	kind := func(v string) *serverclient.ProposalKind { return ptr(serverclient.ProposalKind(v)) }
	job := uuid.New()
	cases := []struct {
		name string
		p    serverclient.ListProposalsParams
	}{
		{"all", serverclient.ListProposalsParams{}},
		{"project", serverclient.ListProposalsParams{Project: ptr("shop")}},
		{"project-pending", serverclient.ListProposalsParams{Project: ptr("shop"), Status: status("pending")}},
		{"project-rejected", serverclient.ListProposalsParams{Project: ptr("shop"), Status: status("rejected")}},
		{"accepted", serverclient.ListProposalsParams{Status: status("accepted")}},
		{"baseline-updates", serverclient.ListProposalsParams{Project: ptr("other"), Kind: kind("baseline_update")}},
		{"feature-patches", serverclient.ListProposalsParams{Kind: kind("feature_patch")}},
		{"confident", serverclient.ListProposalsParams{MinConfidence: ptr(float32(0.6))}},
		{"job", serverclient.ListProposalsParams{JobId: &job}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []uuid.UUID
			rows, err := conn.Query(ctx, `SELECT id FROM inbox_items
				WHERE ($1::text IS NULL OR project_slug = $1) AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR kind = $3)
				  AND ($4::uuid IS NULL OR job_id = $4) AND confidence >= $5
				ORDER BY created_at DESC, id DESC`, c.p.Project, c.p.Status, c.p.Kind, c.p.JobId, deref(c.p.MinConfidence))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id uuid.UUID
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				want = append(want, id)
			}
			if rows.Err() != nil {
				t.Fatal(rows.Err())
			}
			if c.name == "all" && len(want) < 100 {
				t.Fatalf("only %d items in the inbox", len(want))
			}
			for _, limit := range []int{7, 200} {
				var got []uuid.UUID
				p := c.p
				p.Limit = ptr(serverclient.Limit(limit))
				for pages := 0; ; pages++ {
					r, err := admin.ListProposalsWithResponse(ctx, &p)
					if err != nil || r.JSON200 == nil {
						t.Fatalf("list: %v %s", err, r.Body)
					}
					if len(r.JSON200.Items) > limit || pages > 100 {
						t.Fatalf("page of %d items, limit %d (page %d)", len(r.JSON200.Items), limit, pages)
					}
					for _, it := range r.JSON200.Items {
						got = append(got, it.Id)
					}
					if r.JSON200.NextCursor == nil {
						break
					}
					p.Cursor = r.JSON200.NextCursor
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("limit %d: pages give %d items\n%v\nthe inbox has %d\n%v", limit, len(got), got, len(want), want)
				}
			}
		})
	}
}

func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}
