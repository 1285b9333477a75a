package runs

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/scenariowrite"
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
