package reports_test

import (
	"bytes"
	"html/template"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/reports"
	"github.com/sdods/sdods/impl/server/results"
)

func ms(v int64) *int64 { return &v }

func sampleRun() reports.Run {
	shot, hidden := uuid.New(), uuid.New()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	end := start.Add(90 * time.Second)
	return reports.Run{ID: uuid.New(), Project: "shop", Status: "failed", StartedAt: &start, FinishedAt: &end, Scenarios: []reports.Scenario{
		{ID: uuid.New(), FeaturePath: "a.feature", Name: "passes", Status: "passed", Attempts: 1, DurationMs: ms(20),
			Steps: []results.Step{{Keyword: "Given ", Text: "ok", Status: "passed", Attachments: []results.Attachment{{ArtifactID: hidden, Kind: "screenshot", MediaType: "image/png"}}}}},
		{ID: uuid.New(), FeaturePath: "a.feature", Name: "flaky <b>", Status: "passed", Attempts: 3, DurationMs: ms(5)},
		{ID: uuid.New(), FeaturePath: "b.feature", Name: "fails", Status: "failed", Attempts: 1, DurationMs: ms(70000),
			Steps: []results.Step{
				{Keyword: "When ", Text: "I open", Status: "passed", Attachments: []results.Attachment{{ArtifactID: shot, Kind: "screenshot", MediaType: "image/png"}}},
				{Keyword: "Then ", Text: "I see it", Status: "failed", Error: &results.StepError{Message: "not visible"}},
				{Keyword: "And ", Text: "more", Status: "skipped"},
			}},
		{ID: uuid.New(), FeaturePath: "b.feature", Name: "no steps", Status: "undefined", Attempts: 1},
	}}
}

func TestBuild(t *testing.T) {
	r := sampleRun()
	rep := reports.Build(r, "/reports/x/index.html")
	c := rep.Counts
	if c.Total != 4 || c.Passed != 2 || c.Failed != 1 || c.Undefined != 1 || c.Flaky != 1 || *rep.DurationMs != 90000 {
		t.Fatalf("counts %+v, duration %v", c, rep.DurationMs)
	}
	if len(rep.Failures) != 2 || *rep.Failures[0].Step != "Then I see it" || rep.Failures[0].Error.Message != "not visible" ||
		*rep.Failures[0].ScreenshotArtifactId != r.Scenarios[2].Steps[0].Attachments[0].ArtifactID || rep.Failures[1].Step != nil {
		t.Fatalf("failures %+v", rep.Failures)
	}
	if len(rep.Flaky) != 1 || rep.Flaky[0].Attempts != 3 || len(rep.Slowest) != 3 || rep.Slowest[0].Scenario != "fails" {
		t.Fatalf("flaky %+v slowest %+v", rep.Flaky, rep.Slowest)
	}
}

func TestWriteHTML(t *testing.T) {
	r := sampleRun()
	shot := r.Scenarios[2].Steps[0].Attachments[0].ArtifactID
	var buf bytes.Buffer
	err := reports.WriteHTML(&buf, reports.Page{Run: r, Report: reports.Build(r, ""), Images: map[uuid.UUID]template.URL{shot: "data:image/png;base64,AAAA"}})
	if err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{`class="shot failure-shot" alt="screenshot at the failure" src="data:image/png;base64,AAAA"`, "Then I see it", "not visible",
		"flaky &lt;b&gt;", `value="failed"`, "1m 10s"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Failures come before the list of scenarios, and failed scenarios first in it.
	if strings.Index(html, `id="failures"`) > strings.Index(html, `id="scenarios"`) ||
		strings.Index(html, `id="scenario-`+r.Scenarios[2].ID.String()) > strings.Index(html, `id="scenario-`+r.Scenarios[0].ID.String()) {
		t.Error("failures are not first")
	}
	if strings.Contains(html, "http://") || strings.Contains(html, "https://") || strings.Contains(html, "<link") {
		t.Error("the page refers to something outside itself")
	}
}
