package runner_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/steplib"
)

// inFlight is a local server that records how many of its requests are in flight at once.
// GET /hold/{n} answers {"n":"n"} after holding the request for hold; GET /echo/{v} answers
// {"v":"v"} at once.
type inFlight struct {
	*httptest.Server
	now, peak atomic.Int32
	total     atomic.Int32
	conns     atomic.Int32 // connections opened
}

func newInFlight(t testing.TB, hold time.Duration) *inFlight {
	t.Helper()
	s := &inFlight{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hold/{n}", func(w http.ResponseWriter, r *http.Request) {
		n := s.now.Add(1)
		defer s.now.Add(-1)
		s.total.Add(1)
		for {
			p := s.peak.Load()
			if n <= p || s.peak.CompareAndSwap(p, n) {
				break
			}
		}
		select {
		case <-time.After(hold):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"n":%q}`, r.PathValue("n"))
	})
	mux.HandleFunc("GET /echo/{v}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"v":%q}`, r.PathValue("v"))
	})
	s.Server = httptest.NewUnstartedServer(mux)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// holdFeature has n scenarios; each holds a request, keeps what it got in a variable of its own and
// checks it with a second request. Every third scenario expects a wrong value and fails.
func holdFeature(n int) string {
	var b strings.Builder
	b.WriteString("Feature: Hold\n")
	for i := range n {
		want := fmt.Sprint(i)
		if i%3 == 2 {
			want = "wrong"
		}
		fmt.Fprintf(&b, "\n  Scenario: S%d\n    When I send a GET request to \"/hold/%d\"\n    And I store the response JSON at \"$.n\" as \"mine\"\n"+
			"    When I send a GET request to \"/echo/${mine}\"\n    Then the response JSON at \"$.v\" is \"%s\"\n", i, i, want)
	}
	return b.String()
}

// TestConcurrentScenarios runs one run's scenarios at several concurrencies: the target never
// sees more requests at once than the concurrency (and sees that many when it is above 1), each
// scenario keeps its own variables, the run's sequence has no gap, each scenario's events keep
// their order, and the counts are those of the scenarios.
func TestConcurrentScenarios(t *testing.T) {
	const scenariosN = 9
	for _, tt := range []struct {
		name              string
		concurrency, conf int // the run's, the runner's default
		want              int // the most requests the target should see at once
	}{
		{"one at a time", 1, 0, 1},
		{"two", 2, 0, 2},
		{"four", 4, 0, 4},
		{"runner default", 0, 3, 3},
		{"more than scenarios", 50, 0, scenariosN},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			target := newInFlight(t, 150*time.Millisecond)
			r := runner.New(runner.Config{Egress: loopback(t), Parallel: tt.conf})
			rec := &recorder{}
			res := mustRun(t, r, runner.Run{ID: "par", Concurrency: tt.concurrency,
				Features: map[string]string{"hold.feature": holdFeature(scenariosN)}, Environment: runner.Environment{BaseURL: target.URL}}, rec)
			if got := target.peak.Load(); got != int32(tt.want) {
				t.Errorf("the target saw at most %d requests at once, want %d", got, tt.want)
			}
			if got := target.total.Load(); got != scenariosN {
				t.Errorf("the target saw %d requests, want %d", got, scenariosN)
			}
			want := runner.Counts{Total: scenariosN, Passed: scenariosN - scenariosN/3, Failed: scenariosN / 3}
			if res.Counts != want || res.Status != runner.RunFailed {
				t.Errorf("run %s %+v, want failed %+v", res.Status, res.Counts, want)
			}
			for i, s := range scenarios(res) {
				wantStatus := steplib.StatusPassed
				if i%3 == 2 {
					wantStatus = steplib.StatusFailed
				}
				if s.Name != fmt.Sprintf("S%d", i) || s.Status != wantStatus {
					t.Errorf("scenario %d: %s", i, describe(s))
				}
			}
			events := rec.all()
			checkEventOrder(t, events, res)
			checkScenarioOrder(t, events)
		})
	}
}

