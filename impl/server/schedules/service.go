package schedules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/textclip"
)

// Overlap policies.
const (
	OverlapSkip        = "skip"
	OverlapBufferOne   = "buffer_one"
	OverlapBufferAll   = "buffer_all"
	OverlapCancelOther = "cancel_other"
	OverlapAllowAll    = "allow_all"
)

// Reasons a firing was missed or started.
const (
	MissedDowntime   = "downtime"
	MissedCatchUpCap = "catch_up_cap"
	MissedOverlap    = "overlap"
	MissedBufferFull = "buffer_full"
	MissedPaused     = "paused"
	StartedOnTime    = "on_time"
	StartedCatchUp   = "catch_up"
	StartedBuffered  = "buffered"
	StartedManual    = "manual"
	StartedForced    = "forced"
)

// Run triggers of the runs a schedule starts.
const (
	TriggerSchedule = "schedule"
	TriggerManual   = "schedule_manual"
)

// Config tunes the scheduler.
type Config struct {
	// Grace is how late a firing may start and still count as on time (default 30s): a tick comes
	// every second, a busy or restarting process may be later. Later than that is a catch-up.
	Grace time.Duration
	// ProcessID names this process in the firings it records.
	ProcessID string
	// Now is the clock (default time.Now); tests move it.
	Now func() time.Time
}

// Service owns schedules: their validation and storage, pause and resume, run-now, the upcoming
// firings and the firing itself.
type Service struct {
	st   *store.Store
	runs *runs.Service
	log  *slog.Logger
	cfg  Config
}

// New returns the service.
func New(st *store.Store, rs *runs.Service, log *slog.Logger, cfg Config) *Service {
	if cfg.Grace <= 0 {
		cfg.Grace = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{st: st, runs: rs, log: log, cfg: cfg}
}

// Template is what each run of a schedule executes (the API's RunTemplate).
type Template struct {
	Paths          []string          `json:"paths,omitempty"`
	Tags           *string           `json:"tags,omitempty"`
	Environment    *string           `json:"environment,omitempty"`
	Variables      map[string]string `json:"variables,omitempty"`
	Label          *string           `json:"label,omitempty"`
	TimeoutSeconds *int              `json:"timeoutSeconds,omitempty"`
	Retries        *int              `json:"retries,omitempty"`
}

// Input is a schedule as created or replaced. Zero values take the defaults (time zone UTC,
// overlap skip, catch-up max 10).
type Input struct {
	Name, Cron, Timezone string
	Template             Template
	Overlap              string
	CatchUpWindowSeconds int
	CatchUpMax           int
	JitterSeconds        int
	StartAt, EndAt       *time.Time
	PauseAfterFailures   *int
	// Paused and Note: create the schedule paused, with this note (create only).
	Paused bool
	Note   *string
}

// User is who created or paused a schedule.
type User struct {
	ID                 uuid.UUID
	Email, DisplayName string
}

// FiringRecord is one recorded firing and its run.
type FiringRecord struct {
	ScheduledAt, RecordedAt time.Time
	Manual                  bool
	Status, Reason          string
	MissedCount             int
	LastScheduledAt         *time.Time
	RunID                   *uuid.UUID
	RunStatus               *string
}

// Schedule is a schedule as the API shows it.
type Schedule struct {
	ID                   uuid.UUID
	Project              string
	WorkspaceID          uuid.UUID
	Name, Cron, Timezone string
	Template             Template
	Overlap              string
	CatchUpWindowSeconds int
	CatchUpMax           int
	JitterSeconds        int
	StartAt, EndAt       *time.Time
	PauseAfterFailures   *int
	Status               string
	PausedAt             *time.Time
	PausedBy             *User
	PauseNote            *string
	NextRunAt            *time.Time
	LastRunAt            *time.Time
	LastRunID            *uuid.UUID
	LastRunStatus        *string
	ConsecutiveFailures  int
	RecentFirings        []FiringRecord
	CreatedBy            *User
	CreatedAt, UpdatedAt time.Time
}

func notFound(id uuid.UUID) error {
	return apierr.New(apierr.NotFound, "schedule "+id.String()+" not found", "list schedules with GET /api/schedules")
}

// Workspace returns the workspace of a schedule, for the caller's authorization.
func (s *Service) Workspace(ctx context.Context, id uuid.UUID) (uuid.UUID, error) {
	r, err := s.st.GetSchedule(ctx, id)
	if store.IsNotFound(err) {
		return uuid.Nil, notFound(id)
	}
	if err != nil {
		return uuid.Nil, err
	}
	return r.WorkspaceID, nil
}

// compiled is a schedule's expression and zone.
type compiled struct {
	spec *Spec
	loc  *time.Location
}

// validate checks an input and returns its compiled expression and zone; problems are
// validation_failed naming the body member.
func (s *Service) validate(ctx context.Context, projectID uuid.UUID, in *Input) (compiled, error) {
	var c compiled
	if strings.TrimSpace(in.Name) == "" {
		return c, apierr.New(apierr.ValidationFailed, "the name is empty", "body member /name: a name of 1 to 100 characters")
	}
	spec, err := Parse(in.Cron)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return c, apierr.Wrap(err, apierr.ValidationFailed, "the cron expression does not parse: "+pe.Error(),
				"body member /cron: five fields (minute hour day-of-month month day-of-week), six with seconds first, or @hourly, @daily, @weekly, @monthly, @yearly")
		}
		return c, err
	}
	if in.Timezone == "" {
		in.Timezone = "UTC"
	}
	loc, err := LoadZone(in.Timezone)
	if err != nil {
		return c, err
	}
	switch in.Overlap {
	case "":
		in.Overlap = OverlapSkip
	case OverlapSkip, OverlapBufferOne, OverlapBufferAll, OverlapCancelOther, OverlapAllowAll:
	default:
		return c, apierr.New(apierr.ValidationFailed, "unknown overlap policy "+in.Overlap, "body member /overlap: skip, buffer_one, buffer_all, cancel_other or allow_all")
	}
	if in.CatchUpMax == 0 {
		in.CatchUpMax = 10
	}
	if in.CatchUpWindowSeconds < 0 || in.CatchUpMax < 1 || in.JitterSeconds < 0 {
		return c, apierr.New(apierr.ValidationFailed, "negative timing setting", "body members /catchUpWindowSeconds, /catchUpMax, /jitterSeconds")
	}
	if in.StartAt != nil && in.EndAt != nil && !in.EndAt.After(*in.StartAt) {
		return c, apierr.New(apierr.ValidationFailed, "the end is not after the start", "body member /endAt: a time after /startAt")
	}
	if err := s.checkTemplate(ctx, projectID, in.Template); err != nil {
		return c, err
	}
	return compiled{spec: spec, loc: loc}, nil
}

