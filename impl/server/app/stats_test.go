package app_test

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// One crafted history, ingested as JUnit XML through the real endpoint: a run a day from Monday
// 2026-01-05 10:00 UTC, plus one run in the previous window. Outcomes per scenario of class
// "checkout" (P passed, F failed, R passed on a retry, S skipped, - absent):
//
//	run      0(prev) 1 2 3 4 5 6
//	pays     P       P F P P F P    failures "order <uuid> not found", a different id each time
//	ships    P       P P R P P P    R: one flakyFailure, then passed (attempts 2)
//	skips    -       P S F S P F    failures "timeout after 30s" / "…45s"
//	stable   P       P P P P P P
var statsHistory = [][4]string{
	{"P", "P", "-", "P"},
	{"P", "P", "P", "P"},
	{"F", "P", "S", "P"},
	{"P", "R", "F", "P"},
	{"P", "P", "S", "P"},
	{"F", "P", "P", "P"},
	{"P", "P", "F", "P"},
}

var statsFailures = map[string][]string{
	"pays":  {"order 3f2a9c1b-1234-4abc-9def-0123456789ab not found", "order 0b7d3e55-9a41-4c2e-8f10-aa00bb11cc22 not found"},
	"skips": {"timeout after 30s", "timeout after 45s"},
}

func statsDoc(i int, at time.Time) []byte {
	names := []string{"pays", "ships", "skips", "stable"}
	var b strings.Builder
	fmt.Fprintf(&b, "<testsuite name=\"shop\" timestamp=%q>\n", at.Format("2006-01-02T15:04:05"))
	for j, o := range statsHistory[i] {
		name := names[j]
		switch o {
		case "P":
			fmt.Fprintf(&b, "  <testcase classname=\"checkout\" name=%q time=\"1\"/>\n", name)
		case "R":
			fmt.Fprintf(&b, "  <testcase classname=\"checkout\" name=%q time=\"3\"><flakyFailure message=\"boom\"/></testcase>\n", name)
		case "S":
			fmt.Fprintf(&b, "  <testcase classname=\"checkout\" name=%q time=\"0\"><skipped/></testcase>\n", name)
		case "F":
			msg := statsFailures[name][0]
			statsFailures[name] = append(statsFailures[name][1:], msg)
			fmt.Fprintf(&b, "  <testcase classname=\"checkout\" name=%q time=\"2\"><failure message=%q/></testcase>\n", name, msg)
		}
	}
	b.WriteString("</testsuite>\n")
	return []byte(b.String())
}

func near(a, b float64) bool { return math.Abs(a-b) < 5e-4 }

