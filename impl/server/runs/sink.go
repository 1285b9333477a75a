package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/safecontent"
	"github.com/sdods/sdods/impl/server/scenariowrite"
	"github.com/sdods/sdods/impl/server/store"
)

// apiEvent is the stored and streamed form of an event (the API's RunEvent without the
// members the sink fills in).
type apiEvent struct {
	Type        string
	Status      *string
	ScenarioID  *uuid.UUID
	StepIndex   *int
	Message     *string
	Level       *string
	Counts      *results.Counts
	ArtifactID  *uuid.UUID
	Name        *string
	Heal        *results.Heal
	VisualCheck *results.VisualCheck
	Dataset     *string
	Row         *int
}

type scenarioState struct {
	id    uuid.UUID
	steps []results.Step
	// dataset and row name the dataset row that fed the scenario (docs/steps.md).
	dataset *string
	row     *int
}

// sink stores a run's events as they happen: they are buffered and written in batches, each
// announced with one NOTIFY (batch.go); scenario rows and artifacts are written along the way.
type sink struct {
	s         *Service
	run       db.Run
	seq       int64 // under b.mu
	scenarios map[string]*scenarioState
	// stepsMu guards the scenarios' steps: the sink changes them as events come (Emit, attachments,
	// visual checks), a batch copies those of the scenarios still running when it takes the buffer
	// (takeLocked). Taken after b.mu, never before: no change of the steps holds it while buffering.
	stepsMu sync.Mutex
	b       batcher
	// putSlots bounds the attachments' blobs stored at once (attach.go).
	putSlots chan struct{}
}

func (k *sink) ctx() (context.Context, context.CancelFunc) {
	// Events are recorded even while the run is being cancelled.
	return context.WithTimeout(context.Background(), 10*time.Second)
}

// appendEvent numbers an event and buffers it; an end event is written at once, with what was
// buffered before it.
func (k *sink) appendEvent(e apiEvent) {
	k.appendEvent0(e)
	switch e.Type {
	case "end":
		k.flush()
	case "scenario.finished":
		k.flushSoon()
	}
}

// appendEvent0 numbers an event and buffers it.
func (k *sink) appendEvent0(e apiEvent) { k.appendEventWith(e, nil) }

// appendEventWith numbers an event and buffers it, and calls with (when not nil) in the same
// step, so that what with adds goes with the event's batch.
func (k *sink) appendEventWith(e apiEvent, with func(b *eventBuffer, seq int64)) {
	now := time.Now().UTC()
	// What queue does, without a closure to allocate for each of a run's events.
	k.b.mu.Lock()
	defer k.b.mu.Unlock()
	b := &k.b.buf
	k.seq++
	ev := results.Event{Type: e.Type, RunID: k.run.ID, At: now, Sequence: k.seq, Status: e.Status,
		ScenarioID: e.ScenarioID, StepIndex: e.StepIndex, Message: e.Message, Counts: e.Counts, ArtifactID: e.ArtifactID, Name: e.Name,
		Heal: e.Heal, VisualCheck: e.VisualCheck, Dataset: e.Dataset, Row: e.Row, Level: e.Level}
	k.b.enc = encodeEvent(k.b.enc[:0], &ev)
	b.seqs, b.ats, b.types, b.datas = append(b.seqs, k.seq), append(b.ats, now), append(b.types, e.Type), append(b.datas, string(k.b.enc))
	if with != nil {
		with(b, k.seq)
	}
	if k.b.timer == nil {
		k.b.timer = time.AfterFunc(FlushEvery, k.flushSoon)
	}
}

// encodeEvent appends an event's stored form to dst (encoding/json's bytes, without its
// reflection: results.Event.AppendJSON); what AppendJSON refuses goes through encoding/json, which
// refuses it too (and the event is stored as before: empty).
func encodeEvent(dst []byte, ev *results.Event) []byte {
	if out, err := ev.AppendJSON(dst); err == nil {
		return out
	}
	data, _ := json.Marshal(ev)
	return append(dst, data...)
}

