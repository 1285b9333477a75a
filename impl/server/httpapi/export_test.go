package httpapi

import (
	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
)

// The append encoders, for TestEncodersMatchEncodingJSON.
var (
	AppendRunList     = appendRunList
	AppendRun         = appendRun
	AppendRunReport   = appendRunReport
	ScenarioTree      = scenarioTree
	AppendFeatures    = appendFeatureList
	AppendUpcoming    = appendUpcomingRuns
	RunCounts         = runCounts
	AppendRunPage     = appendRunPage
	RunSummary        = runSummary
	AppendSchedules   = appendSchedulePage
	AppendQuarantines = appendQuarantineList
	ToSchedule        = toSchedule
)

// ReportLists returns a report whose failures, flaky and slowest lists are empty, or nil.
func ReportLists(empty bool) serverapi.RunReport {
	var r serverapi.RunReport
	if empty {
		r.Failures, r.Flaky, r.Slowest = r.Failures[:0:0], r.Flaky[:0:0], r.Slowest[:0:0]
	}
	return r
}

// ReportFailure returns a report failure without error.
func ReportFailure(path, name string, id uuid.UUID, shot *uuid.UUID, step *string) (f struct {
	Error                *serverapi.RunStepError `json:"error,omitempty"`
	FeaturePath          string                  `json:"featurePath"`
	Scenario             string                  `json:"scenario"`
	ScenarioId           uuid.UUID               `json:"scenarioId"`
	ScreenshotArtifactId *uuid.UUID              `json:"screenshotArtifactId,omitempty"`
	Step                 *string                 `json:"step,omitempty"`
}) {
	f.FeaturePath, f.Scenario, f.ScenarioId, f.ScreenshotArtifactId, f.Step = path, name, id, shot, step
	return f
}

// ReportFlaky returns a report's flaky entry.
func ReportFlaky(attempts int, path, name string, id uuid.UUID) (f struct {
	Attempts    int       `json:"attempts"`
	FeaturePath string    `json:"featurePath"`
	Scenario    string    `json:"scenario"`
	ScenarioId  uuid.UUID `json:"scenarioId"`
}) {
	f.Attempts, f.FeaturePath, f.Scenario, f.ScenarioId = attempts, path, name, id
	return f
}

// ReportSlow returns a report's slowest entry.
func ReportSlow(ms int64, path, name string, id uuid.UUID) (f struct {
	DurationMs  int64     `json:"durationMs"`
	FeaturePath string    `json:"featurePath"`
	Scenario    string    `json:"scenario"`
	ScenarioId  uuid.UUID `json:"scenarioId"`
}) {
	f.DurationMs, f.FeaturePath, f.Scenario, f.ScenarioId = ms, path, name, id
	return f
}
