package runs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
)

// Scenario is a scenario of a run as stored: its place in the feature tree, its result, and its
// steps and error as the JSON documents the worker and ingest wrote.
type Scenario struct {
	ID          uuid.UUID
	RunID       uuid.UUID
	ScenarioKey string
	Position    int32
	Module      string
	FeaturePath string
	FeatureName string
	Name        string
	Line        int32
	Tags        []string
	ExampleRow  *int32
	Status      string
	Error       json.RawMessage
	Attempts    int32
	StartedAt   *time.Time
	FinishedAt  *time.Time
	DurationMs  *int64
	Steps       json.RawMessage
	Dataset     *string
}

func scenarioOf(sc db.RunScenario) Scenario {
	return Scenario{ID: sc.ID, RunID: sc.RunID, ScenarioKey: sc.ScenarioKey, Position: sc.Position, Module: sc.Module, FeaturePath: sc.FeaturePath,
		FeatureName: sc.FeatureName, Name: sc.Name, Line: sc.Line, Tags: sc.Tags, ExampleRow: sc.ExampleRow, Status: sc.Status, Error: sc.Error,
		Attempts: sc.Attempts, StartedAt: sc.StartedAt, FinishedAt: sc.FinishedAt, DurationMs: sc.DurationMs, Steps: sc.Steps, Dataset: sc.Dataset}
}

// Scenarios lists a run's scenarios in execution order.
func (s *Service) Scenarios(ctx context.Context, runID uuid.UUID) ([]Scenario, error) {
	rows, err := s.st.ListRunScenarios(ctx, runID)
	if err != nil {
		return nil, err
	}
	out := make([]Scenario, 0, len(rows))
	for _, sc := range rows {
		out = append(out, scenarioOf(sc))
	}
	return out, nil
}

// Scenario returns one scenario of a run; another run's is an error store.IsNotFound accepts.
func (s *Service) Scenario(ctx context.Context, runID, id uuid.UUID) (Scenario, error) {
	sc, err := s.st.GetRunScenario(ctx, db.GetRunScenarioParams{RunID: runID, ID: id})
	if err != nil {
		return Scenario{}, err
	}
	return scenarioOf(sc), nil
}

// LogEvent is a log event of a run: when, and the event document as streamed.
type LogEvent struct {
	At   time.Time
	Data json.RawMessage
}

// LogEvents lists the first limit log events of a run, in order.
func (s *Service) LogEvents(ctx context.Context, runID uuid.UUID, limit int32) ([]LogEvent, error) {
	rows, err := s.st.ListRunLogEvents(ctx, db.ListRunLogEventsParams{RunID: runID, RowLimit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]LogEvent, 0, len(rows))
	for _, l := range rows {
		out = append(out, LogEvent{At: l.At, Data: l.Data})
	}
	return out, nil
}
