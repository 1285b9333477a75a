package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestStatsRollupOverReplacedResults (issue 21, the slowest-step p50 of the rollup differing from
// the results') writes a history whose finished runs then take another JUnit document that
// replaces some of their results — with the same status, timestamp and counts (nothing of the
// run row changes), with a test case run again over its first attempt, with a later or an earlier
// timestamp, with a new test case, with two results of one identity — and one run whose two results of one
// identity are kept, and checks that every figure the statistics endpoints read
// from the rollup (a window of whole UTC days) is the one computed from the results (the same runs,
// a window one second wider), and the slowest step's p50 by hand.
func TestStatsRollupOverReplacedResults(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write", "stats:read")
	bearer := s.Bearer(t, token)
	// A case is "name:status:seconds[:message]"; a name twice in a document is a rerun.
	doc := func(at string, cases ...string) []byte {
		var b strings.Builder
		fmt.Fprintf(&b, "<testsuite name=\"shop\" timestamp=%q>\n", at)
		for _, c := range cases {
			f := strings.Split(c, ":")
			switch f[1] {
			case "pass":
				fmt.Fprintf(&b, "  <testcase classname=\"k\" name=%q time=%q/>\n", f[0], f[2])
			case "skip":
				fmt.Fprintf(&b, "  <testcase classname=\"k\" name=%q time=%q><skipped/></testcase>\n", f[0], f[2])
			default:
				fmt.Fprintf(&b, "  <testcase classname=\"k\" name=%q time=%q><failure message=%q/></testcase>\n", f[0], f[2], f[3])
			}
		}
		b.WriteString("</testsuite>\n")
		return []byte(b.String())
	}
	history := []struct {
		name        string
		first, then []byte
	}{
		// Same timestamp, status and counts: the run row does not change at all.
		{"same counts", doc("2026-03-02T10:00:00", "a:pass:1", "b:fail:2:id 1 gone", "c:pass:1"),
			doc("2026-03-02T10:00:00", "a:pass:4", "b:fail:2:socket 9 closed")},
		// A test case run again, written over its first attempt (and over the first document's).
		{"rerun", doc("2026-03-02T12:00:00", "a:pass:1", "b:pass:1", "c:fail:1:id 2 gone"),
			doc("2026-03-02T12:00:00", "c:fail:1:first try", "c:fail:3:second try")},
		// A later timestamp (the start stays) and a status that changes.
		{"later", doc("2026-03-03T09:00:00", "a:pass:2", "b:fail:2:id 3 gone", "c:pass:1"),
			doc("2026-03-03T11:00:00", "a:pass:5", "b:pass:2")},
		// An earlier timestamp: the run moves to the day before.
		{"earlier", doc("2026-03-04T08:00:00", "a:pass:1", "b:skip:0", "c:pass:1"),
			doc("2026-03-03T23:00:00", "b:fail:1:id 4 gone")},
		// A new test case.
		{"new case", doc("2026-03-04T10:00:00", "a:pass:1", "b:pass:1", "c:pass:1"),
			doc("2026-03-04T10:00:00", "d:fail:2:id 5 gone")},
		// Two results of one identity in a run (the same class and name in two suites), merged
		// through the ordered aggregation, then replaced.
		{"one identity twice", []byte(`<testsuites><testsuite name="shop" timestamp="2026-03-04T11:00:00">
  <testcase classname="k" name="c" time="1"/></testsuite><testsuite name="shop2" timestamp="2026-03-04T11:00:00">
  <testcase classname="k" name="c" time="2"><failure message="id 6 gone"/></testcase></testsuite></testsuites>`),
			doc("2026-03-04T11:00:00", "c:pass:3")},
		// Only a step's duration changes.
		{"duration", doc("2026-03-04T12:00:00", "a:pass:1"), doc("2026-03-04T12:00:00", "a:pass:7")},
		// Two results of one identity in a run, kept: its first finish merges them (the step's two
		// durations in two histogram bands) and no later document recomputes the day.
		{"one identity twice, kept", []byte(`<testsuites><testsuite name="shop" timestamp="2026-03-04T13:00:00">
  <testcase classname="k" name="c" time="1"/></testsuite><testsuite name="shop2" timestamp="2026-03-04T13:00:00">
  <testcase classname="k" name="c" time="3"/></testsuite></testsuites>`), nil},
	}
	for _, h := range history {
		id := ingestRun(t, bearer)
		for i, d := range [][]byte{h.first, h.then} {
			if d == nil {
				continue
			}
			if status, _, body := ingestDoc(t, s, token, id, "application/xml", d); status != http.StatusOK {
				t.Fatalf("%s: document %d: %d %s", h.name, i+1, status, body)
			}
		}
	}

	fetch := func(path string, q url.Values, into any) {
		t.Helper()
		status, body, _ := s.Do(t, "GET", path+"?"+q.Encode(), "", nil, "Authorization", "Bearer "+token)
		if status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", path, q.Encode(), status, body)
		}
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatal(err)
		}
	}
	same := func(what string, rolled, raw any) {
		t.Helper()
		if !reflect.DeepEqual(rolled, raw) {
			a, _ := json.MarshalIndent(rolled, "", " ")
			b, _ := json.MarshalIndent(raw, "", " ")
			t.Errorf("%s: the rollup answers\n%s\nthe results answer\n%s", what, a, b)
		}
	}
	// window gives the rollup's window (whole UTC days) and the results' (one second wider).
	window := func(kv ...string) (rolled, raw url.Values) {
		rolled = url.Values{"since": {"2026-03-02T00:00:00Z"}, "until": {"2026-03-05T00:00:00Z"}}
		for i := 0; i < len(kv); i += 2 {
			rolled.Set(kv[i], kv[i+1])
		}
		raw = url.Values{}
		for k, v := range rolled {
			raw[k] = v
		}
		raw.Set("since", "2026-03-01T23:59:59Z")
		return rolled, raw
	}

	for _, sort := range []string{"flakyRate", "health", "durationLostMs", "lastFlakyAt", "failureRate"} {
		q, r := window("minResults", "2", "flakyOnly", "false", "sort", sort)
		var rolled, raw serverclient.FlakyScenarioList
		fetch("/api/stats/flaky", q, &rolled)
		fetch("/api/stats/flaky", r, &raw)
		if len(rolled.Items) != 3 {
			t.Errorf("flaky by %s: %d identities, want 3 (a, b, c)", sort, len(rolled.Items))
		}
		same("flaky by "+sort, rolled.Items, raw.Items)
	}
	for _, bucket := range []string{"day", "week"} {
		q, r := window("bucket", bucket)
		var rolled, raw serverclient.Trends
		fetch("/api/stats/trends", q, &rolled)
		fetch("/api/stats/trends", r, &raw)
		same("trends by "+bucket+" (points)", rolled.Points, raw.Points)
		same("trends by "+bucket+" (summary)", rolled.Summary, raw.Summary)
		same("trends by "+bucket+" (previous)", rolled.Previous, raw.Previous)
	}
	{
		q, r := window()
		var rolled, raw serverclient.Insights
		fetch("/api/stats/insights", q, &rolled)
		fetch("/api/stats/insights", r, &raw)
		same("insights slowestScenarios", rolled.SlowestScenarios, raw.SlowestScenarios)
		same("insights slowestSteps", rolled.SlowestSteps, raw.SlowestSteps)
		same("insights durationRegressions", rolled.DurationRegressions, raw.DurationRegressions)
		same("insights mostFailingSteps", rolled.MostFailingSteps, raw.MostFailingSteps)
		same("insights failureClusters", rolled.FailureClusters, raw.FailureClusters)
		same("insights becameFlaky", rolled.BecameFlaky, raw.BecameFlaky)
		same("insights newFailures", rolled.NewFailures, raw.NewFailures)
		// By hand: step "Test a" took 4 s (replaced), 1, 5 (replaced), 1, 1 and 7 s (replaced):
		// 1, 1, 1, 4, 5, 7 s, whose p50 is (1 + 4) / 2 s.
		found := false
		for _, st := range rolled.SlowestSteps {
			if st.Text == "a" {
				found = true
				if st.Count != 6 || st.P50Ms != 2500 {
					t.Errorf("step a over the rollup: %d steps, p50 %v ms; want 6, 2500 ms", st.Count, st.P50Ms)
				}
			}
		}
		if !found {
			t.Errorf("no step a among the slowest: %+v", rolled.SlowestSteps)
		}
	}
	{
		q, r := window()
		var rolled, raw serverclient.HealStats
		fetch("/api/stats/heal", q, &rolled)
		fetch("/api/stats/heal", r, &raw)
		rolled.Window, raw.Window = serverclient.StatsWindow{}, serverclient.StatsWindow{}
		same("heal", rolled, raw)
	}
}
