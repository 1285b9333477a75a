package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/pool"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/reports"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/scenariowrite"
	"github.com/sdods/sdods/impl/server/stats"
	"github.com/sdods/sdods/impl/server/steplib"
	"github.com/sdods/sdods/impl/server/store"
)

// Start runs the listener and the maintenance loop (heartbeats of this process's runs, reconcile
// of dead processes' runs) until ctx ends; the returned function waits for them to stop. Runs are
// executed by the River worker Register adds; those executing when ctx ends stop at once and are
// ended as errored.
func (s *Service) Start(ctx context.Context) (wait func()) {
	var wg sync.WaitGroup
	s.mu.Lock()
	s.stopping = ctx
	s.mu.Unlock()
	s.reconcile(ctx)   // runs a dead process left behind
	s.adoptQueued(ctx) // runs queued before they were River jobs
	wg.Add(2)
	go func() { defer wg.Done(); s.listen(ctx) }()
	go func() { defer wg.Done(); s.maintain(ctx) }()
	return wg.Wait
}

func (s *Service) maintain(ctx context.Context) {
	beat := time.NewTicker(s.cfg.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			s.heartbeat(ctx)
			s.reconcile(ctx)
		}
	}
}

// heartbeat renews this process's runs, and cancels those whose cancellation it missed.
func (s *Service) heartbeat(ctx context.Context) {
	s.mu.Lock()
	ids := make([]uuid.UUID, 0, len(s.active))
	for id := range s.active {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	rows, err := s.st.HeartbeatRuns(ctx, db.HeartbeatRunsParams{WorkerID: &s.workerID, Ids: ids})
	if err != nil {
		s.log.Warn("runs: heartbeat failed", "error", err)
		return
	}
	for _, r := range rows {
		if r.CancelRequested {
			s.cancelActive(r.ID)
		}
	}
}

// reconcile ends the runs whose worker stopped heartbeating. The status, the interrupted
// scenarios and the counts change in one transaction, so no reader sees an errored run that has
// not been counted yet.
func (s *Service) reconcile(ctx context.Context) {
	var ids []uuid.UUID
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		var err error
		if ids, err = q.ReconcileLostRuns(ctx, int32(s.cfg.StaleAfter.Seconds())); err != nil {
			return err
		}
		for _, id := range ids {
			if err := countLostRun(ctx, q, id); err != nil {
				return err
			}
			r, err := q.GetRun(ctx, id)
			if err != nil {
				return err
			}
			if err := s.queueDeliveries(ctx, q, r.Run.ProjectID, id, r.Run.Status); err != nil {
				return err
			}
			if err := stats.QueueRollup(ctx, q, r.Run.ProjectID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("runs: reconcile failed", "error", err)
		}
		return
	}
	for _, id := range ids {
		s.log.Warn("runs: run lost its worker; marked errored", "run_id", id)
		if _, err := pool.ReleaseRun(ctx, s.st.Queries, id); err != nil {
			s.log.Warn("runs: release leases", "run_id", id, "error", err)
		}
		snk := &sink{s: s, run: db.Run{ID: id}}
		snk.seq = s.lastSeq(ctx, id)
		snk.appendEvent(apiEvent{Type: "end", Status: ptr("errored"), Message: ptr("the worker executing this run stopped")})
	}
}

// countLostRun records what a lost run did: the scenarios its worker was executing keep the steps
// that ran and say why they have no result, and the run's counts are those of its scenarios.
func countLostRun(ctx context.Context, q *db.Queries, id uuid.UUID) error {
	if err := scenariowrite.Interrupt(ctx, q, id, "interrupted: the worker executing this run stopped during this scenario"); err != nil {
		return err
	}
	rows, err := q.ListRunScenarios(ctx, id)
	if err != nil {
		return err
	}
	var c results.Counts
	for _, sc := range rows {
		reports.Add(&c, sc.Status, int(sc.Attempts))
	}
	counts, _ := json.Marshal(c)
	return q.SetRunCounts(ctx, db.SetRunCountsParams{ID: id, Counts: counts})
}

func (s *Service) lastSeq(ctx context.Context, id uuid.UUID) int64 {
	r, err := s.st.GetRun(ctx, id)
	if err != nil {
		return 0
	}
	return r.Run.LastSeq
}

// execute runs a claimed run to its end and records the outcome. ctx is the run's River job's;
// the run also stops when this process stops (Start's context ends).
func (s *Service) execute(ctx context.Context, r db.Run) {
	ctx, stopExec := context.WithCancel(ctx)
	defer stopExec()
	s.mu.Lock()
	stopping := s.stopping
	s.mu.Unlock()
	if stopping != nil {
		defer context.AfterFunc(stopping, stopExec)()
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.active[r.ID] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.active, r.ID)
		s.mu.Unlock()
	}()
	log := s.log.With("run_id", r.ID)
	snk := &sink{s: s, run: r, scenarios: map[string]*scenarioState{}}
	in, err := s.load(ctx, r)
	var res *runner.Result
	if err == nil {
		res, err = s.runner.Run(runCtx, in, snk)
	}
	// What the runner left buffered is written by the final transaction, below.
	// Leases end with the run, whatever happened.
	bg, done := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer done()
	if _, rerr := pool.ReleaseRun(bg, s.st.Queries, r.ID); rerr != nil {
		log.Warn("runs: release leases", "error", rerr)
	}
	status, msg := "errored", ""
	counts := runner.Counts{}
	switch {
	case err != nil:
		msg = err.Error()
	default:
		status, msg, counts = string(res.Status), res.Error, res.Counts
	}
	if runCtx.Err() != nil && status != "timed_out" {
		// Cancelled: by a user (the flag is set), or by this process shutting down.
		if cur, gerr := s.st.GetRun(bg, r.ID); gerr == nil && cur.Run.CancelRequested {
			status, msg = "cancelled", "cancelled on request"
		} else if ctx.Err() != nil {
			status, msg = "errored", "the server shut down while the run executed"
		}
	}
	rawCounts, _ := json.Marshal(apiCounts(counts))
	var errp *string
	if msg != "" {
		errp = &msg
	}
	// The final status, the webhook deliveries it triggers, the run's last batch and the end event
	// commit together (batch.go: writeBufferedIn, appendIn, settle).
	var fin db.Run
	snk.holdBatches()
	ferr := s.st.WithTx(bg, func(q *db.Queries) error {
		// The results first: the runs quarantine trigger of FinishRun reads them.
		if err := snk.writeBufferedIn(bg, q); err != nil {
			return err
		}
		var err error
		if fin, err = q.FinishRun(bg, db.FinishRunParams{ID: r.ID, Status: status, Error: errp, Counts: rawCounts}); err != nil {
			return err
		}
		if err := s.queueDeliveries(bg, q, fin.ProjectID, fin.ID, fin.Status); err != nil {
			return err
		}
		if err := stats.QueueRollup(bg, q, fin.ProjectID); err != nil {
			return err
		}
		if s.onFinish != nil {
			if err := s.onFinish(bg, q, fin); err != nil {
				return err
			}
		}
		// The end event commits with the status: a reader that sees the run final finds it.
		endCounts := apiCounts(counts)
		_ = json.Unmarshal(fin.Counts, &endCounts) // the database adds counts.quarantined (docs/stats.md)
		return snk.appendIn(bg, q, apiEvent{Type: "end", Status: &fin.Status, Counts: &endCounts, Message: errp})
	})
	snk.settle(ferr == nil)
	if ferr != nil {
		if errors.Is(ferr, context.Canceled) || store.IsNotFound(ferr) {
			log.Warn("runs: run was finished elsewhere", "error", ferr)
		} else {
			log.Error("runs: finish", "error", ferr)
		}
		return
	}
	log.Info("run finished", "status", fin.Status)
}

