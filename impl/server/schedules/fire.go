package schedules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/store"
)

// maxDue bounds the scheduled times one tick handles for one schedule (an every-second schedule
// after a day of downtime); the rest are handled by the following ticks.
const maxDue = 10000

// dueBatch is how many due schedules one tick takes.
const dueBatch = 200

// scheduler is the audit actor of what the scheduler does by itself.
func schedulerContext(ctx context.Context) context.Context {
	return audit.WithRequest(ctx, &audit.Request{Operation: "fireSchedule", Actor: audit.Actor{Kind: "system", Name: "scheduler"}})
}

// FireDue fires what is due at now: schedules paused after too many failures are paused, waiting
// (buffered) firings whose turn came start, and every due scheduled time is started or recorded as
// missed with its reason. Each schedule is handled in its own transaction, taken with SKIP LOCKED, so
// any number of processes may call FireDue at once. It returns how many firings it recorded.
func (s *Service) FireDue(ctx context.Context, now time.Time) (int, error) {
	ctx = schedulerContext(ctx)
	if err := s.autoPause(ctx); err != nil {
		return 0, err
	}
	ids, err := s.st.DueSchedules(ctx, db.DueSchedulesParams{Now: now, RowLimit: dueBatch})
	if err != nil {
		return 0, err
	}
	total := 0
	var errs []error
	for _, id := range ids {
		var n int
		err := s.st.WithTx(ctx, func(q *db.Queries) error {
			var err error
			n, err = s.fire(ctx, q, id, now)
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("fire schedule %s: %w", id, err))
			continue
		}
		total += n
	}
	return total, errors.Join(errs...)
}

// autoPause pauses the schedules whose last pauseAfterFailures scheduled runs all failed.
func (s *Service) autoPause(ctx context.Context) error {
	rows, err := s.st.SchedulesToAutoPause(ctx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		note := fmt.Sprintf("paused by the scheduler after %d consecutive failed runs", *r.PauseAfterFailures)
		err := s.st.WithTx(ctx, func(q *db.Queries) error {
			cur, err := q.LockSchedule(ctx, r.ID)
			if store.IsNotFound(err) || (err == nil && cur.Status != "active") {
				return nil // another process has it, or paused it
			}
			if err != nil {
				return err
			}
			return s.pause(ctx, q, cur, &note, uuid.NullUUID{})
		})
		if err != nil {
			return fmt.Errorf("pause schedule %s: %w", r.ID, err)
		}
	}
	return nil
}

type due struct {
	at     time.Time
	reason string
}

