package httpapi_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/httpapi"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/results/resultsapi"
	"github.com/sdods/sdods/impl/server/runs"
)

// TestEncodersMatchEncodingJSON checks that the hand-written encoders of the run list, a run's
// detail and its report write the bytes encoding/json writes for the same value (as the
// generated Visit methods do: HTML characters escaped), over random values that mix nulls, empty
// and nil lists, unicode, invalid UTF-8, control and HTML characters, and times in several zones.
func TestEncodersMatchEncodingJSON(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		g := gen{rand.New(rand.NewPCG(seed, seed*7+1))}
		list := g.runList()
		run := g.run()
		report := g.report()
		features := g.featureList()
		upcoming := g.upcomingRuns()
		quarantines := g.quarantines()
		for _, c := range []struct {
			name string
			v    any
			enc  func([]byte) ([]byte, error)
		}{
			{"run list", list, func(b []byte) ([]byte, error) { return httpapi.AppendRunList(b, &list) }},
			{"run", run, func(b []byte) ([]byte, error) { return httpapi.AppendRun(b, &run) }},
			{"report", report, func(b []byte) ([]byte, error) { return httpapi.AppendRunReport(b, &report) }},
			{"feature list", features, func(b []byte) ([]byte, error) { return httpapi.AppendFeatures(b, &features) }},
			{"upcoming runs", upcoming, func(b []byte) ([]byte, error) { return httpapi.AppendUpcoming(b, &upcoming) }},
			{"quarantines", quarantines, func(b []byte) ([]byte, error) { return httpapi.AppendQuarantines(b, &quarantines) }},
		} {
			var want bytes.Buffer
			if err := json.NewEncoder(&want).Encode(c.v); err != nil {
				t.Fatalf("seed %d %s: encoding/json: %v", seed, c.name, err)
			}
			got, err := c.enc([]byte("prefix"))
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, c.name, err)
			}
			if !bytes.HasPrefix(got, []byte("prefix")) {
				t.Fatalf("seed %d %s: the encoder did not append", seed, c.name)
			}
			got = append(got[len("prefix"):], '\n')
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("seed %d %s: differs from encoding/json\n got: %s\nwant: %s", seed, c.name, got, want.Bytes())
			}
		}
	}
}

// TestRunPageMatchesRunList: the run list page written from the service's runs is, byte for byte,
// what encoding/json writes for the page of their summaries (runSummary), as the handler answered
// before: random runs (nulls, empty and nil paths, durations, unicode and invalid UTF-8, counts
// PostgreSQL's way, with quarantined, empty, and ones left to encoding/json), nil and empty pages.
func TestRunPageMatchesRunList(t *testing.T) {
	counts := []string{`{"total": 50, "failed": 1}`, `{"failed": 2, "flaky": 1, "passed": 40, "pending": 0, "quarantined": 1, "skipped": 3, "total": 47, "undefined": 0}`,
		`{}`, `{"quarantined": 0}`, `{"total": 3.0}`, `{"t\u006ftal": 3}`, `{"other": 1, "total": 2}`, `null`, ``}
	for seed := uint64(0); seed < 300; seed++ {
		g := gen{rand.New(rand.NewPCG(seed, seed*5+3))}
		var rows []runs.ProjectRun
		switch g.r.IntN(5) {
		case 0:
		case 1:
			rows = []runs.ProjectRun{}
		default:
			for n := 1 + g.r.IntN(6); n > 0; n-- {
				rows = append(rows, runs.ProjectRun{ProjectSlug: g.str(), Run: runs.Run{ID: uuid.New(), ProjectID: uuid.New(),
					Status: g.str(), Trigger: g.str(), Source: g.str(), Label: g.strp(), Paths: g.strs(), Tags: g.strp(),
					Environment: g.strp(), Branch: g.strp(), CommitSha: g.strp(), ProcessName: g.strp(), ScheduleID: g.uuidp(),
					CreatedAt: g.time(), UpdatedAt: g.time(), StartedAt: g.timep(), FinishedAt: g.timep(),
					Counts: []byte(counts[g.r.IntN(len(counts))])}})
			}
		}
		next := g.strp()
		want := serverapi.RunList{NextCursor: next}
		if rows != nil {
			want.Items = []serverapi.RunSummary{}
		}
		for _, r := range rows {
			want.Items = append(want.Items, httpapi.RunSummary(r.Run, r.ProjectSlug))
		}
		wantJSON, err := json.Marshal(want)
		if err != nil {
			t.Fatalf("seed %d: encoding/json: %v", seed, err)
		}
		got, err := httpapi.AppendRunPage([]byte("prefix"), rows, next)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !bytes.Equal(got, append([]byte("prefix"), wantJSON...)) {
			t.Fatalf("seed %d: differs from encoding/json\n got: %s\nwant: prefix%s", seed, got, wantJSON)
		}
	}
}

