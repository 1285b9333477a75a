package runs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// The run's final transaction writes the last batch with the end event. If it does not commit, the
// batch is put back and written on its own, with its sequence numbers, and the end event's number is
// given back: the next final transaction stores the end right after, with no gap and nothing lost.
func TestFinalTransactionThatFailsKeepsTheBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	p := testProject(t, st, "final")
	svc := New(st, nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), Config{})
	queued, err := svc.Queue(ctx, CreateParams{ProjectID: p.ID, Trigger: "api"}, p.Slug)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.GetRun(ctx, queued.ID)
	if err != nil {
		t.Fatal(err)
	}
	k := &sink{s: svc, run: r.Run, scenarios: map[string]*scenarioState{}}
	stored := func() []string {
		t.Helper()
		rows, err := st.Pool.Query(ctx, "SELECT seq::text || ' ' || type FROM run_events WHERE run_id = $1 ORDER BY seq", r.Run.ID)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	final := func(fail bool) error {
		k.holdBatches()
		err := st.WithTx(ctx, func(q *db.Queries) error {
			if err := k.writeBufferedIn(ctx, q); err != nil {
				return err
			}
			if err := k.appendIn(ctx, q, apiEvent{Type: "end", Status: ptr("passed")}); err != nil {
				return err
			}
			if fail {
				return errors.New("the run was finished elsewhere")
			}
			return nil
		})
		k.settle(err == nil)
		return err
	}

	for range 3 {
		k.appendEvent0(apiEvent{Type: "log", Level: ptr("info"), Message: ptr("x")})
	}
	if err := final(true); err == nil {
		t.Fatal("the failing final transaction committed")
	}
	if got, want := stored(), []string{"1 log", "2 log", "3 log"}; !slices.Equal(got, want) {
		t.Errorf("after a failed final transaction: %v, want %v (the batch written on its own, no end)", got, want)
	}
	k.appendEvent0(apiEvent{Type: "run.status", Status: ptr("passed")})
	if err := final(false); err != nil {
		t.Fatal(err)
	}
	if got, want := stored(), []string{"1 log", "2 log", "3 log", "4 run.status", "5 end"}; !slices.Equal(got, want) {
		t.Errorf("after the final transaction: %v, want %v", got, want)
	}
	var last int64
	if err := st.Pool.QueryRow(ctx, "SELECT last_seq FROM runs WHERE id = $1", r.Run.ID).Scan(&last); err != nil || last != 5 {
		t.Errorf("last_seq %d (%v), want 5", last, err)
	}
}