// TestStatsOverCraftedHistory checks every flaky metric, the trends, failure clusters and new
// failures against numbers computed by hand from statsHistory.
func TestStatsOverCraftedHistory(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write", "stats:read")
	bearer := s.Bearer(t, token)
	base := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	at := func(i int) time.Time {
		if i == 0 {
			return time.Date(2025, 12, 20, 10, 0, 0, 0, time.UTC)
		}
		return base.Add(time.Duration(i-1) * 24 * time.Hour)
	}
	for i := range statsHistory {
		id := ingestRun(t, bearer)
		if status, _, body := ingestDoc(t, s, token, id, "application/xml", statsDoc(i, at(i))); status != http.StatusOK {
			t.Fatalf("ingest run %d: %d %s", i, status, body)
		}
	}
	get := func(t *testing.T, path string, q url.Values, into any) {
		t.Helper()
		status, body, _ := s.Do(t, "GET", path+"?"+q.Encode(), "", nil, "Authorization", "Bearer "+token)
		if status != http.StatusOK {
			t.Fatalf("GET %s?%s: %d %s\n%s", path, q.Encode(), status, body, s.Logs())
		}
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatal(err)
		}
	}
	window := url.Values{"since": {"2026-01-01T00:00:00Z"}, "until": {"2026-02-01T00:00:00Z"}}
	with := func(kv ...string) url.Values {
		q := url.Values{}
		for k, v := range window {
			q[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			q.Set(kv[i], kv[i+1])
		}
		return q
	}
	identity := func(name string) string {
		sum := md5.Sum([]byte("checkout\x1f" + name + "\x1f"))
		return hex.EncodeToString(sum[:])
	}

	t.Run("flaky metrics", func(t *testing.T) {
		var page serverclient.FlakyScenarioList
		get(t, "/api/stats/flaky", with("minResults", "4"), &page)
		// Flaky rate: skips 3/4, pays 4/6, ships 1/6; stable has no flip nor retry pass.
		if len(page.Items) != 3 || page.NextCursor != nil {
			t.Fatalf("items %+v", page.Items)
		}
		got := map[string]serverclient.FlakyScenario{}
		var order []string
		for _, f := range page.Items {
			got[f.Scenario] = f
			order = append(order, f.Scenario)
		}
		if strings.Join(order, ",") != "skips,pays,ships" {
			t.Errorf("order %v, want skips,pays,ships (flakyRate desc)", order)
		}
		type want struct {
			n, passed, flips, retry, flaky                           int
			flipRate, flakyRate, retryRate, failRate, health, volume float64
			lost                                                     int64
			low, high                                                float64
			first, last                                              int
			step                                                     int
		}
		wants := map[string]want{
			// P F P P F P: flips P→F, F→P, P→F, F→P = 4 of 5 pairs.
			"pays": {n: 6, passed: 4, flips: 4, retry: 0, flaky: 4, flipRate: 0.8, flakyRate: 4.0 / 6, retryRate: 0, failRate: 2.0 / 6,
				health: 4.0 / 6 * 0.2, volume: 0.8 * 6, lost: 2 * 2000, low: 0.0968, high: 0.7000, first: 2, last: 6, step: 2},
			// P P R P P P: no flip, one retry pass whose first of two attempts is lost: 3000 × 1/2.
			"ships": {n: 6, passed: 6, flips: 0, retry: 1, flaky: 1, flipRate: 0, flakyRate: 1.0 / 6, retryRate: 1.0 / 6, failRate: 0,
				health: 1, volume: 0, lost: 1500, low: 0, high: 0.3903, first: 3, last: 3},
			// P S F S P F: skips ignored, P F P F: 3 flips of 3 pairs.
			"skips": {n: 4, passed: 2, flips: 3, retry: 0, flaky: 3, flipRate: 1, flakyRate: 0.75, retryRate: 0, failRate: 0.5,
				health: 0, volume: 4, lost: 2 * 2000, low: 0.1500, high: 0.8500, first: 3, last: 6, step: 2},
		}
		for name, w := range wants {
			f, ok := got[name]
			if !ok {
				t.Errorf("%s missing", name)
				continue
			}
			if f.Identity != identity(name) || f.Project != "shop" || f.FeaturePath != "checkout" || f.ExampleRow != nil {
				t.Errorf("%s identity %s %s %s %v", name, f.Identity, f.Project, f.FeaturePath, f.ExampleRow)
			}
			if f.Results != w.n || f.Passed != w.passed || f.Failed != w.n-w.passed || f.Flips != w.flips || f.RetryPasses != w.retry || f.FlakyResults != w.flaky {
				t.Errorf("%s counts n=%d passed=%d failed=%d flips=%d retry=%d flaky=%d, want %+v", name, f.Results, f.Passed, f.Failed, f.Flips, f.RetryPasses, f.FlakyResults, w)
			}
			rates := [][2]float64{{f.FlipRate, w.flipRate}, {f.FlakyRate, w.flakyRate}, {f.RetryPassRate, w.retryRate}, {f.FailureRate, w.failRate},
				{f.PassRate, float64(w.passed) / float64(w.n)}, {f.Health, w.health}, {f.FlakinessVolume, w.volume},
				{f.FailureRateLow, w.low}, {f.FailureRateHigh, w.high}}
			for i, r := range rates {
				if !near(r[0], r[1]) {
					t.Errorf("%s rate %d = %v, want %v", name, i, r[0], r[1])
				}
			}
			if f.DurationLostMs != w.lost {
				t.Errorf("%s duration lost %d, want %d", name, f.DurationLostMs, w.lost)
			}
			if f.FirstFlakyAt == nil || !f.FirstFlakyAt.Equal(at(w.first)) || f.LastFlakyAt == nil || !f.LastFlakyAt.Equal(at(w.last)) {
				t.Errorf("%s flaky from %v to %v, want runs %d..%d", name, f.FirstFlakyAt, f.LastFlakyAt, w.first, w.last)
			}
			if w.step > 0 && (f.FailingStep == nil || f.FailingStep.Keyword != "Test " || f.FailingStep.Text != name || f.FailingStep.Count != w.step) {
				t.Errorf("%s failing step %+v", name, f.FailingStep)
			}
			if f.FailingLocator != nil || f.Heals != 0 {
				t.Errorf("%s locator %+v heals %d", name, f.FailingLocator, f.Heals)
			}
		}
	})

	t.Run("flaky filters, sort and pages", func(t *testing.T) {
		var page serverclient.FlakyScenarioList
		get(t, "/api/stats/flaky", with("minResults", "5", "sort", "health", "order", "asc", "limit", "1"), &page)
		if len(page.Items) != 1 || page.Items[0].Scenario != "pays" || page.NextCursor == nil {
			t.Fatalf("first page %+v", page)
		}
		var next serverclient.FlakyScenarioList
		get(t, "/api/stats/flaky", with("minResults", "5", "sort", "health", "order", "asc", "limit", "1", "cursor", *page.NextCursor), &next)
		if len(next.Items) != 1 || next.Items[0].Scenario != "ships" || next.NextCursor != nil {
			t.Fatalf("second page %+v", next)
		}
		// Runs 2, 3, 5 and 6 have one failure of four scenarios (0.25): left out above 0.2, so
		// pays keeps runs 1 and 4 (P P) and is stable.
		var infra serverclient.FlakyScenarioList
		get(t, "/api/stats/flaky", with("minResults", "2", "maxFailedShare", "0.2", "flakyOnly", "false", "sort", "results"), &infra)
		for _, f := range infra.Items {
			if f.Results != 2 || f.Flips != 0 {
				t.Errorf("with infra runs excluded: %s n=%d flips=%d", f.Scenario, f.Results, f.Flips)
			}
		}
		if len(infra.Items) != 3 {
			t.Errorf("identities %d, want 3 (skips keeps one result)", len(infra.Items))
		}
		status, body, _ := s.Do(t, "GET", "/api/stats/flaky?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z", "", nil, "Authorization", "Bearer "+token)
		if status != http.StatusBadRequest || !strings.Contains(string(body), "validation_failed") {
			t.Errorf("inverted window: %d %s", status, body)
		}
	})

	t.Run("trends", func(t *testing.T) {
		var tr serverclient.Trends
		get(t, "/api/stats/trends", with("bucket", "day", "tz", "America/New_York"), &tr)
		if len(tr.Points) != 6 {
			t.Fatalf("points %d, want 6", len(tr.Points))
		}
		runStatus := []string{"", "passed", "failed", "failed", "passed", "failed", "failed"}
		for i, p := range tr.Points {
			// 10:00 UTC is 05:00 in New York; its day starts at 05:00 UTC in January.
			wantAt := time.Date(2026, 1, 5+i, 5, 0, 0, 0, time.UTC)
			if !p.At.Equal(wantAt) || p.Runs != 1 {
				t.Errorf("point %d at %v runs %d, want %v", i, p.At, p.Runs, wantAt)
			}
			passed := runStatus[i+1] == "passed"
			if (p.Passed == 1) != passed || p.PassRate == nil || (*p.PassRate == 1) != passed {
				t.Errorf("point %d: passed %d rate %v, want run %s", i, p.Passed, p.PassRate, runStatus[i+1])
			}
		}
		if c := tr.Points[2].Scenarios; c.Total != 4 || c.Passed != 3 || c.Failed != 1 || c.Flaky != 1 {
			t.Errorf("run 3 scenarios %+v, want 4 total, 3 passed (one on retry), 1 failed", c)
		}
		if c := tr.Points[1].Scenarios; c.Skipped != 1 || c.Failed != 1 {
			t.Errorf("run 2 scenarios %+v", c)
		}
		// Run durations are the sum of the cases' times: 4 s in run 1 (four passes of 1 s).
		if tr.Points[0].RunDurationP50Ms == nil || *tr.Points[0].RunDurationP50Ms != 4000 {
			t.Errorf("run 1 duration %v", tr.Points[0].RunDurationP50Ms)
		}
		if tr.Summary.Runs != 6 || tr.Previous.Runs != 1 || tr.Change.Runs != 5 || tr.Summary.Flaky != 1 || tr.Summary.ScenarioFailures != 4 {
			t.Errorf("summary %+v previous %+v change %+v", tr.Summary, tr.Previous, tr.Change)
		}
		if tr.Summary.PassRate == nil || !near(*tr.Summary.PassRate, 2.0/6) || tr.Change.PassRate == nil || !near(*tr.Change.PassRate, 2.0/6-1) {
			t.Errorf("pass rate %v change %v", tr.Summary.PassRate, tr.Change.PassRate)
		}
		var week serverclient.Trends
		get(t, "/api/stats/trends", with("bucket", "week"), &week)
		if len(week.Points) != 1 || !week.Points[0].At.Equal(base.Add(-10*time.Hour)) || week.Points[0].Runs != 6 {
			t.Errorf("week points %+v", week.Points)
		}
		status, body, _ := s.Do(t, "GET", "/api/stats/trends?tz=Mars/Olympus", "", nil, "Authorization", "Bearer "+token)
		if status != http.StatusBadRequest || !strings.Contains(string(body), "time zone") {
			t.Errorf("unknown time zone: %d %s", status, body)
		}
	})

	t.Run("insights", func(t *testing.T) {
		var in serverclient.Insights
		get(t, "/api/stats/insights", window, &in)
		clusters := map[string]serverclient.FailureCluster{}
		for _, c := range in.FailureClusters {
			clusters[c.Signature] = c
		}
		// The two pays failures differ only in a UUID, the skips ones only in a number.
		pays, ok := clusters["order <uuid> not found ¦ Test pays"]
		if !ok || pays.Count != 2 || pays.Scenarios != 1 || !pays.New || !pays.FirstSeenAt.Equal(at(2)) || !pays.LastSeenAt.Equal(at(5)) ||
			pays.Example.Identity != identity("pays") || len(pays.Affected) != 1 || pays.Affected[0] != pays.Example {
			t.Errorf("pays cluster %+v in %+v", pays, in.FailureClusters)
		}
		if c, ok := clusters["timeout after <n>s ¦ Test skips"]; !ok || c.Count != 2 || c.Scenarios != 1 || len(c.Affected) != 1 || c.Affected[0].Identity != identity("skips") {
			t.Errorf("skips cluster %+v in %+v", c, in.FailureClusters)
		}
		if len(in.FailureClusters) != 2 {
			t.Errorf("clusters %d, want 2", len(in.FailureClusters))
		}
		// The last passed run is run 4; after it pays failed in run 5 (it passed in run 4) and
		// skips failed in run 6 (but was skipped in run 4, so it is not a new failure).
		if len(in.NewFailures) != 1 || in.NewFailures[0].Scenario != "pays" || in.NewFailures[0].Failures != 1 || !in.NewFailures[0].FirstFailedAt.Equal(at(5)) {
			t.Errorf("new failures %+v", in.NewFailures)
		}
		steps := map[string]int{}
		for _, st := range in.MostFailingSteps {
			steps[st.Keyword+st.Text] = st.Count
		}
		if len(steps) != 2 || steps["Test pays"] != 2 || steps["Test skips"] != 2 {
			t.Errorf("most failing steps %+v", in.MostFailingSteps)
		}
		// ships: five results of 1 s and one of 3 s: p95 = 1000 + 0.75 × 2000 (linear interpolation).
		if len(in.SlowestScenarios) == 0 || in.SlowestScenarios[0].Scenario != "ships" || !near(in.SlowestScenarios[0].P95Ms, 2500) {
			t.Errorf("slowest %+v", in.SlowestScenarios)
		}
		if len(in.BecameFlaky) != 0 {
			t.Errorf("became flaky %+v: the previous window has one result per scenario", in.BecameFlaky)
		}
	})

	t.Run("heal statistics of a history without heals", func(t *testing.T) {
		var h serverclient.HealStats
		get(t, "/api/stats/heal", window, &h)
		if h.Total != 0 || len(h.Top) != 0 || h.Accepted != nil {
			t.Errorf("heal stats %+v", h)
		}
	})
}

