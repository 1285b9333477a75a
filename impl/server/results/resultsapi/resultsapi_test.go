package resultsapi

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/results"
)

// TestStoredShapeMatchesAPI proves that the domain types store exactly the JSON the API types
// stored before them (run_scenarios.steps and .error, runs.counts, run_events.data), so rows written
// before package results existed read back unchanged and no migration is needed. Every field is set,
// so a renamed tag, a dropped field or a reordered field fails it.
func TestStoredShapeMatchesAPI(t *testing.T) {
	at := time.Date(2026, 11, 26, 15, 4, 5, 123456789, time.UTC)
	end := at.Add(1500 * time.Millisecond)
	ids := []uuid.UUID{uuid.MustParse("11111111-1111-4111-8111-111111111111"), uuid.MustParse("22222222-2222-4222-8222-222222222222"),
		uuid.MustParse("33333333-3333-4333-8333-333333333333"), uuid.MustParse("44444444-4444-4444-8444-444444444444")}
	s := func(v string) *string { return &v }
	i := func(v int) *int { return &v }
	f := func(v float32) *float32 { return &v }
	b := func(v bool) *bool { return &v }
	i64 := func(v int64) *int64 { return &v }
	table := &[][]string{{"a", "b"}, {"1", "2"}}

	dom := []results.Step{{
		Attachments: []results.Attachment{{ArtifactID: ids[0], Kind: results.KindScreenshot, MediaType: "image/png", Name: "shot", SizeBytes: 42}},
		DataTable:   table, DocString: s("doc"), DurationMs: i64(1500),
		Error:      &results.StepError{Actual: s("2"), Expected: s("1"), Message: "boom", Stack: s("at x"), Type: s("AssertionError")},
		FinishedAt: &end,
		Heals: []results.Heal{{NewSelector: "#new", OldSelector: "#old", Score: 0.75, Strategy: "text", Ambiguous: true,
			RunnerUp: &results.HealCandidate{Selector: "#other", Score: 0.7}}},
		Index: 3, Keyword: "When ", Line: i(12), StartedAt: &at, Status: results.StatusFailed, Text: "it runs",
		VisualCheck: &results.VisualCheck{ActualArtifactID: &ids[1], DiffArtifactID: &ids[2], ExpectedArtifactID: &ids[3],
			MismatchPixels: i(7), MismatchRatio: f(0.125), Name: "home", SizeMismatch: b(true), Status: "failed", Threshold: f(0.1)},
	}, results.NewStep(4)}
	api := []serverapi.RunStep{{
		Attachments: []serverapi.Attachment{{ArtifactId: ids[0], Kind: serverapi.AttachmentKindScreenshot, MediaType: "image/png", Name: "shot", SizeBytes: 42}},
		DataTable:   table, DocString: s("doc"), DurationMs: i64(1500),
		Error:      &serverapi.RunStepError{Actual: s("2"), Expected: s("1"), Message: "boom", Stack: s("at x"), Type: s("AssertionError")},
		FinishedAt: &end,
		Heals: []serverapi.Heal{{NewSelector: "#new", OldSelector: "#old", Score: 0.75, Strategy: "text", Ambiguous: b(true),
			RunnerUp: &serverapi.HealCandidate{Selector: "#other", Score: 0.7}}},
		Index: 3, Keyword: "When ", Line: i(12), StartedAt: &at, Status: "failed", Text: "it runs",
		VisualCheck: &serverapi.VisualCheck{ActualArtifactId: &ids[1], DiffArtifactId: &ids[2], ExpectedArtifactId: &ids[3],
			MismatchPixels: i(7), MismatchRatio: f(0.125), Name: "home", SizeMismatch: b(true), Status: "failed", Threshold: f(0.1)},
	}, {Index: 4, Attachments: []serverapi.Attachment{}, Heals: []serverapi.Heal{}, Status: "unknown"}}
	same(t, "steps", dom, api)
	same(t, "converted steps", Steps(dom), api)

	domCounts := results.Counts{Failed: 1, Flaky: 2, Passed: 3, Pending: 4, Quarantined: i(5), Skipped: 6, Total: 21, Undefined: 7}
	apiCounts := serverapi.Counts{Failed: 1, Flaky: 2, Passed: 3, Pending: 4, Quarantined: i(5), Skipped: 6, Total: 21, Undefined: 7}
	same(t, "counts", domCounts, apiCounts)
	same(t, "converted counts", Counts(domCounts), apiCounts)
	same(t, "counts without quarantined", results.Counts{Total: 1, Passed: 1}, serverapi.Counts{Total: 1, Passed: 1})
	same(t, "minimal error", results.StepError{Message: "m"}, serverapi.RunStepError{Message: "m"})
	same(t, "heal", HealPtr(&dom[0].Heals[0]), &api[0].Heals[0])
	same(t, "nil heal", HealPtr(nil), (*serverapi.Heal)(nil))
	same(t, "minimal visual check", results.VisualCheck{Name: "v", Status: results.VisualPending},
		serverapi.VisualCheck{Name: "v", Status: serverapi.VisualCheckStatusPending})

	lvl := serverapi.RunEventLevel("warn")
	same(t, "event", results.Event{ArtifactID: &ids[0], At: at, Counts: &domCounts, Dataset: s("users"), Heal: &dom[0].Heals[0], Level: s("warn"),
		Message: s("msg"), Name: s("shot"), Row: i(2), RunID: ids[1], ScenarioID: &ids[2], Sequence: 9, Status: s("passed"), StepIndex: i(1),
		Type: "step.finished", VisualCheck: dom[0].VisualCheck},
		serverapi.RunEvent{ArtifactId: &ids[0], At: at, Counts: &apiCounts, Dataset: s("users"), Heal: &api[0].Heals[0], Level: &lvl,
			Message: s("msg"), Name: s("shot"), Row: i(2), RunId: ids[1], ScenarioId: &ids[2], Sequence: 9, Status: s("passed"), StepIndex: i(1),
			Type: "step.finished", VisualCheck: api[0].VisualCheck})
	same(t, "minimal event", results.Event{At: at, RunID: ids[1], Sequence: 1, Type: "end"}, serverapi.RunEvent{At: at, RunId: ids[1], Sequence: 1, Type: "end"})

	// Rows stored by the API types read back into the domain types unchanged.
	raw, _ := json.Marshal(api)
	var back []results.Step
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	same(t, "read back", back, api)
}

func same(t *testing.T, what string, dom, api any) {
	t.Helper()
	d, err := json.Marshal(dom)
	if err != nil {
		t.Fatal(err)
	}
	a, err := json.Marshal(api)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d, a) {
		t.Errorf("%s: stored shape differs\ndomain: %s\napi:    %s", what, d, a)
	}
}
