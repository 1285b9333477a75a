package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
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

// webApp is the application under test of the runs tests: a JSON API, a slow endpoint and a page
// whose button greets by name.
func webApp(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"ok","items":[1,2]}`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Greeter</title></head><body>
<input id="name" placeholder="Your name"><button id="go">Greet</button><p id="greeting"></p>
<script>document.getElementById('go').onclick=function(){document.getElementById('greeting').textContent='Hello, '+document.getElementById('name').value;};</script>
</body></html>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

const healthFeature = `Feature: Health API

  Scenario: The API is healthy
    When I send a GET request to "/api/health"
    Then the response status is 200
    And the response JSON at "$.status" is "ok"

  Scenario: A check that fails
    When I send a GET request to "/api/health"
    Then the response status is 503
`

const greetFeature = `Feature: Greeting

  Scenario: Greets by name
    Given I wait 1 second
    When I open "/"
    And I fill "#name" with "Ada"
    And I click "#go"
    Then I should see "Hello, Ada"
    And I take a screenshot
`

const slowFeature = `Feature: Slow

  Scenario: Waits a long time
    Given I wait 30 seconds
`

// interruptedFeature has a scenario that passes at once and one that is still running 30 s later.
const interruptedFeature = `Feature: Slow

  Scenario: Quick
    Given I wait 1 second

  Scenario: Waits a long time
    Given I wait 1 second
    And I wait 30 seconds
