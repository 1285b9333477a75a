package runs_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/scenariowrite"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// A batch on a real database: its events and an attachment kept in the database are written with
// the run's last sequence number, the content is read back by store.OpenArtifact (ranges too); a
// batch for a run that is gone writes no event; deleting the run deletes its events (run_events
// has no foreign key, a statement trigger does it) and the attachment's content, and so does
// deleting the project.
func TestBatchInlineContentAndEventsDeletedWithRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	p := runs.TestProject(t, st, "batch")
	svc := runs.New(st, nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), runs.Config{})
	r, err := svc.Queue(ctx, runs.CreateParams{ProjectID: p.ID, Trigger: "api"}, p.Slug)
	if err != nil {
		t.Fatal(err)
	}
	content := []byte(`{"attempt":1,"steps":[]}`)
	sum := sha256.Sum256(content)
	art := scenariowrite.Artifact{ID: uuid.New(), ScenarioKey: "s1", Name: "trace-a1.json", Kind: "other", MediaType: "application/json",
		SizeBytes: int64(len(content)), SHA256: hex.EncodeToString(sum[:]), Content: content, CreatedAt: time.Now()}
	now := time.Now()
	ev := scenariowrite.Events{Seqs: []int64{1, 2}, Ats: []time.Time{now, now}, Types: []string{"log", "attachment"},
		Datas: []string{`{"type":"log","message":"a \u003c b \u0000"}`, `{"type":"attachment"}`}, ProjectID: p.ID, Artifacts: []scenariowrite.Artifact{art}}
	if err := scenariowrite.Batch(ctx, st.Queries, r.ID, true, ev, nil); err != nil {
		t.Fatal(err)
	}
	// The events are json, not jsonb (schema 000028): read back as the sink wrote them, neither
	// reformatted nor reordered, with a NUL (which jsonb refused, failing the batch), and what is
	// not JSON is still refused.
	stored, err := st.ListRunEvents(ctx, db.ListRunEventsParams{RunID: r.ID, RowLimit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range stored {
		if string(e.Data) != ev.Datas[i] {
			t.Errorf("event %d stored as %s, want %s", e.Seq, e.Data, ev.Datas[i])
		}
	}
	if err := scenariowrite.Batch(ctx, st.Queries, r.ID, true, scenariowrite.Events{Seqs: []int64{3}, Ats: []time.Time{now}, Types: []string{"log"},
		Datas: []string{`{"type":`}, ProjectID: p.ID}, nil); err == nil {
		t.Error("an event that is not JSON was stored")
	}
	// A result whose error and steps carry a NUL (a response body a test brought in): jsonb refuses
	// the escape \u0000, so it is stored as U+FFFD, and the batch and the ones after it commit.
	sid := uuid.New()
	if err := scenariowrite.Plan(ctx, st.Queries, r.ID, []scenariowrite.Planned{{ID: sid, Key: "nul", Name: "nul"}}); err != nil {
		t.Fatal(err)
	}
	nul := "body \x00 end"
	fin := now
	res := &scenariowrite.Result{ID: sid, Status: "failed", Error: &results.StepError{Message: nul}, FinishedAt: &fin, Attempts: 1,
		Steps: []results.Step{{Index: 0, Keyword: "Then ", Text: "it fails", Status: "failed", Error: &results.StepError{Message: nul}}}}
	if err := scenariowrite.Batch(ctx, st.Queries, r.ID, true, scenariowrite.Events{}, []scenariowrite.Change{{ID: sid, Result: res}}); err != nil {
		t.Fatalf("a result with a NUL: %v", err)
	}
	var storedErr, storedStep string
	if err := st.Pool.QueryRow(ctx, `SELECT error->>'message', steps->0->'error'->>'message' FROM run_scenarios WHERE id = $1`, sid).Scan(&storedErr, &storedStep); err != nil {
		t.Fatal(err)
	}
	if want := "body \ufffd end"; storedErr != want || storedStep != want {
		t.Errorf("stored %q and %q, want %q", storedErr, storedStep, want)
	}
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := st.Pool.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("SELECT count(*) FROM run_events WHERE run_id = $1", r.ID); n != 2 {
		t.Errorf("%d events stored, want 2", n)
	}
	if n := count("SELECT last_seq::int FROM runs WHERE id = $1", r.ID); n != 2 {
		t.Errorf("last_seq %d, want 2", n)
	}
	if n := count("SELECT count(*) FROM artifacts WHERE id = $1 AND blob_key = ''", art.ID); n != 1 {
		t.Errorf("%d artifact rows without a blob key, want 1", n)
	}
	blobs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rc, err := st.OpenArtifact(ctx, blobs, art.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != string(content) {
		t.Errorf("content %q, want %q", got, content)
	}
	rc, err = st.OpenArtifactRange(ctx, blobs, art.ID, "", 2, 7)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(rc)
	rc.Close()
	if string(got) != string(content[2:9]) {
		t.Errorf("range %q, want %q", got, content[2:9])
	}
	if _, err := st.OpenArtifact(ctx, blobs, uuid.New(), ""); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("content of an unknown artifact: %v, want blob.ErrNotFound", err)
	}

	gone := uuid.New()
	if err := scenariowrite.Batch(ctx, st.Queries, gone, true, scenariowrite.Events{Seqs: []int64{1}, Ats: []time.Time{now}, Types: []string{"log"},
		Datas: []string{`{"type":"log"}`}, ProjectID: p.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if n := count("SELECT count(*) FROM run_events WHERE run_id = $1", gone); n != 0 {
		t.Errorf("%d events stored for a run that does not exist", n)
	}

	if _, err := st.Pool.Exec(ctx, "DELETE FROM runs WHERE id = $1", r.ID); err != nil {
		t.Fatal(err)
	}
	if n := count("SELECT count(*) FROM run_events WHERE run_id = $1", r.ID); n != 0 {
		t.Errorf("%d events left after their run was deleted", n)
	}
	if n := count("SELECT count(*) FROM artifact_contents WHERE artifact_id = $1", art.ID); n != 0 {
		t.Errorf("the attachment's content is left after its run was deleted")
	}

	// A project's deletion deletes its runs (their foreign key), and so their events.
	r2, err := svc.Queue(ctx, runs.CreateParams{ProjectID: p.ID, Trigger: "api"}, p.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if err := scenariowrite.Batch(ctx, st.Queries, r2.ID, true, scenariowrite.Events{Seqs: []int64{1}, Ats: []time.Time{now}, Types: []string{"log"},
		Datas: []string{`{"type":"log"}`}, ProjectID: p.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if n := count("SELECT count(*) FROM run_events WHERE run_id = $1", r2.ID); n != 1 {
		t.Fatalf("%d events stored, want 1", n)
	}
	if _, err := st.Pool.Exec(ctx, "DELETE FROM projects WHERE id = $1", p.ID); err != nil {
		t.Fatal(err)
	}
	if n := count("SELECT count(*) FROM run_events WHERE run_id = $1", r2.ID); n != 0 {
		t.Errorf("%d events left after their project was deleted", n)
	}
}

// A batch's statement and the run's scenario rows' plan their foreign-key checks and triggers with
// cached plans (plan_cache_mode auto) for their own transaction only: the pool's connections keep force_custom_plan afterwards.
func TestBatchPlanCacheModeTransactionLocal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	p := runs.TestProject(t, st, "plan")
	svc := runs.New(st, nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), runs.Config{})
	r, err := svc.Queue(ctx, runs.CreateParams{ProjectID: p.ID, Trigger: "api"}, p.Slug)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	batch := func(q *db.Queries, seq int64) error {
		return scenariowrite.Batch(ctx, q, r.ID, true, scenariowrite.Events{Seqs: []int64{seq}, Ats: []time.Time{now}, Types: []string{"log"},
			Datas: []string{`{"type":"log"}`}, ProjectID: p.ID}, nil)
	}
	// The run's scenario rows (the first batch's statement before its own) and a batch, each in a
	// transaction.
	steps := map[string]func(q *db.Queries) error{
		"scenario rows": func(q *db.Queries) error {
			return scenariowrite.Plan(ctx, q, r.ID, []scenariowrite.Planned{{ID: uuid.New(), Key: "s1", FeaturePath: "a.feature", Name: "A", Line: 3}})
		},
		"batch": func(q *db.Queries) error { return batch(q, 1) },
	}
	for name, step := range steps {
		var inTx string
		err = st.WithTx(ctx, func(q *db.Queries) error {
			if err := step(q); err != nil {
				return err
			}
			tx, _ := store.TxOf(q)
			return tx.QueryRow(ctx, "SELECT current_setting('plan_cache_mode')").Scan(&inTx)
		})
		if err != nil {
			t.Fatal(err)
		}
		if inTx != "auto" {
			t.Errorf("plan_cache_mode after the %s in its transaction: %q, want auto", name, inTx)
		}
	}
	for seq := int64(2); seq < 6; seq++ {
		if err := batch(st.Queries, seq); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range st.Pool.AcquireAllIdle(ctx) {
		var mode string
		err := c.QueryRow(ctx, "SELECT current_setting('plan_cache_mode')").Scan(&mode)
		c.Release()
		if err != nil || mode != "force_custom_plan" {
			t.Errorf("a pool connection's plan_cache_mode after batches: %q (%v), want force_custom_plan", mode, err)
		}
	}
}

// A run's events are stored one row per batch (schema 000030) and read back one by one, in order,
// from any position — the start, inside a batch (a Last-Event-ID), a batch's last event — a page
// at a time, across batches; a log read lists the log events of every batch.
func TestEventsReadAcrossBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	p := runs.TestProject(t, st, "batches")
	svc := runs.New(st, nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), runs.Config{})
	r, err := svc.Queue(ctx, runs.CreateParams{ProjectID: p.ID, Trigger: "api"}, p.Slug)
	if err != nil {
		t.Fatal(err)
	}
	// Batches of 3, 1 and 5 events: 1–3, 4, 5–9.
	seq := int64(0)
	for _, n := range []int{3, 1, 5} {
		var ev scenariowrite.Events
		ev.ProjectID = p.ID
		for range n {
			seq++
			typ := "step.finished"
			if seq%2 == 0 {
				typ = "log"
			}
			ev.Seqs, ev.Ats, ev.Types = append(ev.Seqs, seq), append(ev.Ats, time.Unix(1_800_000_000+seq, 0).UTC()), append(ev.Types, typ)
			ev.Datas = append(ev.Datas, `{"sequence":`+strconv.FormatInt(seq, 10)+`,"type":"`+typ+`"}`)
		}
		if err := scenariowrite.Batch(ctx, st.Queries, r.ID, true, ev, nil); err != nil {
			t.Fatal(err)
		}
	}
	var batches int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM run_event_batches WHERE run_id = $1`, r.ID).Scan(&batches); err != nil || batches != 3 {
		t.Fatalf("%d batch rows (%v), want 3", batches, err)
	}
	read := func(after int64, limit int32) string {
		t.Helper()
		rows, err := st.ListRunEvents(ctx, db.ListRunEventsParams{RunID: r.ID, Seq: after, RowLimit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range rows {
			want := `{"sequence":` + strconv.FormatInt(e.Seq, 10) + `,"type":"` + e.Type + `"}`
			if string(e.Data) != want || e.RunID != r.ID || !e.At.Equal(time.Unix(1_800_000_000+e.Seq, 0)) {
				t.Errorf("event %d: %s %s at %s, want %s", e.Seq, e.RunID, e.Data, e.At, want)
			}
			out = append(out, strconv.FormatInt(e.Seq, 10))
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		after int64
		limit int32
		want  string
	}{
		{0, 100, "1 2 3 4 5 6 7 8 9"}, {0, 2, "1 2"}, {1, 2, "2 3"}, {2, 3, "3 4 5"}, {3, 1, "4"}, {4, 10, "5 6 7 8 9"},
		{6, 2, "7 8"}, {8, 5, "9"}, {9, 5, ""}, {20, 5, ""},
	} {
		if got := read(c.after, c.limit); got != c.want {
			t.Errorf("after %d, limit %d: %q, want %q", c.after, c.limit, got, c.want)
		}
	}
	// Pages of 2 from the start, as a stream catches up.
	var pages []string
	for after := int64(0); ; {
		page := read(after, 2)
		if page == "" {
			break
		}
		pages = append(pages, page)
		f := strings.Fields(page)
		after, _ = strconv.ParseInt(f[len(f)-1], 10, 64)
	}
	if got := strings.Join(pages, " | "); got != "1 2 | 3 4 | 5 6 | 7 8 | 9" {
		t.Errorf("pages %q", got)
	}
	logs, err := st.ListRunLogEvents(ctx, db.ListRunLogEventsParams{RunID: r.ID, RowLimit: 3})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range logs {
		got = append(got, strconv.FormatInt(l.Seq, 10))
	}
	if strings.Join(got, " ") != "2 4 6" {
		t.Errorf("log events %v, want 2 4 6", got)
	}
}

// A batch of events alone goes through a statement of its own (WriteRunEvents, the run's end event
// in its final transaction): it stores the same event row, moves last_seq and sends the same
// notification as the whole batch statement does with the same events, commits asynchronously
// or not as asked, and a later batch's lower last sequence number leaves last_seq alone.
func TestEventsOnlyBatchSameAsWholeBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	p := runs.TestProject(t, st, "evonly")
	svc := runs.New(st, nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), runs.Config{})
	listener, err := st.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Release()
	if _, err := listener.Exec(ctx, "LISTEN sdods_run_events"); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 11, 0, 0, 123456000, time.UTC)
	events := func(first int64, n int) scenariowrite.Events {
		ev := scenariowrite.Events{ProjectID: p.ID}
		for i := range int64(n) {
			ev.Seqs, ev.Ats = append(ev.Seqs, first+i), append(ev.Ats, at.Add(time.Duration(i)*time.Millisecond))
			ev.Types, ev.Datas = append(ev.Types, "log"), append(ev.Datas, `{"type":"log","n":`+strconv.FormatInt(first+i, 10)+`}`)
		}
		return ev
	}
	type stored struct {
		rows, lastSeq        string
		notified, commitMode string
	}
	write := func(whole, async bool) (uuid.UUID, stored) {
		t.Helper()
		r, err := svc.Queue(ctx, runs.CreateParams{ProjectID: p.ID, Trigger: "api"}, p.Slug)
		if err != nil {
			t.Fatal(err)
		}
		var changes []scenariowrite.Change
		if whole {
			// A change of a scenario the run does not have: no row changes, but the whole statement.
			changes = []scenariowrite.Change{{ID: uuid.New(), Started: true, StartedAt: at}}
		}
		var got stored
		// Event 2 again after 4: last_seq stays 4 and no row is stored, but it is still notified.
		for _, b := range []scenariowrite.Events{events(1, 3), events(4, 1), events(2, 1)} {
			b.Notify = r.ID.String() + ":" + strconv.FormatInt(b.Seqs[len(b.Seqs)-1], 10)
			err := st.WithTx(ctx, func(q *db.Queries) error {
				if err := scenariowrite.Batch(ctx, q, r.ID, async, b, changes); err != nil {
					return err
				}
				tx, _ := store.TxOf(q)
				return tx.QueryRow(ctx, "SELECT current_setting('synchronous_commit') || ' ' || current_setting('plan_cache_mode')").Scan(&got.commitMode)
			})
			if err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			n, err := listener.Conn().WaitForNotification(wctx)
			cancel()
			if err != nil {
				t.Fatalf("notification: %v", err)
			}
			got.notified += strings.TrimPrefix(n.Payload, r.ID.String()) + " "
		}
		if err := st.Pool.QueryRow(ctx, `SELECT string_agg(format('%s-%s %s %s %s', first_seq, last_seq, ats, types, datas), ' | ' ORDER BY last_seq)
			FROM run_event_batches WHERE run_id = $1`, r.ID).Scan(&got.rows); err != nil {
			t.Fatal(err)
		}
		if err := st.Pool.QueryRow(ctx, `SELECT last_seq::text FROM runs WHERE id = $1`, r.ID).Scan(&got.lastSeq); err != nil {
			t.Fatal(err)
		}
		return r.ID, got
	}
	for _, async := range []bool{true, false} {
		_, whole := write(true, async)
		_, alone := write(false, async)
		if alone != whole {
			t.Errorf("async %v: events alone stored %+v, the whole statement %+v", async, alone, whole)
		}
		if async && alone.commitMode != "off auto" {
			t.Errorf("an asynchronous batch's transaction: synchronous_commit and plan_cache_mode %q", alone.commitMode)
		}
		if !strings.HasSuffix(alone.commitMode, " auto") || alone.lastSeq != "4" || alone.notified != ":3 :4 :2 " || strings.Count(alone.rows, "|") != 1 {
			t.Errorf("async %v: %+v", async, alone)
		}
	}
}
