package runner_test

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

	"github.com/sdods/sdods/impl/server/egress"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/steplib"
)

const usersFeature = `@api
Feature: Users API

  Background:
    Given I set the header "X-Tenant" to "${tenant}"

  Scenario: Create and read a user
    When I send a POST request to "/api/users"
      """json
      {"name": "Grace"}
      """
    Then the response status is 201
    And the response header "Content-Type" contains "json"
    And the response JSON at "$.name" is "Grace"
    And the response JSON matches the schema:
      """json
      {"type": "object", "required": ["id", "name"],
       "properties": {"id": {"type": "integer", "minimum": 1}, "name": {"type": "string", "minLength": 1}}}
      """
    And I store the response JSON at "$.id" as "userId"
    And I store the response header "Location" as "location"
    When I send a GET request to "${location}"
    Then the response status code is 200
    And the response JSON at "$.id" is "${userId}"
    And the response JSON at "$.tags" contains "admin"
    And the response JSON at "$.tags" has 2 items
    And the response JSON at "$.address.city" matches "^Lon"
    And the response JSON contains:
      """json
      {"name": "Grace", "address": {"city": "London"}}
      """
    And I log "created user ${userId}"

  @smoke
  Scenario: A missing user
    When I send a GET request to "/api/users/999"
    Then the response status is 404
    And the response JSON at "$.error.code" is "not_found"

  Scenario Outline: Users from a dataset
    When I send a GET request to "/api/users/<id>"
    Then the response status is 200
    And the response JSON at "$.name" is "${name}"

    @dataset:known-users
    Examples:
      | id | name |

  Scenario: A wrong expectation fails with the response attached
    When I send a GET request to "/api/users/1"
    Then the response JSON at "$.name" is "Bob"
    And the response status is 200
`

const loginFeature = `@web
Feature: Sign in

  Scenario: Sign in through the form
    Given I open "/"
    Then the page title is "Sign in"
    When I fill "#email" with "ada@example.test"
    And I select "France" from "#country"
    Then the field "#country" has the value "fr"
    And the page matches the baseline "sign-in form"
    When I click "#submit"
    Then I should see "Welcome, ada@example.test"
    And I should see "fr" in "#country"
    And the page URL contains "/login"
    And I store the text of "#greeting" as "greeting"
    And the variable "greeting" is "Welcome, ada@example.test"
    And I take a screenshot named "dashboard"
`

