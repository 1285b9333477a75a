package runs

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/scenariowrite"
)

// Event batches (issue 31): a run's sink buffers its events and the scenario rows' progress, and
// writes them in one transaction per batch — one multi-row INSERT of the events, the scenarios'
// starts, steps in progress and results, the run's last sequence number and one NOTIFY. A batch
// is written FlushEvery after its first event at the latest, at every scenario's end and with the
// run's status events (a scenario's end starts a flush in the background, the run's status events
// wait for theirs), so live viewers still see progress as it happens. Sequence numbers are
// given under the sink's lock and batches are written one after the other, so the stored
// sequence stays gap-free and ordered. If the process dies, the events of the batch not yet
// written are the only ones lost (docs/runs.md).

// FlushEvery is the longest an event waits in a sink's buffer.
var FlushEvery = 50 * time.Millisecond

// eventBuffer is what a sink has not written yet.
type eventBuffer struct {
	seqs  []int64
	ats   []time.Time
	types []string
	datas []string
	// rows holds what changed in each scenario row since the last batch, in the order the
	// scenarios first changed.
	rows  map[uuid.UUID]*rowChange
	order []uuid.UUID
	// arts are the attachments of the buffered events (attach.go).
	arts []*pendingArtifact
	// plan holds the run's scenario rows until they are inserted, by the run's first batch.
	plan []scenariowrite.Planned
}

// rowChange is what a batch writes to one scenario row: its start, its steps so far while it runs,
// its result once it finished (the latest of each).
type rowChange struct {
	started   bool
	startedAt time.Time
	// steps of the scenario in progress (a copy), nil: unchanged. Encoded when the batch is
	// written, so a scenario that ends before its batch never encodes them.
	steps []results.Step
	// live is the scenario whose steps changed since the last batch: they are copied into steps
	// when a batch takes the buffer (takeLocked), under the sink's stepsMu.
	live   *scenarioState
	finish *scenariowrite.Result
}

func (b *eventBuffer) row(id uuid.UUID) *rowChange {
	if b.rows == nil {
		b.rows = map[uuid.UUID]*rowChange{}
	}
	c := b.rows[id]
	if c == nil {
		c = &rowChange{}
		b.rows[id] = c
		b.order = append(b.order, id)
	}
	return c
}

func (b *eventBuffer) empty() bool {
	return len(b.seqs) == 0 && len(b.order) == 0 && len(b.arts) == 0 && len(b.plan) == 0
}

// then puts next after b: b's events then next's, and next's row changes over b's.
func (b *eventBuffer) then(next eventBuffer) {
	b.seqs, b.ats = append(b.seqs, next.seqs...), append(b.ats, next.ats...)
	b.types, b.datas = append(b.types, next.types...), append(b.datas, next.datas...)
	b.arts = append(b.arts, next.arts...)
	if b.plan == nil {
		b.plan = next.plan
	}
	for _, id := range next.order {
		n, c := next.rows[id], b.row(id)
		if n.started {
			c.started, c.startedAt = true, n.startedAt
		}
		if n.steps != nil {
			c.steps = n.steps
		}
		if n.live != nil {
			c.live = n.live
		}
		if n.finish != nil {
			c.finish, c.steps, c.live = n.finish, nil, nil
		}
	}
}

// batcher is the part of a sink that buffers and writes.
type batcher struct {
	mu    sync.Mutex
	buf   eventBuffer
	timer *time.Timer // armed while the buffer holds something
	// due is set while a flush has been started in the background and has not yet taken the
	// buffer: what is added meanwhile goes with it.
	due bool
	// flushMu makes batches commit one after the other, in sequence order.
	flushMu sync.Mutex
	// lost holds the attachments whose blob could not be stored (attach.go), under mu.
	lost map[uuid.UUID]bool
	// enc is the buffer events are encoded in, under mu.
	enc []byte
	// closing is set (under mu) while the run's final transaction waits for or holds flushMu: a
	// flush in the background then leaves the buffer to it.
	closing bool
	// final is what the run's final transaction took from the buffer (under flushMu, which it
	// holds until settle), as it was taken: put back if the transaction does not commit.
	final eventBuffer
	// appended says the final transaction numbered the run's end event.
	appended bool
}

// queue adds to the buffer under the lock, and arms the flush timer.
func (k *sink) queue(add func(b *eventBuffer)) {
	k.b.mu.Lock()
	add(&k.b.buf)
	if k.b.timer == nil {
		k.b.timer = time.AfterFunc(FlushEvery, k.flushSoon)
	}
	k.b.mu.Unlock()
}

// flushSoon starts a flush in the background, unless one is about to take the buffer. While a
// batch commits the runner goes on, and what it records meanwhile makes the next batch.
func (k *sink) flushSoon() {
	k.b.mu.Lock()
	start := !k.b.due
	k.b.due = true
	k.b.mu.Unlock()
	if start {
		go k.flush()
	}
}

// flush writes what is buffered in one transaction, with one NOTIFY. A batch that cannot be
// written goes back to the front of the buffer, to be written with the next one.
func (k *sink) flush() {
	k.b.flushMu.Lock()
	defer k.b.flushMu.Unlock()
	k.b.mu.Lock()
	if k.b.closing {
		// The run's final transaction writes what is buffered (writeBufferedIn).
		k.b.mu.Unlock()
		return
	}
	buf := k.takeLocked()
	k.b.mu.Unlock()
	if buf.empty() {
		return
	}
	ctx, cancel := k.ctx()
	defer cancel()
	// One statement, its own transaction. A batch commits without waiting for its WAL flush: a
	// database crash may lose the last fraction of a second of events, never those a later
	// synchronous commit (the run's end) follows.
	err := k.write(ctx, k.s.st.Queries, &buf, true)
	if err == nil {
		return
	}
	k.s.log.Error("runs: store events", "run_id", k.run.ID, "events", len(buf.seqs), "error", err)
	k.b.mu.Lock()
	defer k.b.mu.Unlock()
	buf.then(k.b.buf)
	k.b.buf = buf
	if k.b.timer == nil {
		k.b.timer = time.AfterFunc(FlushEvery, k.flushSoon)
	}
}

