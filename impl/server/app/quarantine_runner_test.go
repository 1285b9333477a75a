package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestRunnerReadsQuarantineList: the runner reads the project's quarantines when a run starts. A
// quarantined scenario runs, carries the tag @quarantined and does not fail the run; a run created
// with the exported tag expression leaves it out; once released, it is an ordinary scenario again.
func TestRunnerReadsQuarantineList(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/pay" {
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer web.Close()
	project(t, admin, web.URL, map[string]string{"api/pay.feature": "Feature: Pay\n  @payments\n  Scenario: Pays\n    When I send a GET request to \"/pay\"\n    Then the response status is 200\n\n  Scenario: Lists\n    When I send a GET request to \"/\"\n    Then the response status is 200\n"})
	token := apptest.Token(t, admin, "runs:read", "runs:write")
	call := func(method, path, body string, into any) int {
		t.Helper()
		var b []byte
		if body != "" {
			b = []byte(body)
		}
		status, out, _ := s.Do(t, method, path, "application/json", b, "Authorization", "Bearer "+token)
		if into != nil && status < 300 {
			if err := json.Unmarshal(out, into); err != nil {
				t.Fatal(err)
			}
		}
		return status
	}
	var list serverclient.QuarantineList
	call("GET", "/api/projects/shop/quarantine", "", &list)
	if list.Export.TagExpression != "" || len(list.Export.List) != 0 {
		t.Fatalf("export without quarantines %+v", list.Export)
	}
	var q serverclient.Quarantine
	if st := call("POST", "/api/projects/shop/quarantine", `{"featurePath":"api/pay.feature","scenario":"Pays","owner":"ana","reason":"gateway down"}`, &q); st != http.StatusCreated {
		t.Fatalf("quarantine: %d", st)
	}
	call("GET", "/api/projects/shop/quarantine", "", &list)
	if list.Export.TagExpression != "not @quarantined" || !slices.Equal(list.Export.List, []string{"api/pay.feature › Pays"}) {
		t.Fatalf("export %+v", list.Export)
	}
	tagsOf := func(run *serverclient.Run) map[string][]string {
		out := map[string][]string{}
		for _, m := range run.Modules {
			for _, f := range m.Features {
				for _, sc := range f.Scenarios {
					d, err := admin.GetRunScenarioWithResponse(context.Background(), run.Id, sc.Id)
					if err != nil || d.JSON200 == nil {
						t.Fatalf("scenario: %v", err)
					}
					out[sc.Name+" "+string(sc.Status)] = d.JSON200.Tags
				}
			}
		}
		return out
	}

	// Every scenario runs; the quarantined one fails, is tagged, and does not fail the run.
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	run := waitRun(t, admin.ClientWithResponses, id, terminal)
	if run.Status != "passed" || run.Counts.Total != 2 || run.Counts.Failed != 1 || run.Counts.Quarantined == nil || *run.Counts.Quarantined != 1 {
		t.Fatalf("run %s counts %+v", run.Status, run.Counts)
	}
	tags := tagsOf(run)
	if !slices.Equal(tags["Pays failed"], []string{"@payments", "@quarantined"}) || len(tags["Lists passed"]) != 0 {
		t.Errorf("tags %v", tags)
	}

	// The exported tag expression leaves it out.
	id = createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local"), Tags: ptr(list.Export.TagExpression)})
	run = waitRun(t, admin.ClientWithResponses, id, terminal)
	if run.Status != "passed" || run.Counts.Total != 1 || run.Counts.Passed != 1 {
		t.Fatalf("run with %q: %s counts %+v", list.Export.TagExpression, run.Status, run.Counts)
	}

	// Released, the scenario is no longer tagged and its failure fails the run.
	if st := call("DELETE", "/api/projects/shop/quarantine/"+q.Id.String(), "", nil); st != http.StatusNoContent {
		t.Fatalf("release: %d", st)
	}
	id = createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	run = waitRun(t, admin.ClientWithResponses, id, terminal)
	if run.Status != "failed" || run.Counts.Quarantined != nil && *run.Counts.Quarantined != 0 {
		t.Fatalf("run after release: %s counts %+v", run.Status, run.Counts)
	}
	if tags := tagsOf(run); !slices.Equal(tags["Pays failed"], []string{"@payments"}) {
		t.Errorf("tags after release %v", tags)
	}
}
