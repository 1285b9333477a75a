package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sdods/sdods/impl/jsonappend"
	"github.com/sdods/sdods/impl/server/schedules"
)

// schedulePageJSON is the schedule list's 200 answer, encoded by appendSchedulePage straight from
// the service's schedules: the bytes encoding/json writes for the page of their toSchedule
// documents (serverapi.ScheduleList), without building them; encoding/json's reflection was a
// fifth of the list's Go CPU (docs/benchmarks.md, read paths round 8, session 12).
// TestSchedulePageMatchesEncodingJSON.
type schedulePageJSON struct {
	items []schedules.Schedule
	next  *string
}

func (p schedulePageJSON) VisitListSchedulesResponse(w http.ResponseWriter) error {
	return writeJSON(w, http.StatusOK, func(b []byte) ([]byte, error) { return appendSchedulePage(b, p.items, p.next) })
}

// appendSchedulePage writes the schedule list page of items (null when nil) and next.
func appendSchedulePage(b []byte, items []schedules.Schedule, next *string) ([]byte, error) {
	return appendPage(b, items, next, appendSchedule)
}

// appendSchedule writes toSchedule(*sc) as encoding/json does: serverapi.Schedule's fields in
// their (alphabetical) order, the optional ones left out when nil. A schedule with firings (the
// detail's, never the list's) goes through encoding/json.
func appendSchedule(b []byte, sc *schedules.Schedule) ([]byte, error) {
	if len(sc.RecentFirings) > 0 {
		return appendMarshal(b, toSchedule(*sc))
	}
	var err error
	b = append(b, `{"catchUpMax":`...)
	b = strconv.AppendInt(b, int64(sc.CatchUpMax), 10)
	b = append(b, `,"catchUpWindowSeconds":`...)
	b = strconv.AppendInt(b, int64(sc.CatchUpWindowSeconds), 10)
	b = append(b, `,"consecutiveFailures":`...)
	b = strconv.AppendInt(b, int64(sc.ConsecutiveFailures), 10)
	b = append(b, `,"createdAt":`...)
	if b, err = appendTime(b, sc.CreatedAt); err != nil {
		return nil, err
	}
	if sc.CreatedBy != nil {
		b = append(b, `,"createdBy":`...)
		if b, err = appendUserSummary(b, sc.CreatedBy); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"cron":`...)
	b = jsonappend.String(b, sc.Cron)
	if sc.EndAt != nil {
		b = append(b, `,"endAt":`...)
		if b, err = appendTime(b, *sc.EndAt); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"id":`...)
	b = jsonappend.UUID(b, sc.ID)
	b = append(b, `,"jitterSeconds":`...)
	b = strconv.AppendInt(b, int64(sc.JitterSeconds), 10)
	if sc.LastRunAt != nil {
		b = append(b, `,"lastRunAt":`...)
		if b, err = appendTime(b, *sc.LastRunAt); err != nil {
			return nil, err
		}
	}
	if sc.LastRunID != nil {
		b = append(b, `,"lastRunId":`...)
		b = jsonappend.UUID(b, *sc.LastRunID)
	}
	if sc.LastRunStatus != nil {
		b = append(b, `,"lastRunStatus":`...)
		b = jsonappend.String(b, *sc.LastRunStatus)
	}
	b = append(b, `,"name":`...)
	b = jsonappend.String(b, sc.Name)
	if sc.NextRunAt != nil {
		b = append(b, `,"nextRunAt":`...)
		if b, err = appendTime(b, *sc.NextRunAt); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"overlap":`...)
	b = jsonappend.String(b, sc.Overlap)
	if sc.PauseAfterFailures != nil {
		b = append(b, `,"pauseAfterFailures":`...)
		b = strconv.AppendInt(b, int64(*sc.PauseAfterFailures), 10)
	}
	if sc.Status == "paused" && sc.PausedAt != nil {
		b = append(b, `,"paused":{"at":`...)
		if b, err = appendTime(b, *sc.PausedAt); err != nil {
			return nil, err
		}
		if sc.PausedBy != nil {
			b = append(b, `,"by":`...)
			if b, err = appendUserSummary(b, sc.PausedBy); err != nil {
				return nil, err
			}
		}
		if sc.PauseNote != nil {
			b = append(b, `,"note":`...)
			b = jsonappend.String(b, *sc.PauseNote)
		}
		b = append(b, '}')
	}
	b = append(b, `,"project":`...)
	b = jsonappend.String(b, sc.Project)
	b = append(b, `,"recentFirings":[],"run":`...)
	b = appendRunTemplate(b, &sc.Template)
	if sc.StartAt != nil {
		b = append(b, `,"startAt":`...)
		if b, err = appendTime(b, *sc.StartAt); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"status":`...)
	b = jsonappend.String(b, sc.Status)
	b = append(b, `,"timezone":`...)
	b = jsonappend.String(b, sc.Timezone)
	b = append(b, `,"updatedAt":`...)
	if b, err = appendTime(b, sc.UpdatedAt); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendRunTemplate writes toTemplate(*t) (serverapi.RunTemplate) as encoding/json does.
func appendRunTemplate(b []byte, t *schedules.Template) []byte {
	b = append(b, '{')
	var m members
	if t.Environment != nil {
		b = m.key(b, "environment")
		b = jsonappend.String(b, *t.Environment)
	}
	if t.Label != nil {
		b = m.key(b, "label")
		b = jsonappend.String(b, *t.Label)
	}
	if t.Paths != nil {
		b = m.key(b, "paths")
		b = appendStrings(b, t.Paths)
	}
	if t.Retries != nil {
		b = m.key(b, "retries")
		b = strconv.AppendInt(b, int64(*t.Retries), 10)
	}
	if t.Tags != nil {
		b = m.key(b, "tags")
		b = jsonappend.String(b, *t.Tags)
	}
	if t.TimeoutSeconds != nil {
		b = m.key(b, "timeoutSeconds")
		b = strconv.AppendInt(b, int64(*t.TimeoutSeconds), 10)
	}
	if t.Variables != nil {
		b = m.key(b, "variables")
		b = jsonappend.StringMap(b, t.Variables)
	}
	return append(b, '}')
}

// appendUserSummary writes toUserRef(u) (serverapi.UserSummary) as encoding/json does; the email
// through its own MarshalJSON, which validates it (an invalid one fails the answer, as before),
// HTML-escaped as encoding/json escapes a marshaler's output.
func appendUserSummary(b []byte, u *schedules.User) ([]byte, error) {
	b = append(b, `{"displayName":`...)
	b = jsonappend.String(b, u.DisplayName)
	b = append(b, `,"email":`...)
	j, err := openapi_types.Email(u.Email).MarshalJSON()
	if err != nil {
		return nil, err
	}
	if bytes.ContainsAny(j, "<>&\u2028\u2029") || !json.Valid(j) {
		// Rare: as encoding/json (compact, HTML-escaped, or its error).
		if b, err = appendMarshal(b, json.RawMessage(j)); err != nil {
			return nil, err
		}
	} else {
		b = append(b, j...)
	}
	b = append(b, `,"id":`...)
	b = jsonappend.UUID(b, u.ID)
	return append(b, '}'), nil
}