`

// project creates a project "shop" with an environment "local" pointing at app and the features.
func project(t testing.TB, admin *apptest.Browser, appURL string, features map[string]string) {
	t.Helper()
	ctx := context.Background()
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop", Name: "Shop", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
		t.Fatalf("create project: %v %s", err, r.Body)
	}
	if r, err := admin.CreateEnvironmentWithResponse(ctx, "shop", serverclient.CreateEnvironmentJSONRequestBody{Name: "local", BaseUrl: &appURL}); err != nil || r.StatusCode() != http.StatusCreated {
		t.Fatalf("create environment: %v %s", err, r.Body)
	}
	for path, content := range features {
		r, err := admin.PutFeatureWithResponse(ctx, "shop", path, &serverclient.PutFeatureParams{IfMatch: ptr("*")}, serverclient.PutFeatureJSONRequestBody{Content: content})
		if err != nil || r.StatusCode() >= 300 {
			t.Fatalf("put feature %s: %v %d %s", path, err, r.StatusCode(), r.Body)
		}
	}
}

func createRun(t testing.TB, c *serverclient.ClientWithResponses, body serverclient.CreateRunJSONRequestBody) uuid.UUID {
	t.Helper()
	r, err := c.CreateRunWithResponse(context.Background(), body)
	if err != nil || r.StatusCode() != http.StatusAccepted || r.JSON202 == nil {
		t.Fatalf("create run: %v %s", err, r.Body)
	}
	if r.HTTPResponse.Header.Get("Location") != "/api/runs/"+r.JSON202.Id.String() || r.JSON202.Status != "queued" {
		t.Fatalf("run accepted: %s %q", r.Body, r.HTTPResponse.Header.Get("Location"))
	}
	return r.JSON202.Id
}

func waitRun(t testing.TB, c *serverclient.ClientWithResponses, id uuid.UUID, done func(status string) bool) *serverclient.Run {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		r, err := c.GetRunWithResponse(context.Background(), id)
		if err != nil || r.JSON200 == nil {
			t.Fatalf("get run: %v %s", err, r.Body)
		}
		if done(string(r.JSON200.Status)) {
			return r.JSON200
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("run %s did not reach the expected state", id)
	return nil
}

func terminal(s string) bool {
	switch s {
	case "passed", "failed", "errored", "cancelled", "timed_out":
		return true
	}
	return false
}

type sseEvent struct {
	ID, Event string
	Data      map[string]any
}

// follow reads a run's event stream to its end; onFirst is called at the first real event.
func follow(t *testing.T, s *apptest.Server, b *apptest.Browser, id uuid.UUID, lastEventID string, onFirst func()) []sseEvent {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL+"/api/runs/"+id.String()+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := (&http.Client{Jar: b.Jar, Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var out []sseEvent
	cur := sseEvent{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Event != "" {
				if len(out) == 0 && onFirst != nil {
					onFirst()
				}
				out = append(out, cur)
				if cur.Event == "end" {
					return out
				}
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data)
		}
	}
	t.Fatalf("the stream closed without an end event after %d events: %v", len(out), sc.Err())
	return nil
}

func TestRunExecutesFeaturesEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("chromium is required for browser steps: make deps installs it")
	}
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/health.feature": healthFeature, "ui/greet.feature": greetFeature})

	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	var statusAtFirstEvent string
	events := follow(t, s, admin, id, "", func() {
		r, _ := admin.GetRunWithResponse(ctx, id)
		statusAtFirstEvent = string(r.JSON200.Status)
	})
	if terminal(statusAtFirstEvent) {
		t.Fatalf("the first event arrived only after the run ended (%s)", statusAtFirstEvent)
	}
	last := events[len(events)-1]
	if last.Event != "end" || last.Data["status"] != "failed" {
		t.Fatalf("last event %+v", last)
	}
	kinds := map[string]int{}
	for i, e := range events {
		kinds[e.Event]++
		if e.ID != fmt.Sprint(i+1) {
			t.Fatalf("event %d has id %q: ids must count from 1 without gaps", i, e.ID)
		}
	}
	if kinds["scenario.started"] != 3 || kinds["scenario.finished"] != 3 || kinds["step.finished"] != 11 || kinds["attachment"] < 1 {
		t.Fatalf("event kinds %v", kinds)
	}

	run := waitRun(t, admin.ClientWithResponses, id, terminal)
	if run.Status != "failed" || run.Counts.Total != 3 || run.Counts.Passed != 2 || run.Counts.Failed != 1 || run.StartedAt == nil || run.DurationMs == nil {
		t.Fatalf("run %+v", run)
	}
	if len(run.Modules) != 2 || run.Modules[0].Name != "api" || run.Modules[1].Name != "ui" {
		t.Fatalf("modules %+v", run.Modules)
	}
	api := run.Modules[0]
	if api.Status != "failed" || len(api.Features) != 1 || api.Features[0].Path != "api/health.feature" || api.Features[0].Name != "Health API" ||
		len(api.Features[0].Scenarios) != 2 || api.Features[0].Counts.Passed != 1 || api.Features[0].Counts.Failed != 1 {
		t.Fatalf("api module %+v", api)
	}
	failing := api.Features[0].Scenarios[1]
	if failing.Name != "A check that fails" || failing.Status != "failed" || failing.Line != 8 {
		t.Fatalf("failing scenario %+v", failing)
	}
	detail, err := admin.GetRunScenarioWithResponse(ctx, id, failing.Id)
	if err != nil || detail.JSON200 == nil {
		t.Fatalf("scenario detail: %v %s", err, detail.Body)
	}
	steps := detail.JSON200.Steps
	if len(steps) != 2 || steps[0].Status != "passed" || steps[1].Status != "failed" || steps[1].Error == nil ||
		!strings.Contains(steps[1].Error.Message, "503") || steps[1].Text != "the response status is 503" || *steps[1].Line != 10 {
		t.Fatalf("steps %+v", steps)
	}
	ui := run.Modules[1].Features[0].Scenarios[0]
	if ui.Status != "passed" {
		t.Fatalf("browser scenario %+v", ui)
	}
	greet, _ := admin.GetRunScenarioWithResponse(ctx, id, ui.Id)
	if len(greet.JSON200.Attachments) != 1 || greet.JSON200.Attachments[0].MediaType != "image/png" || greet.JSON200.Attachments[0].SizeBytes < 1000 {
		t.Fatalf("screenshot attachment: %+v", greet.JSON200.Attachments)
	}
	// Resume after an event id: only what follows.
	rest := follow(t, s, admin, id, events[len(events)-3].ID, nil)
	if len(rest) != 2 || rest[1].Event != "end" {
		t.Fatalf("resume gave %d events", len(rest))
	}
	// Listing with filters.
	l, _ := admin.ListRunsWithResponse(ctx, &serverclient.ListRunsParams{Project: ptr("shop"), Status: &[]serverclient.RunStatus{"failed"}})
	if l.JSON200 == nil || len(l.JSON200.Items) != 1 || l.JSON200.Items[0].Id != id {
		t.Fatalf("list runs: %s", l.Body)
	}
	if l, _ := admin.ListRunsWithResponse(ctx, &serverclient.ListRunsParams{Status: &[]serverclient.RunStatus{"passed"}}); len(l.JSON200.Items) != 0 {
		t.Fatalf("status filter: %s", l.Body)
	}
	// Bad inputs are refused before anything is queued.
	for name, body := range map[string]serverclient.CreateRunJSONRequestBody{
		"unknown environment": {Project: "shop", Environment: ptr("nowhere")},
		"unknown path":        {Project: "shop", Paths: &[]string{"billing"}},
	} {
		if r, _ := admin.CreateRunWithResponse(ctx, body); r.StatusCode() != http.StatusBadRequest {
			t.Errorf("%s: %d %s", name, r.StatusCode(), r.Body)
		}
	}
	if r, _ := admin.CreateRunWithResponse(ctx, serverclient.CreateRunJSONRequestBody{Project: "nope"}); r.StatusCode() != http.StatusNotFound {
		t.Errorf("unknown project: %d", r.StatusCode())
	}
}

func TestCancelAndTimeout(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"slow.feature": slowFeature})
	ctx := context.Background()

	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	waitRun(t, admin.ClientWithResponses, id, func(s string) bool { return s == "running" })
	time.Sleep(300 * time.Millisecond) // inside the waiting step
	asked := time.Now()
	c, err := admin.CancelRunWithResponse(ctx, id)
	if err != nil || c.StatusCode() != http.StatusAccepted {
		t.Fatalf("cancel: %v %s", err, c.Body)
	}
	run := waitRun(t, admin.ClientWithResponses, id, terminal)
	if run.Status != "cancelled" {
		t.Fatalf("status %s", run.Status)
	}
	if took := time.Since(asked); took > 5*time.Second {
		t.Fatalf("cancel took %s", took)
	}
	if r, _ := admin.CancelRunWithResponse(ctx, id); r.StatusCode() != http.StatusConflict {
		t.Fatalf("cancelling an ended run: %d", r.StatusCode())
	}

	id = createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local"), TimeoutSeconds: ptr(1)})
	if run := waitRun(t, admin.ClientWithResponses, id, terminal); run.Status != "timed_out" {
		t.Fatalf("a run over its timeout ended %s", run.Status)
	}
}

func TestTwoProcessesRunEveryQueuedRunOnce(t *testing.T) {
	a := apptest.Start(t)
	b := apptest.StartOn(t, a.DatabaseURL, nil)
	admin := a.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/health.feature": strings.Split(healthFeature, "  Scenario: A check that fails")[0]})
	const n = 12
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	}
	for _, id := range ids {
		if run := waitRun(t, admin.ClientWithResponses, id, terminal); run.Status != "passed" {
			t.Fatalf("run %s ended %s", id, run.Status)
		}
	}
	// Exactly one execution per run: one claim, one "running" status event, one end.
	workers := map[string]int{}
	for _, id := range ids {
		var worker string
		var running, ends int
		if err := a.App.Store.Pool.QueryRow(context.Background(), "SELECT worker_id FROM runs WHERE id = $1", id).Scan(&worker); err != nil {
			t.Fatal(err)
		}
		workers[worker]++
		rows, err := a.App.Store.Pool.Query(context.Background(), "SELECT type, data->>'status' FROM run_events WHERE run_id = $1", id)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var typ string
			var status *string
			_ = rows.Scan(&typ, &status)
			if typ == "run.status" && status != nil && *status == "running" {
				running++
			}
			if typ == "end" {
				ends++
			}
		}
		rows.Close()
		if running != 1 || ends != 1 {
			t.Fatalf("run %s executed %d times (%d ends)", id, running, ends)
		}
	}
	if len(workers) < 1 || workers[a.App.Runs.WorkerID()]+workers[b.App.Runs.WorkerID()] != n {
		t.Fatalf("claims by worker %v", workers)
	}
	t.Logf("claims by worker: %v", workers)
}

// TestKilledWorkerLeavesNoRunRunning kills a real sdods process while it executes a run; the
// other process finds the run's heartbeat stale and ends it as errored.
func TestKilledWorkerLeavesNoRunRunning(t *testing.T) {
	// Mostly waits (for a heartbeat to go stale, for seconds to pass): runs alongside the other waiting tests.
	t.Parallel()
	bin := apptest.SdodsBinary(t)
	// Stale after more than the worker's heartbeat (5 s by default): a live worker is never taken
	// for lost, however long the test waits before killing it.
	api := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.Workers = 0; c.RunStaleAfter = 12 * time.Second })
	admin := api.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"slow.feature": interruptedFeature})

	addr := freeAddr(t)
	worker := exec.Command(bin, "serve", "-addr", addr, "-database-url", api.DatabaseURL, "-data-dir", api.DataDir, "-workers", "1")
	logFile, _ := os.Create(filepath.Join(t.TempDir(), "worker.log"))
	worker.Stdout, worker.Stderr = logFile, logFile
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill := func() { once.Do(func() { _ = worker.Process.Kill(); _, _ = worker.Process.Wait() }) }
	t.Cleanup(kill)

	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	waitRun(t, admin.ClientWithResponses, id, func(s string) bool { return s == "running" })
	// Kill it once the second scenario is in its long step.
	deadline := time.Now().Add(time.Minute)
	for {
		sc := scenariosOf(t, admin, id)
		if len(sc) == 2 && len(sc[1].Steps) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second scenario never reached its second step: %+v", sc)
		}
		time.Sleep(100 * time.Millisecond)
	}
	kill() // SIGKILL: no chance to finish the run
	run := waitRun(t, admin.ClientWithResponses, id, terminal)
	if run.Status != "errored" || run.Error == nil || !strings.Contains(*run.Error, "worker") {
		t.Fatalf("run after its worker died: %s %v", run.Status, run.Error)
	}
	// It shows what ran (issue 18 item 11): the finished scenario's result in the counts, the
	// interrupted one's finished step and the step it was in, and why it has no result.
	if run.Counts.Total != 2 || run.Counts.Passed != 1 {
		t.Fatalf("counts of the lost run %+v", run.Counts)
	}
	sc := scenariosOf(t, admin, id)
	if sc[0].Status != "passed" || sc[1].Status != "unknown" || sc[1].Error == nil || !strings.Contains(sc[1].Error.Message, "interrupted") ||
		len(sc[1].Steps) != 2 || sc[1].Steps[0].Status != "passed" || sc[1].Steps[1].Status != "unknown" || sc[1].Steps[1].Text != "I wait 30 seconds" {
		t.Fatalf("scenarios of the lost run %+v", sc)
	}
	// Its stream ends too.
	events := follow(t, api, admin, id, "", nil)
	if events[len(events)-1].Data["status"] != "errored" {
		t.Fatalf("end event %+v", events[len(events)-1])
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	return addr
}

// TestSelfHealingAcrossRuns: a passing run records the button's alternatives in PostgreSQL; after
// the button's id changes, the next run finds it by its test id and records the heal.
func TestSelfHealingAcrossRuns(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("chromium is required for browser steps: make deps installs it")
	}
	s := apptest.Start(t)
	admin := s.Setup(t)
	var mu sync.Mutex
	buttonID := "submit"
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		id := buttonID
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body><button id=%q data-testid="submit-btn" onclick="document.getElementById('out').textContent='Sent'">Send</button><p id="out"></p></body></html>`, id)
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	project(t, admin, web.URL, map[string]string{"heal.feature": `Feature: Heal
  Scenario: Send
    When I open "/"
    And I click "#submit"
    Then I should see "Sent"
`})
	first := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	if run := waitRun(t, admin.ClientWithResponses, first, terminal); run.Status != "passed" {
		t.Fatalf("first run %s", run.Status)
	}
	mu.Lock()
	buttonID = "send-button"
	mu.Unlock()
	second := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	run := waitRun(t, admin.ClientWithResponses, second, terminal)
	if run.Status != "passed" {
		t.Fatalf("second run %s: the selector was not healed", run.Status)
	}
	sc, _ := admin.GetRunScenarioWithResponse(context.Background(), second, run.Modules[0].Features[0].Scenarios[0].Id)
	heals := sc.JSON200.Steps[1].Heals
	if len(heals) != 1 || heals[0].OldSelector != "#submit" || heals[0].Strategy != "test-id" || heals[0].Score < 0.5 {
		t.Fatalf("heals %+v", heals)
	}
}