// LoadZone returns the IANA zone name, or validation_failed.
func LoadZone(name string) (*time.Location, error) {
	// time.LoadLocation also reads files named by a path; an IANA name has no leading slash or dots.
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "..") || strings.EqualFold(name, "local") {
		return nil, apierr.New(apierr.ValidationFailed, fmt.Sprintf("unknown time zone %q", textclip.Clip(name, 40)), "body member /timezone: an IANA time zone such as Europe/Berlin or UTC")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, apierr.Wrap(err, apierr.ValidationFailed, fmt.Sprintf("unknown time zone %q", textclip.Clip(name, 40)), "body member /timezone: an IANA time zone such as Europe/Berlin or UTC")
	}
	return loc, nil
}

// checkTemplate refuses a template whose tag expression does not compile or whose environment or
// paths do not exist, when the schedule is saved rather than at each firing.
func (s *Service) checkTemplate(ctx context.Context, projectID uuid.UUID, t Template) error {
	if t.Tags != nil {
		if _, err := runner.ParseTagExpr(*t.Tags); err != nil {
			return apierr.Wrap(err, apierr.ValidationFailed, "the tag expression does not compile", "body member /run/tags: "+textclip.Clip(err.Error(), 40))
		}
	}
	if t.Environment != nil {
		if _, err := s.st.GetEnvironment(ctx, db.GetEnvironmentParams{ProjectID: projectID, Name: *t.Environment}); err != nil {
			if store.IsNotFound(err) {
				return apierr.New(apierr.ValidationFailed, "environment "+*t.Environment+" does not exist", "body member /run/environment: name one of the project's environments")
			}
			return err
		}
	}
	if len(t.Paths) == 0 {
		return nil
	}
	features, err := s.st.AllFeatures(ctx, projectID)
	if err != nil {
		return err
	}
	for i, want := range t.Paths {
		w := strings.Trim(want, "/")
		found := w == "" || w == "."
		for _, f := range features {
			if found || f.Path == w || strings.HasPrefix(f.Path, w+"/") {
				found = true
				break
			}
		}
		if !found {
			return apierr.New(apierr.ValidationFailed, "path "+textclip.Clip(want, 40)+" matches no feature", fmt.Sprintf("body member /run/paths/%d: a feature file or folder of the project", i))
		}
	}
	return nil
}