// jsonCaller sends a JSON body with token's bearer and decodes a 2xx answer into into (when not
// nil); it answers the status, and fails the test on a 5xx.
func jsonCaller(s *apptest.Server, token string) func(t *testing.T, method, path, body string, into any) int {
	return func(t *testing.T, method, path, body string, into any) int {
		t.Helper()
		status, out, _ := s.Do(t, method, path, "application/json", []byte(body), "Authorization", "Bearer "+token)
		if into != nil && status < 300 {
			if err := json.Unmarshal(out, into); err != nil {
				t.Fatalf("%s %s: %v %s", method, path, err, out)
			}
		}
		if status >= 500 {
			t.Fatalf("%s %s: %d %s", method, path, status, out)
		}
		return status
	}
}

// TestQuarantine quarantines a scenario through the API, ingests results of it, and checks that
// its failure does not fail the run (counts.quarantined), that two clean results release it
// automatically with an audit entry, and the export for other runners.
func TestQuarantine(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write", "admin:read")
	bearer := s.Bearer(t, token)
	call := jsonCaller(s, token)
	// run ingests one run and answers it as GET /api/runs/{id} reads it.
	run := func(t *testing.T, pays string) serverclient.Run {
		t.Helper()
		c := `<testcase classname="checkout" name="pays" time="1"/>`
		if pays == "F" {
			c = `<testcase classname="checkout" name="pays" time="1"><failure message="declined"/></testcase>`
		}
		doc := `<testsuite name="shop">` + c + `<testcase classname="checkout" name="stable" time="1"/></testsuite>`
		id := ingestRun(t, bearer)
		status, res, body := ingestDoc(t, s, token, id, "application/xml", []byte(doc))
		if status != http.StatusOK {
			t.Fatalf("ingest: %d %s", status, body)
		}
		var r serverclient.Run
		call(t, "GET", "/api/runs/"+id.String(), "", &r)
		a, _ := json.Marshal(res.Counts)
		b, _ := json.Marshal(r.Counts)
		if string(res.Status) != string(r.Status) || string(a) != string(b) {
			t.Errorf("ingest answered %s %+v, the run reads %s %+v", res.Status, res.Counts, r.Status, r.Counts)
		}
		return r
	}

	var q serverclient.Quarantine
	if st := call(t, "POST", "/api/projects/shop/quarantine", `{"featurePath":"checkout","scenario":"pays","owner":"ana","reason":"payment sandbox flaps","releaseAfter":2}`, &q); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	sum := md5.Sum([]byte("checkout\x1fpays\x1f"))
	if !q.Active || q.Owner != "ana" || q.Identity != hex.EncodeToString(sum[:]) || q.CleanStreak != 0 {
		t.Fatalf("quarantine %+v", q)
	}
	if st := call(t, "POST", "/api/projects/shop/quarantine", `{"featurePath":"checkout","scenario":"pays","owner":"bo","reason":"again"}`, nil); st != http.StatusConflict {
		t.Errorf("second quarantine of the same scenario: %d, want 409", st)
	}
	if st := call(t, "POST", "/api/projects/shop/quarantine", `{"featurePath":"checkout","scenario":"x","owner":"bo","reason":"r","expiresAt":"2020-01-01T00:00:00Z"}`, nil); st != http.StatusBadRequest {
		t.Errorf("expiry in the past: %d, want 400", st)
	}
	var list serverclient.QuarantineList
	call(t, "GET", "/api/projects/shop/quarantine", "", &list)
	if len(list.Items) != 1 || strings.Join(list.Export.List, ",") != "checkout › pays" || list.Export.NamePattern != "^(?:pays)$" {
		t.Errorf("list %+v", list)
	}

	// The quarantined failure is recorded but does not fail the run.
	res := run(t, "F")
	if res.Status != "passed" || res.Counts.Failed != 1 || res.Counts.Quarantined == nil || *res.Counts.Quarantined != 1 {
		t.Errorf("run with a quarantined failure: %s %+v", res.Status, res.Counts)
	}
	run(t, "P")
	call(t, "GET", "/api/projects/shop/quarantine", "", &list)
	if len(list.Items) != 1 || list.Items[0].CleanStreak != 1 || !list.Items[0].Active {
		t.Errorf("after one clean result %+v", list.Items)
	}
	run(t, "P") // the second consecutive clean result releases it
	call(t, "GET", "/api/projects/shop/quarantine?includeReleased=true", "", &list)
	if len(list.Items) != 1 || list.Items[0].Active || list.Items[0].ReleasedAt == nil || list.Items[0].ReleaseReason == nil ||
		*list.Items[0].ReleaseReason != "released after 2 consecutive clean results" || len(list.Export.List) != 0 || list.Export.NamePattern != "" {
		t.Errorf("after two clean results %+v", list)
	}
	var audit struct {
		Items []struct {
			Operation string `json:"operation"`
			Target    struct {
				ID string `json:"id"`
			} `json:"target"`
		} `json:"items"`
	}
	call(t, "GET", "/api/audit?targetKind=quarantine", "", &audit)
	ops := map[string]bool{}
	for _, e := range audit.Items {
		ops[e.Operation] = e.Target.ID == q.Id.String() || ops[e.Operation]
	}
	if !ops["createQuarantine"] || !ops["releaseQuarantine"] {
		t.Errorf("audit of the quarantine: %+v", audit.Items)
	}
	if res := run(t, "F"); res.Status != "failed" || res.Counts.Quarantined != nil {
		t.Errorf("after release a failure fails the run: %s %+v", res.Status, res.Counts)
	}

	// A user releases a quarantine; a second release finds none open.
	call(t, "POST", "/api/projects/shop/quarantine", `{"featurePath":"checkout","scenario":"stable","owner":"bo","reason":"r"}`, &q)
	if st := call(t, "DELETE", "/api/projects/shop/quarantine/"+q.Id.String(), "", nil); st != http.StatusNoContent {
		t.Errorf("release: %d", st)
	}
	if st := call(t, "DELETE", "/api/projects/shop/quarantine/"+q.Id.String(), "", nil); st != http.StatusNotFound {
		t.Errorf("second release: %d, want 404", st)
	}
}

