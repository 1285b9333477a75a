package runs

import (
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/scenariowrite"
	"github.com/sdods/sdods/impl/server/steplib"
)

// A batch that failed to commit goes back in front of what was buffered meanwhile (then): its events
// first, and per scenario the later changes over the earlier ones — a later start or steps replace the
// earlier, a result drops the steps in progress, and a scenario keeps its first position.
func TestBatchThen(t *testing.T) {
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	t0, t1 := time.Unix(100, 0), time.Unix(200, 0)
	fin := &scenariowrite.Result{Status: "passed"}
	steps := func(n int) []results.Step { return make([]results.Step, n) }

	var failed eventBuffer
	failed.seqs, failed.types = []int64{1, 2}, []string{"scenario.started", "step.started"}
	failed.ats, failed.datas = []time.Time{t0, t0}, []string{"{}", "{}"}
	ra := failed.row(a)
	ra.started, ra.startedAt, ra.steps = true, t0, steps(1)
	failed.row(b).steps = steps(2)

	var next eventBuffer
	next.seqs, next.types = []int64{3}, []string{"scenario.finished"}
	next.ats, next.datas = []time.Time{t1}, []string{"{}"}
	next.row(c).started = true
	next.row(a).finish = fin
	rb := next.row(b)
	rb.started, rb.startedAt, rb.steps = true, t1, steps(3)

	failed.then(next)
	if got := failed.seqs; len(got) != 3 || got[0] != 1 || got[2] != 3 || len(failed.types) != 3 || len(failed.ats) != 3 || len(failed.datas) != 3 {
		t.Fatalf("events %v", got)
	}
	if len(failed.order) != 3 || failed.order[0] != a || failed.order[1] != b || failed.order[2] != c {
		t.Fatalf("order %v, want a, b, c", failed.order)
	}
	if r := failed.rows[a]; r.finish != fin || r.steps != nil || !r.started || !r.startedAt.Equal(t0) {
		t.Errorf("a: %+v, want its result, no steps, its first start", r)
	}
	if r := failed.rows[b]; r.finish != nil || len(r.steps) != 3 || !r.started || !r.startedAt.Equal(t1) {
		t.Errorf("b: %+v, want the later start and steps", r)
	}
	if r := failed.rows[c]; !r.started || r.steps != nil {
		t.Errorf("c: %+v", r)
	}
	var empty eventBuffer
	if !empty.empty() || failed.empty() {
		t.Error("empty() is wrong")
	}
}

// The steps of a scenario in progress are copied when a batch takes the buffer, not at every step's
// start and end: the batch gets the steps as they were then, later changes do not reach it, and a
// scenario that ends before its batch goes with its result alone, its steps in progress not copied.
func TestStepsCopiedWhenBatchTakesThem(t *testing.T) {
	k := &sink{s: &Service{log: slog.New(slog.DiscardHandler)}, run: db.Run{ID: uuid.New()}, scenarios: map[string]*scenarioState{}}
	k.b.closing = true // no batch written in the background: the test takes them
	sc := &scenarioState{id: uuid.New()}
	k.scenarios["s1"] = sc
	take := func() eventBuffer {
		k.b.mu.Lock()
		defer k.b.mu.Unlock()
		return k.takeLocked()
	}
	zero, one, at := 0, 1, time.Unix(1_800_000_000, 0)
	k.Emit(runner.Event{Type: runner.EventScenarioStarted, ScenarioID: "s1", Time: at})
	k.Emit(runner.Event{Type: runner.EventStepStarted, ScenarioID: "s1", Step: &zero, Time: at, StepStart: &runner.StepRef{Keyword: "When ", Text: "a"}})
	k.Emit(runner.Event{Type: runner.EventStepFinished, ScenarioID: "s1", Step: &zero, Time: at, StepEnd: &runner.StepResult{Status: steplib.StatusPassed}})
	k.Emit(runner.Event{Type: runner.EventStepStarted, ScenarioID: "s1", Step: &one, Time: at, StepStart: &runner.StepRef{Keyword: "Then ", Text: "b"}})
	first := take()
	c := first.rows[sc.id]
	if c == nil || c.live != nil || !c.started || len(c.steps) != 2 || c.steps[0].Status != "passed" || c.steps[1].Text != "b" || c.steps[1].Status != results.NewStep(1).Status {
		t.Fatalf("first batch's row: %+v", c)
	}
	k.Emit(runner.Event{Type: runner.EventStepFinished, ScenarioID: "s1", Step: &one, Time: at, StepEnd: &runner.StepResult{Status: steplib.StatusFailed, Error: "no"}})
	if c.steps[1].Status != results.NewStep(1).Status || c.steps[1].Error != nil {
		t.Errorf("a later change reached the taken batch: %+v", c.steps[1])
	}
	k.Emit(runner.Event{Type: runner.EventScenarioFinished, ScenarioID: "s1", Time: at, ScenarioEnd: &runner.ScenarioSummary{Status: steplib.StatusFailed, Error: "no"}})
	second := take()
	c = second.rows[sc.id]
	if c == nil || c.live != nil || c.steps != nil || c.finish == nil || len(c.finish.Steps) != 2 || c.finish.Steps[1].Status != "failed" {
		t.Fatalf("second batch's row: %+v", c)
	}
	// A scenario with no step yet is written with empty steps, not "unchanged" (nil).
	sc2 := &scenarioState{id: uuid.New()}
	k.scenarios["s2"] = sc2
	k.saveSteps(sc2)
	if c := take().rows[sc2.id]; c == nil || c.steps == nil || len(c.steps) != 0 {
		t.Errorf("steps of a scenario without steps: %+v", c)
	}
}