// fire handles one schedule in the transaction q.
func (s *Service) fire(ctx context.Context, q *db.Queries, id uuid.UUID, now time.Time) (int, error) {
	sc, err := q.LockSchedule(ctx, id)
	if store.IsNotFound(err) {
		return 0, nil // another process is firing it, or it was deleted
	}
	if err != nil {
		return 0, err
	}
	if sc.Status != "active" {
		return 0, nil
	}
	c, err := compile(sc)
	if err != nil {
		return 0, err
	}
	proj, err := q.ScheduleProject(ctx, sc.ProjectID)
	if err != nil {
		return 0, err
	}
	sid := uuid.NullUUID{UUID: sc.ID, Valid: true}
	active, err := q.ActiveScheduleRuns(ctx, sid)
	if err != nil {
		return 0, err
	}
	buffered, err := q.BufferedFirings(ctx, sc.ID)
	if err != nil {
		return 0, err
	}
	recorded := 0
	// A waiting firing starts once nothing of the schedule is queued or running.
	if len(active) == 0 && len(buffered) > 0 {
		r, err := s.startRun(ctx, q, sc, proj, TriggerSchedule, buffered[0].ScheduledTime, uuid.NullUUID{})
		if err != nil {
			return 0, err
		}
		if err := q.StartBufferedFiring(ctx, db.StartBufferedFiringParams{ID: buffered[0].ID, RunID: uuid.NullUUID{UUID: r.ID, Valid: true}, FiredBy: s.cfg.ProcessID}); err != nil {
			return 0, err
		}
		active, buffered = []uuid.UUID{r.ID}, buffered[1:]
		recorded++
	}
	if sc.NextFireAt == nil {
		return recorded, nil
	}
	// The scheduled times that are due: from the cursor while time plus jitter has come.
	var times []time.Time
	t := sc.NextFireAt
	for t != nil && len(times) < maxDue && !t.Add(Jitter(sc.ID, *t, int(sc.JitterSeconds))).After(now) {
		if sc.EndAt != nil && t.After(*sc.EndAt) {
			t = nil
			break
		}
		times = append(times, *t)
		f, ok := c.spec.Next(*t, c.loc)
		if !ok || (sc.EndAt != nil && f.At.After(*sc.EndAt)) {
			t = nil
			break
		}
		t = &f.At
	}
	if err := q.SetScheduleCursor(ctx, db.SetScheduleCursorParams{ID: sc.ID, NextFireAt: t, NextDueAt: dueAt(sc.ID, t, int(sc.JitterSeconds))}); err != nil {
		return 0, err
	}
	// On time, within the catch-up window (capped, most recent first), or missed.
	window := time.Duration(sc.CatchUpWindowSeconds) * time.Second
	var start []due
	var late, downtime []time.Time
	for _, at := range times {
		lateness := now.Sub(at.Add(Jitter(sc.ID, at, int(sc.JitterSeconds))))
		switch {
		case lateness <= s.cfg.Grace:
			start = append(start, due{at, StartedOnTime})
		case lateness <= window:
			late = append(late, at)
		default:
			downtime = append(downtime, at)
		}
	}
	var capped []time.Time
	if len(late) > int(sc.CatchUpMax) {
		capped, late = late[:len(late)-int(sc.CatchUpMax)], late[len(late)-int(sc.CatchUpMax):]
	}
	if err := s.recordMissed(ctx, q, sc.ID, downtime, MissedDowntime); err != nil {
		return 0, err
	}
	if err := s.recordMissed(ctx, q, sc.ID, capped, MissedCatchUpCap); err != nil {
		return 0, err
	}
	recorded += len(downtime) + len(capped)
	var catchUp []due
	for _, at := range late {
		catchUp = append(catchUp, due{at, StartedCatchUp})
	}
	start = append(catchUp, start...)
	// The overlap policy decides what each remaining time does.
	for _, d := range start {
		busy := len(active) > 0 || len(buffered) > 0
		status, reason := "started", d.reason
		switch sc.Overlap {
		case OverlapSkip:
			if busy {
				status, reason = "missed", MissedOverlap
			}
		case OverlapBufferOne:
			if busy && len(buffered) >= 1 {
				status, reason = "missed", MissedBufferFull
			} else if busy {
				status = "buffered"
			}
		case OverlapBufferAll:
			if busy {
				status = "buffered"
			}
		case OverlapCancelOther:
			for _, rid := range active {
				if _, err := s.runs.Cancel(ctx, q, rid); err != nil {
					return 0, fmt.Errorf("cancel run %s: %w", rid, err)
				}
			}
			active = nil
		}
		f, err := q.InsertFiring(ctx, db.InsertFiringParams{ScheduleID: sc.ID, ScheduledTime: d.at, Status: status, Reason: reason,
			MissedCount: 1, FiredBy: s.cfg.ProcessID})
		if store.IsNotFound(err) {
			continue // this time was recorded already
		}
		if err != nil {
			return 0, err
		}
		recorded++
		switch status {
		case "buffered":
			buffered = append(buffered, f)
		case "started":
			r, err := s.startRun(ctx, q, sc, proj, TriggerSchedule, d.at, uuid.NullUUID{})
			if err != nil {
				return 0, err
			}
			if err := q.SetFiringRun(ctx, db.SetFiringRunParams{ID: f.ID, RunID: uuid.NullUUID{UUID: r.ID, Valid: true}}); err != nil {
				return 0, err
			}
			active = append(active, r.ID)
		}
	}
	return recorded, nil
}