// load gathers what a run executes: the project's features and processes, the environment with
// its secrets opened, the datasets and the users-pool leaser.
func (s *Service) load(ctx context.Context, r db.Run) (runner.Run, error) {
	in := runner.Run{ID: r.ID.String(), Project: r.ProjectID.String(), Paths: r.Paths, Features: map[string]string{},
		Processes: map[string]string{}, Datasets: map[string]runner.Dataset{}, Timeout: time.Duration(r.TimeoutSeconds) * time.Second,
		Retries: int(r.Retries)}
	if r.Tags != nil {
		in.Tags = *r.Tags
	}
	tracing, err := s.st.ProjectTracing(ctx, r.ProjectID)
	if err != nil {
		return in, fmt.Errorf("load the project's tracing: %w", err)
	}
	in.Tracing = runner.ParseTracing(tracing)
	features, err := s.st.AllFeatures(ctx, r.ProjectID)
	if err != nil {
		return in, fmt.Errorf("load features: %w", err)
	}
	for _, f := range features {
		in.Features[f.Path] = f.Content
	}
	// A verification run (impl/server/agents) executes patched contents, not the saved ones.
	overrides, err := s.st.ListRunFeatureOverrides(ctx, r.ID)
	if err != nil {
		return in, fmt.Errorf("load feature overrides: %w", err)
	}
	for _, o := range overrides {
		in.Features[o.Path] = o.Content
	}
	// Quarantined scenarios still run, tagged @quarantined (docs/stats.md, Quarantine).
	held, err := s.st.ActiveQuarantineIdentities(ctx, r.ProjectID)
	if err != nil {
		return in, fmt.Errorf("load quarantines: %w", err)
	}
	in.Quarantined = map[string]bool{}
	for _, id := range held {
		in.Quarantined[id] = true
	}
	// Reviewers' rejected heals teach the runner's heal scoring (docs/agents.md, Reject).
	rejected, err := s.st.RejectedHealReplacements(ctx, r.ProjectID)
	if err != nil {
		return in, fmt.Errorf("load rejected heals: %w", err)
	}
	in.RejectedHeals = map[string][]steplib.RejectedHeal{}
	for _, rj := range rejected {
		in.RejectedHeals[rj.OldSelector] = append(in.RejectedHeals[rj.OldSelector], steplib.RejectedHeal{Selector: rj.NewSelector, Reason: rj.Reason, Proposal: rj.ID.String()})
	}
	procs, err := s.st.AllProcesses(ctx, r.ProjectID)
	if err != nil {
		return in, fmt.Errorf("load processes: %w", err)
	}
	for _, p := range procs {
		in.Processes[p.Name] = p.Content
	}
	if r.ProcessName != nil {
		// A process run executes just that process, as a one-scenario feature.
		p, ok := in.Processes[*r.ProcessName]
		if !ok {
			return in, fmt.Errorf("process %s no longer exists", *r.ProcessName)
		}
		path := "processes/" + *r.ProcessName + ".feature"
		in.Features = map[string]string{path: processFeature(*r.ProcessName, p)}
		in.Paths = nil
	}
	env, err := s.environment(ctx, r)
	if err != nil {
		return in, err
	}
	in.Environment = env
	if err := s.datasets(ctx, r, in.Datasets); err != nil {
		return in, err
	}
	raw, err := s.st.ProjectSettings(ctx, r.ProjectID)
	if err != nil {
		return in, fmt.Errorf("load project settings: %w", err)
	}
	in.Concurrency = projects.DecodeSettings(raw).Concurrency(runtime.GOMAXPROCS(0))
	in.Leaser = &leaser{s: s, projectID: r.ProjectID, runID: r.ID, environment: env.Name}
	in.Baselines = &baselines{s: s, run: r}
	return in, nil
}

func ptr[T any](v T) *T { return &v }