// firstAfter is the cursor of a schedule made or reset at now: its first firing after now and after
// its start, unless past its end.
func firstAfter(c compiled, now time.Time, startAt, endAt *time.Time) *time.Time {
	from := now
	if startAt != nil && startAt.Add(-time.Nanosecond).After(from) {
		from = startAt.Add(-time.Nanosecond)
	}
	f, ok := c.spec.Next(from, c.loc)
	if !ok || (endAt != nil && f.At.After(*endAt)) {
		return nil
	}
	return &f.At
}

func dueAt(id uuid.UUID, at *time.Time, jitter int) *time.Time {
	if at == nil {
		return nil
	}
	d := at.Add(Jitter(id, *at, jitter))
	return &d
}

func i32p(p *int) *int32 {
	if p == nil {
		return nil
	}
	v := int32(*p)
	return &v
}

// Create stores a schedule of the project; its first firing is the first matching time after now
// (and after its start).
func (s *Service) Create(ctx context.Context, projectID uuid.UUID, projectSlug string, in Input, by uuid.NullUUID) (Schedule, error) {
	c, err := s.validate(ctx, projectID, &in)
	if err != nil {
		return Schedule{}, err
	}
	tpl, _ := json.Marshal(in.Template)
	now := s.cfg.Now()
	status := "active"
	var pausedAt *time.Time
	var pausedBy uuid.NullUUID
	note := in.Note
	if in.Paused {
		status, pausedAt, pausedBy = "paused", &now, by
	} else {
		note = nil // a note belongs to a pause
	}
	id := uuid.New()
	next := firstAfter(c, now, in.StartAt, in.EndAt)
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		row, err := q.CreateSchedule(ctx, db.CreateScheduleParams{ProjectID: projectID, Name: in.Name, Cron: in.Cron, Timezone: in.Timezone,
			Template: tpl, Overlap: in.Overlap, CatchUpWindowSeconds: int32(in.CatchUpWindowSeconds), CatchUpMax: int32(in.CatchUpMax),
			JitterSeconds: int32(in.JitterSeconds), StartAt: in.StartAt, EndAt: in.EndAt, Status: status, PausedAt: pausedAt, PausedBy: pausedBy,
			PauseNote: note, PauseAfterFailures: i32p(in.PauseAfterFailures), NextFireAt: next, NextDueAt: nil, CreatedBy: by})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "schedule "+in.Name+" exists in project "+projectSlug, "body member /name: choose another name, or PUT /api/schedules/{scheduleId}")
		}
		if err != nil {
			return err
		}
		id = row.ID
		if err := q.SetScheduleCursor(ctx, db.SetScheduleCursorParams{ID: row.ID, NextFireAt: next, NextDueAt: dueAt(row.ID, next, in.JitterSeconds)}); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "schedule", ID: row.ID.String(), Name: projectSlug + "/" + in.Name},
			map[string]any{"cron": in.Cron, "timezone": in.Timezone, "overlap": in.Overlap, "status": status})
	})
	if err != nil {
		return Schedule{}, err
	}
	return s.Get(ctx, id)
}

// Replace replaces a schedule's settings; the cadence restarts from now, and firings it kept
// waiting are dropped (recorded as missed, reason overlap).
func (s *Service) Replace(ctx context.Context, id uuid.UUID, in Input) (Schedule, error) {
	cur, err := s.st.GetSchedule(ctx, id)
	if store.IsNotFound(err) {
		return Schedule{}, notFound(id)
	}
	if err != nil {
		return Schedule{}, err
	}
	c, err := s.validate(ctx, cur.Schedule.ProjectID, &in)
	if err != nil {
		return Schedule{}, err
	}
	tpl, _ := json.Marshal(in.Template)
	next := firstAfter(c, s.cfg.Now(), in.StartAt, in.EndAt)
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		if _, err := q.LockScheduleWait(ctx, id); err != nil {
			if store.IsNotFound(err) {
				return notFound(id)
			}
			return err
		}
		_, err := q.UpdateSchedule(ctx, db.UpdateScheduleParams{ID: id, Name: in.Name, Cron: in.Cron, Timezone: in.Timezone, Template: tpl,
			Overlap: in.Overlap, CatchUpWindowSeconds: int32(in.CatchUpWindowSeconds), CatchUpMax: int32(in.CatchUpMax), JitterSeconds: int32(in.JitterSeconds),
			StartAt: in.StartAt, EndAt: in.EndAt, PauseAfterFailures: i32p(in.PauseAfterFailures), NextFireAt: next, NextDueAt: dueAt(id, next, in.JitterSeconds)})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "schedule "+in.Name+" exists in project "+cur.ProjectSlug, "body member /name: choose another name")
		}
		if err != nil {
			return err
		}
		if err := q.DropBufferedFirings(ctx, db.DropBufferedFiringsParams{ScheduleID: id, Reason: MissedOverlap}); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "schedule", ID: id.String(), Name: cur.ProjectSlug + "/" + in.Name},
			map[string]any{"cron": in.Cron, "timezone": in.Timezone, "overlap": in.Overlap})
	})
	if err != nil {
		return Schedule{}, err
	}
	return s.Get(ctx, id)
}

