package schedules_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/schedules"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// world is a database with one project and a scheduler whose clock the test sets.
type world struct {
	t       *testing.T
	st      *store.Store
	svc     *schedules.Service
	project uuid.UUID
	now     time.Time
}

var t0 = time.Date(2026, 1, 5, 10, 0, 30, 0, time.UTC)

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, storetest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	w := &world{t: t, st: st, now: t0}
	err = st.Pool.QueryRow(ctx, `WITH o AS (INSERT INTO orgs (slug, name) VALUES ('acme', 'Acme') RETURNING id),
		ws AS (INSERT INTO workspaces (org_id, slug, name) SELECT id, 'default', 'Default' FROM o RETURNING id)
		INSERT INTO projects (workspace_id, slug, name) SELECT id, 'shop', 'Shop' FROM ws RETURNING id`).Scan(&w.project)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rs := runs.New(st, nil, nil, nil, log, runs.Config{})
	w.svc = schedules.New(st, rs, log, schedules.Config{ProcessID: "test", Now: func() time.Time { return w.now }})
	return w
}

func (w *world) create(in schedules.Input) schedules.Schedule {
	w.t.Helper()
	sc, err := w.svc.Create(context.Background(), w.project, "shop", in, uuid.NullUUID{})
	if err != nil {
		w.t.Fatal(err)
	}
	return sc
}

// fire runs the tick at the instant at (and moves the clock there).
func (w *world) fire(at time.Time) {
	w.t.Helper()
	w.now = at
	if _, err := w.svc.FireDue(context.Background(), at); err != nil {
		w.t.Fatal(err)
	}
}

type firingRow struct {
	at      time.Time
	status  string
	reason  string
	count   int
	run     *uuid.UUID
	trigger *string
}

// firings are a schedule's firing records in scheduled order.
func (w *world) firings(id uuid.UUID) []firingRow {
	w.t.Helper()
	rows, err := w.st.Pool.Query(context.Background(), `SELECT f.scheduled_time, f.status, f.reason, f.missed_count, f.run_id, r.trigger
		FROM schedule_firings f LEFT JOIN runs r ON r.id = f.run_id WHERE f.schedule_id = $1 AND NOT f.manual ORDER BY f.scheduled_time`, id)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rows.Close()
	var out []firingRow
	for rows.Next() {
		var f firingRow
		if err := rows.Scan(&f.at, &f.status, &f.reason, &f.count, &f.run, &f.trigger); err != nil {
			w.t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

func (w *world) runStatuses(id uuid.UUID) map[uuid.UUID]string {
	w.t.Helper()
	rows, err := w.st.Pool.Query(context.Background(), `SELECT id, status FROM runs WHERE schedule_id = $1`, id)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rows.Close()
	out := map[uuid.UUID]string{}
	for rows.Next() {
		var rid uuid.UUID
		var s string
		_ = rows.Scan(&rid, &s)
		out[rid] = s
	}
	return out
}

func (w *world) finishRuns(id uuid.UUID, status string) {
	w.t.Helper()
	if _, err := w.st.Pool.Exec(context.Background(), `UPDATE runs SET status = $2, finished_at = now() WHERE schedule_id = $1 AND status IN ('queued', 'running')`, id, status); err != nil {
		w.t.Fatal(err)
	}
}

func minute(m int) time.Time { return time.Date(2026, 1, 5, 10, m, 0, 0, time.UTC) }

func summary(fs []firingRow) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.at.Format("15:04")+" "+f.status+" "+f.reason)
	}
	return out
}

