package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/ingest"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/scenariowrite"
	"github.com/sdods/sdods/impl/server/store"
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
	st, svc, target := mustIngestRun(t)
	r := struct{ ID uuid.UUID }{target.RunID}
	if _, err := svc.Ingest(ctx, target, strings.NewReader("<testsuite><testcase"), 1<<20, "", ingest.JUnit); err == nil || apierr.From(err).Code != apierr.BadRequest {
		t.Fatalf("malformed: %v", err)
	}
	first, err := svc.Ingest(ctx, target, strings.NewReader(twoCases), 1<<20, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if first.Duplicate || first.Status != string(serverapi.RunStatusFailed) || string(first.Format) != string(serverapi.IngestResultFormatJunit) ||
		first.Counts.Passed != 1 || first.Counts.Failed != 1 {
		t.Fatalf("first: %+v", first)
	}
	again, err := svc.Ingest(ctx, target, strings.NewReader(twoCases), 1<<20, "", "")
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

// mustIngestRun returns a store, the ingest service and a run created for ingest.
func mustIngestRun(t *testing.T) (*store.Store, *ingest.Service, ingest.Target) {
	t.Helper()
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
	return st, svc, ingest.Target{RunID: r.ID, ProjectID: p.ID, Project: "web"}
}

// junitCases is a JUnit document of n test cases, then tail (before the closing tags).
func junitCases(n int, tail string) string {
	var b strings.Builder
	b.WriteString("<testsuites><testsuite name=\"big\">\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "<testcase classname=\"pkg.C%d\" name=\"case %d\" time=\"0.01\"><system-out>out %d</system-out></testcase>\n", i%10, i, i)
	}
	b.WriteString(tail)
	b.WriteString("</testsuite></testsuites>\n")
	return b.String()
}

// A document whose fault comes after thousands of test cases (already COPYed, their output
// already in the blob store) is a 400 naming the line, and the transaction leaves nothing: no
// scenario, no artifact, no ingest record, the run still waiting (issue 31, item 2).
func TestServiceLateParseErrorWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, svc, target := mustIngestRun(t)
	for name, tail := range map[string]string{
		"malformed XML": "<testcase name=\"x\"><failure></testcase>\n",
		"bad time":      "<testcase name=\"late\" time=\"soon\"/>\n",
	} {
		_, err := svc.Ingest(ctx, target, strings.NewReader(junitCases(5000, tail)), 1<<30, "", "")
		e := apierr.From(err)
		if e == nil || e.Code != apierr.BadRequest || !strings.Contains(e.Hint, "line 5002") {
			t.Fatalf("%s: %+v", name, e)
		}
	}
	var scenarios, artifacts, ingests int
	if err := st.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM run_scenarios WHERE run_id = $1), (SELECT count(*) FROM artifacts WHERE run_id = $1),
		(SELECT count(*) FROM run_ingests WHERE run_id = $1)`, target.RunID).Scan(&scenarios, &artifacts, &ingests); err != nil {
		t.Fatal(err)
	}
	run, err := st.GetRun(ctx, target.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if scenarios != 0 || artifacts != 0 || ingests != 0 || run.Run.Status != "running" {
		t.Fatalf("left: %d scenarios, %d artifacts, %d ingests, run %s", scenarios, artifacts, ingests, run.Run.Status)
	}
	// The same content without the fault is then written whole.
	out, err := svc.Ingest(ctx, target, strings.NewReader(junitCases(5000, "")), 1<<30, "", "")
	if err != nil || out.Counts.Total != 5000 {
		t.Fatalf("whole: %+v %v", out, err)
	}
}

// A second document into the same run goes through the staging table: a key it has already is
// replaced in place (position and id kept, its old output artifacts dropped), a new key is added
// after the others; a test case run again within a document is one scenario with its attempts.
func TestServiceSecondDocumentReplacesByKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, svc, target := mustIngestRun(t)
	if _, err := svc.Ingest(ctx, target, strings.NewReader(junitCases(3, "")), 1<<20, "", ""); err != nil {
		t.Fatal(err)
	}
	before, err := st.ListRunScenarios(ctx, target.RunID)
	if err != nil || len(before) != 3 {
		t.Fatalf("first: %d %v", len(before), err)
	}
	second := `<testsuite name="big">
  <testcase classname="pkg.C1" name="case 1" time="1"><failure message="first try">x</failure></testcase>
  <testcase classname="pkg.C9" name="new" time="0.5"/>
  <testcase classname="pkg.C1" name="case 1" time="2"/>
</testsuite>`
	out, err := svc.Ingest(ctx, target, strings.NewReader(second), 1<<20, "", "")
	if err != nil {
		t.Fatal(err)
	}
	after, err := st.ListRunScenarios(ctx, target.RunID)
	if err != nil || len(after) != 4 {
		t.Fatalf("second: %d %v", len(after), err)
	}
	c1 := after[1]
	if c1.ID != before[1].ID || c1.Position != 1 || c1.Name != "case 1" || c1.Status != "passed" || c1.Attempts != 2 || *c1.DurationMs != 3000 {
		t.Fatalf("case 1: %+v", c1)
	}
	if after[3].Name != "new" || after[3].Position != 4 { // the run's next position plus its index in the document
		t.Fatalf("new: %+v", after[3])
	}
	if out.Counts.Total != 4 || out.Counts.Flaky != 1 {
		t.Fatalf("counts: %+v", out.Counts)
	}
	var outputs int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM artifacts WHERE run_id = $1 AND scenario_key = $2`, target.RunID, c1.ScenarioKey).Scan(&outputs); err != nil {
		t.Fatal(err)
	}
	if outputs != 0 {
		t.Fatalf("case 1 keeps %d output artifacts of the first document", outputs)
	}
}

// The COPY of a document's scenarios reuses the cached plans of its per-row statements (the run's
// foreign key check, the quarantine trigger) and gives the transaction back with the pool's own
// plan_cache_mode, so that the run's finish is planned as before (docs/benchmarks.md, "Ingest").
func TestCopyRestoresPlanCacheMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _, target := mustIngestRun(t)
	for _, fresh := range []bool{true, false} {
		err := st.WithTx(ctx, func(q *db.Queries) error {
			tx, _ := store.TxOf(q)
			var before, after string
			if err := tx.QueryRow(ctx, `SELECT current_setting('plan_cache_mode')`).Scan(&before); err != nil {
				return err
			}
			sent := false
			n, err := scenariowrite.Copy(ctx, q, target.RunID, fresh, func() (scenariowrite.Result, bool, error) {
				if sent {
					return scenariowrite.Result{}, false, nil
				}
				sent = true
				return scenariowrite.Result{Key: "k", Module: "m", FeaturePath: "f", Name: "n", Status: "passed", Attempts: 1}, true, nil
			})
			if err != nil || n != 1 {
				return fmt.Errorf("copy: %d %v", n, err)
			}
			if err := tx.QueryRow(ctx, `SELECT current_setting('plan_cache_mode')`).Scan(&after); err != nil {
				return err
			}
			if before != "force_custom_plan" || after != before {
				return fmt.Errorf("plan_cache_mode %q before the COPY, %q after", before, after)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("fresh %v: %v", fresh, err)
		}
	}
}