// Delete removes a schedule and its firing records; the runs it started stay, with their schedule id.
func (s *Service) Delete(ctx context.Context, id uuid.UUID) error {
	return s.st.WithTx(ctx, func(q *db.Queries) error {
		cur, err := q.GetSchedule(ctx, id)
		if store.IsNotFound(err) {
			return notFound(id)
		}
		if err != nil {
			return err
		}
		if _, err := q.DeleteSchedule(ctx, id); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "schedule", ID: id.String(), Name: cur.ProjectSlug + "/" + cur.Schedule.Name}, nil)
	})
}

// Pause stops a schedule firing, with who and why; pausing a paused schedule changes nothing.
// Firings it kept waiting are recorded as missed (reason paused).
func (s *Service) Pause(ctx context.Context, id uuid.UUID, note *string, by uuid.NullUUID) (Schedule, error) {
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		cur, err := q.LockScheduleWait(ctx, id)
		if store.IsNotFound(err) {
			return notFound(id)
		}
		if err != nil {
			return err
		}
		if cur.Status == "paused" {
			audit.NoChange(ctx)
			return nil
		}
		return s.pause(ctx, q, cur, note, by)
	})
	if err != nil {
		return Schedule{}, err
	}
	return s.Get(ctx, id)
}

func (s *Service) pause(ctx context.Context, q *db.Queries, cur db.Schedule, note *string, by uuid.NullUUID) error {
	if _, err := q.PauseSchedule(ctx, db.PauseScheduleParams{ID: cur.ID, PausedBy: by, PauseNote: note}); err != nil {
		return err
	}
	if err := q.DropBufferedFirings(ctx, db.DropBufferedFiringsParams{ScheduleID: cur.ID, Reason: MissedPaused}); err != nil {
		return err
	}
	p, err := q.ScheduleProject(ctx, cur.ProjectID)
	if err != nil {
		return err
	}
	return audit.Record(ctx, q, audit.Target{Kind: "schedule", ID: cur.ID.String(), Name: p.Slug + "/" + cur.Name},
		map[string]any{"status": "paused", "note": deref(note)})
}

// Resume lets a paused schedule fire again. Without catchUp the times it passed while paused are
// recorded as missed (reason paused) and the cadence restarts after now; with catchUp they are
// handled like downtime (catch-up window and cap) by the next tick.
func (s *Service) Resume(ctx context.Context, id uuid.UUID, note *string, catchUp bool) (Schedule, error) {
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		cur, err := q.LockScheduleWait(ctx, id)
		if store.IsNotFound(err) {
			return notFound(id)
		}
		if err != nil {
			return err
		}
		if cur.Status == "active" {
			audit.NoChange(ctx)
			return nil
		}
		c, err := compile(cur)
		if err != nil {
			return err
		}
		now := s.cfg.Now()
		next := cur.NextFireAt
		if !catchUp || next == nil {
			if next != nil && !next.After(now) {
				// The times passed while paused, in one record.
				var missed []time.Time
				t := *next
				for !t.After(now) && len(missed) < maxDue && (cur.EndAt == nil || !t.After(*cur.EndAt)) {
					missed = append(missed, t)
					f, ok := c.spec.Next(t, c.loc)
					if !ok {
						break
					}
					t = f.At
				}
				if err := s.recordMissed(ctx, q, cur.ID, missed, MissedPaused); err != nil {
					return err
				}
			}
			next = firstAfter(c, now, cur.StartAt, cur.EndAt)
		}
		if _, err := q.ResumeSchedule(ctx, db.ResumeScheduleParams{ID: id, NextFireAt: next, NextDueAt: dueAt(id, next, int(cur.JitterSeconds))}); err != nil {
			return err
		}
		p, err := q.ScheduleProject(ctx, cur.ProjectID)
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "schedule", ID: id.String(), Name: p.Slug + "/" + cur.Name},
			map[string]any{"status": "active", "note": deref(note), "catchUp": catchUp})
	})
	if err != nil {
		return Schedule{}, err
	}
	return s.Get(ctx, id)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func compile(sc db.Schedule) (compiled, error) {
	k := compiledKey{cron: sc.Cron, zone: sc.Timezone}
	compiledCache.RLock()
	c, ok := compiledCache.m[k]
	compiledCache.RUnlock()
	if ok {
		return c, nil
	}
	spec, err := Parse(sc.Cron)
	if err != nil {
		return compiled{}, fmt.Errorf("schedule %s: stored cron %q: %w", sc.ID, sc.Cron, err)
	}
	loc, err := storedZone(sc.Timezone)
	if err != nil {
		return compiled{}, fmt.Errorf("schedule %s: stored zone %q: %w", sc.ID, sc.Timezone, err)
	}
	c = compiled{spec: spec, loc: loc}
	compiledCache.Lock()
	if len(compiledCache.m) >= maxCompiled {
		clear(compiledCache.m)
	}
	compiledCache.m[k] = c
	compiledCache.Unlock()
	return c, nil
}

