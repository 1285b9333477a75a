// Package results holds the stored shape of run results: the steps of a scenario
// (run_scenarios.steps), a scenario's error (run_scenarios.error), a run's counts (runs.counts)
// and the payloads of run events (run_events.data). These are domain types, not API types: the
// generated API types may change without a data migration, and package resultsapi
// converts between the two at the API edge. The JSON tags keep the bytes stored before this
// package existed (TestStoredShapeMatchesAPI in resultsapi proves it); changing a tag or a field
// order changes stored data and needs a migration.
package results

import (
	"time"

	"github.com/google/uuid"
)

// Status of a scenario or step, as Cucumber names them; "unknown" while not finished.
const (
	StatusPassed    = "passed"
	StatusFailed    = "failed"
	StatusUnknown   = "unknown"
	StatusSkipped   = "skipped"
	StatusPending   = "pending"
	StatusUndefined = "undefined"
)

// Attachment kinds.
const (
	KindScreenshot = "screenshot"
	KindDiff       = "diff"
	KindOther      = "other"
)

// VisualPending is the status of a visual check that has no baseline yet.
const VisualPending = "pending"

// Step is one executed step of a scenario. Fields are in the order of the stored JSON.
type Step struct {
	Attachments []Attachment `json:"attachments"`
	DataTable   *[][]string  `json:"dataTable,omitempty"`
	DocString   *string      `json:"docString,omitempty"`
	DurationMs  *int64       `json:"durationMs,omitempty"`
	Error       *StepError   `json:"error,omitempty"`
	FinishedAt  *time.Time   `json:"finishedAt,omitempty"`
	Heals       []Heal       `json:"heals"`
	Index       int          `json:"index"`
	Keyword     string       `json:"keyword"`
	Line        *int         `json:"line,omitempty"`
	StartedAt   *time.Time   `json:"startedAt,omitempty"`
	Status      string       `json:"status"`
	Text        string       `json:"text"`
	VisualCheck *VisualCheck `json:"visualCheck,omitempty"`
}

// NewStep is a step with empty (not null) attachments and heals, as stored.
func NewStep(index int) Step {
	return Step{Index: index, Attachments: []Attachment{}, Heals: []Heal{}, Status: StatusUnknown}
}

// Attachment is an artifact a step attached.
type Attachment struct {
	ArtifactID uuid.UUID `json:"artifactId"`
	Kind       string    `json:"kind"`
	MediaType  string    `json:"mediaType"`
	Name       string    `json:"name"`
	SizeBytes  int64     `json:"sizeBytes"`
}

// Heal is a selector the runner replaced while executing a step.
type Heal struct {
	// Ambiguous tells that RunnerUp came within the ambiguity margin (docs/steps.md).
	Ambiguous   bool   `json:"ambiguous,omitempty"`
	NewSelector string `json:"newSelector"`
	OldSelector string `json:"oldSelector"`
	// RunnerUp is the best other element the heal scored.
	RunnerUp *HealCandidate `json:"runnerUp,omitempty"`
	Score    float32        `json:"score"`
	Strategy string         `json:"strategy"`
}

// HealCandidate is an element a heal scored.
type HealCandidate struct {
	Score    float32 `json:"score"`
	Selector string  `json:"selector"`
}

// StepError is why a step or scenario failed.
type StepError struct {
	Actual   *string `json:"actual,omitempty"`
	Expected *string `json:"expected,omitempty"`
	Message  string  `json:"message"`
	Stack    *string `json:"stack,omitempty"`
	Type     *string `json:"type,omitempty"`
}

// Counts are a run's scenario outcomes.
type Counts struct {
	Failed  int `json:"failed"`
	Flaky   int `json:"flaky"`
	Passed  int `json:"passed"`
	Pending int `json:"pending"`
	// Quarantined counts failures of quarantined scenarios; the database adds it (docs/stats.md).
	Quarantined *int `json:"quarantined,omitempty"`
	Skipped     int  `json:"skipped"`
	Total       int  `json:"total"`
	Undefined   int  `json:"undefined"`
}

// VisualCheck is the outcome of a step's screenshot comparison.
type VisualCheck struct {
	ActualArtifactID   *uuid.UUID `json:"actualArtifactId,omitempty"`
	DiffArtifactID     *uuid.UUID `json:"diffArtifactId,omitempty"`
	ExpectedArtifactID *uuid.UUID `json:"expectedArtifactId,omitempty"`
	MismatchPixels     *int       `json:"mismatchPixels,omitempty"`
	MismatchRatio      *float32   `json:"mismatchRatio,omitempty"`
	Name               string     `json:"name"`
	SizeMismatch       *bool      `json:"sizeMismatch,omitempty"`
	Status             string     `json:"status"`
	Threshold          *float32   `json:"threshold,omitempty"`
}

// Event is one entry of a run's event log (run_events.data), streamed to clients as stored.
type Event struct {
	ArtifactID  *uuid.UUID   `json:"artifactId,omitempty"`
	At          time.Time    `json:"at"`
	Counts      *Counts      `json:"counts,omitempty"`
	Dataset     *string      `json:"dataset,omitempty"`
	Heal        *Heal        `json:"heal,omitempty"`
	Level       *string      `json:"level,omitempty"`
	Message     *string      `json:"message,omitempty"`
	Name        *string      `json:"name,omitempty"`
	Row         *int         `json:"row,omitempty"`
	RunID       uuid.UUID    `json:"runId"`
	ScenarioID  *uuid.UUID   `json:"scenarioId,omitempty"`
	Sequence    int64        `json:"sequence"`
	Status      *string      `json:"status,omitempty"`
	StepIndex   *int         `json:"stepIndex,omitempty"`
	Type        string       `json:"type"`
	VisualCheck *VisualCheck `json:"visualCheck,omitempty"`
}