func TestRunHTTPFeatures(t *testing.T) {
	app := newWebApp(t)
	rec := &recorder{}
	r := runner.New(runner.Config{Egress: loopback(t)})
	res, err := r.Run(context.Background(), runner.Run{
		ID:       "run-1",
		Project:  "demo",
		Features: map[string]string{"api/users.feature": usersFeature},
		Environment: runner.Environment{
			BaseURL:   app.URL,
			Variables: map[string]string{"tenant": "acme"},
		},
		Datasets: map[string]runner.Dataset{
			"known-users": {Columns: []string{"id", "name", "unused"}, Rows: [][]string{{"1", "Ada", "x"}, {"1", "Ada", "y"}}},
		},
	}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runner.RunFailed {
		t.Errorf("run status %s, want failed (one scenario fails on purpose)", res.Status)
	}
	all := scenarios(res)
	if len(all) != 5 {
		t.Fatalf("%d scenarios, want 5 (2 plain, 2 from the dataset, 1 failing)", len(all))
	}
	for _, name := range []string{"Create and read a user", "A missing user"} {
		if s := scenarioNamed(t, res, name); s.Status != steplib.StatusPassed {
			t.Errorf("%s", describe(s))
		}
	}
	var fromDataset int
	for _, s := range all {
		if s.Name == "Users from a dataset" {
			fromDataset++
			if s.Status != steplib.StatusPassed || s.Dataset != "known-users" || s.Example["name"] != "Ada" {
				t.Errorf("dataset scenario: %+v\n%s", s.ScenarioRef, describe(s))
			}
		}
	}
	if fromDataset != 2 {
		t.Errorf("%d scenarios from the dataset, want 2", fromDataset)
	}
	if all[3].ID == all[2].ID {
		t.Errorf("dataset rows share the scenario id %s", all[2].ID)
	}

	bad := scenarioNamed(t, res, "A wrong expectation fails with the response attached")
	if bad.Status != steplib.StatusFailed || len(bad.Steps) != 4 {
		t.Fatalf("%s", describe(bad))
	}
	if st := bad.Steps[2]; st.Status != steplib.StatusFailed || !strings.Contains(st.Error, `"Ada", expected "Bob"`) || len(st.Attachments) != 1 {
		t.Errorf("the failing step: %+v", st)
	}
	if st := bad.Steps[3]; st.Status != steplib.StatusSkipped {
		t.Errorf("the step after the failure is %s, want skipped", st.Status)
	}

	// The tree: one module "api" with one feature.
	if len(res.Modules) != 1 || res.Modules[0].Name != "api" || len(res.Modules[0].Features) != 1 ||
		res.Modules[0].Features[0].Name != "Users API" || res.Modules[0].Counts.Total != 5 || res.Modules[0].Counts.Failed != 1 {
		t.Errorf("tree: %+v", res.Modules)
	}
	// The log line went through with the captured value.
	found := false
	for _, e := range rec.ofType(runner.EventLog) {
		if e.Log.Message == "created user 2" {
			found = true
		}
	}
	if !found {
		t.Error(`no log event "created user 2"`)
	}
	checkEventOrder(t, rec.all(), res)
}

// checkEventOrder checks the invariants of an event stream.
func checkEventOrder(t *testing.T, events []runner.Event, res *runner.Result) {
	t.Helper()
	if len(events) < 2 || events[0].Type != runner.EventRunStarted || events[len(events)-1].Type != runner.EventRunFinished {
		t.Fatalf("the events do not start with run.started and end with run.finished")
	}
	for i, e := range events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		if e.RunID != res.RunID {
			t.Fatalf("event %d has run id %q", i, e.RunID)
		}
		if _, err := json.Marshal(e); err != nil {
			t.Fatalf("event %d does not marshal: %v", i, err)
		}
	}
	started := map[string]bool{}
	for _, e := range events {
		switch e.Type {
		case runner.EventScenarioStarted:
			started[e.ScenarioID] = true
		case runner.EventStepStarted, runner.EventStepFinished, runner.EventScenarioFinished:
			if !started[e.ScenarioID] {
				t.Fatalf("%s of scenario %s before it started", e.Type, e.ScenarioID)
			}
		}
	}
	if end := events[len(events)-1].RunEnd; end.Status != res.Status || end.Counts != res.Counts {
		t.Errorf("run.finished says %s %+v, the result %s %+v", end.Status, end.Counts, res.Status, res.Counts)
	}
}

func TestRunBrowserFeature(t *testing.T) {
	needChromium(t)
	app := newWebApp(t)
	rec := &recorder{}
	r := runner.New(runner.Config{Egress: loopback(t), WaitTimeout: 5 * time.Second})
	res, err := r.Run(context.Background(), runner.Run{
		ID:          "run-web",
		Project:     "demo",
		Features:    map[string]string{"web/login.feature": loginFeature, "api/users.feature": usersFeature},
		Tags:        "@web",
		Environment: runner.Environment{BaseURL: app.URL},
	}, rec)
	if err != nil {
		t.Fatal(err)
	}
	all := scenarios(res)
	if len(all) != 1 {
		t.Fatalf("%d scenarios selected by @web, want 1", len(all))
	}
	if res.Status != runner.RunPassed {
		t.Fatalf("run %s\n%s", res.Status, describe(all[0]))
	}
	vcs := rec.ofType(runner.EventVisualCheck)
	if len(vcs) != 1 {
		t.Fatalf("%d visual checks, want 1", len(vcs))
	}
	vc := vcs[0].VisualCheck
	if vc.Name != "sign-in form" || vc.Browser != "chromium" || vc.Viewport != "1280x800" || !isPNG(vc.Image) {
		t.Errorf("visual check %q %q %q png=%v", vc.Name, vc.Browser, vc.Viewport, isPNG(vc.Image))
	}
	atts := rec.ofType(runner.EventAttachment)
	if len(atts) != 1 || atts[0].Attachment.Name != "dashboard.png" || !isPNG(atts[0].Attachment.Data) {
		t.Errorf("attachments: %+v", atts)
	}
	st := all[0].Steps[len(all[0].Steps)-1]
	if len(st.Attachments) != 1 || st.Attachments[0].Seq != atts[0].Seq {
		t.Errorf("the screenshot step refers to %+v", st.Attachments)
	}
	checkEventOrder(t, rec.all(), res)
}

