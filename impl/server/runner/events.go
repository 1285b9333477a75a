package runner

import (
	"time"

	"github.com/sdods/sdods/impl/server/steplib"
)

// EventType names an event.
type EventType string

// The event types, in the order a run produces them.
const (
	EventRunStarted       EventType = "run.started"
	EventScenarioStarted  EventType = "scenario.started"
	EventStepStarted      EventType = "step.started"
	EventLog              EventType = "log"
	EventAttachment       EventType = "attachment"
	EventHeal             EventType = "heal"
	EventVisualCheck      EventType = "visual_check"
	EventStepFinished     EventType = "step.finished"
	EventScenarioFinished EventType = "scenario.finished"
	EventRunFinished      EventType = "run.finished"
)

// Event is one thing that happened in a run. Exactly the payload field matching Type is set;
// ScenarioID and Step locate events inside a scenario (Step is the step's index, from 0).
type Event struct {
	// Seq numbers the events of a run from 1, without gaps: usable as the SSE event id.
	Seq        int64     `json:"seq"`
	Time       time.Time `json:"time"`
	Type       EventType `json:"type"`
	RunID      string    `json:"runId"`
	ScenarioID string    `json:"scenarioId,omitempty"`
	Step       *int      `json:"step,omitempty"`

	Run         *RunStarted          `json:"run,omitempty"`
	RunEnd      *RunResultSummary    `json:"runEnd,omitempty"`
	Scenario    *ScenarioRef         `json:"scenario,omitempty"`
	ScenarioEnd *ScenarioSummary     `json:"scenarioEnd,omitempty"`
	StepStart   *StepRef             `json:"stepStart,omitempty"`
	StepEnd     *StepResult          `json:"stepEnd,omitempty"`
	Log         *LogLine             `json:"log,omitempty"`
	Attachment  *AttachmentEvent     `json:"attachment,omitempty"`
	Heal        *steplib.Heal        `json:"heal,omitempty"`
	VisualCheck *steplib.VisualCheck `json:"visualCheck,omitempty"`
}

// RunStarted is the plan of a run: every selected scenario, in execution order.
type RunStarted struct {
	Scenarios []ScenarioRef `json:"scenarios"`
	// Problems are features or outlines that could not be turned into scenarios.
	Problems []Problem `json:"problems,omitempty"`
}

// RunResultSummary ends a run.
type RunResultSummary struct {
	Status   RunStatus     `json:"status"`
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration"`
	Counts   Counts        `json:"counts"`
}

// ScenarioSummary ends a scenario.
type ScenarioSummary struct {
	Status   Status        `json:"status"`
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration"`
	Attempt  int           `json:"attempt"` // 1, then 2, ... for the retries of a failed scenario
}

// StepRef identifies a step when it starts.
type StepRef struct {
	Keyword string `json:"keyword"`
	Text    string `json:"text"`
	Line    int    `json:"line"`
}

// LogLine is a line of the run's log.
type LogLine struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

// AttachmentEvent carries a step's file. Data is not serialised: the sink stores it (a blob,
// an artifact) and refers to it.
type AttachmentEvent struct {
	Name      string `json:"name"`
	MediaType string `json:"mediaType"`
	Size      int    `json:"size"`
	Data      []byte `json:"-"`
}

// Events receives a run's events. The runner calls Emit from one goroutine at a time, in Seq
// order; Emit should not block for long (buffer, or store and notify).
type Events interface {
	Emit(Event)
}

// EventsFunc adapts a function to Events.
type EventsFunc func(Event)

// Emit calls f.
func (f EventsFunc) Emit(e Event) { f(e) }
