package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/jobs"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

type echoArgs struct {
	Note string `json:"note"`
}

func (echoArgs) Kind() string { return "test_echo" }

type echoWorker struct {
	river.WorkerDefaults[echoArgs]
	got chan string
}

func (w *echoWorker) Work(ctx context.Context, j *river.Job[echoArgs]) error {
	w.got <- j.Args.Note
	return nil
}

func testLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func start(t *testing.T, st *store.Store, reg *jobs.Registry, id string) *jobs.Client {
	t.Helper()
	c, err := jobs.New(st.Pool, reg, jobs.Config{Work: true, ID: id, Logger: testLog(), PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Stop(ctx)
	})
	return c
}

// A job inserted with InsertTx exists exactly when the transaction that wrote its rows commits.
func TestInsertTxCommitsAndRollsBackWithRows(t *testing.T) {
	st, _ := storetest.Open(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := st.WithTx(ctx, func(q *db.Queries) error {
		if _, err := jobs.InsertTx(ctx, q, echoArgs{Note: "rolled back"}, nil); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WithTx = %v, want boom", err)
	}
	if err := st.WithTx(ctx, func(q *db.Queries) error {
		if err := q.InsertAuditEntry(ctx, db.InsertAuditEntryParams{ActorKind: "system", Operation: "echo", Outcome: "success", Detail: json.RawMessage(`{}`)}); err != nil {
			return err
		}
		_, err := jobs.InsertTx(ctx, q, echoArgs{Note: "committed"}, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := st.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE kind = 'test_echo'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("river_job rows = %d (err %v), want 1: the rolled-back insert must be gone", n, err)
	}

	// Queries that are not a transaction's are refused rather than inserting outside it.
	if _, err := jobs.InsertTx(ctx, st.Queries, echoArgs{}, nil); err == nil {
		t.Fatal("InsertTx outside store.WithTx succeeded")
	}

	reg := jobs.NewRegistry()
	w := &echoWorker{got: make(chan string, 4)}
	jobs.Register(reg, w)
	start(t, st, reg, "p1")
	select {
	case got := <-w.got:
		if got != "committed" {
			t.Fatalf("worked %q, want the committed job", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the committed job was not worked")
	}
	select {
	case got := <-w.got:
		t.Fatalf("a second job was worked: %q", got)
	case <-time.After(300 * time.Millisecond):
	}
}

type tickArgs struct{}

func (tickArgs) Kind() string { return "test_tick" }

type tickWorker struct {
	river.WorkerDefaults[tickArgs]
	n *atomic.Int32
}

func (w *tickWorker) Work(ctx context.Context, j *river.Job[tickArgs]) error {
	w.n.Add(1)
	return nil
}

// Two processes declaring the same periodic job insert and work it once per period together.
func TestPeriodicOncePerPeriodAcrossProcesses(t *testing.T) {
	st, _ := storetest.Open(t)
	var n atomic.Int32
	for _, id := range []string{"p1", "p2"} {
		reg := jobs.NewRegistry()
		jobs.Register(reg, &tickWorker{n: &n})
		reg.Periodic(time.Hour, tickArgs{})
		start(t, st, reg, id)
	}
	deadline := time.Now().Add(15 * time.Second)
	for n.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n.Load() == 0 {
		t.Fatal("the periodic job never ran")
	}
	time.Sleep(2 * time.Second) // a second leader or a restart would insert by now
	var rows int
	if err := st.Pool.QueryRow(context.Background(), "SELECT count(*) FROM river_job WHERE kind = 'test_tick'").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || n.Load() != 1 {
		t.Fatalf("periodic job: %d rows, worked %d times; want 1 and 1 within the hour", rows, n.Load())
	}
}

// A queue declared with fewer than one worker is not worked by this process.
func TestQueueWithoutWorkersIsLeftToOthers(t *testing.T) {
	st, _ := storetest.Open(t)
	ctx := context.Background()
	if err := st.WithTx(ctx, func(q *db.Queries) error {
		_, err := jobs.InsertTx(ctx, q, echoArgs{Note: "elsewhere"}, &river.InsertOpts{Queue: "other"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	idle := jobs.NewRegistry()
	wIdle := &echoWorker{got: make(chan string, 1)}
	jobs.Register(idle, wIdle)
	idle.Queue("other", 0)
	start(t, st, idle, "idle")
	select {
	case got := <-wIdle.got:
		t.Fatalf("a process without workers for the queue worked %q", got)
	case <-time.After(time.Second):
	}
	busy := jobs.NewRegistry()
	wBusy := &echoWorker{got: make(chan string, 1)}
	jobs.Register(busy, wBusy)
	busy.Queue("other", 1)
	start(t, st, busy, "busy")
	select {
	case got := <-wBusy.got:
		if got != "elsewhere" {
			t.Fatalf("worked %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the process with workers for the queue did not work the job")
	}
}

// TestFetchCooldownWithinPollInterval builds workers' clients whose poll interval is shorter than
// the default fetch cooldown, or whose cooldown is set: River refuses a poll shorter than the
// cooldown, so the cooldown follows the poll.
func TestFetchCooldownWithinPollInterval(t *testing.T) {
	st, _ := storetest.Open(t)
	for _, cfg := range []jobs.Config{
		{Work: true, PollInterval: 5 * time.Millisecond},
		{Work: true, PollInterval: 50 * time.Millisecond, FetchCooldown: 20 * time.Millisecond},
		{Work: true, PollInterval: 20 * time.Millisecond, FetchCooldown: 50 * time.Millisecond},
		{Work: true},
	} {
		reg := jobs.NewRegistry()
		jobs.Register(reg, &echoWorker{got: make(chan string, 1)})
		cfg.Logger = testLog()
		if _, err := jobs.New(st.Pool, reg, cfg); err != nil {
			t.Errorf("poll %s, cooldown %s: %v", cfg.PollInterval, cfg.FetchCooldown, err)
		}
	}
}