// TestEncodersRefuseWhatEncodingJSONRefuses: a time encoding/json cannot write is an error.
func TestEncodersRefuseWhatEncodingJSONRefuses(t *testing.T) {
	l := serverapi.RunList{Items: []serverapi.RunSummary{{CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}}
	if _, err := json.Marshal(l); err == nil {
		t.Fatal("encoding/json accepted the year 10000")
	}
	if _, err := httpapi.AppendRunList(nil, &l); err == nil {
		t.Fatal("the run list encoder accepted the year 10000")
	}
}

// TestScenarioTreeGroups checks the tree's grouping: modules and features in order of first
// appearance, a feature's scenarios in execution order even when interleaved with another
// feature's, counts, status and durations summed (absent when no scenario has one).
func TestScenarioTreeGroups(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	row := int32(3)
	rows := []runs.Scenario{
		{ID: uuid.New(), Module: "m1", FeaturePath: "m1/a.feature", FeatureName: "A", Name: "a1", Status: "passed", DurationMs: ms(5), Attempts: 1},
		{ID: uuid.New(), Module: "", FeaturePath: "m2/b.feature", FeatureName: "B", Name: "b1", Status: "failed", Attempts: 1, ExampleRow: &row},
		{ID: uuid.New(), Module: "m1", FeaturePath: "m1/c.feature", FeatureName: "C", Name: "c1", Status: "skipped", Attempts: 1, Tags: []string{"@x"}},
		{ID: uuid.New(), Module: "m1", FeaturePath: "m1/a.feature", FeatureName: "A", Name: "a2", Status: "failed", DurationMs: ms(7), Attempts: 2},
	}
	mods := httpapi.ScenarioTree(rows)
	got, _ := json.Marshal(mods)
	want := `[{"counts":{"failed":1,"flaky":0,"passed":1,"pending":0,"skipped":1,"total":3,"undefined":0},"durationMs":12,"features":[` +
		`{"counts":{"failed":1,"flaky":0,"passed":1,"pending":0,"skipped":0,"total":2,"undefined":0},"durationMs":12,"name":"A","path":"m1/a.feature","scenarios":[` +
		`{"attempts":1,"durationMs":5,"id":"` + rows[0].ID.String() + `","line":0,"name":"a1","status":"passed","tags":null},` +
		`{"attempts":2,"durationMs":7,"id":"` + rows[3].ID.String() + `","line":0,"name":"a2","status":"failed","tags":null}],"status":"failed"},` +
		`{"counts":{"failed":0,"flaky":0,"passed":0,"pending":0,"skipped":1,"total":1,"undefined":0},"name":"C","path":"m1/c.feature","scenarios":[` +
		`{"attempts":1,"id":"` + rows[2].ID.String() + `","line":0,"name":"c1","status":"skipped","tags":["@x"]}],"status":"skipped"}],"name":"m1","status":"failed"},` +
		`{"counts":{"failed":1,"flaky":0,"passed":0,"pending":0,"skipped":0,"total":1,"undefined":0},"features":[` +
		`{"counts":{"failed":1,"flaky":0,"passed":0,"pending":0,"skipped":0,"total":1,"undefined":0},"name":"B","path":"m2/b.feature","scenarios":[` +
		`{"attempts":1,"exampleRow":3,"id":"` + rows[1].ID.String() + `","line":0,"name":"b1","status":"failed","tags":null}],"status":"failed"}],"name":"m2","status":"failed"}]`
	if string(got) != want {
		t.Fatalf("tree\n got: %s\nwant: %s", got, want)
	}
	if empty, _ := json.Marshal(httpapi.ScenarioTree(nil)); string(empty) != "[]" {
		t.Fatalf("no scenarios: %s, want []", empty)
	}
}

type gen struct{ r *rand.Rand }

var pieces = []string{"", "a", "shop", "é", "日本語", "<script>", "a&b", ">", `"quoted"`, `back\slash`, "\n\t\r\b\f", "\x00\x01\x1f", "\x7f",
	"\u2028\u2029", "\xff\xfe", "\xe2\x82", "emoji 😀", "/path/to.feature", " ", "\u00e9\u0301", "'", "%", "\uFFFD"}

func (g gen) str() string {
	var b []byte
	for n := g.r.IntN(4); n > 0; n-- {
		b = append(b, pieces[g.r.IntN(len(pieces))]...)
	}
	return string(b)
}

func (g gen) maybe() bool { return g.r.IntN(3) == 0 }

func (g gen) strp() *string {
	if g.maybe() {
		return nil
	}
	s := g.str()
	return &s
}

func (g gen) strs() []string {
	switch g.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	out := make([]string, 1+g.r.IntN(3))
	for i := range out {
		out[i] = g.str()
	}
	return out
}

func (g gen) i64p() *int64 {
	if g.maybe() {
		return nil
	}
	v := g.r.Int64N(1<<40) - 1<<20
	return &v
}

func (g gen) intp() *int {
	if g.maybe() {
		return nil
	}
	v := g.r.IntN(1000) - 10
	return &v
}

var zones = []*time.Location{time.UTC, time.FixedZone("plus", 5*3600+30*60), time.FixedZone("minus", -8*3600), time.FixedZone("zero", 0)}

func (g gen) time() time.Time {
	t := time.Unix(g.r.Int64N(4e9), 0).In(zones[g.r.IntN(len(zones))])
	switch g.r.IntN(3) {
	case 0:
		t = t.Add(time.Duration(g.r.IntN(1e9)))
	case 1:
		t = t.Add(time.Duration(g.r.IntN(1000)) * time.Millisecond)
	}
	return t
}

func (g gen) timep() *time.Time {
	if g.maybe() {
		return nil
	}
	t := g.time()
	return &t
}

func (g gen) uuidp() *uuid.UUID {
	if g.maybe() {
		return nil
	}
	u := uuid.New()
	return &u
}

func (g gen) counts() serverapi.Counts {
	c := serverapi.Counts{Failed: g.r.IntN(100), Flaky: g.r.IntN(3), Passed: g.r.IntN(5000), Pending: g.r.IntN(2), Skipped: g.r.IntN(9),
		Total: g.r.IntN(10000), Undefined: g.r.IntN(2)}
	c.Quarantined = g.intp()
	return c
}

func (g gen) summary() serverapi.RunSummary {
	s := serverapi.RunSummary{Branch: g.strp(), Commit: g.strp(), Counts: g.counts(), CreatedAt: g.time(), DurationMs: g.i64p(),
		Environment: g.strp(), FinishedAt: g.timep(), Id: uuid.New(), Label: g.strp(), Paths: g.strs(), ProcessName: g.strp(),
		Project: g.str(), ScheduleId: g.uuidp(), Source: serverapi.RunSource(g.str()), StartedAt: g.timep(), Status: serverapi.RunStatus(g.str()),
		Tags: g.strp(), Trigger: serverapi.RunTrigger(g.str()), UpdatedAt: g.time()}
	if g.maybe() {
		s.CreatedBy = &serverapi.UserSummary{DisplayName: g.str(), Email: "ann+x&y@example.com", Id: uuid.New()}
	}
	return s
}

func (g gen) runList() serverapi.RunList {
	var l serverapi.RunList
	switch g.r.IntN(5) {
	case 0:
	case 1:
		l.Items = []serverapi.RunSummary{}
	default:
		for n := 1 + g.r.IntN(5); n > 0; n-- {
			l.Items = append(l.Items, g.summary())
		}
	}
	l.NextCursor = g.strp()
	return l
}

func (g gen) featureList() serverapi.FeatureList {
	var l serverapi.FeatureList
	switch g.r.IntN(5) {
	case 0:
	case 1:
		l.Items = []serverapi.FeatureSummary{}
	default:
		for n := 1 + g.r.IntN(5); n > 0; n-- {
			l.Items = append(l.Items, serverapi.FeatureSummary{CreatedAt: g.time(), Etag: g.str(), Module: g.str(), Name: g.strp(), Path: g.str(),
				ScenarioCount: g.r.IntN(200), SizeBytes: g.r.IntN(1 << 20), Tags: g.strs(), UpdatedAt: g.time()})
		}
	}
	l.NextCursor = g.strp()
	return l
}

func (g gen) upcomingRuns() serverapi.UpcomingRunList {
	var l serverapi.UpcomingRunList
	switch g.r.IntN(5) {
	case 0:
	case 1:
		l.Items = []serverapi.UpcomingRun{}
	default:
		for n := 1 + g.r.IntN(5); n > 0; n-- {
			u := serverapi.UpcomingRun{At: g.time(), Local: g.str(), Project: g.strp(), ScheduleId: g.uuidp(), ScheduleName: g.strp(),
				StartsBy: g.timep(), Timezone: g.str(), WallTime: g.strp()}
			if g.maybe() {
				d := serverapi.DstDecision(g.str())
				u.Dst = &d
			}
			l.Items = append(l.Items, u)
		}
	}
	l.NextCursor = g.strp()
	return l
}

func (g gen) quarantines() serverapi.QuarantineList {
	var l serverapi.QuarantineList
	switch g.r.IntN(5) {
	case 0:
	case 1:
		l.Items = []serverapi.Quarantine{}
	default:
		for n := 1 + g.r.IntN(5); n > 0; n-- {
			l.Items = append(l.Items, serverapi.Quarantine{Active: g.maybe(), CleanStreak: g.r.IntN(100), CreatedAt: g.time(), ExampleRow: g.intp(),
				ExpiresAt: g.timep(), FeaturePath: g.str(), Id: uuid.New(), Identity: g.str(), Owner: g.str(), Project: g.str(), Reason: g.str(),
				ReleaseAfter: g.intp(), ReleaseReason: g.strp(), ReleasedAt: g.timep(), Scenario: g.str()})
		}
	}
	l.Export = serverapi.QuarantineExport{List: g.strs(), NamePattern: g.str(), TagExpression: g.str()}
	l.NextCursor = g.strp()
	return l
}

// TestDecodeCountsMatchesEncodingJSON: the run counts decoder reads what encoding/json reads,
// and leaves to it (same result) whatever it does not read itself.
func TestDecodeCountsMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		`{"total": 50, "failed": 1}`, // PostgreSQL's jsonb text
		`{"failed": 2, "flaky": 1, "passed": 40, "pending": 0, "quarantined": 1, "skipped": 3, "total": 47, "undefined": 0}`,
		`{"failed":2,"flaky":1,"passed":40,"pending":0,"skipped":3,"total":47,"undefined":0}`,
		"{}", " { } ", "{\n\t\"total\" :\r 3 }", `{"total": -4}`, `{"quarantined": 0}`,
		// left to encoding/json
		`{"total": 1, "total": 2}`, `{"Total": 3}`, `{"total": 3.0}`, `{"total": 3e1}`, `{"total": 01}`, `{"total": null}`,
		`{"quarantined": null}`, `{"t\u006ftal": 3}`, `{"other": 1, "total": 2}`, `{"total": "3"}`, `{"total": 99999999999999999999}`,
		`{"total": 3,}`, `{"total": 3} x`, `{"total": 3`, `{"total" 3}`, `[]`, "", "null", `{"total": -}`, `{"total": 1x}`,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 { // every member, any order, any spacing
		keys := []string{"failed", "flaky", "passed", "pending", "quarantined", "skipped", "total", "undefined"}
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		sp := func() string { return []string{"", " ", "\n ", "\t"}[r.IntN(4)] }
		doc := "{" + sp()
		for i, k := range keys[:r.IntN(len(keys)+1)] {
			if i > 0 {
				doc += "," + sp()
			}
			doc += `"` + k + `"` + sp() + ":" + sp() + strconv.Itoa(r.IntN(100000)-10) + sp()
		}
		cases = append(cases, doc+"}")
	}
	for _, doc := range cases {
		var want results.Counts
		_ = json.Unmarshal([]byte(doc), &want)
		got := httpapi.RunCounts([]byte(doc))
		wantJSON, _ := json.Marshal(resultsapi.Counts(want))
		gotJSON, _ := json.Marshal(got)
		if !bytes.Equal(wantJSON, gotJSON) {
			t.Errorf("%q: got %s, encoding/json %s", doc, gotJSON, wantJSON)
		}
	}
}