func sameList(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOverlapPolicies: an every-minute schedule whose first run is still queued when the next
// minutes come, under each policy; then the run ends and the next tick acts.
func TestOverlapPolicies(t *testing.T) {
	cases := []struct {
		overlap string
		// records after the ticks at 10:01, 10:02 and 10:03, then after the first run ended and a tick at 10:03:30
		want      []string
		wantAfter []string
		runs      int // runs at the end
		cancelled int
	}{
		{"skip", []string{"10:01 started on_time", "10:02 missed overlap", "10:03 missed overlap"}, nil, 1, 0},
		{"allow_all", []string{"10:01 started on_time", "10:02 started on_time", "10:03 started on_time"}, nil, 3, 0},
		{"cancel_other", []string{"10:01 started on_time", "10:02 started on_time", "10:03 started on_time"}, nil, 3, 2},
		{"buffer_one", []string{"10:01 started on_time", "10:02 buffered on_time", "10:03 missed buffer_full"},
			[]string{"10:01 started on_time", "10:02 started buffered", "10:03 missed buffer_full"}, 2, 0},
		{"buffer_all", []string{"10:01 started on_time", "10:02 buffered on_time", "10:03 buffered on_time"},
			[]string{"10:01 started on_time", "10:02 started buffered", "10:03 buffered on_time"}, 2, 0},
	}
	for _, c := range cases {
		t.Run(c.overlap, func(t *testing.T) {
			w := newWorld(t)
			sc := w.create(schedules.Input{Name: "every minute", Cron: "* * * * *", Overlap: c.overlap})
			if sc.NextRunAt == nil || !sc.NextRunAt.Equal(minute(1)) {
				t.Fatalf("next run %v", sc.NextRunAt)
			}
			for m := 1; m <= 3; m++ {
				w.fire(minute(m).Add(500 * time.Millisecond))
			}
			if got := summary(w.firings(sc.ID)); !sameList(got, c.want) {
				t.Fatalf("firings %q, want %q", got, c.want)
			}
			if c.wantAfter != nil {
				// The first run ends; the next tick starts the waiting firing.
				if _, err := w.st.Pool.Exec(context.Background(), `UPDATE runs SET status = 'passed' WHERE schedule_id = $1`, sc.ID); err != nil {
					t.Fatal(err)
				}
				w.fire(minute(3).Add(30 * time.Second))
				if got := summary(w.firings(sc.ID)); !sameList(got, c.wantAfter) {
					t.Fatalf("firings after the run ended %q, want %q", got, c.wantAfter)
				}
			}
			st := w.runStatuses(sc.ID)
			cancelled := 0
			for _, s := range st {
				if s == "cancelled" {
					cancelled++
				}
			}
			if len(st) != c.runs || cancelled != c.cancelled {
				t.Fatalf("runs %v", st)
			}
			for _, f := range w.firings(sc.ID) {
				if f.status == "started" && (f.run == nil || *f.trigger != "schedule") {
					t.Fatalf("started firing without its scheduled run: %+v", f)
				}
			}
		})
	}
}

// TestCatchUpWindowAndCap: after 20 minutes of downtime, the times older than the catch-up window
// are missed (downtime), of those inside it the most recent catchUpMax start and the others are
// missed (catch_up_cap); the time just passed is on time.
func TestCatchUpWindowAndCap(t *testing.T) {
	w := newWorld(t)
	sc := w.create(schedules.Input{Name: "catch up", Cron: "* * * * *", Overlap: "allow_all", CatchUpWindowSeconds: 600, CatchUpMax: 3})
	none := w.create(schedules.Input{Name: "no catch up", Cron: "* * * * *", Overlap: "allow_all"})
	w.fire(minute(20).Add(10 * time.Second))
	fs := w.firings(sc.ID)
	got := summary(fs)
	want := []string{"10:01 missed downtime", "10:11 missed catch_up_cap", "10:17 started catch_up", "10:18 started catch_up", "10:19 started catch_up", "10:20 started on_time"}
	if !sameList(got, want) {
		t.Fatalf("firings %q, want %q", got, want)
	}
	if fs[0].count != 10 || fs[1].count != 6 {
		t.Fatalf("missed counts %d %d", fs[0].count, fs[1].count)
	}
	if got := summary(w.firings(none.ID)); !sameList(got, []string{"10:01 missed downtime", "10:20 started on_time"}) {
		t.Fatalf("without a window: %q", got)
	}
	// Nothing fires twice: the same tick again records nothing.
	w.fire(minute(20).Add(11 * time.Second))
	if n := len(w.firings(sc.ID)); n != len(want) {
		t.Fatalf("%d records after a second tick", n)
	}
}

// TestConcurrentTicksFireOnce: many tickers at once, over many schedules and times, record every
// scheduled time exactly once and start exactly one run for each.
func TestConcurrentTicksFireOnce(t *testing.T) {
	w := newWorld(t)
	var ids []uuid.UUID
	for i := 0; i < 5; i++ {
		ids = append(ids, w.create(schedules.Input{Name: "s" + string(rune('a'+i)), Cron: "*/10 * * * * *", Overlap: "allow_all", CatchUpWindowSeconds: 3600, CatchUpMax: 1000}).ID)
	}
	for step := 1; step <= 12; step++ {
		at := t0.Add(time.Duration(step) * 5 * time.Second)
		var wg sync.WaitGroup
		for g := 0; g < 6; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := w.svc.FireDue(context.Background(), at); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	// Scheduled times in (t0, t0+60s]: 10:00:40, :50, 10:01:00, :10, :20, :30.
	for _, id := range ids {
		fs := w.firings(id)
		if len(fs) != 6 {
			t.Fatalf("schedule %s: %q", id, summary(fs))
		}
		runsOf := w.runStatuses(id)
		if len(runsOf) != 6 {
			t.Fatalf("schedule %s: %d runs", id, len(runsOf))
		}
		for i, f := range fs {
			want := time.Date(2026, 1, 5, 10, 0, 40, 0, time.UTC).Add(time.Duration(i) * 10 * time.Second)
			if !f.at.Equal(want) || f.status != "started" || f.run == nil {
				t.Fatalf("firing %d: %+v", i, f)
			}
		}
	}
}

// TestPauseResume: a paused schedule does not fire; resuming records the times it passed as missed
// (paused) and restarts after now, unless asked to catch up.
func TestPauseResume(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	plain := w.create(schedules.Input{Name: "plain", Cron: "* * * * *", Overlap: "allow_all", CatchUpWindowSeconds: 3600})
	catchUp := w.create(schedules.Input{Name: "catch up", Cron: "* * * * *", Overlap: "allow_all", CatchUpWindowSeconds: 3600, CatchUpMax: 2})
	note := "release freeze"
	for _, id := range []uuid.UUID{plain.ID, catchUp.ID} {
		sc, err := w.svc.Pause(ctx, id, &note, uuid.NullUUID{})
		if err != nil || sc.Status != "paused" || sc.PauseNote == nil || *sc.PauseNote != note || sc.NextRunAt != nil {
			t.Fatalf("pause: %v %+v", err, sc)
		}
	}
	w.fire(minute(5).Add(time.Second))
	if n := len(w.firings(plain.ID)) + len(w.firings(catchUp.ID)); n != 0 {
		t.Fatalf("a paused schedule fired %d times", n)
	}
	sc, err := w.svc.Resume(ctx, plain.ID, nil, false)
	if err != nil || sc.Status != "active" || sc.NextRunAt == nil || !sc.NextRunAt.Equal(minute(6)) {
		t.Fatalf("resume: %v %+v", err, sc)
	}
	if _, err := w.svc.Resume(ctx, catchUp.ID, nil, true); err != nil {
		t.Fatal(err)
	}
	w.fire(minute(5).Add(2 * time.Second))
	fs := w.firings(plain.ID)
	if got := summary(fs); !sameList(got, []string{"10:01 missed paused"}) || fs[0].count != 5 {
		t.Fatalf("plain after resume: %q", got)
	}
	if got := summary(w.firings(catchUp.ID)); !sameList(got, []string{"10:01 missed catch_up_cap", "10:03 started catch_up", "10:04 started catch_up", "10:05 started on_time"}) {
		t.Fatalf("catch-up after resume: %q", got)
	}
}

// TestPauseAfterFailures: the schedule pauses itself after N consecutive failed scheduled runs,
// saying why; a success in between resets the count.
func TestPauseAfterFailures(t *testing.T) {
	w := newWorld(t)
	n := 2
	sc := w.create(schedules.Input{Name: "flaky", Cron: "* * * * *", Overlap: "allow_all", PauseAfterFailures: &n})
	w.fire(minute(1).Add(time.Second))
	w.finishRuns(sc.ID, "failed")
	w.fire(minute(2).Add(time.Second))
	w.finishRuns(sc.ID, "passed")
	w.fire(minute(3).Add(time.Second))
	w.finishRuns(sc.ID, "errored")
	w.fire(minute(4).Add(time.Second))
	got, _ := w.svc.Get(context.Background(), sc.ID)
	if got.Status != "active" || got.ConsecutiveFailures != 1 {
		t.Fatalf("after fail, pass, error: %s, %d failures", got.Status, got.ConsecutiveFailures)
	}
	w.finishRuns(sc.ID, "timed_out")
	w.fire(minute(5).Add(time.Second))
	got, _ = w.svc.Get(context.Background(), sc.ID)
	if got.Status != "paused" || got.PauseNote == nil || *got.PauseNote != "paused by the scheduler after 2 consecutive failed runs" || got.PausedBy != nil {
		t.Fatalf("after two failures in a row: %+v", got)
	}
	if fs := w.firings(sc.ID); len(fs) != 4 {
		t.Fatalf("a schedule paused fired: %q", summary(fs))
	}
	// Resuming forgets the failures before it.
	got, _ = w.svc.Resume(context.Background(), sc.ID, nil, false)
	w.fire(minute(6).Add(time.Second))
	if got, _ = w.svc.Get(context.Background(), sc.ID); got.Status != "active" || got.ConsecutiveFailures != 0 {
		t.Fatalf("after resume: %s %d", got.Status, got.ConsecutiveFailures)
	}
}

// TestJitterStartEnd: a firing waits for its jitter, the same in every process; no firing before
// the start or after the end.
func TestJitterStartEnd(t *testing.T) {
	w := newWorld(t)
	start, end := minute(3), minute(5)
	sc := w.create(schedules.Input{Name: "bounded", Cron: "* * * * *", Overlap: "allow_all", StartAt: &start, EndAt: &end, JitterSeconds: 20})
	if !sc.NextRunAt.Equal(minute(3)) {
		t.Fatalf("first firing %v, want the start", sc.NextRunAt)
	}
	for s := 0; s < 8*60; s += 5 {
		w.fire(minute(0).Add(time.Duration(s) * time.Second))
		for _, f := range w.firings(sc.ID) {
			if due := f.at.Add(schedules.Jitter(sc.ID, f.at, 20)); w.now.Before(due) {
				t.Fatalf("%s fired at %s before its jittered time %s", f.at, w.now, due)
			}
		}
	}
	got := summary(w.firings(sc.ID))
	if !sameList(got, []string{"10:03 started on_time", "10:04 started on_time", "10:05 started on_time"}) {
		t.Fatalf("firings %q", got)
	}
	after, _ := w.svc.Get(context.Background(), sc.ID)
	if after.NextRunAt != nil {
		t.Fatalf("next run after the end: %v", after.NextRunAt)
	}
	jitters := map[time.Duration]bool{}
	for m := 0; m < 50; m++ {
		jitters[schedules.Jitter(sc.ID, minute(m), 20)] = true
	}
	if len(jitters) < 5 {
		t.Fatalf("jitter hardly varies: %v", jitters)
	}
}

// TestUpcomingPages: the upcoming firings of several schedules, read page by page, are the same as
// read at once, soonest first, and start at each schedule's cursor as FireDue fires them.
func TestUpcomingPages(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.create(schedules.Input{Name: "a", Cron: "*/20 * * * * *"})
	w.create(schedules.Input{Name: "b", Cron: "*/30 * * * * *"})
	w.create(schedules.Input{Name: "ny", Cron: "0 * * * *", Timezone: "America/New_York"})
	until := t0.Add(10 * time.Minute)
	all, more, err := w.svc.ListUpcoming(ctx, schedules.UpcomingFilter{AllWorkspaces: true, Until: until, Limit: 100})
	if err != nil || more {
		t.Fatal(err, more)
	}
	// 10:00:40 … 10:10:20 every 20 s (30), 10:01:00 … 10:10:30 every 30 s (20); the hourly one is after the window.
	if len(all) != 50 || !all[0].Firing.At.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("%d upcoming, first %v", len(all), all[0].Firing.At)
	}
	var paged []schedules.Upcoming
	f := schedules.UpcomingFilter{AllWorkspaces: true, Until: until, Limit: 4}
	for {
		page, more, err := w.svc.ListUpcoming(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, page...)
		if !more {
			break
		}
		last := page[len(page)-1]
		f.AfterAt, f.AfterID = &last.Firing.At, last.ScheduleID
	}
	if len(paged) != len(all) {
		t.Fatalf("%d paged, %d at once", len(paged), len(all))
	}
	for i := range all {
		if !paged[i].Firing.At.Equal(all[i].Firing.At) || paged[i].ScheduleID != all[i].ScheduleID {
			t.Fatalf("item %d: %v %s, want %v %s", i, paged[i].Firing.At, paged[i].ScheduleName, all[i].Firing.At, all[i].ScheduleName)
		}
		if i > 0 && all[i].Firing.At.Before(all[i-1].Firing.At) {
			t.Fatalf("not soonest first at %d", i)
		}
	}
	ny, _, _ := w.svc.ListUpcoming(ctx, schedules.UpcomingFilter{AllWorkspaces: true, Until: t0.Add(2 * time.Hour), Limit: 200})
	for _, u := range ny {
		if u.ScheduleName == "ny" && (u.Local.Minute() != 0 || u.Local.Location().String() != "America/New_York") {
			t.Fatalf("ny upcoming %+v", u)
		}
	}
}

// TestUpcomingReadsSchedulesInBatches: with more schedules than one batch reads, each with its own
// cadence, the firings paged in small pages (the walk stopping early) are those of a page as large
// as all of them (every schedule read), soonest first; a project or schedule filter keeps its own.
func TestUpcomingReadsSchedulesInBatches(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	const n = 70
	for i := 0; i < n; i++ {
		// Second i%60 of every minute, every (1 + i%4) minutes; one hourly schedule outside the window.
		w.create(schedules.Input{Name: fmt.Sprintf("s%02d", i), Cron: fmt.Sprintf("%d */%d * * * *", i%60, 1+i%4)})
	}
	late := w.create(schedules.Input{Name: "late", Cron: "0 0 * * *"})
	until := t0.Add(30 * time.Minute)
	all, more, err := w.svc.ListUpcoming(ctx, schedules.UpcomingFilter{AllWorkspaces: true, Until: until, Limit: 200})
	if err != nil || !more || len(all) != 200 {
		t.Fatalf("%d upcoming, more %v: %v", len(all), more, err)
	}
	for _, limit := range []int{1, 7, 50} {
		var paged []schedules.Upcoming
		f := schedules.UpcomingFilter{AllWorkspaces: true, Until: until, Limit: limit}
		for len(paged) < len(all) {
			page, more, err := w.svc.ListUpcoming(ctx, f)
			if err != nil || len(page) == 0 || !more {
				t.Fatalf("limit %d after %d: %d items, more %v: %v", limit, len(paged), len(page), more, err)
			}
			paged = append(paged, page...)
			last := page[len(page)-1]
			f.AfterAt, f.AfterID = &last.Firing.At, last.ScheduleID
		}
		for i := range all {
			if !paged[i].Firing.At.Equal(all[i].Firing.At) || paged[i].ScheduleID != all[i].ScheduleID {
				t.Fatalf("limit %d, item %d: %v %s, want %v %s", limit, i, paged[i].Firing.At, paged[i].ScheduleName, all[i].Firing.At, all[i].ScheduleName)
			}
			if i > 0 && all[i].Firing.At.Before(all[i-1].Firing.At) {
				t.Fatalf("not soonest first at %d", i)
			}
		}
	}
	one, _, err := w.svc.ListUpcoming(ctx, schedules.UpcomingFilter{AllWorkspaces: true, Project: ptrTo("shop"), Schedule: &late.ID, Until: t0.Add(48 * time.Hour), Limit: 5})
	if err != nil || len(one) != 2 || one[0].ScheduleName != "late" || !one[0].Firing.At.Equal(time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("the late schedule's firings: %+v, %v", one, err)
	}
	if none, _, err := w.svc.ListUpcoming(ctx, schedules.UpcomingFilter{AllWorkspaces: true, Project: ptrTo("other"), Until: until, Limit: 5}); err != nil || len(none) != 0 {
		t.Fatalf("another project's: %+v, %v", none, err)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestUpcomingStopsAtTheRightScheduleOnTies: the walk stops at a schedule whose cursor ties with
// the full page's last firing only when its id also sorts after it. Every-minute schedules (cursor
// 10:01) fill the page up to some firings at 10:02; the even-minute ones (cursor 10:02) read next
// must still enter it before those of larger ids.
func TestUpcomingStopsAtTheRightScheduleOnTies(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		w.create(schedules.Input{Name: fmt.Sprintf("minute%02d", i), Cron: "0 * * * * *"})
		w.create(schedules.Input{Name: fmt.Sprintf("even%02d", i), Cron: "0 */2 * * * *"})
	}
	until := t0.Add(5 * time.Minute)
	all, _, err := w.svc.ListUpcoming(ctx, schedules.UpcomingFilter{AllWorkspaces: true, Until: until, Limit: 200})
	if err != nil || len(all) != 5*20+2*20 || !all[0].Firing.At.Equal(t0.Add(30*time.Second)) || !all[20].Firing.At.Equal(t0.Add(90*time.Second)) {
		t.Fatalf("%d upcoming, %v", len(all), err)
	}
	for limit := 1; limit <= 60; limit++ {
		page, _, err := w.svc.ListUpcoming(ctx, schedules.UpcomingFilter{AllWorkspaces: true, Until: until, Limit: limit})
		if err != nil || len(page) != limit {
			t.Fatalf("limit %d: %d items, %v", limit, len(page), err)
		}
		for i := range page {
			if !page[i].Firing.At.Equal(all[i].Firing.At) || page[i].ScheduleID != all[i].ScheduleID {
				t.Fatalf("limit %d, item %d: %v %s, want %v %s", limit, i, page[i].Firing.At, page[i].ScheduleName, all[i].Firing.At, all[i].ScheduleName)
			}
		}
	}
}