// checkScenarioOrder checks that each scenario's events come in the order it produced them:
// started, then each step's start and end in step order, then finished.
func checkScenarioOrder(t *testing.T, events []runner.Event) {
	t.Helper()
	type state struct {
		started, finished bool
		step              int // the next step expected to start
		open              bool
	}
	per := map[string]*state{}
	for _, e := range events {
		if e.ScenarioID == "" {
			continue
		}
		s := per[e.ScenarioID]
		if s == nil {
			s = &state{}
			per[e.ScenarioID] = s
		}
		bad := func(why string) { t.Fatalf("scenario %s, event %d (%s): %s", e.ScenarioID, e.Seq, e.Type, why) }
		if s.finished {
			bad("after scenario.finished")
		}
		switch e.Type {
		case runner.EventScenarioStarted:
			if s.started {
				bad("started twice")
			}
			s.started = true
		case runner.EventStepStarted:
			if s.open || *e.Step != s.step {
				bad(fmt.Sprintf("step %d started, want step %d", *e.Step, s.step))
			}
			s.open = true
		case runner.EventStepFinished:
			if *e.Step != s.step {
				bad(fmt.Sprintf("step %d finished, want step %d", *e.Step, s.step))
			}
			s.open = false
			s.step++
		case runner.EventScenarioFinished:
			if s.open {
				bad("finished with a step open")
			}
			s.finished = true
		}
	}
	for id, s := range per {
		if !s.finished {
			t.Errorf("scenario %s never finished", id)
		}
	}
}

// TestConcurrentCancelAndTimeout stops runs whose scenarios execute at once: every scenario in
// flight stops within a second, and those not started are skipped.
func TestConcurrentCancelAndTimeout(t *testing.T) {
	feature := "Feature: Slow\n"
	for i := range 6 {
		feature += fmt.Sprintf("  Scenario: Slow %d\n    When I send a GET request to \"/hold/%d\"\n    Then the response status is 200\n", i, i)
	}
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		want    runner.RunStatus
	}{
		{"cancel", 0, runner.RunCancelled},
		{"timeout", 400 * time.Millisecond, runner.RunTimedOut},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			target := newInFlight(t, time.Minute)
			r := runner.New(runner.Config{Egress: loopback(t)})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan *runner.Result, 1)
			go func() {
				res, _ := r.Run(ctx, runner.Run{ID: "stop", Concurrency: 3, Timeout: tt.timeout,
					Features: map[string]string{"slow.feature": feature}, Environment: runner.Environment{BaseURL: target.URL}}, nil)
				done <- res
			}()
			deadline := time.Now().Add(30 * time.Second)
			for target.now.Load() < 3 {
				if time.Now().After(deadline) {
					t.Fatalf("3 scenarios never ran at once (%d did)", target.now.Load())
				}
				time.Sleep(5 * time.Millisecond)
			}
			stopped := time.Now()
			if tt.timeout == 0 {
				cancel()
			}
			var res *runner.Result
			select {
			case res = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the run did not end within 10s")
			}
			took := time.Since(stopped)
			if tt.timeout == 0 && took > time.Second {
				t.Errorf("the run ended %s after the cancel, want within 1s", took)
			}
			if tt.timeout > 0 && took > tt.timeout+time.Second {
				t.Errorf("the run ended %s after its scenarios started, want within its timeout (%s) and a second", took, tt.timeout)
			}
			if res.Status != tt.want {
				t.Errorf("run %s, want %s", res.Status, tt.want)
			}
			all := scenarios(res)
			var failed, skipped int
			for _, s := range all {
				switch s.Status {
				case steplib.StatusFailed:
					failed++
				case steplib.StatusSkipped:
					skipped++
				}
			}
			if failed != 3 || skipped != 3 || target.total.Load() != 3 {
				t.Errorf("%d scenarios failed (interrupted) and %d skipped, %d requests made; want 3, 3, 3", failed, skipped, target.total.Load())
			}
		})
	}
}

// TestConcurrentLeases runs scenarios that each lease an account, four at a time: no account is
// held by two scenarios at once, and every lease is released.
func TestConcurrentLeases(t *testing.T) {
	target := newInFlight(t, 50*time.Millisecond)
	leaser := &exclusiveLeaser{free: []string{"a", "b", "c"}, holders: map[string]string{}}
	feature := "Feature: Accounts\n"
	for i := range 12 {
		feature += fmt.Sprintf("  @user\n  Scenario: User %d\n    When I send a GET request to \"/hold/${user.username}\"\n    Then the response JSON at \"$.n\" is \"${user.username}\"\n", i)
	}
	r := runner.New(runner.Config{Egress: loopback(t)})
	res := mustRun(t, r, runner.Run{ID: "leases", Concurrency: 4, Leaser: leaser,
		Features: map[string]string{"accounts.feature": feature}, Environment: runner.Environment{BaseURL: target.URL}}, nil)
	if res.Status != runner.RunPassed || res.Counts.Passed != 12 {
		t.Fatalf("run %s %+v", res.Status, res.Counts)
	}
	leaser.mu.Lock()
	defer leaser.mu.Unlock()
	if leaser.double != "" {
		t.Error(leaser.double)
	}
	if len(leaser.free) != 3 || leaser.leases != 12 {
		t.Errorf("%d accounts free after the run, %d leases; want 3, 12", len(leaser.free), leaser.leases)
	}
	if p := target.peak.Load(); p != 3 {
		t.Errorf("%d scenarios held accounts at once, want 3 (the pool's size)", p)
	}
}