// compiledCache holds the stored schedules' compiled expressions and zones by their text: the
// upcoming list and the firing loop compile every schedule they read, and a Spec is never
// changed once parsed. Only what compiled is kept, at most maxCompiled of them (emptied when full:
// the schedules of a page share few expressions, and parsing one again is cheap).
var compiledCache = struct {
	sync.RWMutex
	m map[compiledKey]compiled
}{m: map[compiledKey]compiled{}}

type compiledKey struct{ cron, zone string }

const maxCompiled = 4096

// zones holds the stored schedules' zones by name: time.LoadLocation reads and parses the zone's
// file on every call (but for UTC), and the upcoming list and the firing loop compile every
// schedule they read. Only zones that loaded are kept (a few hundred names exist).
var zones sync.Map // string → *time.Location

func storedZone(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, l)
	return l, nil
}

// recentFirings is how many firings a schedule shows.
const recentFirings = 20

// Get returns a schedule with its next firing, its last run, its failure streak and its recent firings.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (Schedule, error) {
	r, err := s.st.GetSchedule(ctx, id)
	if store.IsNotFound(err) {
		return Schedule{}, notFound(id)
	}
	if err != nil {
		return Schedule{}, err
	}
	out := s.view(ctx, r.Schedule, r.ProjectSlug, r.WorkspaceID)
	fs, err := s.st.RecentFirings(ctx, db.RecentFiringsParams{ScheduleID: id, RowLimit: recentFirings})
	if err != nil {
		return Schedule{}, err
	}
	for _, f := range fs {
		out.RecentFirings = append(out.RecentFirings, FiringRecord{ScheduledAt: f.ScheduledTime, RecordedAt: f.RecordedAt, Manual: f.Manual,
			Status: f.Status, Reason: f.Reason, MissedCount: int(f.MissedCount), LastScheduledAt: f.LastTime, RunID: nullUUID(f.RunID), RunStatus: f.RunStatus})
	}
	sid := uuid.NullUUID{UUID: id, Valid: true}
	if last, err := s.st.LastScheduleRun(ctx, sid); err == nil {
		out.LastRunAt, out.LastRunID, out.LastRunStatus = &last.CreatedAt, &last.ID, &last.Status
	} else if !store.IsNotFound(err) {
		return Schedule{}, err
	}
	n, err := s.st.ConsecutiveFailures(ctx, db.ConsecutiveFailuresParams{ScheduleID: sid, Since: r.Schedule.FailuresSince})
	if err != nil {
		return Schedule{}, err
	}
	out.ConsecutiveFailures = int(n)
	return out, nil
}

func nullUUID(u uuid.NullUUID) *uuid.UUID {
	if !u.Valid {
		return nil
	}
	return &u.UUID
}

func int32p(p *int32) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}

// view is a stored schedule as shown, without the parts that take further queries; its creator
// and pauser looked up.
func (s *Service) view(ctx context.Context, sc db.Schedule, project string, workspace uuid.UUID) Schedule {
	return s.viewWith(sc, project, workspace, s.user(ctx, sc.CreatedBy), s.user(ctx, sc.PausedBy))
}