// write is one batch, in one statement through the scenario writer (scenariowrite.Batch, as
// ingest's rows go through it too); async lets its transaction commit without waiting for the WAL
// flush.
func (k *sink) write(ctx context.Context, q *db.Queries, b *eventBuffer, async bool) error {
	if len(b.plan) > 0 {
		// The scenario rows first, in a statement of their own: the batch's statement updates them.
		// Inserting them again (a retried batch) changes nothing.
		if err := scenariowrite.Plan(ctx, q, k.run.ID, b.plan); err != nil {
			return err
		}
		b.plan = nil
	}
	arts := k.awaitArtifacts(ctx, b)
	k.b.mu.Lock()
	lost := k.b.lost
	k.b.mu.Unlock()
	changes := make([]scenariowrite.Change, 0, len(b.order))
	for _, id := range b.order {
		c := b.rows[id]
		ch := scenariowrite.Change{ID: id, Started: c.started, StartedAt: c.startedAt, Steps: withoutLost(c.steps, lost), Result: c.finish}
		if c.finish != nil && len(lost) > 0 {
			r := *c.finish
			r.Steps = withoutLost(r.Steps, lost)
			ch.Result = &r
		}
		changes = append(changes, ch)
	}
	ev := scenariowrite.Events{Seqs: b.seqs, Ats: b.ats, Types: b.types, Datas: b.datas, ProjectID: k.run.ProjectID, Artifacts: arts}
	if n := len(b.seqs); n > 0 {
		// Listeners read every event after their cursor: one notification for the batch.
		ev.Notify = k.run.ID.String() + ":" + strconv.FormatInt(b.seqs[n-1], 10)
	}
	if err := scenariowrite.Batch(ctx, q, k.run.ID, async, ev, changes); err != nil {
		return err
	}
	k.verifyBlobs(ctx, b)
	return nil
}

// takeLocked empties the buffer and returns what it held, with a copy of the steps of each
// scenario that changed them and has no result yet; called with mu held.
func (k *sink) takeLocked() eventBuffer {
	buf := k.b.buf
	k.b.buf = eventBuffer{}
	k.copyLiveSteps(&buf)
	k.b.due = false
	if k.b.timer != nil {
		k.b.timer.Stop()
		k.b.timer = nil
	}
	return buf
}

// copyLiveSteps copies the steps of the scenarios whose steps changed in b (rowChange.live): the
// sink goes on changing them while the batch is written. A step's own lists are only appended to
// (under stepsMu), so the copy keeps what they held.
func (k *sink) copyLiveSteps(b *eventBuffer) {
	locked := false
	for _, id := range b.order {
		c := b.rows[id]
		if c.live == nil {
			continue
		}
		if !locked {
			k.stepsMu.Lock()
			defer k.stepsMu.Unlock()
			locked = true
		}
		c.steps = copySteps(c.live.steps)
		if c.steps == nil {
			c.steps = []results.Step{} // nil in a row change means "unchanged"
		}
		c.live = nil
	}
}

// The run's final transaction (worker.go) writes the run's last batch, its final status and its end
// event together: one commit on the run's way to its end instead of a batch's and then its own. The
// worker calls holdBatches before the transaction begins (a batch being written needs a connection
// of the pool the transaction holds one of), writeBufferedIn first in it (the runs quarantine
// trigger of the final status reads the results the batch writes), then appendIn with the end event,
// and settle once it committed or rolled back.

// holdBatches waits for the batches being written and holds back the next ones until settle.
func (k *sink) holdBatches() {
	k.b.mu.Lock()
	k.b.closing = true
	k.b.mu.Unlock()
	k.b.flushMu.Lock()
}

// writeBufferedIn writes what is buffered in the caller's transaction q, after holdBatches.
func (k *sink) writeBufferedIn(ctx context.Context, q *db.Queries) error {
	k.b.mu.Lock()
	buf := k.takeLocked()
	k.b.final, k.b.appended = buf, false
	k.b.mu.Unlock()
	if buf.empty() {
		return nil
	}
	return k.write(ctx, q, &buf, false)
}

// appendIn numbers an event and writes it in the caller's transaction q, after writeBufferedIn:
// the run's end commits with its final status.
func (k *sink) appendIn(ctx context.Context, q *db.Queries, e apiEvent) error {
	k.appendEvent0(e)
	k.b.mu.Lock()
	buf := k.takeLocked()
	k.b.appended = true
	k.b.mu.Unlock()
	return k.write(ctx, q, &buf, false)
}

// settle ends holdBatches. If it did not commit, what it took goes
// back in front of the buffer with its sequence numbers, the end event's number is given back (so
// the sequence keeps no gap), and the batch is written on its own.
func (k *sink) settle(committed bool) {
	k.b.mu.Lock()
	if !committed {
		if k.b.appended {
			k.seq--
		}
		buf := k.b.final
		buf.then(k.b.buf)
		k.b.buf = buf
	}
	k.b.final, k.b.appended, k.b.closing = eventBuffer{}, false, false
	k.b.mu.Unlock()
	k.b.flushMu.Unlock()
	if !committed {
		k.flush()
	}
}
