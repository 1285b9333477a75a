package schedules

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store"
)

// The schedule list reads gen/db's ListSchedules statement (its text and arguments, as the
// generated code builds them) but decodes the rows from PostgreSQL's binary format itself, as the
// run list does (runs.(*Service).listRuns): pgx's generic scan of the 29 columns into sqlc's rows
// (its uuids through database/sql's Scanner, as text) and the garbage it left were most of the
// list's Go CPU (docs/benchmarks.md, read paths round 8, session 12). The schedules are those
// viewWith built from sqlc's rows (TestListMatchesScan; TestListItemsMatchTheirDetail in
// impl/server/app compares each item with the schedule's detail).

// listOIDs are the types of ListSchedules's columns, checked before any row is decoded.
var listOIDs = [...]uint32{
	pgtype.UUIDOID, pgtype.UUIDOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.JSONBOID, pgtype.TextOID, // id … overlap
	pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, // catch_up_window_seconds, catch_up_max, jitter_seconds
	pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.TextOID, pgtype.TimestamptzOID, pgtype.UUIDOID, pgtype.TextOID, // start_at … pause_note
	pgtype.Int4OID, pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.UUIDOID, // pause_after_failures … created_by
	pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.TextOID, pgtype.UUIDOID, // created_at, updated_at, project_slug, workspace_id
	pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, // creator_email, creator_name, pauser_email, pauser_name
}

const (
	lcID = iota
	lcProjectID
	lcName
	lcCron
	lcTimezone
	lcTemplate
	lcOverlap
	lcCatchUpWindow
	lcCatchUpMax
	lcJitter
	lcStartAt
	lcEndAt
	lcStatus
	lcPausedAt
	lcPausedBy
	lcPauseNote
	lcPauseAfterFailures
	lcFailuresSince
	lcNextFireAt
	lcNextDueAt
	lcCreatedBy
	lcCreatedAt
	lcUpdatedAt
	lcSlug
	lcWorkspaceID
	lcCreatorEmail
	lcCreatorName
	lcPauserEmail
	lcPauserName
)

// span is a string of the page's text buffer; from < 0: NULL.
type span struct{ from, to int32 }

// listRow is one decoded row: its strings spans of the page's text.
type listRow struct {
	id, workspaceID, createdBy, pausedBy          uuid.UUID
	hasCreatedBy, hasPausedBy, hasPAF             bool
	name, cron, zone, template, overlap, status   span
	note, slug, cEmail, cName, pEmail, pName      span
	catchUpWindow, catchUpMax, jitter, pauseAfter int32
	startAt, endAt, pausedAt, nextFireAt          *time.Time
	createdAt, updatedAt                          time.Time
}

// listDecoder decodes ListSchedules's binary rows into a buffer the page's schedules share.
type listDecoder struct {
	text  []byte
	times []time.Time // the rows' optional times (never grown past its capacity: pointers into it stay valid)
	rows  []listRow
	// templateFormat is the template's format: binary from QueryBinary, text from QueryGeneric.
	templateFormat int16
}

func (d *listDecoder) str(v []byte) span {
	if v == nil {
		return span{-1, -1}
	}
	from := int32(len(d.text))
	d.text = append(d.text, v...)
	return span{from, int32(len(d.text))}
}

func (d *listDecoder) optTime(v []byte) (*time.Time, error) {
	if v == nil {
		return nil, nil
	}
	t, err := store.DecodeTimestamptz(v)
	if err != nil {
		return nil, err
	}
	if len(d.times) == cap(d.times) {
		d.times = make([]time.Time, 0, 64)
	}
	d.times = append(d.times, t)
	return &d.times[len(d.times)-1], nil
}

func int4(v []byte) (int32, error) {
	if len(v) != 4 {
		return 0, fmt.Errorf("int4 of %d bytes", len(v))
	}
	return int32(binary.BigEndian.Uint32(v)), nil
}

// add decodes one row's raw values; a malformed value or a NULL in a NOT NULL column is an error.
func (d *listDecoder) add(v [][]byte) error {
	if len(v) != len(listOIDs) {
		return fmt.Errorf("schedule list: %d values, want %d", len(v), len(listOIDs))
	}
	for _, c := range [...]int{lcID, lcName, lcCron, lcTimezone, lcTemplate, lcOverlap, lcCatchUpWindow, lcCatchUpMax, lcJitter, lcStatus,
		lcCreatedAt, lcUpdatedAt, lcSlug, lcWorkspaceID} {
		if v[c] == nil {
			return fmt.Errorf("schedule list: NULL in NOT NULL column %d", c)
		}
	}
	var r listRow
	var err error
	if r.id, err = store.DecodeUUID(v[lcID]); err != nil {
		return err
	}
	if r.workspaceID, err = store.DecodeUUID(v[lcWorkspaceID]); err != nil {
		return err
	}
	if v[lcCreatedBy] != nil {
		r.hasCreatedBy = true
		if r.createdBy, err = store.DecodeUUID(v[lcCreatedBy]); err != nil {
			return err
		}
	}
	if v[lcPausedBy] != nil {
		r.hasPausedBy = true
		if r.pausedBy, err = store.DecodeUUID(v[lcPausedBy]); err != nil {
			return err
		}
	}
	template, err := store.JSONBText(v[lcTemplate], d.templateFormat)
	if err != nil {
		return fmt.Errorf("schedule list: template: %w", err)
	}
	r.name, r.cron, r.zone, r.template = d.str(v[lcName]), d.str(v[lcCron]), d.str(v[lcTimezone]), d.str(template)
	r.overlap, r.status, r.note, r.slug = d.str(v[lcOverlap]), d.str(v[lcStatus]), d.str(v[lcPauseNote]), d.str(v[lcSlug])
	r.cEmail, r.cName, r.pEmail, r.pName = d.str(v[lcCreatorEmail]), d.str(v[lcCreatorName]), d.str(v[lcPauserEmail]), d.str(v[lcPauserName])
	if r.catchUpWindow, err = int4(v[lcCatchUpWindow]); err != nil {
		return err
	}
	if r.catchUpMax, err = int4(v[lcCatchUpMax]); err != nil {
		return err
	}
	if r.jitter, err = int4(v[lcJitter]); err != nil {
		return err
	}
	if v[lcPauseAfterFailures] != nil {
		r.hasPAF = true
		if r.pauseAfter, err = int4(v[lcPauseAfterFailures]); err != nil {
			return err
		}
	}
	for _, c := range [...]struct {
		dst **time.Time
		v   []byte
	}{{&r.startAt, v[lcStartAt]}, {&r.endAt, v[lcEndAt]}, {&r.pausedAt, v[lcPausedAt]}, {&r.nextFireAt, v[lcNextFireAt]}} {
		if *c.dst, err = d.optTime(c.v); err != nil {
			return err
		}
	}
	if r.createdAt, err = store.DecodeTimestamptz(v[lcCreatedAt]); err != nil {
		return err
	}
	if r.updatedAt, err = store.DecodeTimestamptz(v[lcUpdatedAt]); err != nil {
		return err
	}
	d.rows = append(d.rows, r)
	return nil
}