// Emit implements runner.Events.
func (k *sink) Emit(e runner.Event) {
	sc := k.scenarios[e.ScenarioID]
	var scID *uuid.UUID
	if sc != nil {
		scID = &sc.id
	}
	switch e.Type {
	case runner.EventRunStarted:
		// The scenario rows are written by the first batch, before its events (write), so the
		// runner starts the first scenario while they are inserted.
		planned := k.planScenarios(e.Run)
		k.queue(func(b *eventBuffer) { b.plan = planned })
		for _, p := range e.Run.Problems {
			msg := fmt.Sprintf("%v", p)
			k.appendEvent(apiEvent{Type: "log", Level: ptr("error"), Message: &msg})
		}
		k.appendEvent0(apiEvent{Type: "run.status", Status: ptr("running")})
		k.flushSoon()
	case runner.EventScenarioStarted:
		if sc != nil {
			k.stepsMu.Lock()
			sc.steps = sc.steps[:0] // a retry starts the steps afresh
			k.stepsMu.Unlock()
			k.queue(func(b *eventBuffer) {
				c := b.row(sc.id)
				c.started, c.startedAt = true, e.Time
			})
		}
		ev := apiEvent{Type: "scenario.started", ScenarioID: scID}
		if sc != nil {
			ev.Dataset, ev.Row = sc.dataset, sc.row
		}
		k.appendEvent(ev)
	case runner.EventStepStarted:
		if sc != nil && e.Step != nil && e.StepStart != nil {
			k.stepsMu.Lock()
			for len(sc.steps) <= *e.Step {
				sc.steps = append(sc.steps, results.NewStep(len(sc.steps)))
			}
			st := &sc.steps[*e.Step]
			st.Keyword, st.Text, st.Line, st.StartedAt = e.StepStart.Keyword, e.StepStart.Text, ptr(e.StepStart.Line), ptr(e.Time)
			k.stepsMu.Unlock()
			k.saveSteps(sc)
		}
		k.appendEvent(apiEvent{Type: "step.started", ScenarioID: scID, StepIndex: e.Step})
	case runner.EventLog:
		k.appendEvent(apiEvent{Type: "log", ScenarioID: scID, StepIndex: e.Step, Level: ptr(normLevel(e.Log.Level)), Message: &e.Log.Message})
	case runner.EventAttachment:
		k.attachLater(e, sc)
	case runner.EventHeal:
		h := results.Heal{OldSelector: e.Heal.Selector, NewSelector: e.Heal.Healed, Strategy: e.Heal.Strategy, Score: float32(e.Heal.Score), Ambiguous: e.Heal.Ambiguous}
		if ru := e.Heal.RunnerUp; ru != nil {
			h.RunnerUp = &results.HealCandidate{Selector: ru.Selector, Score: float32(ru.Score)}
		}
		if st := step(sc, e.Step); st != nil {
			k.stepsMu.Lock()
			st.Heals = append(st.Heals, h)
			k.stepsMu.Unlock()
		}
		k.appendEvent(apiEvent{Type: "heal", ScenarioID: scID, StepIndex: e.Step, Heal: &h})
	case runner.EventVisualCheck:
		ctx, cancel := k.ctx()
		defer cancel()
		k.visualCheck(ctx, e, sc)
	case runner.EventStepFinished:
		if st := step(sc, e.Step); st != nil && e.StepEnd != nil {
			k.stepsMu.Lock()
			st.Status = string(e.StepEnd.Status)
			st.DurationMs = ptr(e.StepEnd.Duration.Milliseconds())
			st.FinishedAt = ptr(e.Time)
			if e.StepEnd.Error != "" {
				st.Error = &results.StepError{Message: e.StepEnd.Error}
			}
			k.stepsMu.Unlock()
			k.saveSteps(sc)
		}
		var status *string
		if e.StepEnd != nil {
			status = ptr(string(e.StepEnd.Status))
		}
		k.appendEvent(apiEvent{Type: "step.finished", ScenarioID: scID, StepIndex: e.Step, Status: status})
	case runner.EventScenarioFinished:
		if sc != nil && e.ScenarioEnd != nil {
			// The steps are copied: the scenario's state goes on changing after the batch takes them.
			p := scenariowrite.Result{ID: sc.id, Status: string(e.ScenarioEnd.Status), FinishedAt: ptr(e.Time),
				DurationMs: ptr(e.ScenarioEnd.Duration.Milliseconds()), Steps: copySteps(sc.steps),
				Attempts: int32(max(e.ScenarioEnd.Attempt, 1))}
			if e.ScenarioEnd.Error != "" {
				p.Error = &results.StepError{Message: e.ScenarioEnd.Error}
			}
			k.queue(func(b *eventBuffer) {
				c := b.row(sc.id)
				c.finish, c.steps, c.live = &p, nil, nil
			})
			k.appendEvent(apiEvent{Type: "scenario.finished", ScenarioID: scID, Status: ptr(string(e.ScenarioEnd.Status)), Message: nonEmpty(e.ScenarioEnd.Error),
				Dataset: sc.dataset, Row: sc.row})
		}
	case runner.EventRunFinished:
		if e.RunEnd != nil {
			// Written with the run's final status, in its final transaction (worker.go).
			k.appendEvent0(apiEvent{Type: "run.status", Status: ptr(string(e.RunEnd.Status)), Counts: ptr(apiCounts(e.RunEnd.Counts)), Message: nonEmpty(e.RunEnd.Error)})
		}
	}
}