// TestWebhookHearsRunOutcome: a project's webhook receives the outcome of each finished run.
func TestWebhookHearsRunOutcome(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/health.feature": strings.Split(healthFeature, "  Scenario: A check that fails")[0]})
	got := make(chan map[string]any, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if r.Header.Get("X-Sdods-Signature") == "" {
			body["unsigned"] = true
		}
		got <- body
	}))
	t.Cleanup(receiver.Close)
	ctx := context.Background()
	pr, err := admin.PutIntegrationWithResponse(ctx, "shop", "webhook", serverclient.PutIntegrationJSONRequestBody{Webhook: &serverclient.WebhookConfigInput{
		Url: receiver.URL, Events: []serverclient.WebhookEvent{"run.finished"}, Secret: ptr("hook secret")}})
	if err != nil || pr.StatusCode() >= 300 {
		t.Fatalf("put webhook: %v %d %s", err, pr.StatusCode(), pr.Body)
	}
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	waitRun(t, admin.ClientWithResponses, id, terminal)
	select {
	case body := <-got:
		data, _ := body["data"].(map[string]any)
		if body["event"] != "run.finished" || data["runId"] != id.String() || data["status"] != "passed" || data["project"] != "shop" || body["unsigned"] == true {
			t.Fatalf("webhook body %v", body)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the webhook heard nothing")
	}
}

