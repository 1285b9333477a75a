package runs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store"
)

// The run list reads gen/db's ListRuns statement (its text and its arguments, as the generated
// code builds them) but decodes the rows from PostgreSQL's binary format itself: pgx's generic
// scan of the 19 columns into sqlc's rows and the garbage it left were half of the list's Go CPU
// (docs/benchmarks.md, read paths round 7).

// listRunsOIDs are the types of ListRuns's columns, checked before decoding them.
var listRunsOIDs = [...]uint32{pgtype.UUIDOID, pgtype.UUIDOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID,
	pgtype.TextArrayOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.UUIDOID,
	pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.JSONBOID, pgtype.TextOID}

// listRow is one decoded row of ListRuns: strings as spans of the request's text buffer (no
// span: NULL), paths as a range of the request's path spans.
type listRow struct {
	id, projectID, scheduleID                   uuid.UUID
	hasSchedule, hasPaths                       bool
	status, trigger, source, slug, counts       span
	label, tags, env, branch, commit, process   span
	pathsFrom, pathsTo                          int32
	createdAt, updatedAt, startedAt, finishedAt time.Time
	hasStarted, hasFinished                     bool
}

// nullSpan marks a NULL text column.
var nullSpan = span{-1, -1}

// listDecoder decodes ListRuns's binary rows into buffers shared by the request's runs.
type listDecoder struct {
	text  []byte
	paths []span
	rows  []listRow
}

// add decodes one row's raw values; malformed values (a wrong length, a short array) are an error.
// countsFormat is the counts' (jsonb) format: binary from QueryBinary, text from QueryGeneric.
func (d *listDecoder) add(v [][]byte, countsFormat int16) error {
	if len(v) != len(listRunsOIDs) {
		return fmt.Errorf("run list: %d values, want %d", len(v), len(listRunsOIDs))
	}
	var r listRow
	var err error
	if r.id, err = uuidOf(v[0]); err != nil {
		return err
	}
	if r.projectID, err = uuidOf(v[1]); err != nil {
		return err
	}
	for _, c := range [...]struct {
		dst  *span
		v    []byte
		null bool
	}{{&r.status, v[2], false}, {&r.trigger, v[3], false}, {&r.source, v[4], false}, {&r.label, v[5], true}, {&r.tags, v[7], true},
		{&r.env, v[8], true}, {&r.branch, v[9], true}, {&r.commit, v[10], true}, {&r.process, v[11], true}, {&r.slug, v[18], false}} {
		if c.v == nil {
			if !c.null {
				return errors.New("run list: NULL in a NOT NULL text column")
			}
			*c.dst = nullSpan
			continue
		}
		*c.dst, d.text = addText(d.text, c.v)
	}
	r.pathsFrom = int32(len(d.paths))
	if v[6] != nil {
		r.hasPaths = true
		if d.paths, d.text, err = addTextArray(d.paths, d.text, v[6]); err != nil {
			return fmt.Errorf("run list: paths: %w", err)
		}
	}
	r.pathsTo = int32(len(d.paths))
	if v[12] != nil {
		r.hasSchedule = true
		if r.scheduleID, err = uuidOf(v[12]); err != nil {
			return err
		}
	}
	if v[13] == nil || v[14] == nil {
		return errors.New("run list: NULL created_at or updated_at")
	}
	if r.createdAt, err = timestamptz(v[13]); err != nil {
		return err
	}
	if r.updatedAt, err = timestamptz(v[14]); err != nil {
		return err
	}
	if v[15] != nil {
		r.hasStarted = true
		if r.startedAt, err = timestamptz(v[15]); err != nil {
			return err
		}
	}
	if v[16] != nil {
		r.hasFinished = true
		if r.finishedAt, err = timestamptz(v[16]); err != nil {
			return err
		}
	}
	if v[17] == nil {
		return errors.New("run list: NULL counts")
	}
	counts, err := store.JSONBText(v[17], countsFormat)
	if err != nil {
		return fmt.Errorf("run list: counts: %w", err)
	}
	r.counts, d.text = addText(d.text, counts)
	d.rows = append(d.rows, r)
	return nil
}