func isPNG(b []byte) bool { return len(b) > 8 && string(b[1:4]) == "PNG" }

func TestSelfHealing(t *testing.T) {
	needChromium(t)
	app := newWebApp(t)
	store := steplib.NewMemoryLocatorStore()
	r := runner.New(runner.Config{Egress: loopback(t), Locators: store, WaitTimeout: 4 * time.Second, HealDelay: 300 * time.Millisecond})
	feature := `Feature: Heal
  Scenario: Submit
    Given I open "/"
    When I fill "#email" with "grace@example.test"
    And I click "#submit"
    Then I should see "Welcome, grace@example.test"
`
	run := runner.Run{ID: "heal-1", Project: "demo", Features: map[string]string{"heal.feature": feature}, Environment: runner.Environment{BaseURL: app.URL}}

	// Without recorded alternatives a broken selector fails with a message saying so.
	app.version.Store(2)
	res := mustRun(t, r, run, nil)
	s := scenarios(res)[0]
	if s.Status != steplib.StatusFailed || !strings.Contains(s.Steps[2].Error, "no alternatives recorded") {
		t.Fatalf("before any passing run: %s", describe(s))
	}

	// A passing run records the alternatives.
	app.version.Store(1)
	res = mustRun(t, r, run, nil)
	if s := scenarios(res)[0]; s.Status != steplib.StatusPassed {
		t.Fatalf("first run: %s", describe(s))
	}
	alts, _ := store.Load(context.Background(), "demo", "#submit")
	if len(alts) == 0 {
		t.Fatal("the passing run recorded no alternatives for #submit")
	}

	// The button's id changes; the next run heals through the recorded test id.
	app.version.Store(2)
	rec := &recorder{}
	run.ID = "heal-2"
	res = mustRun(t, r, run, rec)
	s = scenarios(res)[0]
	if s.Status != steplib.StatusPassed {
		t.Fatalf("second run: %s", describe(s))
	}
	heals := rec.ofType(runner.EventHeal)
	if len(heals) != 1 {
		t.Fatalf("%d heal events, want 1", len(heals))
	}
	h := heals[0].Heal
	if h.Selector != "#submit" || h.Healed != `[data-testid="submit-btn"]` || h.Strategy != "test-id" || h.Score < 0.5 || h.Score > 1 {
		t.Errorf("heal %+v", h)
	}
	if got := s.Steps[2].Heals; len(got) != 1 || got[0] != *h {
		t.Errorf("the click step records heals %+v", got)
	}
}

