// Package reports summarises a run: the report (counts by status, durations, failures with their
// step and error, flaky retries, the slowest scenarios) and its self-contained HTML page, which
// inlines its screenshots, style and script so that it works offline once downloaded.
package reports

import (
	"cmp"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/results/resultsapi"
)

// Run is what a report is made of.
type Run struct {
	ID         uuid.UUID
	Project    string
	Label      string
	Status     string
	Source     string
	CreatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
	Error      string
	Scenarios  []Scenario
	// Summary, when set, holds what the database computed over every scenario of the run, and
	// Scenarios only those the report lists (failed, flaky, slowest: LoadSummary); when nil,
	// Build computes it from Scenarios, which are then all of the run's.
	Summary *Summary
}

// Summary is what a report computes over all of a run's scenarios.
type Summary struct {
	Counts     results.Counts
	DurationMs int64       // the sum of the scenarios' durations
	Slowest    []uuid.UUID // the SlowestCount slowest scenarios with a duration, slowest first
}

// Scenario is one scenario of a run with its steps.
type Scenario struct {
	ID          uuid.UUID
	Module      string
	FeaturePath string
	FeatureName string
	Name        string
	Line        int
	Tags        []string
	Status      string
	Attempts    int
	DurationMs  *int64
	Error       *results.StepError
	Steps       []results.Step
}

// SlowestCount is how many scenarios the report lists as the slowest.
const SlowestCount = 10

// Counts counts scenarios by status; flaky counts those that passed after a retry.
func Counts(scenarios []Scenario) results.Counts {
	var c results.Counts
	for _, sc := range scenarios {
		Add(&c, sc.Status, sc.Attempts)
	}
	return c
}

// Add counts one scenario of status and attempts into c.
func Add(c *results.Counts, status string, attempts int) {
	c.Total++
	switch status {
	case "passed":
		c.Passed++
		if attempts > 1 {
			c.Flaky++
		}
	case "failed", "ambiguous":
		c.Failed++
	case "pending":
		c.Pending++
	case "skipped":
		c.Skipped++
	case "undefined":
		c.Undefined++
	}
}