// TestQuarantineListPages pages through a project's quarantines: open ones first, newest first,
// then the released ones; every quarantine once; the export of every active one on each page.
func TestQuarantineListPages(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:read", "runs:write")
	call := jsonCaller(s, token)
	var created []serverclient.Quarantine
	for i := 0; i < 7; i++ {
		var q serverclient.Quarantine
		if st := call(t, "POST", "/api/projects/shop/quarantine", fmt.Sprintf(`{"featurePath":"checkout","scenario":"s%d","owner":"ana","reason":"r"}`, i), &q); st != http.StatusCreated {
			t.Fatalf("create %d: %d", i, st)
		}
		created = append(created, q)
	}
	for _, i := range []int{1, 4} {
		if st := call(t, "DELETE", "/api/projects/shop/quarantine/"+created[i].Id.String(), "", nil); st != http.StatusNoContent {
			t.Fatalf("release %d: %d", i, st)
		}
	}
	// Open ones newest first (6 5 3 2 0), then the released ones newest first (4 1).
	want := []string{"s6", "s5", "s3", "s2", "s0", "s4", "s1"}
	for _, tc := range []struct {
		name  string
		query string
		want  []string
	}{
		{"open ones", "", want[:5]},
		{"with released ones", "&includeReleased=true", want},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			var pages int
			cursor := ""
			for {
				var page serverclient.QuarantineList
				path := "/api/projects/shop/quarantine?limit=2" + tc.query
				if cursor != "" {
					path += "&cursor=" + url.QueryEscape(cursor)
				}
				if st := call(t, "GET", path, "", &page); st != http.StatusOK {
					t.Fatalf("page %d: %d", pages, st)
				}
				pages++
				if len(page.Items) > 2 || page.Export.NamePattern != "^(?:s6|s5|s3|s2|s0)$" || len(page.Export.List) != 5 {
					t.Fatalf("page %d: %+v", pages, page)
				}
				for _, q := range page.Items {
					got = append(got, q.Scenario)
				}
				if page.NextCursor == nil {
					break
				}
				cursor = *page.NextCursor
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") || pages != (len(tc.want)+1)/2 {
				t.Errorf("%d pages of %v, want %v", pages, got, tc.want)
			}
		})
	}
	if st := call(t, "GET", "/api/projects/shop/quarantine?cursor=not-a-cursor", "", nil); st != http.StatusBadRequest {
		t.Errorf("a cursor that is not one: %d, want 400", st)
	}
}

