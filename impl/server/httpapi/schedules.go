package httpapi

import (
	"context"
	"time"

	"github.com/google/uuid"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/schedules"
)

// scheduleOf checks that the caller may act on a schedule with the current operation; a caller with
// no role in its workspace is told it does not exist.
func (s *Server) scheduleOf(ctx context.Context, id uuid.UUID) error {
	ws, err := s.Schedules.Workspace(ctx, id)
	if err != nil {
		return err
	}
	if _, err := s.authorizeWorkspace(ctx, ws); err != nil {
		if apierr.From(err).Code == apierr.NotFound {
			return apierr.New(apierr.NotFound, "schedule "+id.String()+" not found", "list schedules with GET /api/schedules")
		}
		return err
	}
	return nil
}

func fromTemplate(t *serverapi.RunTemplate) schedules.Template {
	if t == nil {
		return schedules.Template{}
	}
	out := schedules.Template{Tags: t.Tags, Environment: t.Environment, Label: t.Label, TimeoutSeconds: t.TimeoutSeconds, Retries: t.Retries}
	if t.Paths != nil {
		out.Paths = *t.Paths
	}
	if t.Variables != nil {
		out.Variables = *t.Variables
	}
	return out
}

func toTemplate(t schedules.Template) serverapi.RunTemplate {
	out := serverapi.RunTemplate{Tags: t.Tags, Environment: t.Environment, Label: t.Label, TimeoutSeconds: t.TimeoutSeconds, Retries: t.Retries}
	if t.Paths != nil {
		out.Paths = &t.Paths
	}
	if t.Variables != nil {
		out.Variables = &t.Variables
	}
	return out
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func toUserRef(u *schedules.User) *serverapi.UserSummary {
	if u == nil {
		return nil
	}
	return &serverapi.UserSummary{Id: u.ID, Email: openapi_types.Email(u.Email), DisplayName: u.DisplayName}
}

func toSchedule(sc schedules.Schedule) serverapi.Schedule {
	out := serverapi.Schedule{Id: sc.ID, Project: sc.Project, Name: sc.Name, Cron: sc.Cron, Timezone: sc.Timezone, Status: serverapi.ScheduleStatus(sc.Status),
		Run: toTemplate(sc.Template), Overlap: serverapi.ScheduleOverlap(sc.Overlap), CatchUpWindowSeconds: sc.CatchUpWindowSeconds,
		CatchUpMax: sc.CatchUpMax, JitterSeconds: sc.JitterSeconds, StartAt: sc.StartAt, EndAt: sc.EndAt, PauseAfterFailures: sc.PauseAfterFailures,
		NextRunAt: sc.NextRunAt, LastRunAt: sc.LastRunAt, LastRunId: sc.LastRunID, ConsecutiveFailures: sc.ConsecutiveFailures,
		CreatedBy: toUserRef(sc.CreatedBy), CreatedAt: sc.CreatedAt, UpdatedAt: sc.UpdatedAt, RecentFirings: []serverapi.ScheduleFiring{}}
	if sc.LastRunStatus != nil {
		out.LastRunStatus = ptr(serverapi.RunStatus(*sc.LastRunStatus))
	}
	if sc.Status == "paused" && sc.PausedAt != nil {
		out.Paused = &serverapi.SchedulePauseInfo{At: *sc.PausedAt, By: toUserRef(sc.PausedBy), Note: sc.PauseNote}
	}
	for _, f := range sc.RecentFirings {
		sf := serverapi.ScheduleFiring{ScheduledAt: f.ScheduledAt, RecordedAt: f.RecordedAt, Manual: f.Manual, Status: serverapi.ScheduleFiringStatus(f.Status),
			Reason: nonEmpty(f.Reason), LastScheduledAt: f.LastScheduledAt, RunId: f.RunID}
		if f.Status == "missed" {
			sf.MissedCount = ptr(f.MissedCount)
		}
		if f.RunStatus != nil {
			sf.RunStatus = ptr(serverapi.RunStatus(*f.RunStatus))
		}
		out.RecentFirings = append(out.RecentFirings, sf)
	}
	return out
}

type scheduleCursor struct {
	At time.Time `json:"a"`
	ID uuid.UUID `json:"i"`
}

// ListSchedules lists the schedules of the caller's workspaces, oldest first.
func (s *Server) ListSchedules(ctx context.Context, req serverapi.ListSchedulesRequestObject) (serverapi.ListSchedulesResponseObject, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var cur *scheduleCursor
	if err := decodeCursor(req.Params.Cursor, &cur); err != nil {
		return nil, err
	}
	f := schedules.ListFilter{UserID: uid, AllWorkspaces: p.InstanceAdmin, Project: req.Params.Project, Limit: pageLimit(req.Params.Limit)}
	if req.Params.Status != nil {
		f.Status = ptr(string(*req.Params.Status))
	}
	if cur != nil {
		f.AfterAt, f.AfterID = &cur.At, cur.ID
	}
	items, more, err := s.Schedules.List(ctx, f)
	if err != nil {
		return nil, err
	}
	out := schedulePageJSON{items: items}
	if out.items == nil {
		out.items = []schedules.Schedule{}
	}
	if more {
		last := items[len(items)-1]
		out.next = encodeCursor(scheduleCursor{At: last.CreatedAt, ID: last.ID})
	}
	return out, nil
}

// CreateSchedule creates a schedule in a project the caller may edit.
func (s *Server) CreateSchedule(ctx context.Context, req serverapi.CreateScheduleRequestObject) (serverapi.CreateScheduleResponseObject, error) {
	b := req.Body
	p, _, err := s.projectBySlug(ctx, b.Project)
	if err != nil {
		return nil, err
	}
	in := schedules.Input{Name: b.Name, Cron: b.Cron, Timezone: deref(b.Timezone), Template: fromTemplate(b.Run), CatchUpWindowSeconds: intOr(b.CatchUpWindowSeconds, 0),
		CatchUpMax: intOr(b.CatchUpMax, 0), JitterSeconds: intOr(b.JitterSeconds, 0), StartAt: b.StartAt, EndAt: b.EndAt, PauseAfterFailures: b.PauseAfterFailures,
		Paused: b.Status != nil && *b.Status == serverapi.ScheduleStatusPaused, Note: b.Note}
	if b.Overlap != nil {
		in.Overlap = string(*b.Overlap)
	}
	sc, err := s.Schedules.Create(ctx, p.ID, p.Slug, in, callerID(ctx))
	if err != nil {
		return nil, err
	}
	return serverapi.CreateSchedule201JSONResponse(toSchedule(sc)), nil
}

// GetSchedule returns a schedule with its next firing, last run and recent firings.
func (s *Server) GetSchedule(ctx context.Context, req serverapi.GetScheduleRequestObject) (serverapi.GetScheduleResponseObject, error) {
	if err := s.scheduleOf(ctx, req.ScheduleId); err != nil {
		return nil, err
	}
	sc, err := s.Schedules.Get(ctx, req.ScheduleId)
	if err != nil {
		return nil, err
	}
	return serverapi.GetSchedule200JSONResponse(toSchedule(sc)), nil
}

// UpdateSchedule replaces a schedule's settings.
func (s *Server) UpdateSchedule(ctx context.Context, req serverapi.UpdateScheduleRequestObject) (serverapi.UpdateScheduleResponseObject, error) {
	if err := s.scheduleOf(ctx, req.ScheduleId); err != nil {
		return nil, err
	}
	b := req.Body
	in := schedules.Input{Name: b.Name, Cron: b.Cron, Timezone: deref(b.Timezone), Template: fromTemplate(b.Run), CatchUpWindowSeconds: intOr(b.CatchUpWindowSeconds, 0),
		CatchUpMax: intOr(b.CatchUpMax, 0), JitterSeconds: intOr(b.JitterSeconds, 0), StartAt: b.StartAt, EndAt: b.EndAt, PauseAfterFailures: b.PauseAfterFailures}
	if b.Overlap != nil {
		in.Overlap = string(*b.Overlap)
	}
	sc, err := s.Schedules.Replace(ctx, req.ScheduleId, in)
	if err != nil {
		return nil, err
	}
	return serverapi.UpdateSchedule200JSONResponse(toSchedule(sc)), nil
}

// DeleteSchedule deletes a schedule; its runs stay.
func (s *Server) DeleteSchedule(ctx context.Context, req serverapi.DeleteScheduleRequestObject) (serverapi.DeleteScheduleResponseObject, error) {
	if err := s.scheduleOf(ctx, req.ScheduleId); err != nil {
		return nil, err
	}
	if err := s.Schedules.Delete(ctx, req.ScheduleId); err != nil {
		return nil, err
	}
	return serverapi.DeleteSchedule204Response{}, nil
}

// PauseSchedule pauses a schedule with an optional note.
func (s *Server) PauseSchedule(ctx context.Context, req serverapi.PauseScheduleRequestObject) (serverapi.PauseScheduleResponseObject, error) {
	if err := s.scheduleOf(ctx, req.ScheduleId); err != nil {
		return nil, err
	}
	var note *string
	if req.Body != nil {
		note = req.Body.Note
	}
	sc, err := s.Schedules.Pause(ctx, req.ScheduleId, note, callerID(ctx))
	if err != nil {
		return nil, err
	}
	return serverapi.PauseSchedule200JSONResponse(toSchedule(sc)), nil
}

// ResumeSchedule resumes a schedule, catching up only when asked.
func (s *Server) ResumeSchedule(ctx context.Context, req serverapi.ResumeScheduleRequestObject) (serverapi.ResumeScheduleResponseObject, error) {
	if err := s.scheduleOf(ctx, req.ScheduleId); err != nil {
		return nil, err
	}
	var note *string
	catchUp := false
	if req.Body != nil {
		note, catchUp = req.Body.Note, req.Body.CatchUp != nil && *req.Body.CatchUp
	}
	sc, err := s.Schedules.Resume(ctx, req.ScheduleId, note, catchUp)
	if err != nil {
		return nil, err
	}
	return serverapi.ResumeSchedule200JSONResponse(toSchedule(sc)), nil
}

// RunScheduleNow starts the schedule's run now (trigger schedule_manual).
func (s *Server) RunScheduleNow(ctx context.Context, req serverapi.RunScheduleNowRequestObject) (serverapi.RunScheduleNowResponseObject, error) {
	if err := s.scheduleOf(ctx, req.ScheduleId); err != nil {
		return nil, err
	}
	force := req.Body != nil && req.Body.Force != nil && *req.Body.Force
	r, project, err := s.Schedules.RunNow(ctx, req.ScheduleId, force, callerID(ctx))
	if err != nil {
		return nil, err
	}
	url := "/api/runs/" + r.ID.String()
	return serverapi.RunScheduleNow202JSONResponse{Body: serverapi.RunAccepted{Id: r.ID, Status: serverapi.RunStatus(r.Status), Project: project,
		CreatedAt: r.CreatedAt, Url: url}, Headers: serverapi.RunScheduleNow202ResponseHeaders{Location: &url}}, nil
}

// How far ahead GET /api/schedules/next looks by default and at most.
const (
	defaultUpcomingWindow = 7 * 24 * time.Hour
	maxUpcomingWindow     = 366 * 24 * time.Hour
)

// ListUpcomingRuns lists the next firings of the caller's active schedules, soonest first.
func (s *Server) ListUpcomingRuns(ctx context.Context, req serverapi.ListUpcomingRunsRequestObject) (serverapi.ListUpcomingRunsResponseObject, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var cur *scheduleCursor
	if err := decodeCursor(req.Params.Cursor, &cur); err != nil {
		return nil, err
	}
	now := time.Now()
	until := now.Add(defaultUpcomingWindow)
	if req.Params.Until != nil {
		until = time.Time(*req.Params.Until)
		if max := now.Add(maxUpcomingWindow); until.After(max) {
			until = max
		}
	}
	var items []schedules.Upcoming
	var more bool
	if req.Params.Cron != nil {
		from := now
		if cur != nil {
			from = cur.At
		}
		items, more, err = s.Schedules.Preview(*req.Params.Cron, deref(req.Params.Timezone), from, until, pageLimit(req.Params.Limit))
	} else {
		f := schedules.UpcomingFilter{UserID: uid, AllWorkspaces: p.InstanceAdmin, Project: req.Params.Project, Schedule: req.Params.Schedule, Until: until, Limit: pageLimit(req.Params.Limit)}
		if cur != nil {
			f.AfterAt, f.AfterID = &cur.At, cur.ID
		}
		items, more, err = s.Schedules.ListUpcoming(ctx, f)
	}
	if err != nil {
		return nil, err
	}
	out := upcomingRunsJSON{Items: make([]serverapi.UpcomingRun, 0, len(items))}
	for _, u := range items {
		item := serverapi.UpcomingRun{At: u.Firing.At, Local: u.Local.Format(time.RFC3339), Timezone: u.Timezone, StartsBy: u.StartsBy}
		if req.Params.Cron == nil {
			item.ScheduleId, item.ScheduleName, item.Project = &u.ScheduleID, &u.ScheduleName, &u.Project
		}
		if u.Firing.DST != "" {
			item.Dst = ptr(serverapi.DstDecision(u.Firing.DST))
			item.WallTime = ptr(u.Firing.Wall.Format("2006-01-02T15:04:05"))
		}
		out.Items = append(out.Items, item)
	}
	if more {
		last := items[len(items)-1]
		out.NextCursor = encodeCursor(scheduleCursor{At: last.Firing.At, ID: last.ScheduleID})
	}
	return out, nil
}