func (g gen) run() serverapi.Run {
	s := g.summary()
	r := serverapi.Run{Branch: s.Branch, Commit: s.Commit, Counts: s.Counts, CreatedAt: s.CreatedAt, CreatedBy: s.CreatedBy,
		DurationMs: s.DurationMs, Environment: s.Environment, Error: g.strp(), FinishedAt: s.FinishedAt, Id: s.Id, Label: s.Label,
		Paths: s.Paths, ProcessName: s.ProcessName, Project: s.Project, ScheduleId: s.ScheduleId, Source: s.Source, StartedAt: s.StartedAt,
		Status: s.Status, Tags: s.Tags, Trigger: s.Trigger, UpdatedAt: s.UpdatedAt}
	if !g.maybe() {
		vars := map[string]string{}
		for n := g.r.IntN(4); n > 0; n-- {
			vars[g.str()] = g.str()
		}
		r.Variables = &vars
	}
	if g.r.IntN(6) == 0 {
		return r // modules nil
	}
	r.Modules = []serverapi.RunModule{}
	for n := g.r.IntN(4); n > 0; n-- {
		m := serverapi.RunModule{Counts: g.counts(), DurationMs: g.i64p(), Name: g.str(), Status: serverapi.ResultStatus(g.str())}
		if g.r.IntN(6) > 0 {
			m.Features = []serverapi.RunFeature{}
		}
		for k := g.r.IntN(3); k > 0 && m.Features != nil; k-- {
			f := serverapi.RunFeature{Counts: g.counts(), DurationMs: g.i64p(), Name: g.str(), Path: g.str(), Status: serverapi.ResultStatus(g.str())}
			if g.r.IntN(6) > 0 {
				f.Scenarios = []serverapi.RunScenarioSummary{}
			}
			for j := g.r.IntN(4); j > 0 && f.Scenarios != nil; j-- {
				f.Scenarios = append(f.Scenarios, serverapi.RunScenarioSummary{Attempts: g.r.IntN(4), Dataset: g.strp(), DurationMs: g.i64p(),
					ExampleRow: g.intp(), Id: uuid.New(), Line: g.r.IntN(500), Name: g.str(), Row: g.intp(), Status: serverapi.ResultStatus(g.str()), Tags: g.strs()})
			}
			m.Features = append(m.Features, f)
		}
		r.Modules = append(r.Modules, m)
	}
	return r
}