func mustRun(t *testing.T, r *runner.Runner, run runner.Run, ev runner.Events) *runner.Result {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("run %s took %s", run.ID, time.Since(start)) }()
	res, err := r.Run(context.Background(), run, ev)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCancelStopsWorkWithinASecond(t *testing.T) {
	app := newWebApp(t)
	tests := []struct {
		name    string
		browser bool
		step    string
	}{
		{"wait step", false, `I wait 30 seconds`},
		{"HTTP request", false, `I send a GET request to "/api/slow"`},
		{"browser wait", true, `I wait for ".never-there"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.browser {
				needChromium(t)
			}
			feature := "Feature: Slow\n  Scenario: Slow\n    Given I open \"/\"\n    When " + tt.step + "\n    Then I log \"unreachable\"\n  Scenario: Never started\n    Then I log \"unreachable\"\n"
			if !tt.browser {
				feature = strings.Replace(feature, `Given I open "/"`, `Given I set the header "A" to "b"`, 1)
			}
			// A load spike on a busy machine can delay one attempt; the bound must hold in one of two.
			for attempt := 1; ; attempt++ {
				d := cancelOnce(t, app, feature)
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

// cancelOnce runs the feature, cancels it while its second step runs, checks the result and
// returns how long the run took to end after the cancel.
func cancelOnce(t *testing.T, app *webApp, feature string) time.Duration {
	t.Helper()
	r := runner.New(runner.Config{Egress: loopback(t), WaitTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	rec := &recorder{}
	stepStarted := make(chan struct{})
	var once sync.Once
	sink := runner.EventsFunc(func(e runner.Event) {
		rec.Emit(e)
		if e.Type == runner.EventStepStarted && *e.Step == 1 {
			once.Do(func() { close(stepStarted) })
		}
	})
	done := make(chan *runner.Result, 1)
	go func() {
		res, _ := r.Run(ctx, runner.Run{ID: "cancel", Features: map[string]string{"slow.feature": feature}, Environment: runner.Environment{BaseURL: app.URL}}, sink)
		done <- res
	}()
	select {
	case <-stepStarted:
	case <-time.After(30 * time.Second):
		t.Fatal("the slow step never started")
	}
	time.Sleep(300 * time.Millisecond)
	cancelled := time.Now()
	cancel()
	var res *runner.Result
	select {
	case res = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the run did not end within 5s of the cancel")
	}
	d := time.Since(cancelled)
	t.Logf("the run ended %s after the cancel", d)
	if res.Status != runner.RunCancelled {
		t.Errorf("run status %s, want cancelled", res.Status)
	}
	all := scenarios(res)
	if s := all[0]; s.Status != steplib.StatusFailed || !strings.Contains(s.Steps[1].Error, "cancelled") || s.Steps[2].Status != steplib.StatusSkipped {
		t.Errorf("%s", describe(s))
	}
	if s := all[1]; s.Status != steplib.StatusSkipped {
		t.Errorf("the second scenario is %s, want skipped", s.Status)
	}
	return d
}

func TestRunTimeout(t *testing.T) {
	r := runner.New(runner.Config{Egress: loopback(t)})
	start := time.Now()
	res := mustRun(t, r, runner.Run{
		ID:       "timeout",
		Features: map[string]string{"t.feature": "Feature: T\n  Scenario: Long\n    Given I wait 30 seconds\n"},
		Timeout:  300 * time.Millisecond,
	}, nil)
	if res.Status != runner.RunTimedOut || time.Since(start) > 2*time.Second {
		t.Fatalf("status %s after %s", res.Status, time.Since(start))
	}
	if s := scenarios(res)[0]; !strings.Contains(s.Steps[0].Error, "timed out") {
		t.Errorf("%s", describe(s))
	}
}

func TestUndefinedAndPendingSteps(t *testing.T) {
	r := runner.New(runner.Config{Egress: loopback(t)})
	res := mustRun(t, r, runner.Run{ID: "u", Features: map[string]string{"u.feature": `Feature: U
  Scenario: Undefined
    Given I set the variable "a" to "1"
    When I do something nobody defined
    Then the variable "a" is "1"
  Scenario: Pending
    Given the step is pending
    Then the variable "a" is "1"
  Scenario: Undefined variable
    Given I log "${nope}"
  Scenario: Empty
`}}, nil)
	u := scenarioNamed(t, res, "Undefined")
	if u.Status != steplib.StatusFailed || u.Steps[1].Status != steplib.StatusUndefined || !strings.Contains(u.Steps[1].Error, "no step definition matches") || u.Steps[2].Status != steplib.StatusSkipped {
		t.Errorf("%s", describe(u))
	}
	p := scenarioNamed(t, res, "Pending")
	if p.Status != steplib.StatusPending || p.Steps[0].Status != steplib.StatusPending || p.Steps[1].Status != steplib.StatusSkipped {
		t.Errorf("%s", describe(p))
	}
	v := scenarioNamed(t, res, "Undefined variable")
	if v.Status != steplib.StatusFailed || !strings.Contains(v.Steps[0].Error, "undefined variable ${nope}") {
		t.Errorf("%s", describe(v))
	}
	if e := scenarioNamed(t, res, "Empty"); e.Status != steplib.StatusSkipped {
		t.Errorf("%s", describe(e))
	}
	if res.Status != runner.RunFailed || res.Modules[0].Name != "." {
		t.Errorf("run %s, module %q", res.Status, res.Modules[0].Name)
	}
}

func TestProblemsMakeTheRunErrored(t *testing.T) {
	r := runner.New(runner.Config{Egress: loopback(t)})
	res := mustRun(t, r, runner.Run{ID: "p", Features: map[string]string{
		"a/broken.feature": "Feature: Broken\n  Scenario: S\n    Given I log \"x\"\n  Examples without a keyword\n",
		"b/outline.feature": `Feature: Outline
  Scenario Outline: O
    Given I log "<x>"
    @dataset:missing
    Examples:
      | x |
  Scenario: Still runs
    Given I log "ok"
`,
	}}, nil)
	if res.Status != runner.RunErrored || len(res.Problems) != 2 {
		t.Fatalf("status %s, problems %+v", res.Status, res.Problems)
	}
	if p := res.Problems[0]; p.Path != "a/broken.feature" || p.Line != 4 || !strings.Contains(p.Message, "syntax error") {
		t.Errorf("problem %+v", p)
	}
	if p := res.Problems[1]; p.Path != "b/outline.feature" || p.Line != 5 || !strings.Contains(p.Message, `dataset "missing" is not provided`) {
		t.Errorf("problem %+v", p)
	}
	if s := scenarioNamed(t, res, "Still runs"); s.Status != steplib.StatusPassed {
		t.Errorf("%s", describe(s))
	}
}

func TestSelectionByPathAndTags(t *testing.T) {
	features := map[string]string{
		"a/one.feature":   "Feature: One\n  @smoke\n  Scenario: A1\n    Given I log \"a1\"\n  @slow\n  Scenario: A2\n    Given I log \"a2\"\n",
		"a/b/two.feature": "@smoke\nFeature: Two\n  Scenario: B1\n    Given I log \"b1\"\n",
		"c/three.feature": "Feature: Three\n  @smoke\n  Scenario: C1\n    Given I log \"c1\"\n",
	}
	tests := []struct {
		paths []string
		tags  string
		want  string
	}{
		{nil, "", "A1,A2,B1,C1"},
		{[]string{"a"}, "", "A1,A2,B1"},
		{[]string{"a/one.feature"}, "", "A1,A2"},
		{nil, "@smoke", "A1,B1,C1"},
		{nil, "@smoke and not @slow", "A1,B1,C1"},
		{nil, "not @smoke", "A2"},
		{[]string{"a", "c/"}, "@smoke or @slow", "A1,A2,B1,C1"},
		{nil, "(@slow or @smoke) and not @smoke", "A2"},
	}
	r := runner.New(runner.Config{Egress: loopback(t)})
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.paths, tt.tags), func(t *testing.T) {
			res := mustRun(t, r, runner.Run{ID: "s", Features: features, Paths: tt.paths, Tags: tt.tags}, nil)
			var names []string
			for _, s := range scenarios(res) {
				names = append(names, s.Name)
			}
			if got := strings.Join(names, ","); got != tt.want {
				t.Errorf("selected %s, want %s", got, tt.want)
			}
		})
	}
	if _, err := r.Run(context.Background(), runner.Run{Features: features, Tags: "@a and"}, nil); err == nil {
		t.Error("an invalid tag expression was accepted")
	}
}

// fakeLeaser hands out accounts user1, user2, … with the password "pw-<username>".
type fakeLeaser struct {
	mu       sync.Mutex
	next     int
	leased   map[string]bool
	released []string
	labels   []string
}

func (f *fakeLeaser) Lease(_ context.Context, req runner.LeaseRequest) (runner.Account, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if req.Label == "none-left" {
		return runner.Account{}, fmt.Errorf("no free account labelled %q", req.Label)
	}
	f.next++
	u := fmt.Sprintf("user%d", f.next)
	if f.leased == nil {
		f.leased = map[string]bool{}
	}
	f.leased[u] = true
	f.labels = append(f.labels, req.Label)
	return runner.Account{LeaseID: "l-" + u, Username: u, Password: "pw-" + u, Attributes: map[string]string{"role": req.Label}}, nil
}

func (f *fakeLeaser) Release(_ context.Context, acc runner.Account) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.leased, acc.Username)
	f.released = append(f.released, acc.LeaseID)
	return nil
}

func TestLeasesAndMasking(t *testing.T) {
	app := newWebApp(t)
	leaser := &fakeLeaser{}
	rec := &recorder{}
	r := runner.New(runner.Config{Egress: loopback(t)})
	res := mustRun(t, r, runner.Run{ID: "lease", Project: "demo", Leaser: leaser, Environment: runner.Environment{
		BaseURL: app.URL, Secrets: map[string]string{"apiKey": "s3cr3t-value"},
	}, Features: map[string]string{"l.feature": `Feature: Leases
  @user:admin
  Scenario: Tagged
    Given I use basic authentication with "${user.username}" and "${user.password}"
    When I send a GET request to "/api/me"
    Then the response status is 200
    And the response JSON at "$.username" is "${user.username}"
    And the variable "user.role" is "admin"
    And I log "password ${user.password} key ${apiKey}"
  Scenario: By step
    Given I use an account from the users pool
    Then I log "I am ${user.username}"
  @user:none-left
  Scenario: Exhausted
    Then I log "never"
`}}, rec)
	if s := scenarioNamed(t, res, "Tagged"); s.Status != steplib.StatusPassed {
		t.Fatalf("%s", describe(s))
	}
	if s := scenarioNamed(t, res, "By step"); s.Status != steplib.StatusPassed {
		t.Fatalf("%s", describe(s))
	}
	if s := scenarioNamed(t, res, "Exhausted"); s.Status != steplib.StatusFailed || !strings.Contains(s.Error, "no free account") || s.Steps[0].Status != steplib.StatusSkipped {
		t.Fatalf("%s", describe(s))
	}
	if len(leaser.leased) != 0 || len(leaser.released) != 2 {
		t.Errorf("leased %v, released %v", leaser.leased, leaser.released)
	}
	for _, e := range rec.all() {
		b, _ := json.Marshal(e)
		if strings.Contains(string(b), "pw-user") || strings.Contains(string(b), "s3cr3t-value") {
			t.Errorf("a secret leaked into an event: %s", b)
		}
	}
	found := false
	for _, e := range rec.ofType(runner.EventLog) {
		found = found || e.Log.Message == "password *** key ***"
	}
	if !found {
		t.Error("the masked log line is missing")
	}
}

func TestProcesses(t *testing.T) {
	app := newWebApp(t)
	r := runner.New(runner.Config{Egress: loopback(t)})
	res := mustRun(t, r, runner.Run{ID: "proc", Environment: runner.Environment{BaseURL: app.URL, Variables: map[string]string{"tenant": "acme"}},
		Processes: map[string]string{
			"create user": "Feature: create user\n  Scenario: create user\n    Given I set the header \"X-Tenant\" to \"${tenant}\"\n    When I send a POST request to \"/api/users\"\n      \"\"\"\n      {\"name\": \"${who}\"}\n      \"\"\"\n    Then I store the response JSON at \"$.id\" as \"newId\"\n",
			"bare":        "Given I set the variable \"bare\" to \"yes\"\n",
			"loop":        "Given I run the process \"loop\"\n",
		},
		Features: map[string]string{"p.feature": `Feature: P
  Scenario: Uses processes
    Given I set the variable "who" to "Linus"
    And I run the process "create user"
    And I run the process "bare"
    When I send a GET request to "/api/users/${newId}"
    Then the response JSON at "$.name" is "Linus"
    And the variable "bare" is "yes"
  Scenario: Loops
    Given I run the process "loop"
  Scenario: Unknown
    Given I run the process "nope"
`}}, nil)
	if s := scenarioNamed(t, res, "Uses processes"); s.Status != steplib.StatusPassed {
		t.Fatalf("%s", describe(s))
	}
	if s := scenarioNamed(t, res, "Loops"); !strings.Contains(s.Error, "nest deeper") {
		t.Errorf("%s", describe(s))
	}
	if s := scenarioNamed(t, res, "Unknown"); !strings.Contains(s.Error, `no process "nope"`) {
		t.Errorf("%s", describe(s))
	}
}

// A failed scenario runs again up to Run.Retries times: one that passes on a retry is passed and
// flaky, one that fails every attempt is failed after 1 + Retries attempts, one that passes at
// once is not retried; each attempt is announced by its own scenario events.
func TestRetries(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		n := hits[r.URL.Path]
		mu.Unlock()
		switch {
		case r.URL.Path == "/flaky" && n < 3, r.URL.Path == "/broken":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusOK)
		}
	}))
	defer srv.Close()
	feature := `Feature: R
  Scenario: Flaky
    When I send a GET request to "/flaky"
    Then the response status is 200
  Scenario: Broken
    When I send a GET request to "/broken"
    Then the response status is 200
  Scenario: Steady
    When I send a GET request to "/steady"
    Then the response status is 200
`
	var evMu sync.Mutex
	attempts := map[string][]int{} // scenario id → attempt numbers of its finished events
	ev := runner.EventsFunc(func(e runner.Event) {
		if e.Type == runner.EventScenarioFinished {
			evMu.Lock()
			attempts[e.ScenarioID] = append(attempts[e.ScenarioID], e.ScenarioEnd.Attempt)
			evMu.Unlock()
		}
	})
	r := runner.New(runner.Config{Egress: loopback(t)})
	res := mustRun(t, r, runner.Run{ID: "retries", Features: map[string]string{"r.feature": feature},
		Environment: runner.Environment{BaseURL: srv.URL}, Retries: 2}, ev)
	for _, tc := range []struct {
		name     string
		status   steplib.Status
		attempts int
		hits     int
	}{
		{"Flaky", steplib.StatusPassed, 3, 3},
		{"Broken", steplib.StatusFailed, 3, 3},
		{"Steady", steplib.StatusPassed, 1, 1},
	} {
		s := scenarioNamed(t, res, tc.name)
		if s.Status != tc.status || s.Attempts != tc.attempts {
			t.Errorf("%s: %s after %d attempts, want %s after %d", tc.name, s.Status, s.Attempts, tc.status, tc.attempts)
		}
		if got := attempts[s.ID]; len(got) != tc.attempts || got[len(got)-1] != tc.attempts {
			t.Errorf("%s: finished events for attempts %v", tc.name, got)
		}
		path := "/" + strings.ToLower(tc.name)
		if hits[path] != tc.hits {
			t.Errorf("%s: %d requests, want %d", tc.name, hits[path], tc.hits)
		}
	}
	if res.Status != runner.RunFailed || res.Counts.Passed != 2 || res.Counts.Failed != 1 || res.Counts.Flaky != 1 {
		t.Errorf("run %s, counts %+v", res.Status, res.Counts)
	}
	// Without retries, a failure is final.
	clear(hits)
	res = mustRun(t, r, runner.Run{ID: "no-retries", Features: map[string]string{"r.feature": feature},
		Environment: runner.Environment{BaseURL: srv.URL}}, nil)
	if s := scenarioNamed(t, res, "Flaky"); s.Status != steplib.StatusFailed || s.Attempts != 1 || res.Counts.Flaky != 0 {
		t.Errorf("without retries: %s after %d attempts, flaky %d", s.Status, s.Attempts, res.Counts.Flaky)
	}
}

// loopback is the egress policy of these tests: their applications listen on loopback, which
// the built-in policy denies.
func loopback(tb testing.TB) *egress.Policy {
	tb.Helper()
	p, err := egress.New(egress.Config{Allow: []string{"127.0.0.0/8", "::1"}})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
