package runner

import (
	"time"

	"github.com/sdods/sdods/impl/server/steplib"
)

// Result is a finished run: its scenarios grouped by module (feature folder) → feature → scenario.
type Result struct {
	RunID    string         `json:"runId"`
	Status   RunStatus      `json:"status"`
	Error    string         `json:"error,omitempty"`
	Started  time.Time      `json:"started"`
	Duration time.Duration  `json:"duration"`
	Counts   Counts         `json:"counts"`
	Modules  []ModuleResult `json:"modules"`
	Problems []Problem      `json:"problems,omitempty"`
}

// Counts counts scenarios (in a run, module or feature) or steps (in a scenario) by status.
type Counts struct {
	Total     int `json:"total"`
	Passed    int `json:"passed"`
	Failed    int `json:"failed"`
	Pending   int `json:"pending"`
	Skipped   int `json:"skipped"`
	Undefined int `json:"undefined"`
	Ambiguous int `json:"ambiguous"`
	// Flaky counts the scenarios that passed on a retry (they count as passed too).
	Flaky int `json:"flaky"`
}

// addScenario counts a scenario's result, a pass after a retry as flaky too.
func (c *Counts) addScenario(sr ScenarioResult) {
	c.add(sr.Status)
	if sr.Status == steplib.StatusPassed && sr.Attempts > 1 {
		c.Flaky++
	}
}

func (c *Counts) add(s Status) {
	c.Total++
	switch s {
	case steplib.StatusPassed:
		c.Passed++
	case steplib.StatusFailed:
		c.Failed++
	case steplib.StatusPending:
		c.Pending++
	case steplib.StatusSkipped:
		c.Skipped++
	case steplib.StatusUndefined:
		c.Undefined++
	case steplib.StatusAmbiguous:
		c.Ambiguous++
	}
}

// status summarises counts of scenarios: failed if any failed, else passed if any passed, else
// pending if any is pending, else skipped.
func (c Counts) status() Status {
	switch {
	case c.Failed+c.Undefined+c.Ambiguous > 0:
		return steplib.StatusFailed
	case c.Passed > 0:
		return steplib.StatusPassed
	case c.Pending > 0:
		return steplib.StatusPending
	}
	return steplib.StatusSkipped
}

// ModuleResult is one feature folder ("." for features at the root).
type ModuleResult struct {
	Name     string          `json:"name"`
	Status   Status          `json:"status"`
	Duration time.Duration   `json:"duration"`
	Counts   Counts          `json:"counts"`
	Features []FeatureResult `json:"features"`
}

// FeatureResult is one feature file.
type FeatureResult struct {
	Path      string           `json:"path"`
	Name      string           `json:"name"`
	Status    Status           `json:"status"`
	Duration  time.Duration    `json:"duration"`
	Counts    Counts           `json:"counts"`
	Scenarios []ScenarioResult `json:"scenarios"`
}

// ScenarioRef identifies a scenario (one example row of an outline counts as one scenario).
type ScenarioRef struct {
	// ID is stable across runs of the same sources: a hash of path, line and occurrence.
	ID          string   `json:"id"`
	Module      string   `json:"module"`
	FeaturePath string   `json:"featurePath"`
	FeatureName string   `json:"featureName"`
	Name        string   `json:"name"`
	Line        int      `json:"line"`
	Tags        []string `json:"tags,omitempty"`
	// Example is the example row's values by column, for outline scenarios.
	Example map[string]string `json:"example,omitempty"`
	// Dataset and Row name the dataset row (from 1) that fed the example, if one did.
	Dataset string `json:"dataset,omitempty"`
	Row     int    `json:"row,omitempty"`
}

// ScenarioResult is an executed (or skipped) scenario.
type ScenarioResult struct {
	ScenarioRef
	// Attempts is 1 plus the retries made (Run.Retries); the result is the last attempt's.
	Attempts int           `json:"attempts"`
	Status   Status        `json:"status"`
	Error    string        `json:"error,omitempty"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
	Counts   Counts        `json:"stepCounts"`
	Steps    []StepResult  `json:"steps"`
}

// StepResult is an executed (or skipped) step.
type StepResult struct {
	Index        int              `json:"index"`
	Keyword      string           `json:"keyword"`
	Text         string           `json:"text"`
	Line         int              `json:"line"`
	DefinitionID string           `json:"definitionId,omitempty"`
	Status       Status           `json:"status"`
	Error        string           `json:"error,omitempty"`
	Duration     time.Duration    `json:"duration"`
	Logs         []LogLine        `json:"logs,omitempty"`
	Attachments  []AttachmentRef  `json:"attachments,omitempty"`
	Heals        []steplib.Heal   `json:"heals,omitempty"`
	VisualChecks []VisualCheckRef `json:"visualChecks,omitempty"`
}

// AttachmentRef refers to the attachment event (by Seq) that carried the data.
type AttachmentRef struct {
	Seq       int64  `json:"seq"`
	Name      string `json:"name"`
	MediaType string `json:"mediaType"`
	Size      int    `json:"size"`
}

// VisualCheckRef refers to the visual_check event (by Seq) that carried the image.
type VisualCheckRef struct {
	Seq      int64  `json:"seq"`
	Name     string `json:"name"`
	Browser  string `json:"browser"`
	Viewport string `json:"viewport"`
	Selector string `json:"selector,omitempty"`
	// Status is the comparison's outcome (passed, failed, pending) when one was made.
	Status string `json:"status,omitempty"`
}

// Problem is a feature or outline that could not be turned into scenarios (a syntax error, a
// missing dataset); a run with problems ends errored.
type Problem struct {
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}