func (g gen) report() serverapi.RunReport {
	r := serverapi.RunReport{Counts: g.counts(), DurationMs: g.i64p(), Error: g.strp(), FinishedAt: g.timep(), HtmlUrl: g.str(), RunId: uuid.New(),
		StartedAt: g.timep(), Status: serverapi.RunStatus(g.str())}
	report := httpapi.ReportLists(g.r.IntN(5) > 0)
	r.Failures, r.Flaky, r.Slowest = report.Failures, report.Flaky, report.Slowest
	for n := g.r.IntN(4); n > 0 && r.Failures != nil; n-- {
		f := httpapi.ReportFailure(g.str(), g.str(), uuid.New(), g.uuidp(), g.strp())
		if !g.maybe() {
			f.Error = &serverapi.RunStepError{Actual: g.strp(), Expected: g.strp(), Message: g.str(), Stack: g.strp(), Type: g.strp()}
		}
		r.Failures = append(r.Failures, f)
	}
	for n := g.r.IntN(3); n > 0 && r.Flaky != nil; n-- {
		r.Flaky = append(r.Flaky, httpapi.ReportFlaky(g.r.IntN(5), g.str(), g.str(), uuid.New()))
	}
	for n := g.r.IntN(4); n > 0 && r.Slowest != nil; n-- {
		r.Slowest = append(r.Slowest, httpapi.ReportSlow(g.r.Int64N(1e6), g.str(), g.str(), uuid.New()))
	}
	return r
}