// schedules builds the decoded rows' schedules as viewWith builds them from sqlc's rows: their
// strings slices of one string, their users and optional numbers elements of one array each.
func (d *listDecoder) schedules() []Schedule {
	all := string(d.text)
	str := func(s span) string { return all[s.from:s.to] }
	strp := func(s span) *string {
		if s.from < 0 {
			return nil
		}
		p := new(string)
		*p = str(s)
		return p
	}
	users := make([]User, 0, 2*len(d.rows))
	user := func(ok bool, id uuid.UUID, email, name span) *User {
		if !ok || email.from < 0 || name.from < 0 {
			return nil
		}
		users = append(users, User{ID: id, Email: str(email), DisplayName: str(name)})
		return &users[len(users)-1]
	}
	ints := make([]int, 0, len(d.rows))
	out := make([]Schedule, len(d.rows))
	for i := range d.rows {
		r := &d.rows[i]
		sc := &out[i]
		*sc = Schedule{ID: r.id, Project: str(r.slug), WorkspaceID: r.workspaceID, Name: str(r.name), Cron: str(r.cron), Timezone: str(r.zone),
			Overlap: str(r.overlap), CatchUpWindowSeconds: int(r.catchUpWindow), CatchUpMax: int(r.catchUpMax), JitterSeconds: int(r.jitter),
			StartAt: r.startAt, EndAt: r.endAt, Status: str(r.status), PausedAt: r.pausedAt, PauseNote: strp(r.note),
			CreatedAt: r.createdAt, UpdatedAt: r.updatedAt, RecentFirings: []FiringRecord{},
			CreatedBy: user(r.hasCreatedBy, r.createdBy, r.cEmail, r.cName), PausedBy: user(r.hasPausedBy, r.pausedBy, r.pEmail, r.pName)}
		if r.hasPAF {
			ints = append(ints, int(r.pauseAfter))
			sc.PauseAfterFailures = &ints[len(ints)-1]
		}
		sc.Template = templateOf(d.text[r.template.from:r.template.to])
		if sc.Status == "active" {
			sc.NextRunAt = r.nextFireAt
		}
	}
	return out
}

// templateOf is a stored template as viewWith reads it (json.Unmarshal, errors ignored); the
// empty one without it.
func templateOf(text []byte) Template {
	if string(text) == "{}" {
		return Template{}
	}
	t := new(Template)
	_ = json.Unmarshal(text, t)
	return *t
}

// list runs ListSchedules with binary results and returns at most limit schedules and whether
// more follow. A project's schedules of one status are read by ListProjectSchedulesByStatus
// under its generic plan (store.QueryGeneric): the same rows, without planning them per request.
func (s *Service) list(ctx context.Context, p db.ListSchedulesParams, limit int) ([]Schedule, bool, error) {
	d := listDecoder{text: make([]byte, 0, 8<<10), times: make([]time.Time, 0, 4*limit+4), rows: make([]listRow, 0, limit)}
	more := false
	read := func(rows pgx.Rows) error {
		d.templateFormat = rows.FieldDescriptions()[lcTemplate].Format
		for rows.Next() {
			if len(d.rows) == limit {
				more = true
				break
			}
			if err := d.add(rows.RawValues()); err != nil {
				return err
			}
		}
		return nil
	}
	if p.Project != nil && p.Status != nil {
		err := s.st.QueryGeneric(ctx, "schedule list", store.GenericStatement{OIDs: listOIDs[:], Read: read, Call: func(q *db.Queries) error {
			_, err := q.ListProjectSchedulesByStatus(ctx, db.ListProjectSchedulesByStatusParams{Project: *p.Project, Status: *p.Status,
				AllWorkspaces: p.AllWorkspaces, WorkspaceIds: p.WorkspaceIds, AfterAt: p.AfterAt, AfterID: p.AfterID, RowLimit: p.RowLimit})
			return err
		}})
		if err != nil {
			return nil, false, err
		}
		return d.schedules(), more, nil
	}
	rows, err := s.st.QueryBinary(ctx, "schedule list", listOIDs[:], func(q *db.Queries) error {
		_, err := q.ListSchedules(ctx, p)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	if err := read(rows); err != nil {
		return nil, false, err
	}
	if err := rows.Err(); err != nil {
		return nil, false, store.Translate(err)
	}
	return d.schedules(), more, nil
}