// TestQuarantineExecutedRun executes a feature against a local HTTP server: the quarantined
// scenario's failure leaves the run passed with counts.quarantined, and the failure's signature
// carries the HTTP method and status.
func TestQuarantineExecutedRun(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/pay" {
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer web.Close()
	project(t, admin, web.URL, map[string]string{"api/pay.feature": "Feature: Pay\n  Scenario: Pays\n    When I send a GET request to \"/pay\"\n    Then the response status is 200\n\n  Scenario: Lists\n    When I send a GET request to \"/\"\n    Then the response status is 200\n"})
	token := apptest.Token(t, admin, "runs:read", "runs:write", "stats:read")
	status, body, _ := s.Do(t, "POST", "/api/projects/shop/quarantine", "application/json",
		[]byte(`{"featurePath":"api/pay.feature","scenario":"Pays","owner":"ana","reason":"gateway down"}`), "Authorization", "Bearer "+token)
	if status != http.StatusCreated {
		t.Fatalf("quarantine: %d %s", status, body)
	}
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	run := waitRun(t, admin.ClientWithResponses, id, terminal)
	if run.Status != "passed" || run.Counts.Failed != 1 || run.Counts.Passed != 1 || run.Counts.Quarantined == nil || *run.Counts.Quarantined != 1 {
		t.Fatalf("run %s counts %+v", run.Status, run.Counts)
	}
	status, body, _ = s.Do(t, "GET", "/api/stats/insights", "", nil, "Authorization", "Bearer "+token)
	var in serverclient.Insights
	if status != http.StatusOK || json.Unmarshal(body, &in) != nil {
		t.Fatalf("insights: %d %s", status, body)
	}
	if len(in.FailureClusters) != 1 || !strings.HasSuffix(in.FailureClusters[0].Signature, " ¦ Then the response status is <n> ¦ GET 502") ||
		!strings.Contains(in.FailureClusters[0].Signature, "GET <url> answered <n>, expected <n>") {
		t.Errorf("clusters %+v", in.FailureClusters)
	}
}