// viewWith is view with the creator and pauser given.
func (s *Service) viewWith(sc db.Schedule, project string, workspace uuid.UUID, createdBy, pausedBy *User) Schedule {
	out := Schedule{ID: sc.ID, Project: project, WorkspaceID: workspace, Name: sc.Name, Cron: sc.Cron, Timezone: sc.Timezone,
		Overlap: sc.Overlap, CatchUpWindowSeconds: int(sc.CatchUpWindowSeconds), CatchUpMax: int(sc.CatchUpMax), JitterSeconds: int(sc.JitterSeconds),
		StartAt: sc.StartAt, EndAt: sc.EndAt, PauseAfterFailures: int32p(sc.PauseAfterFailures), Status: sc.Status, PausedAt: sc.PausedAt,
		PauseNote: sc.PauseNote, CreatedAt: sc.CreatedAt, UpdatedAt: sc.UpdatedAt, RecentFirings: []FiringRecord{}, PausedBy: pausedBy, CreatedBy: createdBy}
	_ = json.Unmarshal(sc.Template, &out.Template)
	if sc.Status == "active" {
		out.NextRunAt = sc.NextFireAt
	}
	return out
}

func (s *Service) user(ctx context.Context, id uuid.NullUUID) *User {
	if !id.Valid {
		return nil
	}
	u, err := s.st.GetUser(ctx, id.UUID)
	if err != nil {
		return nil
	}
	return &User{ID: u.ID, Email: u.Email, DisplayName: u.DisplayName}
}

// ListFilter selects schedules: those of the workspaces given (all of them for an instance
// administrator), optionally of one project and status, a page after a cursor.
type ListFilter struct {
	UserID        uuid.UUID
	AllWorkspaces bool
	Project       *string
	Status        *string
	AfterAt       *time.Time
	AfterID       uuid.UUID
	Limit         int
}

// List returns a page of schedules (oldest first) and whether another page follows; each one
// without its firings and last run, its creator and pauser read with it.
func (s *Service) List(ctx context.Context, f ListFilter) ([]Schedule, bool, error) {
	ws, err := s.workspaces(ctx, f.UserID, f.AllWorkspaces)
	if err != nil {
		return nil, false, err
	}
	p := db.ListSchedulesParams{AllWorkspaces: f.AllWorkspaces, WorkspaceIds: ws, Project: f.Project, Status: f.Status, RowLimit: int32(f.Limit + 1)}
	if f.AfterAt != nil {
		p.AfterAt, p.AfterID = f.AfterAt, uuid.NullUUID{UUID: f.AfterID, Valid: true}
	}
	return s.list(ctx, p, f.Limit)
}

func (s *Service) workspaces(ctx context.Context, user uuid.UUID, all bool) ([]uuid.UUID, error) {
	if all {
		return []uuid.UUID{}, nil
	}
	return s.st.UserWorkspaceIDs(ctx, user)
}

// Upcoming is one future firing of a schedule.
type Upcoming struct {
	ScheduleID   uuid.UUID
	ScheduleName string
	Project      string
	Timezone     string
	Firing       Firing
	Local        time.Time
	StartsBy     *time.Time // with jitter
}

// UpcomingFilter selects upcoming firings: of the caller's schedules, optionally one project or one schedule, up
// to until, a page after (AfterAt, AfterID).
type UpcomingFilter struct {
	UserID        uuid.UUID
	AllWorkspaces bool
	Project       *string
	Schedule      *uuid.UUID // only this schedule
	Until         time.Time
	AfterAt       *time.Time
	AfterID       uuid.UUID
	Limit         int
}

