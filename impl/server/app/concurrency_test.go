package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// holdTarget is the application of the concurrency tests: GET /hold/{who}/{n} holds the request
// for hold and answers {"who":who}. It records the most requests in flight at once, and any
// {who} (a leased account) with two requests in flight at once.
type holdTarget struct {
	*httptest.Server
	mu       sync.Mutex
	now      int
	peak     int
	total    int
	byWho    map[string]int
	doubles  []string
	holdTime time.Duration
}

func newHoldTarget(t testing.TB, hold time.Duration) *holdTarget {
	t.Helper()
	h := &holdTarget{byWho: map[string]int{}, holdTime: hold}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hold/{who}/{n}", func(w http.ResponseWriter, r *http.Request) {
		who := r.PathValue("who")
		h.mu.Lock()
		h.now++
		h.total++
		h.peak = max(h.peak, h.now)
		h.byWho[who]++
		if who != "anyone" && h.byWho[who] > 1 {
			h.doubles = append(h.doubles, fmt.Sprintf("%s in %d requests at once", who, h.byWho[who]))
		}
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			h.now--
			h.byWho[who]--
			h.mu.Unlock()
		}()
		select {
		case <-time.After(h.holdTime):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"who":%q}`, who)
	})
	h.Server = httptest.NewServer(mux)
	t.Cleanup(h.Close)
	return h
}

func (h *holdTarget) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.peak, h.total, h.doubles = 0, 0, nil
}

func (h *holdTarget) figures() (peak, total int, doubles []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.peak, h.total, append([]string(nil), h.doubles...)
}

// holdFeature has n scenarios of two steps each; with tag "@user" each leases an account and
// names it in its request.
func holdScenarios(n int, tag string) string {
	who := "anyone"
	if tag != "" {
		who = "${user.username}"
	}
	var b strings.Builder
	b.WriteString("Feature: Hold\n")
	for i := range n {
		if tag != "" {
			fmt.Fprintf(&b, "\n  %s", tag)
		}
		fmt.Fprintf(&b, "\n  Scenario: Hold %d\n    When I send a GET request to \"/hold/%s/%d\"\n    Then the response JSON at \"$.who\" is \"%s\"\n", i, who, i, who)
	}
	return b.String()
}

// TestScenarioConcurrency runs a project's runs through the real server with its
// scenarioConcurrency setting at 1, 2 and 4 against a server that records the requests in flight:
// never more than the setting at once (exactly that many when the run has enough scenarios), users-pool
// accounts never held by two scenarios at once, every scenario counted, the stored events gap-free
// and in order within each scenario. The setting is validated by the API and by the database.
func TestScenarioConcurrency(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	target := newHoldTarget(t, 150*time.Millisecond)
	const n = 8
	project(t, admin, target.URL, map[string]string{"hold.feature": holdScenarios(n, ""), "users.feature": strings.Replace(holdScenarios(n, "@user"), "Feature: Hold", "Feature: Users", 1)})
	ctx := context.Background()
	for _, u := range []string{"ann", "bob", "cyd"} {
		if r, err := admin.CreatePoolAccountWithResponse(ctx, "shop", serverclient.CreatePoolAccountJSONRequestBody{Username: u, Password: "pw-" + u}); err != nil || r.StatusCode() != http.StatusCreated {
			t.Fatalf("create pool account: %v %s", err, r.Body)
		}
	}
	setConcurrency := func(t *testing.T, c *int) *serverclient.UpdateProjectResponse {
		t.Helper()
		r, err := admin.UpdateProjectWithResponse(ctx, "shop", serverclient.UpdateProjectJSONRequestBody{Name: "Shop",
			Settings: &serverclient.ProjectSettingsInput{ScenarioConcurrency: c}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	t.Run("setting", func(t *testing.T) {
		for _, bad := range []int{0, 33, -1} {
			if r := setConcurrency(t, &bad); r.StatusCode() != http.StatusBadRequest || !strings.Contains(string(r.Body), "scenarioConcurrency") {
				t.Errorf("scenarioConcurrency %d: %d %s", bad, r.StatusCode(), r.Body)
			}
		}
		if r := setConcurrency(t, ptr(3)); r.JSON200 == nil || r.JSON200.Settings.ScenarioConcurrency == nil || *r.JSON200.Settings.ScenarioConcurrency != 3 {
			t.Fatalf("set 3: %d %s", r.StatusCode(), r.Body)
		}
		g, err := admin.GetProjectWithResponse(ctx, "shop")
		if err != nil || g.JSON200 == nil || g.JSON200.Settings.ScenarioConcurrency == nil || *g.JSON200.Settings.ScenarioConcurrency != 3 {
			t.Fatalf("get: %v %s", err, g.Body)
		}
		if r := setConcurrency(t, nil); r.JSON200 == nil || r.JSON200.Settings.ScenarioConcurrency != nil {
			t.Fatalf("absent: %d %s", r.StatusCode(), r.Body)
		}
		// The database keeps any writer to the same bounds.
		if _, err := s.App.Store.Pool.Exec(ctx, `UPDATE projects SET settings = settings || '{"scenarioConcurrency": 100}' WHERE slug = 'shop'`); err == nil ||
			!strings.Contains(err.Error(), "projects_scenario_concurrency_check") {
			t.Errorf("the database took a concurrency of 100: %v", err)
		}
	})

	for _, tt := range []struct {
		name        string
		concurrency int
		path        string
		// The most requests in flight at once; with three accounts for four scenarios at once,
		// the lease of the third may come after the first request ended on a busy machine.
		minPeak, maxPeak int
	}{
		{"one at a time", 1, "hold.feature", 1, 1},
		{"two at once", 2, "hold.feature", 2, 2},
		{"four at once, three accounts", 4, "users.feature", 2, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := setConcurrency(t, ptr(tt.concurrency)); r.StatusCode() != http.StatusOK {
				t.Fatalf("set %d: %d %s", tt.concurrency, r.StatusCode(), r.Body)
			}
			target.reset()
			id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local"), Paths: &[]string{tt.path}})
			run := waitRun(t, admin.ClientWithResponses, id, terminal)
			if run.Status != "passed" || run.Counts.Passed != n || run.Counts.Total != n {
				t.Fatalf("run %s %+v", run.Status, run.Counts)
			}
			peak, total, doubles := target.figures()
			if peak < tt.minPeak || peak > tt.maxPeak || total != n {
				t.Errorf("%d requests, at most %d at once; want %d, %d to %d at once", total, peak, n, tt.minPeak, tt.maxPeak)
			}
			if len(doubles) > 0 {
				t.Errorf("accounts double-booked: %v", doubles)
			}
			var held int
			if err := s.App.Store.Pool.QueryRow(ctx, `SELECT count(*) FROM pool_accounts WHERE lease_run_id IS NOT NULL`).Scan(&held); err != nil || held != 0 {
				t.Errorf("%d accounts still leased after the run (%v)", held, err)
			}
			checkStoredOrder(t, storedEvents(t, s, id), n)
		})
	}
}

// checkStoredOrder checks a run's stored events: sequence 1, 2, … without a gap, one run.status
// running first and the end last, and within each of the n scenarios started, its steps' starts and
// ends in step order, finished.
func checkStoredOrder(t *testing.T, events []rawEvent, n int) {
	t.Helper()
	type state struct {
		started, finished, open bool
		step                    int
	}
	per := map[uuid.UUID]*state{}
	for i, e := range events {
		if e.ID != fmt.Sprint(i+1) {
			t.Fatalf("event %d has id %s", i, e.ID)
		}
		var d struct {
			ScenarioID *uuid.UUID `json:"scenarioId"`
			StepIndex  *int       `json:"stepIndex"`
		}
		if err := json.Unmarshal([]byte(e.Data), &d); err != nil {
			t.Fatal(err)
		}
		if d.ScenarioID == nil {
			continue
		}
		s := per[*d.ScenarioID]
		if s == nil {
			s = &state{}
			per[*d.ScenarioID] = s
		}
		bad := func(why string) { t.Fatalf("event %s (%s) of scenario %s: %s", e.ID, e.Event, d.ScenarioID, why) }
		if s.finished {
			bad("after the scenario finished")
		}
		switch e.Event {
		case "scenario.started":
			s.started = true
		case "step.started":
			if !s.started || s.open || *d.StepIndex != s.step {
				bad(fmt.Sprintf("step %d started, want %d", *d.StepIndex, s.step))
			}
			s.open = true
		case "step.finished":
			if !s.open || *d.StepIndex != s.step {
				bad(fmt.Sprintf("step %d finished, want %d", *d.StepIndex, s.step))
			}
			s.open, s.step = false, s.step+1
		case "scenario.finished":
			if s.open || s.step != 2 {
				bad("finished before its two steps")
			}
			s.finished = true
		}
	}
	if len(events) == 0 || events[len(events)-1].Event != "end" {
		t.Fatal("the events do not end with the end event")
	}
	done := 0
	for _, s := range per {
		if s.finished {
			done++
		}
	}
	if done != n {
		t.Errorf("%d scenarios finished in the events, want %d", done, n)
	}
}
