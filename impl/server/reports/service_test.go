package reports_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/ingest"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/reports"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// The report service reads an ingested run's scenarios with their steps and errors, keeps the
// head it is given, and renders the HTML page with them.
func TestServiceLoadsAndRendersARun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	blobs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o, err := st.CreateOrg(ctx, db.CreateOrgParams{Slug: "org-shop", Name: "Org"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: o.ID, Slug: "shop", Name: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := projects.NewService(st).Create(ctx, projects.Workspace{ID: w.ID, Slug: w.Slug, Name: w.Name}, "web", "Web", "", projects.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	in := ingest.NewService(st, blobs)
	r, err := in.CreateRun(ctx, ingest.NewRun{ProjectID: p.ID, Project: "web", Trigger: "api", Paths: []string{}, Variables: json.RawMessage("{}")})
	if err != nil {
		t.Fatal(err)
	}
	doc := `<testsuite name="cart" tests="2" failures="1">
  <testcase name="adds" classname="cart" time="0.25"/>
  <testcase name="removes" classname="cart" time="0.5"><failure message="expected 1 but was 2">boom</failure></testcase>
</testsuite>`
	if _, err := in.Ingest(ctx, ingest.Target{RunID: r.ID, ProjectID: p.ID, Project: "web"}, strings.NewReader(doc), 1<<20, "", ""); err != nil {
		t.Fatal(err)
	}
	svc := reports.NewService(st, blobs, slog.New(slog.NewTextHandler(io.Discard, nil)))
	head := reports.Run{ID: r.ID, Project: "web", Label: "nightly", Status: "failed", Source: "ingest", CreatedAt: r.CreatedAt}
	run, err := svc.Load(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	if run.Label != "nightly" || run.Project != "web" || len(run.Scenarios) != 2 {
		t.Fatalf("run: %+v", run)
	}
	var failed *reports.Scenario
	for i := range run.Scenarios {
		if run.Scenarios[i].Status == "failed" {
			failed = &run.Scenarios[i]
		}
	}
	if failed == nil || failed.Name != "removes" || failed.Error == nil || !strings.Contains(failed.Error.Message, "expected 1 but was 2") {
		t.Fatalf("failed scenario: %+v", failed)
	}
	// The report read with the failures' steps only is the report read with every step; the
	// passed scenario's steps are not read.
	outcomes, err := svc.LoadOutcomes(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := json.Marshal(reports.Build(run, "/r"))
	lean, _ := json.Marshal(reports.Build(outcomes, "/r"))
	if string(full) != string(lean) {
		t.Fatalf("report from outcomes differs:\n%s\n%s", lean, full)
	}
	for _, sc := range outcomes.Scenarios {
		if (sc.Status == "passed") != (sc.Steps == nil) || (sc.Status == "failed" && (len(sc.Steps) == 0 || sc.Error == nil)) {
			t.Fatalf("outcome %s: %d steps, error %v", sc.Status, len(sc.Steps), sc.Error)
		}
	}
	page, err := svc.HTML(ctx, head, "/reports/"+r.ID.String()+"/index.html")
	if err != nil {
		t.Fatal(err)
	}
	if s := string(page); !strings.Contains(s, "removes") || !strings.Contains(s, "nightly") {
		t.Fatalf("the page misses the run: %.400s", s)
	}
}