// TestStatsOutlineRowsAndTags ingests Cucumber JSON: each row of a Scenario Outline is its own
// identity (feature path, name, example row), and the tag filter keeps only results carrying it.
func TestStatsOutlineRowsAndTags(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write", "stats:read")
	bearer := s.Bearer(t, token)
	doc := func(row2 string) []byte {
		el := func(id, kw, name, tag, status string, line int) string {
			return fmt.Sprintf(`{"id": %q, "keyword": %q, "type": "scenario", "name": %q, "line": %d, "tags": [{"name": %q}],
			  "steps": [{"keyword": "Then ", "name": "the total is right", "line": 14, "result": {"status": %q, "duration": 1000000, "error_message": "total 7 != 8"}}]}`,
				id, kw, name, line, tag, status)
		}
		return []byte(`[{"uri": "features/t.feature", "id": "t", "keyword": "Feature", "name": "T", "line": 1, "elements": [` +
			el("t;totals;;2", "Scenario Outline", "Totals", "@smoke", "passed", 17) + "," +
			el("t;totals;;3", "Scenario Outline", "Totals", "@smoke", row2, 18) + "," +
			el("t;other", "Scenario", "Other", "@slow", "failed", 20) + `]}]`)
	}
	for _, row2 := range []string{"failed", "passed"} {
		id := ingestRun(t, bearer)
		if status, _, body := ingestDoc(t, s, token, id, "application/json", doc(row2)); status != http.StatusOK {
			t.Fatalf("ingest: %d %s", status, body)
		}
	}
	flaky := func(q string) serverclient.FlakyScenarioList {
		t.Helper()
		status, body, _ := s.Do(t, "GET", "/api/stats/flaky?minResults=2&"+q, "", nil, "Authorization", "Bearer "+token)
		var l serverclient.FlakyScenarioList
		if status != http.StatusOK || json.Unmarshal(body, &l) != nil {
			t.Fatalf("flaky %s: %d %s", q, status, body)
		}
		return l
	}
	row := func(n int) string {
		sum := md5.Sum([]byte(fmt.Sprintf("features/t.feature\x1fTotals\x1f%d", n)))
		return hex.EncodeToString(sum[:])
	}
	l := flaky("tag=%40smoke")
	if len(l.Items) != 1 || l.Items[0].ExampleRow == nil || *l.Items[0].ExampleRow != 2 || l.Items[0].Identity != row(2) || l.Items[0].Flips != 1 {
		t.Errorf("flaky outline rows %+v", l.Items)
	}
	l = flaky("tag=%40smoke&flakyOnly=false&sort=results")
	ids := map[string]bool{}
	for _, f := range l.Items {
		ids[f.Identity] = true
	}
	if len(l.Items) != 2 || !ids[row(1)] || !ids[row(2)] {
		t.Errorf("identities of the outline rows %+v", l.Items)
	}
	if l := flaky("tag=%40nothing&flakyOnly=false"); len(l.Items) != 0 {
		t.Errorf("tag filter let through %+v", l.Items)
	}
	if l := flaky("flakyOnly=false"); len(l.Items) != 3 {
		t.Errorf("without a tag filter %d identities, want 3", len(l.Items))
	}
}

