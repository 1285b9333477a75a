package ingest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/ingest"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

const twoCases = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="cart" tests="2" failures="1">
  <testcase name="adds" classname="cart" time="0.25"/>
  <testcase name="removes" classname="cart" time="0.5"><failure message="expected 1 but was 2">boom</failure></testcase>
</testsuite>`

// A document is written into an ingest run once: the run ends failed with one passed and one
// failed scenario, the same document again answers the first result marked duplicate and adds no
// scenario, and a malformed document is a 400 that writes nothing.
func TestServiceIngestsADocumentOnce(t *testing.T) {
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
	svc := ingest.NewService(st, blobs)
	r, err := svc.CreateRun(ctx, ingest.NewRun{ProjectID: p.ID, Project: "web", Trigger: "api", Paths: []string{}, Variables: json.RawMessage("{}")})
	if err != nil || r.Status != "running" {
		t.Fatalf("create: %+v %v", r, err)
	}
	target := ingest.Target{RunID: r.ID, ProjectID: p.ID, Project: "web"}
	if _, err := svc.Ingest(ctx, target, []byte("<testsuite><testcase"), "", ingest.JUnit); err == nil || apierr.From(err).Code != apierr.BadRequest {
		t.Fatalf("malformed: %v", err)
	}
	first, err := svc.Ingest(ctx, target, []byte(twoCases), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if first.Duplicate || first.Status != string(serverapi.RunStatusFailed) || string(first.Format) != string(serverapi.IngestResultFormatJunit) ||
		first.Counts.Passed != 1 || first.Counts.Failed != 1 {
		t.Fatalf("first: %+v", first)
	}
	again, err := svc.Ingest(ctx, target, []byte(twoCases), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if !again.Duplicate || again.Status != first.Status || again.Counts.Passed != 1 || again.Counts.Failed != 1 {
		t.Fatalf("again: %+v, first %+v", again, first)
	}
	scenarios, err := st.ListRunScenarios(ctx, r.ID)
	if err != nil || len(scenarios) != 2 {
		t.Fatalf("scenarios: %d %v", len(scenarios), err)
	}
}