// BenchmarkRunDetailEncode encodes a 2,000-scenario run's detail (100 features of 20 scenarios
// in 10 modules, the read-path benchmark's run) with the append encoder and with encoding/json.
func BenchmarkRunDetailEncode(b *testing.B) {
	var rows []runs.Scenario
	for s := 1; s <= 2000; s++ {
		ms := int64(100 + s%900)
		mod := "features/big/m" + strconv.Itoa(s/200)
		rows = append(rows, runs.Scenario{ID: uuid.New(), Position: int32(s), Module: mod, FeaturePath: mod + "/f" + strconv.Itoa(s/20) + ".feature",
			FeatureName: "Feature " + strconv.Itoa(s/20), Name: "big scenario " + strconv.Itoa(s), Line: int32(3 + s%20*6), Tags: []string{"@big", "@m" + strconv.Itoa(s/200)},
			Status: "passed", Attempts: 1, DurationMs: &ms})
	}
	run := serverapi.Run{Id: uuid.New(), Project: "shop", Status: "failed", Trigger: "api", Source: "execute", CreatedAt: time.Now(), UpdatedAt: time.Now()}
	b.Run("tree+append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			run.Modules = httpapi.ScenarioTree(rows)
			buf, _ = httpapi.AppendRun(buf[:0], &run)
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("tree+encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		for b.Loop() {
			run.Modules = httpapi.ScenarioTree(rows)
			buf.Reset()
			_ = json.NewEncoder(&buf).Encode(run)
		}
		b.SetBytes(int64(buf.Len()))
	})
}
