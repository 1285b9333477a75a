package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// runJob is the River job of a run, as river_job holds it.
type runJob struct {
	State   string
	Attempt int
}

func runJobsOf(t *testing.T, s *apptest.Server, id uuid.UUID) []runJob {
	t.Helper()
	rows, err := s.App.Store.Pool.Query(context.Background(), "SELECT state::text, attempt FROM river_job WHERE kind = 'run' AND args->>'run_id' = $1", id.String())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []runJob
	for rows.Next() {
		var j runJob
		if err := rows.Scan(&j.State, &j.Attempt); err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
	return out
}

// executions counts a run's "running" status events and end events.
func executions(t *testing.T, s *apptest.Server, id uuid.UUID) (running, ends int) {
	t.Helper()
	err := s.App.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE type = 'run.status' AND data->>'status' = 'running'),
		count(*) FILTER (WHERE type = 'end') FROM run_events WHERE run_id = $1`, id).Scan(&running, &ends)
	if err != nil {
		t.Fatal(err)
	}
	return running, ends
}

// Several processes on one database, one of them API-only: every run is one River job, worked once
// by one of the worker processes, executed once.
func TestRunJobsExecutedOnceAcrossProcessesAndRoles(t *testing.T) {
	api := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.Role = app.RoleAPI })
	w1 := apptest.StartOn(t, api.DatabaseURL, func(c *app.Config) { c.Role = app.RoleWorker })
	w2 := apptest.StartOn(t, api.DatabaseURL, func(c *app.Config) { c.Role = app.RoleWorker; c.Workers = 3 })
	admin := api.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/health.feature": strings.Split(healthFeature, "  Scenario: A check that fails")[0]})
	const n = 15
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	}
	by := map[string]int{}
	for _, id := range ids {
		if run := waitRun(t, admin.ClientWithResponses, id, terminal); run.Status != "passed" {
			t.Fatalf("run %s ended %s", id, run.Status)
		}
		var worker string
		if err := api.App.Store.Pool.QueryRow(context.Background(), "SELECT worker_id FROM runs WHERE id = $1", id).Scan(&worker); err != nil {
			t.Fatal(err)
		}
		by[worker]++
		// The end event follows the final status, and the job completes once the run ended (River
		// records completions in batches): both are awaited.
		deadline := time.Now().Add(10 * time.Second)
		for {
			running, ends := executions(t, api, id)
			if running == 1 && ends == 1 {
				break
			}
			if running > 1 || ends > 1 || time.Now().After(deadline) {
				t.Fatalf("run %s executed %d times (%d ends)", id, running, ends)
			}
			time.Sleep(20 * time.Millisecond)
		}
		for {
			jobs := runJobsOf(t, api, id)
			if len(jobs) == 1 && jobs[0].State == "completed" && jobs[0].Attempt == 1 {
				break
			}
			if len(jobs) != 1 || time.Now().After(deadline) {
				t.Fatalf("River jobs of run %s: %+v, want one completed at its first attempt", id, jobs)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if by[api.App.Runs.WorkerID()] != 0 || by[w1.App.Runs.WorkerID()]+by[w2.App.Runs.WorkerID()] != n {
		t.Fatalf("runs by process %v: the API-only process executed runs, or a run has no worker", by)
	}
	t.Logf("runs by process: %v", by)
}

// A run's job that River works again (a retry, or its rescuer after the job's process died) finds
// its run started already and does nothing: a run is never executed twice.
func TestRunJobWorkedAgainDoesNotExecuteTwice(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/health.feature": strings.Split(healthFeature, "  Scenario: A check that fails")[0]})
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	if run := waitRun(t, admin.ClientWithResponses, id, terminal); run.Status != "passed" {
		t.Fatalf("run ended %s", run.Status)
	}
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for jobs := runJobsOf(t, s, id); len(jobs) != 1 || jobs[0].State != "completed"; jobs = runJobsOf(t, s, id) {
		if time.Now().After(deadline) {
			t.Fatalf("jobs %+v", jobs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// What River's rescuer does to a job whose process stopped: available again.
	if _, err := s.App.Store.Pool.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = now(), finalized_at = NULL
		WHERE kind = 'run' AND args->>'run_id' = $1`, id.String()); err != nil {
		t.Fatal(err)
	}
	for jobs := runJobsOf(t, s, id); len(jobs) != 1 || jobs[0].State != "completed" || jobs[0].Attempt != 2; jobs = runJobsOf(t, s, id) {
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatalf("the job was not worked again: %+v", jobs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if running, ends := executions(t, s, id); running != 1 || ends != 1 {
		t.Fatalf("the run executed %d times (%d ends) after its job was worked again", running, ends)
	}
	if r, _ := admin.GetRunWithResponse(ctx, id); r.JSON200 == nil || r.JSON200.Status != "passed" {
		t.Fatalf("run after its job was worked again: %s", r.Body)
	}
}

// A cancel through the API stops the HTTP request or the browser step a River-worked run is in:
// the application under test sees its request abandoned, and the run ends within a second.
func TestCancelStopsRiverRunWithinASecond(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	abandoned := make(chan struct{}, 8)
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			abandoned <- struct{}{}
		case <-time.After(30 * time.Second):
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><body><p>nothing here</p></body></html>`)
	})
	target := httptest.NewServer(mux)
	t.Cleanup(target.Close)
	project(t, admin, target.URL, map[string]string{
		"http.feature":    "Feature: HTTP\n  Scenario: Slow\n    Given I set the header \"A\" to \"b\"\n    When I send a GET request to \"/slow\"\n    Then I log \"unreachable\"\n",
		"browser.feature": "Feature: Browser\n  Scenario: Slow\n    Given I open \"/\"\n    When I wait for \".never-there\"\n    Then I log \"unreachable\"\n",
	})
	tests := []struct {
		name, path string
		browser    bool
	}{{"HTTP request", "http.feature", false}, {"browser wait", "browser.feature", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := exec.LookPath("chromium"); tt.browser && err != nil {
				t.Fatal("chromium is required for browser steps: make deps installs it")
			}
			// A load spike on a busy machine can delay one attempt; the bound must hold in one of two.
			for attempt := 1; ; attempt++ {
				d := cancelRunOnce(t, admin, tt.path)
				if !tt.browser {
					select {
					case <-abandoned:
					case <-time.After(5 * time.Second):
						t.Fatal("the application under test never saw the request abandoned")
					}
				}
				if d <= time.Second {
					return
				}
				if attempt == 2 {
					t.Fatalf("the run ended %s after the cancel, want within 1s", d)
				}
				t.Logf("attempt %d: the run ended %s after the cancel; retrying", attempt, d)
			}
		})
	}
}

// cancelRunOnce starts a run of path, cancels it once its second step started and returns how long
// the run took to end after the cancel was accepted.
func cancelRunOnce(t *testing.T, admin *apptest.Browser, path string) time.Duration {
	t.Helper()
	ctx := context.Background()
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local"), Paths: &[]string{path}})
	deadline := time.Now().Add(time.Minute)
	for {
		sc := scenariosOf(t, admin, id)
		if len(sc) == 1 && len(sc[0].Steps) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slow step never started: %+v", sc)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // inside the slow step
	c, err := admin.CancelRunWithResponse(ctx, id)
	if err != nil || c.StatusCode() != http.StatusAccepted {
		t.Fatalf("cancel: %v %s", err, c.Body)
	}
	asked := time.Now()
	for {
		r, err := admin.GetRunWithResponse(ctx, id)
		if err != nil || r.JSON200 == nil {
			t.Fatalf("get run: %v", err)
		}
		if terminal(string(r.JSON200.Status)) {
			if r.JSON200.Status != "cancelled" {
				t.Fatalf("run ended %s, want cancelled", r.JSON200.Status)
			}
			return time.Since(asked)
		}
		if time.Since(asked) > 10*time.Second {
			t.Fatal("the run did not end within 10s of the cancel")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// -role api serves the API and executes nothing; -role worker executes runs and answers only
// /api/health, with the one error shape elsewhere.
func TestServeRoles(t *testing.T) {
	api := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.Role = app.RoleAPI })
	admin := api.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/health.feature": strings.Split(healthFeature, "  Scenario: A check that fails")[0]})
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	time.Sleep(1500 * time.Millisecond)
	if r, _ := admin.GetRunWithResponse(context.Background(), id); r.JSON200 == nil || r.JSON200.Status != "queued" {
		t.Fatalf("an API-only process executed a run: %s", r.Body)
	}

	addr := freeAddr(t)
	cfg := app.Config{Addr: addr, DatabaseURL: api.DatabaseURL, DataDir: t.TempDir(), MaxBody: 1 << 20, LogFormat: "text", Workers: 1,
		Chromium: "chromium", EgressAllow: apptest.LoopbackEgress, Role: app.RoleWorker, LogLevel: 8}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	var serveErr error
	go func() { defer wg.Done(); serveErr = app.Serve(ctx, cfg) }()
	t.Cleanup(func() { stop(); wg.Wait() })

	if run := waitRun(t, admin.ClientWithResponses, id, terminal); run.Status != "passed" {
		t.Fatalf("the worker process ran the queued run to %s", run.Status)
	}
	resp, err := http.Get("http://" + addr + "/api/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("worker /api/health: %d", resp.StatusCode)
	}
	resp, err = http.Get("http://" + addr + "/api/projects")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var e struct {
		Error struct{ Code, Message, Hint string }
	}
	if resp.StatusCode != http.StatusNotFound || json.Unmarshal(body, &e) != nil || e.Error.Code != "not_found" || e.Error.Hint == "" {
		t.Fatalf("worker /api/projects: %d %s", resp.StatusCode, body)
	}
	stop()
	wg.Wait()
	if serveErr != nil {
		t.Fatalf("worker process: %v", serveErr)
	}

	bad := cfg
	bad.Role = "both"
	if err := app.Serve(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "role") {
		t.Fatalf("-role both: %v", err)
	}
}

// A webhook delivery that fails is a River job tried again with backoff: the endpoint that answers
// 500 first gets the same event again, and the job completes at its second attempt.
func TestWebhookDeliveryRetried(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/health.feature": strings.Split(healthFeature, "  Scenario: A check that fails")[0]})
	type delivery struct{ event, id, runID string }
	got := make(chan delivery, 8)
	var mu sync.Mutex
	calls := 0
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Event string
			Data  struct{ RunID string }
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		got <- delivery{body.Event, r.Header.Get("X-Sdods-Delivery"), body.Data.RunID}
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(receiver.Close)
	ctx := context.Background()
	pr, err := admin.PutIntegrationWithResponse(ctx, "shop", "webhook", serverclient.PutIntegrationJSONRequestBody{Webhook: &serverclient.WebhookConfigInput{
		Url: receiver.URL, Events: []serverclient.WebhookEvent{"run.finished"}}})
	if err != nil || pr.StatusCode() >= 300 {
		t.Fatalf("put webhook: %v %s", err, pr.Body)
	}
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	waitRun(t, admin.ClientWithResponses, id, terminal)
	var ds []delivery
	for len(ds) < 2 {
		select {
		case d := <-got:
			ds = append(ds, d)
		case <-time.After(30 * time.Second):
			t.Fatalf("deliveries %+v, want a failed one and its retry", ds)
		}
	}
	if ds[0].event != "run.finished" || ds[1].event != "run.finished" || ds[0].runID != id.String() || ds[1].runID != id.String() || ds[0].id == ds[1].id {
		t.Fatalf("deliveries %+v", ds)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var state string
		var attempt int
		err := s.App.Store.Pool.QueryRow(ctx, "SELECT state::text, attempt FROM river_job WHERE kind = 'webhook_delivery' AND args->>'run_id' = $1", id.String()).Scan(&state, &attempt)
		if err == nil && state == "completed" && attempt == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery job: %s attempt %d, err %v", state, attempt, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case d := <-got:
		t.Fatalf("a third delivery: %+v", d)
	case <-time.After(500 * time.Millisecond):
	}
}

// Runs queued before run execution moved onto River have no job: a process that starts gives them
// one, once, and they execute.
func TestQueuedRunWithoutJobIsAdopted(t *testing.T) {
	api := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.Role = app.RoleAPI })
	admin := api.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/health.feature": strings.Split(healthFeature, "  Scenario: A check that fails")[0]})
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	if _, err := api.App.Store.Pool.Exec(context.Background(), "DELETE FROM river_job WHERE kind = 'run'"); err != nil {
		t.Fatal(err)
	}
	apptest.StartOn(t, api.DatabaseURL, func(c *app.Config) { c.Role = app.RoleWorker })
	apptest.StartOn(t, api.DatabaseURL, func(c *app.Config) { c.Role = app.RoleWorker })
	if run := waitRun(t, admin.ClientWithResponses, id, terminal); run.Status != "passed" {
		t.Fatalf("the adopted run ended %s", run.Status)
	}
	if jobs := runJobsOf(t, api, id); len(jobs) != 1 {
		t.Fatalf("River jobs of the adopted run: %+v, want one though two processes started", jobs)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		running, ends := executions(t, api, id)
		if running == 1 && ends == 1 {
			break
		}
		if running > 1 || ends > 1 || time.Now().After(deadline) {
			t.Fatalf("the adopted run executed %d times (%d ends)", running, ends)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