// saveSteps keeps the steps of a scenario in progress, so that a run whose worker dies shows
// what ran (reconcile); written with the next batch. They are copied when that batch takes the
// buffer (takeLocked), not at every step's start and end: a scenario that ends before its batch
// (at concurrency 1, almost every one) is never copied but for its result.
func (k *sink) saveSteps(sc *scenarioState) {
	// What queue does, without a closure to allocate for each of a run's step starts and ends.
	k.b.mu.Lock()
	k.b.buf.row(sc.id).live = sc
	if k.b.timer == nil {
		k.b.timer = time.AfterFunc(FlushEvery, k.flushSoon)
	}
	k.b.mu.Unlock()
}

// planScenarios gives the run's scenarios their ids and returns their rows, which the first batch
// inserts in one statement (scenariowrite.Plan).
func (k *sink) planScenarios(run *runner.RunStarted) []scenariowrite.Planned {
	planned := make([]scenariowrite.Planned, len(run.Scenarios))
	for i, ref := range run.Scenarios {
		st := &scenarioState{id: uuid.New()}
		if ref.Dataset != "" && ref.Row > 0 {
			st.dataset, st.row = &ref.Dataset, ptr(ref.Row)
		}
		k.scenarios[ref.ID] = st
		planned[i] = scenariowrite.Planned{ID: st.id, Key: ref.ID, Module: ref.Module, FeaturePath: ref.FeaturePath, FeatureName: ref.FeatureName,
			Name: ref.Name, Line: ref.Line, Tags: ref.Tags, ExampleRow: ref.Row, Dataset: ref.Dataset}
	}
	return planned
}

func step(sc *scenarioState, i *int) *results.Step {
	if sc == nil || i == nil || *i < 0 || *i >= len(sc.steps) {
		return nil
	}
	return &sc.steps[*i]
}

// attachment stores a step's file in the blob store and records it as an artifact of the run at
// once (a visual check's images, which its visual_checks row refers to; other attachments go with
// their event's batch, attachLater); it returns the artifact's id, or nil when it could not be stored.
func (k *sink) attachment(ctx context.Context, e runner.Event, sc *scenarioState) *uuid.UUID {
	a := e.Attachment
	info, err := k.s.blobs.Put(ctx, bytes.NewReader(a.Data), 0)
	if err != nil {
		k.s.log.Error("runs: store attachment", "error", err)
		return nil
	}
	// The type a test gave is untrusted (a response's Content-Type): stored from the allow-list.
	kind := safecontent.Kind(a.MediaType, a.Name)
	mediaType := safecontent.MediaType(a.MediaType)
	var key *string
	var idx *int32
	if e.ScenarioID != "" {
		key = &e.ScenarioID
	}
	if e.Step != nil {
		idx = ptr(int32(*e.Step))
	}
	var art db.Artifact
	err = k.s.st.WithTx(ctx, func(q *db.Queries) error {
		if err := store.KeepBlob(ctx, q, k.s.blobs, info.Key, a.Data); err != nil {
			return err
		}
		art, err = q.CreateArtifact(ctx, db.CreateArtifactParams{RunID: uuid.NullUUID{UUID: k.run.ID, Valid: true}, ProjectID: k.run.ProjectID,
			ScenarioKey: key, StepIndex: idx, Name: a.Name, Kind: kind, MediaType: mediaType, SizeBytes: int64(len(a.Data)),
			Sha256: info.SHA256, BlobKey: info.Key})
		return err
	})
	if err != nil {
		k.s.log.Error("runs: record artifact", "error", err)
		return nil
	}
	att := results.Attachment{ArtifactID: art.ID, Kind: kind, MediaType: mediaType, Name: a.Name, SizeBytes: art.SizeBytes}
	if st := step(sc, e.Step); st != nil {
		k.stepsMu.Lock()
		st.Attachments = append(st.Attachments, att)
		k.stepsMu.Unlock()
	}
	var scID *uuid.UUID
	if sc != nil {
		scID = &sc.id
	}
	k.appendEvent(apiEvent{Type: "attachment", ScenarioID: scID, StepIndex: e.Step, ArtifactID: &art.ID, Name: &a.Name})
	return &art.ID
}