// recordMissed records consecutive missed times as one firing record (the first time, the last and
// the count).
func (s *Service) recordMissed(ctx context.Context, q *db.Queries, id uuid.UUID, times []time.Time, reason string) error {
	if len(times) == 0 {
		return nil
	}
	p := db.InsertFiringParams{ScheduleID: id, ScheduledTime: times[0], Status: "missed", Reason: reason, MissedCount: int32(len(times)), FiredBy: s.cfg.ProcessID}
	if len(times) > 1 {
		p.LastTime = &times[len(times)-1]
	}
	if _, err := q.InsertFiring(ctx, p); err != nil && !store.IsNotFound(err) {
		return err
	}
	return nil
}

// startRun creates a queued run of the schedule's template through the runs service, in q, and
// audits it.
func (s *Service) startRun(ctx context.Context, q *db.Queries, sc db.Schedule, proj db.ScheduleProjectRow, trigger string, at time.Time, by uuid.NullUUID) (db.Run, error) {
	var tpl Template
	_ = json.Unmarshal(sc.Template, &tpl)
	settings := projects.DecodeSettings(proj.Settings)
	label := tpl.Label
	if label == nil {
		label = &sc.Name
	}
	p := runs.CreateParams{ProjectID: sc.ProjectID, Trigger: trigger, Label: label, Paths: tpl.Paths, Tags: tpl.Tags, Environment: tpl.Environment,
		Variables: tpl.Variables, ScheduleID: uuid.NullUUID{UUID: sc.ID, Valid: true}, TimeoutSeconds: settings.RunTimeoutSeconds,
		Retries: settings.Retries, CreatedBy: by}
	if tpl.TimeoutSeconds != nil {
		p.TimeoutSeconds = *tpl.TimeoutSeconds
	}
	if tpl.Retries != nil {
		p.Retries = *tpl.Retries
	}
	if p.Environment == nil && settings.DefaultEnvironment != "" {
		p.Environment = &settings.DefaultEnvironment
	}
	r, err := runs.Create(ctx, q, p)
	if err != nil {
		return r, err
	}
	return r, audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.ID.String(), Name: proj.Slug},
		map[string]any{"trigger": trigger, "scheduleId": sc.ID.String(), "scheduledTime": at.UTC().Format(time.RFC3339)})
}

// RunNow starts a run of the schedule's template now (trigger schedule_manual), leaving the cadence
// alone. The overlap policy applies unless force: skip and the buffer policies refuse (409) while a
// run of the schedule is queued or running, cancel_other cancels it, allow_all starts anyway.
func (s *Service) RunNow(ctx context.Context, id uuid.UUID, force bool, by uuid.NullUUID) (db.Run, string, error) {
	var r db.Run
	var project string
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		sc, err := q.LockScheduleWait(ctx, id)
		if store.IsNotFound(err) {
			return notFound(id)
		}
		if err != nil {
			return err
		}
		proj, err := q.ScheduleProject(ctx, sc.ProjectID)
		if err != nil {
			return err
		}
		project = proj.Slug
		reason := StartedManual
		if force {
			reason = StartedForced
		} else {
			active, err := q.ActiveScheduleRuns(ctx, uuid.NullUUID{UUID: id, Valid: true})
			if err != nil {
				return err
			}
			if len(active) > 0 {
				switch sc.Overlap {
				case OverlapSkip, OverlapBufferOne, OverlapBufferAll:
					return apierr.New(apierr.Conflict, fmt.Sprintf("run %s of this schedule is still %s and the overlap policy is %s", active[0], "active", sc.Overlap),
						"wait for it to end, cancel it, or send {\"force\": true}")
				case OverlapCancelOther:
					for _, rid := range active {
						if _, err := s.runs.Cancel(ctx, q, rid); err != nil {
							return err
						}
					}
				}
			}
		}
		if r, err = s.startRun(ctx, q, sc, proj, TriggerManual, s.cfg.Now(), by); err != nil {
			return err
		}
		_, err = q.InsertManualFiring(ctx, db.InsertManualFiringParams{ScheduleID: id, ScheduledTime: r.CreatedAt, Reason: reason,
			RunID: uuid.NullUUID{UUID: r.ID, Valid: true}, FiredBy: s.cfg.ProcessID})
		return err
	})
	return r, project, err
}
