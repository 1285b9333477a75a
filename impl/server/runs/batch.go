package runs

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
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
	seqs   []int64
	ats    []time.Time
	types  []string
	datas  []string
	starts []scenariowrite.Start
	// steps holds the latest steps in progress per scenario (only the last state is written).
	steps    map[uuid.UUID]json.RawMessage
	finishes []scenariowrite.Result
}

func (b *eventBuffer) empty() bool {
	return len(b.seqs) == 0 && len(b.starts) == 0 && len(b.steps) == 0 && len(b.finishes) == 0
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
	buf := k.b.buf
	k.b.buf = eventBuffer{}
	k.b.due = false
	if k.b.timer != nil {
		k.b.timer.Stop()
		k.b.timer = nil
	}
	k.b.mu.Unlock()
	if buf.empty() {
		return
	}
	ctx, cancel := k.ctx()
	defer cancel()
	err := k.s.st.WithTx(ctx, func(q *db.Queries) error {
		// A batch commits without waiting for its WAL flush: a database crash may lose the last
		// fraction of a second of events, never those a later synchronous commit (the run's end)
		// follows.
		if err := q.CommitEventsAsync(ctx); err != nil {
			return err
		}
		return k.write(ctx, q, &buf)
	})
	if err == nil {
		return
	}
	k.s.log.Error("runs: store events", "run_id", k.run.ID, "events", len(buf.seqs), "error", err)
	k.b.mu.Lock()
	defer k.b.mu.Unlock()
	next := k.b.buf
	buf.seqs, buf.ats = append(buf.seqs, next.seqs...), append(buf.ats, next.ats...)
	buf.types, buf.datas = append(buf.types, next.types...), append(buf.datas, next.datas...)
	buf.starts, buf.finishes = append(buf.starts, next.starts...), append(buf.finishes, next.finishes...)
	for id, s := range next.steps {
		if buf.steps == nil {
			buf.steps = map[uuid.UUID]json.RawMessage{}
		}
		buf.steps[id] = s
	}
	k.b.buf = buf
	if k.b.timer == nil {
		k.b.timer = time.AfterFunc(FlushEvery, k.flushSoon)
	}
}

// write is one batch's transaction.
func (k *sink) write(ctx context.Context, q *db.Queries, b *eventBuffer) error {
	// The scenarios' rows go through the one scenario writer (impl/server/scenariowrite), as
	// ingest's do: starts, then steps in progress (only unfinished scenarios take them), then
	// results, each one statement for the batch.
	if err := scenariowrite.Starts(ctx, q, k.run.ID, lastStarts(b.starts)); err != nil {
		return err
	}
	progress := make(map[uuid.UUID][]byte, len(b.steps))
	for id, steps := range b.steps {
		progress[id] = steps
	}
	if err := scenariowrite.Progress(ctx, q, k.run.ID, progress); err != nil {
		return err
	}
	if err := scenariowrite.Finish(ctx, q, k.run.ID, lastResults(b.finishes)); err != nil {
		return err
	}
	if len(b.seqs) == 0 {
		return nil
	}
	last := b.seqs[len(b.seqs)-1]
	// Listeners read every event after their cursor: one notification for the batch.
	return q.AppendRunEvents(ctx, db.AppendRunEventsParams{RunID: k.run.ID, Seqs: b.seqs, Ats: b.ats, Types: b.types, Datas: b.datas,
		LastSeq: last, Payload: k.run.ID.String() + ":" + strconv.FormatInt(last, 10)})
}

// appendIn writes an event in the caller's transaction q, after what is buffered (written first,
// in its own batch): the run's end commits with its final status. If q rolls back, call
// unappend so that the sequence keeps no gap.
func (k *sink) appendIn(ctx context.Context, q *db.Queries, e apiEvent) error {
	k.flush()
	k.b.flushMu.Lock()
	defer k.b.flushMu.Unlock()
	k.appendEvent0(e)
	k.b.mu.Lock()
	buf := k.b.buf
	k.b.buf = eventBuffer{}
	if k.b.timer != nil {
		k.b.timer.Stop()
		k.b.timer = nil
	}
	k.b.mu.Unlock()
	return k.write(ctx, q, &buf)
}

// unappend forgets the event appendIn numbered, when its transaction did not commit.
func (k *sink) unappend() {
	k.b.mu.Lock()
	k.seq--
	k.b.mu.Unlock()
}

// lastStarts keeps the last start of each scenario of a batch (a retry starts it again), as
// writing them one after the other would.
func lastStarts(in []scenariowrite.Start) []scenariowrite.Start {
	at := make(map[uuid.UUID]int, len(in))
	out := make([]scenariowrite.Start, 0, len(in))
	for _, s := range in {
		if i, ok := at[s.ID]; ok {
			out[i] = s
			continue
		}
		at[s.ID] = len(out)
		out = append(out, s)
	}
	return out
}

// lastResults keeps the last result of each scenario of a batch.
func lastResults(in []scenariowrite.Result) []scenariowrite.Result {
	at := make(map[uuid.UUID]int, len(in))
	out := make([]scenariowrite.Result, 0, len(in))
	for _, r := range in {
		if i, ok := at[r.ID]; ok {
			out[i] = r
			continue
		}
		at[r.ID] = len(out)
		out = append(out, r)
	}
	return out
}