func normLevel(l string) string {
	switch l {
	case "debug", "info", "warn", "error":
		return l
	case "warning":
		return "warn"
	}
	return "info"
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func apiCounts(c runner.Counts) results.Counts {
	return results.Counts{Total: c.Total, Passed: c.Passed, Failed: c.Failed + c.Ambiguous, Pending: c.Pending, Skipped: c.Skipped, Undefined: c.Undefined, Flaky: c.Flaky}
}

// processFeature wraps a process in a one-scenario feature that runs it.
func processFeature(name, _ string) string {
	return "Feature: Process " + name + "\n\n  Scenario: " + name + "\n    When I run the process \"" + strings.ReplaceAll(name, `"`, `\"`) + "\"\n"
}

// environment loads the run's environment with its secrets opened; run variables override.
func (s *Service) environment(ctx context.Context, r db.Run) (runner.Environment, error) {
	env := runner.Environment{Variables: map[string]string{}, Secrets: map[string]string{}}
	if r.Environment != nil && *r.Environment != "" {
		e, err := s.st.GetEnvironment(ctx, db.GetEnvironmentParams{ProjectID: r.ProjectID, Name: *r.Environment})
		if err != nil {
			return env, fmt.Errorf("environment %s: %w", *r.Environment, err)
		}
		env.Name, env.BaseURL = e.Name, e.BaseUrl
		vars, err := projects.DecodeVariables(e.Variables)
		if err != nil {
			return env, err
		}
		for _, v := range vars {
			if !v.Secret {
				env.Variables[v.Name] = v.Value
				continue
			}
			pt, err := s.box.OpenString(v.Value, projects.VariableAD(e.ProjectID, e.Name, v.Name))
			if err != nil {
				return env, fmt.Errorf("environment %s variable %s: %w", e.Name, v.Name, err)
			}
			env.Secrets[v.Name] = pt
		}
	}
	var override map[string]string
	_ = json.Unmarshal(r.Variables, &override)
	for k, v := range override {
		env.Variables[k] = v
	}
	return env, nil
}

// datasets loads the project's datasets by name, and the run's aliases (alias → dataset name).
func (s *Service) datasets(ctx context.Context, r db.Run, out map[string]runner.Dataset) error {
	list, err := s.st.ListDatasets(ctx, db.ListDatasetsParams{ProjectID: r.ProjectID, RowLimit: 200})
	if err != nil {
		return fmt.Errorf("load datasets: %w", err)
	}
	byName := map[string]db.Dataset{}
	for _, d := range list {
		byName[d.Name] = d
	}
	var aliases map[string]string
	_ = json.Unmarshal(r.Datasets, &aliases)
	load := func(alias, name string) error {
		d, ok := byName[name]
		if !ok {
			return fmt.Errorf("dataset %s does not exist", name)
		}
		t, err := projects.LoadDataset(ctx, s.blobs, d)
		if err != nil {
			return err
		}
		cols := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = c.Name
		}
		out[alias] = runner.Dataset{Columns: cols, Rows: t.StringRows()}
		return nil
	}
	for name := range byName {
		if err := load(name, name); err != nil {
			return err
		}
	}
	for alias, name := range aliases {
		if err := load(alias, name); err != nil {
			return err
		}
	}
	return nil
}

// copySteps copies a scenario's steps (nil stays nil, as it is stored).
func copySteps(in []results.Step) []results.Step {
	if in == nil {
		return nil
	}
	return append([]results.Step{}, in...)
}