// ListUpcoming returns the next firings of the active schedules, soonest first (ties by schedule
// id), as FireDue will fire them: from each schedule's cursor, with the DST decisions, start and end.
//
// No firing of a schedule comes before its cursor (next_fire_at), so the schedules are read in
// batches in the cursor's order and their firings merged (a heap of each schedule read's next
// firing): the soonest firing is given once no schedule not yet read can fire before it, and the
// walk ends when the page (and the one firing that tells whether more follow) is full. A page
// reads the schedules that fire before its end, not every schedule, and computes a schedule's
// following firing only when it may still enter the page.
func (s *Service) ListUpcoming(ctx context.Context, f UpcomingFilter) ([]Upcoming, bool, error) {
	ws, err := s.workspaces(ctx, f.UserID, f.AllWorkspaces)
	if err != nil {
		return nil, false, err
	}
	p := db.UpcomingSchedulesParams{Until: f.Until, AllWorkspaces: f.AllWorkspaces, WorkspaceIds: ws, Project: f.Project, RowLimit: int32(upcomingBatch(f.Limit))}
	if f.Schedule != nil {
		p.Schedule = uuid.NullUUID{UUID: *f.Schedule, Valid: true}
	}
	keep := f.Limit + 1
	out := make([]Upcoming, 0, min(keep, 256))
	var (
		m     upcomingMerge
		rows  []db.UpcomingSchedulesRow
		next  int  // the first row not yet read into the merge
		ended bool // no schedule after the last row read
	)
	for len(out) < keep {
		soonest, any := m.soonest()
		// Every schedule not yet read sorts after the last one read, (p.AfterAt, p.AfterID), and
		// none of its firings comes before its cursor: read more unless the soonest comes first.
		if next == len(rows) && !ended && (!any || !soonest.before(*p.AfterAt, p.AfterID.UUID)) {
			if rows, err = s.st.UpcomingSchedules(ctx, p); err != nil {
				return nil, false, err
			}
			next, ended = 0, len(rows) < int(p.RowLimit)
			m.srcs = slices.Grow(m.srcs, len(rows))
			if len(rows) > 0 {
				last := rows[len(rows)-1]
				p.AfterAt, p.AfterID = last.NextFireAt, uuid.NullUUID{UUID: last.ID, Valid: true}
			}
			continue
		}
		if next < len(rows) && (!any || !soonest.before(*rows[next].NextFireAt, rows[next].ID)) {
			s.startUpcoming(&m, rows[next], f)
			next++
			continue
		}
		if !any {
			break
		}
		src := &m.srcs[m.heap[0]]
		if src.pending {
			// Its firing after the one given: the soonest once known, or gone past the window.
			src.pending = false
			fi, ok := src.c.spec.Next(src.given, src.c.loc)
			if !src.settle(fi, ok, f) {
				m.pop()
			} else {
				m.down(0)
			}
			continue
		}
		u := Upcoming{ScheduleID: src.id, ScheduleName: src.name, Project: src.project, Timezone: src.zone, Firing: src.fi, Local: src.fi.At.In(src.c.loc)}
		if src.jitter > 0 {
			u.StartsBy = dueAt(src.id, &src.fi.At, int(src.jitter))
		}
		out = append(out, u)
		// Its next firing is strictly later: keep the schedule with that bound as its key, and
		// compute the firing only if the bound becomes the soonest.
		src.pending, src.given = true, src.fi.At
		src.fi.At = src.fi.At.Add(time.Nanosecond)
		m.down(0)
	}
	if len(out) > f.Limit {
		return out[:f.Limit], true, nil
	}
	return out, false, nil
}

// upcomingBatch is how many schedules ListUpcoming reads per statement for a page of limit
// firings: the page keeps limit+1 firings, and one schedule more shows whether the walk can stop,
// so a page whose schedules each fire in it takes one statement.
func upcomingBatch(limit int) int { return max(limit+2, 32) }

// upcomingSource is a schedule read by ListUpcoming and its next firing for the page (pending:
// fi.At is only a bound, just after given, the firing last given).
type upcomingSource struct {
	id            uuid.UUID
	name, project string
	zone          string
	jitter        int32
	endAt         *time.Time
	c             compiled
	fi            Firing
	given         time.Time
	pending       bool
}

// before reports whether the source's next firing sorts before (at, id).
func (u *upcomingSource) before(at time.Time, id uuid.UUID) bool {
	if !u.fi.At.Equal(at) {
		return u.fi.At.Before(at)
	}
	return afterID(id, u.id)
}

// settle makes fi, or the first firing after it that the page may show, the source's next
// firing; false when there is none within the window (until, the schedule's end).
func (u *upcomingSource) settle(fi Firing, ok bool, f UpcomingFilter) bool {
	for ; ok; fi, ok = u.c.spec.Next(fi.At, u.c.loc) {
		if fi.At.After(f.Until) || (u.endAt != nil && fi.At.After(*u.endAt)) {
			return false
		}
		if f.AfterAt != nil && (fi.At.Before(*f.AfterAt) || (fi.At.Equal(*f.AfterAt) && !afterID(u.id, f.AfterID))) {
			continue
		}
		u.fi = fi
		return true
	}
	return false
}

