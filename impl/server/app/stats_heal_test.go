package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestHealStatsFromExecutedHeals executes browser scenarios in Chromium whose buttons change their
// ids between runs, so that the runner heals their selectors, and checks /api/stats/heal and the
// heals member of /api/stats/flaky against the heals the runs recorded on their steps.
func TestHealStatsFromExecutedHeals(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("chromium is required for browser steps: make deps installs it")
	}
	s := apptest.Start(t)
	admin := s.Setup(t)
	var mu sync.Mutex
	suffix := ""
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sfx := suffix
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body>
<button id="submit%[1]s" data-testid="submit-btn" onclick="document.getElementById('out').textContent='Sent'">Send</button>
<button id="reset%[1]s" data-testid="reset-btn" onclick="document.getElementById('out').textContent='Cleared'">Reset</button>
<p id="out"></p></body></html>`, sfx)
	}))
	t.Cleanup(web.Close)
	project(t, admin, web.URL, map[string]string{"heal.feature": `Feature: Heal
  Scenario: Send
    When I open "/"
    And I click "#submit"
    Then I should see "Sent"

  Scenario: Reset
    When I open "/"
    And I click "#reset"
    Then I should see "Cleared"
`})
	ctx := context.Background()
	type heal struct {
		scenario, old, new, strategy string
		score                        float64
	}
	var recorded []heal
	runOnce := func(sfx string) {
		t.Helper()
		mu.Lock()
		suffix = sfx
		mu.Unlock()
		id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
		run := waitRun(t, admin.ClientWithResponses, id, terminal)
		if run.Status != "passed" {
			t.Fatalf("run with ids %q: %s", sfx, run.Status)
		}
		for _, sc := range run.Modules[0].Features[0].Scenarios {
			d, err := admin.GetRunScenarioWithResponse(ctx, id, sc.Id)
			if err != nil || d.JSON200 == nil {
				t.Fatalf("scenario: %v", err)
			}
			for _, st := range d.JSON200.Steps {
				for _, h := range st.Heals {
					recorded = append(recorded, heal{sc.Name, h.OldSelector, h.NewSelector, string(h.Strategy), float64(h.Score)})
				}
			}
		}
	}
	runOnce("") // records the buttons' alternatives
	if len(recorded) != 0 {
		t.Fatalf("heals in the first run: %+v", recorded)
	}
	runOnce("-2") // both ids changed: each scenario heals its click once
	if len(recorded) != 2 {
		t.Fatalf("heals of the second run: %+v", recorded)
	}
	runOnce("-3") // changed again
	if len(recorded) < 3 {
		t.Fatalf("heals after the third run: %+v", recorded)
	}

	// What the statistics must say, counted from the recorded steps.
	byStrategy, bySelector, byScenario := map[string]int{}, map[string]int{}, map[string]int{}
	scoreSum := map[string]float64{}
	type triple struct{ old, new, strategy string }
	top := map[triple]int{}
	for _, h := range recorded {
		byStrategy[h.strategy]++
		scoreSum[h.strategy] += h.score
		bySelector[h.old]++
		byScenario[h.scenario]++
		top[triple{h.old, h.new, h.strategy}]++
	}
	token := apptest.Token(t, admin, "stats:read")
	get := func(path string, q url.Values, into any) {
		t.Helper()
		status, body, _ := s.Do(t, "GET", path+"?"+q.Encode(), "", nil, "Authorization", "Bearer "+token)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatal(err)
		}
	}
	var hs serverclient.HealStats
	get("/api/stats/heal", url.Values{}, &hs)
	if hs.Total != len(recorded) || hs.Accepted != nil || hs.Rejected != nil {
		t.Errorf("total %d (want %d), accepted %v, rejected %v", hs.Total, len(recorded), hs.Accepted, hs.Rejected)
	}
	if len(hs.ByStrategy) != len(byStrategy) {
		t.Errorf("byStrategy %+v, want %v", hs.ByStrategy, byStrategy)
	}
	for _, b := range hs.ByStrategy {
		if b.Count != byStrategy[b.Strategy] || !near(b.AvgScore, scoreSum[b.Strategy]/float64(b.Count)) {
			t.Errorf("strategy %+v, want count %d mean %.4f", b, byStrategy[b.Strategy], scoreSum[b.Strategy]/float64(byStrategy[b.Strategy]))
		}
	}
	if len(hs.BySelector) != len(bySelector) {
		t.Errorf("bySelector %+v, want %v", hs.BySelector, bySelector)
	}
	for _, b := range hs.BySelector {
		if b.Project != "shop" || b.Count != bySelector[b.Selector] {
			t.Errorf("selector %+v, want %d", b, bySelector[b.Selector])
		}
	}
	if bySelector["#submit"] == 0 || bySelector["#reset"] == 0 {
		t.Errorf("the healed selectors %v, want #submit and #reset", bySelector)
	}
	if len(hs.ByScenario) != 2 {
		t.Errorf("byScenario %+v", hs.ByScenario)
	}
	for _, b := range hs.ByScenario {
		if b.FeaturePath != "heal.feature" || b.Count != byScenario[b.Scenario] {
			t.Errorf("scenario %+v, want %d", b, byScenario[b.Scenario])
		}
	}
	if len(hs.Top) != len(top) {
		t.Errorf("top %+v, want %v", hs.Top, top)
	}
	for i, b := range hs.Top {
		if b.Count != top[triple{b.OldSelector, b.NewSelector, b.Strategy}] || b.LastSeenAt.IsZero() {
			t.Errorf("top %+v", b)
		}
		if i > 0 && hs.Top[i-1].Count < b.Count {
			t.Errorf("top not ordered by count: %+v", hs.Top)
		}
	}

	// The flaky list counts the same heals per scenario, from the rollup (whole days) and from the
	// results (any other window).
	today := time.Now().UTC().Truncate(24 * time.Hour)
	for _, q := range []url.Values{
		{"since": {today.Add(-24 * time.Hour).Format(time.RFC3339)}, "until": {today.Add(48 * time.Hour).Format(time.RFC3339)}, "minResults": {"2"}, "flakyOnly": {"false"}},
		{"since": {time.Now().Add(-time.Hour).Format(time.RFC3339)}, "until": {time.Now().Add(time.Hour).Format(time.RFC3339)}, "minResults": {"2"}, "flakyOnly": {"false"}},
	} {
		var page serverclient.FlakyScenarioList
		get("/api/stats/flaky", q, &page)
		var got []string
		for _, f := range page.Items {
			if f.Heals != byScenario[f.Scenario] || f.Results != 3 {
				t.Errorf("flaky %s: heals %d results %d, want %d and 3", f.Scenario, f.Heals, f.Results, byScenario[f.Scenario])
			}
			got = append(got, f.Scenario)
		}
		sort.Strings(got)
		if len(got) != 2 {
			t.Errorf("flaky rows %v (window %v)", got, q)
		}
	}
}