// A project's retries run a failed scenario again: the run records the attempts, counts the pass
// after retries as flaky, and its report says so.
func TestRunRetriesFailedScenarios(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	var mu sync.Mutex
	calls := 0
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer app.Close()
	project(t, admin, app.URL, map[string]string{"api/flaky.feature": "Feature: Flaky\n  Scenario: Comes up late\n    When I send a GET request to \"/\"\n    Then the response status is 200\n"})
	if r, err := admin.UpdateProjectWithResponse(ctx, "shop", serverclient.UpdateProjectJSONRequestBody{Name: "Shop",
		Settings: &serverclient.ProjectSettingsInput{Retries: ptr(2)}}); err != nil || r.StatusCode() != http.StatusOK {
		t.Fatalf("settings: %v %s", err, r.Body)
	}
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	run := waitRun(t, admin.ClientWithResponses, id, terminal)
	if run.Status != "passed" || run.Counts.Passed != 1 || run.Counts.Flaky != 1 {
		t.Fatalf("run %s, counts %+v", run.Status, run.Counts)
	}
	sc := run.Modules[0].Features[0].Scenarios[0]
	detail, err := admin.GetRunScenarioWithResponse(ctx, id, sc.Id)
	if err != nil || detail.JSON200 == nil || detail.JSON200.Attempts != 3 || detail.JSON200.Status != "passed" || len(detail.JSON200.Steps) != 2 {
		t.Fatalf("scenario: %v %s", err, detail.Body)
	}
	rep, err := admin.GetRunReportWithResponse(ctx, id)
	if err != nil || rep.JSON200 == nil || rep.JSON200.Counts.Flaky != 1 {
		t.Fatalf("report: %v %s", err, rep.Body)
	}
}