// startUpcoming adds a schedule to the merge with its first firing for the page: its cursor's own,
// or on a later page the first from the page's start (a firing at that very instant stays, for the
// schedules that sort after it); not at all when it has none in the window.
func (s *Service) startUpcoming(m *upcomingMerge, r db.UpcomingSchedulesRow, f UpcomingFilter) {
	c, err := compile(db.Schedule{ID: r.ID, Cron: r.Cron, Timezone: r.Timezone})
	if err != nil {
		s.log.Error("schedule does not compile", "schedule", r.ID, "err", err)
		return
	}
	src := upcomingSource{id: r.ID, name: r.Name, project: r.ProjectSlug, zone: r.Timezone, jitter: r.JitterSeconds, endAt: r.EndAt, c: c}
	fi, ok := resolveInstant(c, *r.NextFireAt), true
	if f.AfterAt != nil && f.AfterAt.After(*r.NextFireAt) {
		fi, ok = c.spec.Next(f.AfterAt.Add(-time.Nanosecond), c.loc)
	}
	if src.settle(fi, ok, f) {
		m.push(src)
	}
}

// upcomingMerge is a min-heap of the schedules read (indexes into srcs), by next firing then id.
type upcomingMerge struct {
	srcs []upcomingSource
	heap []int32
}

func (m *upcomingMerge) soonest() (*upcomingSource, bool) {
	if len(m.heap) == 0 {
		return nil, false
	}
	return &m.srcs[m.heap[0]], true
}

func (m *upcomingMerge) less(i, j int) bool {
	b := &m.srcs[m.heap[j]]
	return m.srcs[m.heap[i]].before(b.fi.At, b.id)
}

func (m *upcomingMerge) push(src upcomingSource) {
	m.srcs = append(m.srcs, src)
	m.heap = append(m.heap, int32(len(m.srcs)-1))
	for i := len(m.heap) - 1; i > 0; {
		parent := (i - 1) / 2
		if !m.less(i, parent) {
			break
		}
		m.heap[i], m.heap[parent] = m.heap[parent], m.heap[i]
		i = parent
	}
}

func (m *upcomingMerge) pop() {
	n := len(m.heap) - 1
	m.heap[0] = m.heap[n]
	m.heap = m.heap[:n]
	if n > 0 {
		m.down(0)
	}
}

func (m *upcomingMerge) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(m.heap) {
			return
		}
		k := l
		if r := l + 1; r < len(m.heap) && m.less(r, l) {
			k = r
		}
		if !m.less(k, i) {
			return
		}
		m.heap[i], m.heap[k] = m.heap[k], m.heap[i]
		i = k
	}
}

// afterID reports whether a sorts after b as their text does (lowercase hex: the bytes' order).
func afterID(a, b uuid.UUID) bool { return bytes.Compare(a[:], b[:]) > 0 }

// resolveInstant is the firing of a stored scheduled time, with the DST decision that produced it.
func resolveInstant(c compiled, at time.Time) Firing {
	if f, ok := c.spec.Next(at.Add(-time.Second), c.loc); ok && f.At.Equal(at) {
		return f
	}
	return Firing{At: at, Wall: wallOf(at, c.loc)}
}

// Preview returns the firings a schedule with this cron expression and zone would have after
// from (and after startAt, up to until), at most limit of them, computed as ListUpcoming and
// FireDue compute them (the same DST decisions), and whether more remain. A bad expression or
// zone is validation_failed naming the query parameter.
func (s *Service) Preview(expr, zone string, from, until time.Time, limit int) ([]Upcoming, bool, error) {
	spec, err := Parse(expr)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return nil, false, apierr.Wrap(err, apierr.ValidationFailed, "the cron expression does not parse: "+pe.Error(),
				"query parameter cron: five fields (minute hour day-of-month month day-of-week), six with seconds first, or @hourly, @daily, @weekly, @monthly, @yearly")
		}
		return nil, false, err
	}
	if zone == "" {
		zone = "UTC"
	}
	loc, err := LoadZone(zone)
	if err != nil {
		return nil, false, apierr.New(apierr.ValidationFailed, fmt.Sprintf("unknown time zone %q", textclip.Clip(zone, 40)), "query parameter timezone: an IANA time zone such as Europe/Berlin or UTC")
	}
	fs, more := spec.Between(from, until, loc, limit)
	out := make([]Upcoming, 0, len(fs))
	for _, f := range fs {
		out = append(out, Upcoming{Timezone: zone, Firing: f, Local: f.At.In(loc)})
	}
	return out, more, nil
}