// Build returns the report of r; htmlURL is where its HTML page is served.
func Build(r Run, htmlURL string) serverapi.RunReport {
	sum := r.Summary
	if sum == nil {
		sum = summarise(r.Scenarios)
	}
	out := serverapi.RunReport{RunId: r.ID, Status: serverapi.RunStatus(r.Status), Counts: resultsapi.Counts(sum.Counts), HtmlUrl: htmlURL,
		StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, Error: nonEmpty(r.Error),
		Failures: []struct {
			Error                *serverapi.RunStepError `json:"error,omitempty"`
			FeaturePath          string                  `json:"featurePath"`
			Scenario             string                  `json:"scenario"`
			ScenarioId           uuid.UUID               `json:"scenarioId"`
			ScreenshotArtifactId *uuid.UUID              `json:"screenshotArtifactId,omitempty"`
			Step                 *string                 `json:"step,omitempty"`
		}{},
		Flaky: []struct {
			Attempts    int       `json:"attempts"`
			FeaturePath string    `json:"featurePath"`
			Scenario    string    `json:"scenario"`
			ScenarioId  uuid.UUID `json:"scenarioId"`
		}{},
		Slowest: []struct {
			DurationMs  int64     `json:"durationMs"`
			FeaturePath string    `json:"featurePath"`
			Scenario    string    `json:"scenario"`
			ScenarioId  uuid.UUID `json:"scenarioId"`
		}{},
	}
	if r.StartedAt != nil && r.FinishedAt != nil {
		out.DurationMs = ptr(r.FinishedAt.Sub(*r.StartedAt).Milliseconds())
	}
	for _, sc := range r.Scenarios {
		if f, ok := FailureOf(sc); ok {
			out.Failures = append(out.Failures, struct {
				Error                *serverapi.RunStepError `json:"error,omitempty"`
				FeaturePath          string                  `json:"featurePath"`
				Scenario             string                  `json:"scenario"`
				ScenarioId           uuid.UUID               `json:"scenarioId"`
				ScreenshotArtifactId *uuid.UUID              `json:"screenshotArtifactId,omitempty"`
				Step                 *string                 `json:"step,omitempty"`
			}{Error: resultsapi.StepError(f.Error), FeaturePath: sc.FeaturePath, Scenario: sc.Name, ScenarioId: sc.ID, ScreenshotArtifactId: f.Screenshot, Step: f.Step})
		}
		if sc.Status == "passed" && sc.Attempts > 1 { // flaky: passed after a failure
			out.Flaky = append(out.Flaky, struct {
				Attempts    int       `json:"attempts"`
				FeaturePath string    `json:"featurePath"`
				Scenario    string    `json:"scenario"`
				ScenarioId  uuid.UUID `json:"scenarioId"`
			}{Attempts: sc.Attempts, FeaturePath: sc.FeaturePath, Scenario: sc.Name, ScenarioId: sc.ID})
		}
	}
	byID := make(map[uuid.UUID]*Scenario, len(r.Scenarios))
	for i := range r.Scenarios {
		byID[r.Scenarios[i].ID] = &r.Scenarios[i]
	}
	for _, id := range sum.Slowest {
		sc, ok := byID[id]
		if !ok || sc.DurationMs == nil {
			continue
		}
		out.Slowest = append(out.Slowest, struct {
			DurationMs  int64     `json:"durationMs"`
			FeaturePath string    `json:"featurePath"`
			Scenario    string    `json:"scenario"`
			ScenarioId  uuid.UUID `json:"scenarioId"`
		}{DurationMs: *sc.DurationMs, FeaturePath: sc.FeaturePath, Scenario: sc.Name, ScenarioId: sc.ID})
	}
	if out.DurationMs == nil {
		out.DurationMs = ptr(sum.DurationMs)
	}
	return out
}

// summarise computes a report's Summary over all of a run's scenarios, as RunReportSummary
// (queries/runs.sql) does in the database.
func summarise(scenarios []Scenario) *Summary {
	s := &Summary{Counts: Counts(scenarios)}
	slow := slices.Clone(scenarios)
	slow = slices.DeleteFunc(slow, func(s Scenario) bool { return s.DurationMs == nil })
	slices.SortStableFunc(slow, func(a, b Scenario) int { return cmp.Compare(*b.DurationMs, *a.DurationMs) })
	for i, sc := range slow {
		if i < SlowestCount {
			s.Slowest = append(s.Slowest, sc.ID)
		}
		s.DurationMs += *sc.DurationMs
	}
	return s
}

// Failure is why a scenario failed: its failing step, the error, and the screenshot closest to
// the failure (the last one taken up to the failing step).
type Failure struct {
	StepIndex  int
	Step       *string
	Error      *results.StepError
	Screenshot *uuid.UUID
}

// FailureOf returns the failure of a failed scenario; ok is false for any other.
func FailureOf(sc Scenario) (Failure, bool) {
	switch sc.Status {
	case "failed", "ambiguous", "undefined":
	default:
		return Failure{}, false
	}
	f := Failure{StepIndex: -1, Error: sc.Error}
	for i, st := range sc.Steps {
		for _, a := range st.Attachments {
			if a.Kind == results.KindScreenshot || a.Kind == results.KindDiff {
				id := a.ArtifactID
				f.Screenshot = &id
			}
		}
		switch st.Status {
		case "failed", "ambiguous", "undefined":
			f.StepIndex = i
			f.Step = ptr(st.Keyword + st.Text)
			if st.Error != nil {
				f.Error = st.Error
			}
			if f.Error == nil {
				f.Error = &results.StepError{Message: "the step is " + st.Status}
			}
			return f, true
		}
	}
	if f.Error == nil {
		f.Error = &results.StepError{Message: "the scenario " + sc.Status}
	}
	return f, true
}

func ptr[T any](v T) *T { return &v }

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