// exclusiveLeaser hands out its free accounts, waiting while none is free, and records a lease of
// an account that is already held.
type exclusiveLeaser struct {
	mu      sync.Mutex
	free    []string
	holders map[string]string // account → scenario
	leases  int
	double  string
}

func (l *exclusiveLeaser) Lease(ctx context.Context, req runner.LeaseRequest) (runner.Account, error) {
	for {
		l.mu.Lock()
		if len(l.free) > 0 {
			u := l.free[0]
			l.free = l.free[1:]
			if h, ok := l.holders[u]; ok {
				l.double = fmt.Sprintf("account %s leased to %s while %s held it", u, req.ScenarioID, h)
			}
			l.holders[u] = req.ScenarioID
			l.leases++
			l.mu.Unlock()
			return runner.Account{LeaseID: u, Username: u, Password: "pw"}, nil
		}
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return runner.Account{}, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (l *exclusiveLeaser) Release(_ context.Context, acc runner.Account) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.holders, acc.LeaseID)
	l.free = append(l.free, acc.LeaseID)
	return nil
}

// TestConcurrentBrowserScenarios runs browser scenarios two at a time: each has its own page in its
// own browser context, so what one types is not what the other reads.
func TestConcurrentBrowserScenarios(t *testing.T) {
	needChromium(t)
	app := newWebApp(t)
	feature := "Feature: Forms\n"
	for i := range 4 {
		feature += fmt.Sprintf("  Scenario: Form %d\n    Given I open \"/\"\n    When I fill \"#email\" with \"user%d@example.test\"\n    And I wait 0.3 seconds\n"+
			"    Then the field \"#email\" has the value \"user%d@example.test\"\n", i, i, i)
	}
	r := runner.New(runner.Config{Egress: loopback(t)})
	rec := &recorder{}
	res := mustRun(t, r, runner.Run{ID: "forms", Concurrency: 2, Features: map[string]string{"forms.feature": feature},
		Environment: runner.Environment{BaseURL: app.URL}}, rec)
	if res.Status != runner.RunPassed || res.Counts.Passed != 4 {
		for _, s := range scenarios(res) {
			t.Log(describe(s))
		}
		t.Fatalf("run %s %+v", res.Status, res.Counts)
	}
	// Two scenarios, each in its own browser context, ran at the same time, never more. Counted by
	// the scenarios' start and end, not by their wait steps overlapping: on a loaded machine one
	// scenario's page can take longer to open than the other's wait lasts.
	events := rec.all()
	checkScenarioOrder(t, events)
	open, most := 0, 0
	for _, e := range events {
		switch e.Type {
		case runner.EventScenarioStarted:
			open++
			most = max(most, open)
		case runner.EventScenarioFinished:
			open--
		}
	}
	if most != 2 {
		t.Errorf("at most %d scenarios ran at once, want 2", most)
	}
}

// TestScenariosReuseConnections: scenarios share the runner's HTTP connections (each keeps its own
// cookies): a run of 20 scenarios, two at a time, opens no more connections than it has scenarios
// in flight, where a transport per scenario opened one each.
func TestScenariosReuseConnections(t *testing.T) {
	target := newInFlight(t, time.Millisecond)
	r := runner.New(runner.Config{Egress: loopback(t)})
	res := mustRun(t, r, runner.Run{ID: "conns", Concurrency: 2, Features: map[string]string{"hold.feature": strings.ReplaceAll(holdFeature(20), `"wrong"`, `"${mine}"`)},
		Environment: runner.Environment{BaseURL: target.URL}}, nil)
	if res.Status != runner.RunPassed {
		t.Fatalf("run %s %+v", res.Status, res.Counts)
	}
	if n := target.conns.Load(); n > 2 {
		t.Errorf("the run opened %d connections for 20 scenarios two at a time, want at most 2", n)
	}
}