// runs builds the decoded rows' runs: their strings are slices of one string, their counts of
// one byte slice, their optional values elements of one array per type.
func (d *listDecoder) runs() []ProjectRun {
	all := string(d.text)
	str := func(s span) string { return all[s.from:s.to] }
	pathStrs := make([]string, len(d.paths)) // never nil: an empty array is an empty, not a nil, slice
	for i, p := range d.paths {
		pathStrs[i] = str(p)
	}
	var nStr, nTime, nSched int
	for i := range d.rows {
		r := &d.rows[i]
		for _, s := range [...]span{r.label, r.tags, r.env, r.branch, r.commit, r.process} {
			if s != nullSpan {
				nStr++
			}
		}
		if r.hasStarted {
			nTime++
		}
		if r.hasFinished {
			nTime++
		}
		if r.hasSchedule {
			nSched++
		}
	}
	strs, times, scheds := make([]string, 0, nStr), make([]time.Time, 0, nTime), make([]uuid.UUID, 0, nSched)
	// The counts are copied out of the text buffer, which goes back to listDecoders.
	var nCounts int
	for i := range d.rows {
		nCounts += int(d.rows[i].counts.to - d.rows[i].counts.from)
	}
	counts := make([]byte, 0, nCounts)
	opt := func(s span) *string {
		if s == nullSpan {
			return nil
		}
		strs = append(strs, str(s))
		return &strs[len(strs)-1]
	}
	out := make([]ProjectRun, len(d.rows))
	for i := range d.rows {
		r := &d.rows[i]
		run := &out[i].Run
		out[i].ProjectSlug = str(r.slug)
		*run = Run{ID: r.id, ProjectID: r.projectID, Status: str(r.status), Trigger: str(r.trigger), Source: str(r.source),
			Label: opt(r.label), Tags: opt(r.tags), Environment: opt(r.env), Branch: opt(r.branch), CommitSha: opt(r.commit),
			ProcessName: opt(r.process), CreatedAt: r.createdAt, UpdatedAt: r.updatedAt}
		from := len(counts)
		counts = append(counts, d.text[r.counts.from:r.counts.to]...)
		run.Counts = counts[from:len(counts):len(counts)]
		if r.hasPaths {
			run.Paths = pathStrs[r.pathsFrom:r.pathsTo:r.pathsTo]
		}
		if r.hasSchedule {
			scheds = append(scheds, r.scheduleID)
			run.ScheduleID = &scheds[len(scheds)-1]
		}
		if r.hasStarted {
			times = append(times, r.startedAt)
			run.StartedAt = &times[len(times)-1]
		}
		if r.hasFinished {
			times = append(times, r.finishedAt)
			run.FinishedAt = &times[len(times)-1]
		}
	}
	return out
}

// listRuns runs ListRuns with binary results and decodes its rows.
func (s *Service) listRuns(ctx context.Context, params db.ListRunsParams) ([]ProjectRun, error) {
	rows, err := s.st.QueryBinary(ctx, "run list", listRunsOIDs[:], func(q *db.Queries) error {
		_, err := q.ListRuns(ctx, params)
		return err
	})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	d := listDecoders.Get().(*listDecoder)
	defer d.release()
	for rows.Next() {
		if err := d.add(rows.RawValues(), pgx.BinaryFormatCode); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, store.Translate(err)
	}
	return d.runs(), nil
}

// genericList is the statement written for one generic plan that answers params as ListRuns
// does, and its name; none ("", nil) when params are not one of its shapes. The shapes are a
// project's runs with no other filter, or with only one status, only one branch, or only tags:
// the hottest lists, whose custom plans cost PostgreSQL as much to plan as to run (docs/
// benchmarks.md, read paths round 10). Every other filter keeps ListRuns, planned per request.
// TestGenericListCoversListRunsParams fails when ListRunsParams gains a field this does not know.
func genericList(ctx context.Context, params db.ListRunsParams) (string, func(*db.Queries) error) {
	if params.Project == nil || len(params.NotBranches) > 0 || len(params.Triggers) > 0 || len(params.NotTriggers) > 0 ||
		len(params.NotTagPatterns) > 0 || params.ScheduleID.Valid || params.Since != nil || params.Until != nil {
		return "", nil
	}
	// ListRuns's cursor is (before_at, before_id) when before_at is set; these statements read
	// a NULL before_id as the largest uuid, which List never sends with before_at.
	project, ws, all, at, id, limit := *params.Project, params.WorkspaceIds, params.AllWorkspaces, params.BeforeAt, params.BeforeID, params.RowLimit
	if at == nil {
		id = uuid.NullUUID{}
	}
	nStatus, nBranch, nTag := len(params.Statuses), len(params.Branches), len(params.TagPatterns)
	switch {
	case nStatus == 0 && nBranch == 0 && nTag == 0:
		return "ListProjectRuns", func(q *db.Queries) error {
			_, err := q.ListProjectRuns(ctx, db.ListProjectRunsParams{Project: project, AllWorkspaces: all, WorkspaceIds: ws,
				BeforeAt: at, BeforeID: id, RowLimit: limit})
			return err
		}
	case nStatus == 1 && nBranch == 0 && nTag == 0:
		status := params.Statuses[0]
		return "ListProjectRunsByStatus", func(q *db.Queries) error {
			_, err := q.ListProjectRunsByStatus(ctx, db.ListProjectRunsByStatusParams{Project: project, Status: status, AllWorkspaces: all,
				WorkspaceIds: ws, BeforeAt: at, BeforeID: id, RowLimit: limit})
			return err
		}
	case nStatus == 0 && nBranch == 1 && nTag == 0:
		branch := params.Branches[0]
		return "ListProjectRunsByBranch", func(q *db.Queries) error {
			_, err := q.ListProjectRunsByBranch(ctx, db.ListProjectRunsByBranchParams{Project: project, Branch: branch, AllWorkspaces: all,
				WorkspaceIds: ws, BeforeAt: at, BeforeID: id, RowLimit: limit})
			return err
		}
	case nStatus == 0 && nBranch == 0 && nTag > 0:
		patterns := params.TagPatterns
		return "ListProjectRunsByTags", func(q *db.Queries) error {
			_, err := q.ListProjectRunsByTags(ctx, db.ListProjectRunsByTagsParams{Project: project, TagPatterns: patterns, AllWorkspaces: all,
				WorkspaceIds: ws, BeforeAt: at, BeforeID: id, RowLimit: limit, WalkLimit: tagWalkLimit(limit)})
			return err
		}
	}
	return "", nil
}