// TestStatsFailureClusterScenarios checks that a failure cluster lists its scenarios: "refund 1" and
// "refund 2" differ only by a number, so their failures (a different order id each time) share the
// signature "order <uuid> not found ¦ Test refund <n>"; twelve "item NN" scenarios share another, of
// which item 07 fails twice: the list holds 10 of them, item 07 first, then by name. The values are
// the same from the raw results (a window one second wider) and from the daily rollup.
func TestStatsFailureClusterScenarios(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write", "stats:read")
	bearer := s.Bearer(t, token)
	uuids := []string{"3f2a9c1b-1234-4abc-9def-0123456789ab", "0b7d3e55-9a41-4c2e-8f10-aa00bb11cc22", "9c0e1f2a-3b4c-4d5e-8f60-718293a4b5c6"}
	runs := [][]string{
		// run 1: refund 1 and refund 2 fail, items 01..12 fail, item 07 among them
		{"refund 1", "refund 2", "item 01", "item 02", "item 03", "item 04", "item 05", "item 06", "item 07", "item 08", "item 09", "item 10", "item 11", "item 12"},
		// run 2: refund 1 fails again, item 07 again; refund 2 passes
		{"refund 1", "item 07"},
	}
	u := 0
	for i, failing := range runs {
		at := time.Date(2026, 1, 5+i, 10, 0, 0, 0, time.UTC)
		var b strings.Builder
		fmt.Fprintf(&b, "<testsuite name=\"shop\" timestamp=%q>\n", at.Format("2006-01-02T15:04:05"))
		for _, name := range failing {
			msg := "failed at step 3"
			if strings.HasPrefix(name, "refund") {
				msg = "order " + uuids[u%len(uuids)] + " not found"
				u++
			}
			fmt.Fprintf(&b, "  <testcase classname=\"billing\" name=%q time=\"1\"><failure message=%q/></testcase>\n", name, msg)
		}
		if i == 1 {
			b.WriteString("  <testcase classname=\"billing\" name=\"refund 2\" time=\"1\"/>\n")
		}
		b.WriteString("</testsuite>\n")
		id := ingestRun(t, bearer)
		if status, _, body := ingestDoc(t, s, token, id, "application/xml", []byte(b.String())); status != http.StatusOK {
			t.Fatalf("ingest run %d: %d %s", i, status, body)
		}
	}
	identity := func(name string) string {
		sum := md5.Sum([]byte("billing\x1f" + name + "\x1f"))
		return hex.EncodeToString(sum[:])
	}
	names := func(refs []serverclient.ScenarioRef) string {
		var out []string
		for _, r := range refs {
			if r.Identity != identity(r.Scenario) || r.Project != "shop" || r.FeaturePath != "billing" || r.ExampleRow != nil {
				t.Errorf("scenario ref %+v", r)
			}
			out = append(out, r.Scenario)
		}
		return strings.Join(out, ",")
	}
	// The example stays the cluster's least project ␟ identity.
	least := func(prefix string) string {
		best := ""
		for _, name := range runs[0] {
			if strings.HasPrefix(name, prefix) && (best == "" || identity(name) < identity(best)) {
				best = name
			}
		}
		return best
	}
	for _, since := range []string{"2026-01-05T00:00:00Z", "2026-01-04T23:59:59Z"} { // rollup, raw results
		status, body, _ := s.Do(t, "GET", "/api/stats/insights?since="+since+"&until=2026-01-07T00:00:00Z", "", nil, "Authorization", "Bearer "+token)
		var in serverclient.Insights
		if status != http.StatusOK || json.Unmarshal(body, &in) != nil {
			t.Fatalf("insights since %s: %d %s", since, status, body)
		}
		if len(in.FailureClusters) != 2 {
			t.Fatalf("since %s: clusters %+v", since, in.FailureClusters)
		}
		// items: 13 failures of 12 scenarios; refunds: 3 failures of 2 scenarios.
		items, refunds := in.FailureClusters[0], in.FailureClusters[1]
		if items.Signature != "failed at step <n> ¦ Test item <n>" || items.Count != 13 || items.Scenarios != 12 || items.Example.Scenario != least("item ") {
			t.Errorf("since %s: items cluster %+v", since, items)
		}
		if got, want := names(items.Affected), "item 07,item 01,item 02,item 03,item 04,item 05,item 06,item 08,item 09,item 10"; got != want {
			t.Errorf("since %s: items affected %s, want %s", since, got, want)
		}
		if refunds.Signature != "order <uuid> not found ¦ Test refund <n>" || refunds.Count != 3 || refunds.Scenarios != 2 || refunds.Example.Scenario != least("refund ") {
			t.Errorf("since %s: refunds cluster %+v", since, refunds)
		}
		if got, want := names(refunds.Affected), "refund 1,refund 2"; got != want {
			t.Errorf("since %s: refunds affected %s, want %s", since, got, want)
		}
	}
}
