package reports_test

import (
	"context"
	"encoding/json"
	"fmt"
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
	// Two cases, then 40 more: durations with ties (the slowest in run order), failures, skipped
	// ones and ones that passed on a rerun (flaky).
	var more strings.Builder
	for i := 0; i < 40; i++ {
		body := ""
		switch {
		case i%9 == 0:
			body = `<failure message="m` + fmt.Sprint(i) + `">x</failure>`
		case i%7 == 0:
			body = `<skipped/>`
		case i%5 == 0:
			body = `<flakyFailure message="flap"/>`
		}
		fmt.Fprintf(&more, `<testcase name="c%02d" classname="bulk" time="%d.%03d">%s</testcase>`, i, i%4, (i*37)%1000/100*100, body)
	}
	doc := `<testsuite name="cart">
  <testcase name="adds" classname="cart" time="0.25"/>
  <testcase name="removes" classname="cart" time="0.5"><failure message="expected 1 but was 2">boom</failure></testcase>
` + more.String() + `
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
	if run.Label != "nightly" || run.Project != "web" || len(run.Scenarios) != 42 {
		t.Fatalf("run: %+v", run)
	}
	var failed *reports.Scenario
	for i := range run.Scenarios {
		if run.Scenarios[i].Name == "removes" {
			failed = &run.Scenarios[i]
		}
	}
	if failed == nil || failed.Name != "removes" || failed.Error == nil || !strings.Contains(failed.Error.Message, "expected 1 but was 2") {
		t.Fatalf("failed scenario: %+v", failed)
	}
	// The report of the summary the database computes (and of the scenarios it lists, with the
	// failures' steps only) is the report computed from every scenario and step.
	summary, err := svc.LoadSummary(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := json.Marshal(reports.Build(run, "/r"))
	lean, _ := json.Marshal(reports.Build(summary, "/r"))
	if string(full) != string(lean) {
		t.Fatalf("report from the summary differs:\n%s\n%s", lean, full)
	}
	rep := reports.Build(summary, "/r")
	if len(rep.Slowest) != reports.SlowestCount || len(rep.Flaky) == 0 || len(rep.Failures) < 2 || rep.Counts.Skipped == 0 || rep.Counts.Total != 42 {
		t.Fatalf("the test's run does not exercise the report: %s", lean)
	}
	if len(summary.Scenarios) >= len(run.Scenarios) {
		t.Fatalf("the summary read %d scenarios of %d", len(summary.Scenarios), len(run.Scenarios))
	}
	for _, sc := range summary.Scenarios {
		failing := sc.Status == "failed" || sc.Status == "ambiguous" || sc.Status == "undefined"
		if failing == (sc.Steps == nil) || (sc.Status == "failed" && (len(sc.Steps) == 0 || sc.Error == nil)) {
			t.Fatalf("listed %s: %d steps, error %v", sc.Status, len(sc.Steps), sc.Error)
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