// tagWalkLimit is how many of the project's runs ListProjectRunsByTags reads in order, from the
// cursor, looking for a page of limit runs with the tags, before it reads them from the tags'
// trigram index instead: 40 runs per run of the page, 2,000 at least. A tag on fewer than 1 in 40
// of the walked runs is read from the index, all its runs before the cursor, sorted (2,500 at 100,000
// runs if it is as rare in the rest of the project's history); a commoner one fills the page within
// the walk (docs/benchmarks.md, read paths round 11).
func tagWalkLimit(limit int32) int32 {
	return max(tagWalk.min, tagWalk.perRow*limit)
}

// tagWalk is tagWalkLimit's minimum and runs per page row; tests make them small so that a few
// dozen runs take both of ListProjectRunsByTags's ways.
var tagWalk = struct{ min, perRow int32 }{2000, 40}

// listGeneric runs call's statement under its generic plan (store.QueryGeneric) and decodes its
// rows: text and jsonb columns come as text there, which is the same bytes for text.
func (s *Service) listGeneric(ctx context.Context, call func(*db.Queries) error) ([]ProjectRun, error) {
	d := listDecoders.Get().(*listDecoder)
	defer d.release()
	err := s.st.QueryGeneric(ctx, "run list", store.GenericStatement{OIDs: listRunsOIDs[:], Call: call, Read: func(rows pgx.Rows) error {
		countsFormat := rows.FieldDescriptions()[17].Format
		for rows.Next() {
			if err := d.add(rows.RawValues(), countsFormat); err != nil {
				return err
			}
		}
		return nil
	}})
	if err != nil {
		return nil, err
	}
	return d.runs(), nil
}

// listDecoders keeps decoders' buffers between requests: what runs builds shares none of them
// (its strings and counts are copies), and a page's text and rows were a fifth of the bytes a
// run list request allocated (docs/benchmarks.md, read paths round 8).
var listDecoders = sync.Pool{New: func() any {
	return &listDecoder{text: make([]byte, 0, 16<<10), paths: make([]span, 0, 64), rows: make([]listRow, 0, 64)}
}}

// maxPooledList is the largest text buffer kept for the next request (a page of 1,000 runs with
// long paths is dropped, not kept).
const maxPooledList = 256 << 10

func (d *listDecoder) release() {
	if cap(d.text) > maxPooledList || cap(d.rows) > 1024 || cap(d.paths) > 4096 {
		return
	}
	d.text, d.paths, d.rows = d.text[:0], d.paths[:0], d.rows[:0]
	listDecoders.Put(d)
}

// uuidOf and timestamptz are store's decoders with the list named in their errors.
func uuidOf(b []byte) (uuid.UUID, error) {
	u, err := store.DecodeUUID(b)
	if err != nil {
		return u, fmt.Errorf("run list: %w", err)
	}
	return u, nil
}

func timestamptz(b []byte) (time.Time, error) {
	t, err := store.DecodeTimestamptz(b)
	if err != nil {
		return t, fmt.Errorf("run list: %w", err)
	}
	return t, nil
}
