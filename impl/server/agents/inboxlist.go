package agents

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store"
)

// The review inbox reads gen/db's ListInboxProposals and ListInboxVisualChecks (their text and
// arguments, as the generated code builds them) with binary results and decodes the rows itself
// into the ProposalViews pgx's generic scan built (the same values: strings, jsonb's text, times
// in time.Local): the scan and the garbage it left were about 30 % of the list's Go CPU
// (docs/benchmarks.md, read paths round 8). Both statements have the same 19 columns.

// inboxOIDs are the types of both statements' columns, checked before any row is decoded.
var inboxOIDs = [...]uint32{
	pgtype.UUIDOID, pgtype.UUIDOID, pgtype.UUIDOID, // id, project_id, job_id
	pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, // kind, status, title
	pgtype.JSONBOID, pgtype.TextOID, pgtype.JSONBOID, pgtype.Float4OID, // target, diff, evidence, confidence
	pgtype.UUIDOID, pgtype.TimestamptzOID, pgtype.TextOID, // decided_by, decided_at, reason
	pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.TextOID, pgtype.UUIDOID, // created_at, updated_at, project_slug, workspace_id
	pgtype.TextOID, pgtype.TextOID, // decider_email, decider_name
}

// span is a value's bytes in the request's text buffer; nullSpan a NULL.
type span struct{ from, to int32 }

var nullSpan = span{-1, -1}

// inboxRow is one decoded row: its strings and documents as spans of the text buffer.
type inboxRow struct {
	id, projectID, jobID, decidedBy, workspaceID uuid.UUID
	hasJob, hasDecidedBy, hasDecidedAt           bool
	kind, status, title, target, diff, evidence  span
	reason, slug, email, name                    span
	confidence                                   float32
	decidedAt, createdAt, updatedAt              time.Time
}

// inboxDecoder decodes the rows of both statements into one text buffer.
type inboxDecoder struct {
	text []byte
	// jsonbFormat is the format of target and evidence: binary from QueryBinary, text from
	// QueryGeneric.
	jsonbFormat int16
}

func (d *inboxDecoder) addText(v []byte) span {
	s := span{int32(len(d.text)), 0}
	d.text = append(d.text, v...)
	s.to = int32(len(d.text))
	return s
}

// row decodes one row's raw values; malformed values are an error, never a panic.
func (d *inboxDecoder) row(v [][]byte) (inboxRow, error) {
	var r inboxRow
	if len(v) != len(inboxOIDs) {
		return r, fmt.Errorf("inbox: %d values, want %d", len(v), len(inboxOIDs))
	}
	for _, c := range [...]int{0, 1, 3, 4, 5, 6, 8, 9, 13, 14, 15, 16} {
		if v[c] == nil {
			return r, fmt.Errorf("inbox: NULL in NOT NULL column %d", c)
		}
	}
	var err error
	for _, u := range [...]struct {
		dst *uuid.UUID
		has *bool
		v   []byte
	}{{&r.id, nil, v[0]}, {&r.projectID, nil, v[1]}, {&r.jobID, &r.hasJob, v[2]}, {&r.decidedBy, &r.hasDecidedBy, v[10]}, {&r.workspaceID, nil, v[16]}} {
		if u.v == nil {
			continue
		}
		if len(u.v) != 16 {
			return r, fmt.Errorf("inbox: uuid of %d bytes", len(u.v))
		}
		copy(u.dst[:], u.v)
		if u.has != nil {
			*u.has = true
		}
	}
	for _, t := range [...]struct {
		dst *span
		v   []byte
	}{{&r.kind, v[3]}, {&r.status, v[4]}, {&r.title, v[5]}, {&r.diff, v[7]}, {&r.reason, v[12]}, {&r.slug, v[15]}, {&r.email, v[17]}, {&r.name, v[18]}} {
		if t.v == nil {
			*t.dst = nullSpan
			continue
		}
		*t.dst = d.addText(t.v)
	}
	for _, j := range [...]struct {
		dst *span
		v   []byte
	}{{&r.target, v[6]}, {&r.evidence, v[8]}} {
		text, err := store.JSONBText(j.v, d.jsonbFormat)
		if err != nil {
			return r, fmt.Errorf("inbox: %w", err)
		}
		*j.dst = d.addText(text)
	}
	if len(v[9]) != 4 {
		return r, fmt.Errorf("inbox: real of %d bytes", len(v[9]))
	}
	r.confidence = math.Float32frombits(binary.BigEndian.Uint32(v[9]))
	if v[11] != nil {
		r.hasDecidedAt = true
		if r.decidedAt, err = timestamptz(v[11]); err != nil {
			return r, err
		}
	}
	if r.createdAt, err = timestamptz(v[13]); err != nil {
		return r, err
	}
	if r.updatedAt, err = timestamptz(v[14]); err != nil {
		return r, err
	}
	return r, nil
}

// views builds the rows' ProposalViews, their strings slices of one string, their documents of
// one byte slice (as pgx's scan leaves them: jsonb's text; NULL text as nil pointers).
func (d *inboxDecoder) views(rows []inboxRow) []ProposalView {
	all := string(d.text)
	str := func(s span) string { return all[s.from:s.to] }
	var nOpt, nTime int
	for i := range rows {
		r := &rows[i]
		for _, s := range [...]span{r.diff, r.reason, r.email, r.name} {
			if s != nullSpan {
				nOpt++
			}
		}
		if r.hasDecidedAt {
			nTime++
		}
	}
	opts, times := make([]string, 0, nOpt), make([]time.Time, 0, nTime)
	opt := func(s span) *string {
		if s == nullSpan {
			return nil
		}
		opts = append(opts, str(s))
		return &opts[len(opts)-1]
	}
	out := make([]ProposalView, len(rows))
	for i := range rows {
		r := &rows[i]
		p := &out[i]
		p.Proposal = db.Proposal{ID: r.id, ProjectID: r.projectID, JobID: uuid.NullUUID{UUID: r.jobID, Valid: r.hasJob}, Kind: str(r.kind),
			Status: str(r.status), Title: str(r.title), Target: d.text[r.target.from:r.target.to:r.target.to], Diff: opt(r.diff),
			Evidence: d.text[r.evidence.from:r.evidence.to:r.evidence.to], Confidence: r.confidence,
			DecidedBy: uuid.NullUUID{UUID: r.decidedBy, Valid: r.hasDecidedBy}, Reason: opt(r.reason), CreatedAt: r.createdAt, UpdatedAt: r.updatedAt}
		if r.hasDecidedAt {
			times = append(times, r.decidedAt)
			p.DecidedAt = &times[len(times)-1]
		}
		p.ProjectSlug, p.WorkspaceID, p.DeciderRead = str(r.slug), r.workspaceID, true
		p.Decider = creatorOf(p.DecidedBy, opt(r.email), opt(r.name))
	}
	return out
}

// inboxQuery runs one recorded inbox statement with binary results and decodes its rows.
func (s *Service) inboxQuery(ctx context.Context, d *inboxDecoder, record func(*db.Queries) error, limit int32) ([]inboxRow, error) {
	rows, err := s.st.QueryBinary(ctx, "inbox", inboxOIDs[:], record)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]inboxRow, 0, max(limit, 0))
	if err := d.read(rows, &out); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, store.Translate(err)
	}
	return out, nil
}

// read decodes rows into out.
func (d *inboxDecoder) read(rows pgx.Rows, out *[]inboxRow) error {
	d.jsonbFormat = rows.FieldDescriptions()[6].Format
	if f := rows.FieldDescriptions()[8].Format; f != d.jsonbFormat {
		return fmt.Errorf("inbox: target and evidence in formats %d and %d", d.jsonbFormat, f)
	}
	for rows.Next() {
		r, err := d.row(rows.RawValues())
		if err != nil {
			return err
		}
		*out = append(*out, r)
	}
	return nil
}

// projectInbox reads a project's inbox of one status without a job filter: its proposals
// (ListProjectInboxProposalsByStatus) and, when withChecks, its visual checks
// (ListProjectInboxVisualChecks), in one round trip and under their generic plans
// (store.QueryGeneric): the rows ListInboxProposals and ListInboxVisualChecks give, without
// planning two statements per request.
func (s *Service) projectInbox(ctx context.Context, d *inboxDecoder, sc Scope, f ProposalFilter, withChecks bool) (props, checks []inboxRow, err error) {
	before := uuid.NullUUID{UUID: f.BeforeID, Valid: f.BeforeAt != nil}
	props, checks = make([]inboxRow, 0, max(f.Limit, 0)), make([]inboxRow, 0, max(f.Limit, 0))
	stmts := []store.GenericStatement{{OIDs: inboxOIDs[:], Read: func(rows pgx.Rows) error { return d.read(rows, &props) }, Call: func(q *db.Queries) error {
		_, err := q.ListProjectInboxProposalsByStatus(ctx, db.ListProjectInboxProposalsByStatusParams{Project: *f.Project, Status: *f.Status,
			AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: nonNilIDs(sc.WorkspaceIDs), Kind: f.Kind, MinConfidence: f.MinConfidence,
			BeforeAt: f.BeforeAt, BeforeID: before, RowLimit: int32(f.Limit)})
		return err
	}}}
	if withChecks {
		stmts = append(stmts, store.GenericStatement{OIDs: inboxOIDs[:], Read: func(rows pgx.Rows) error { return d.read(rows, &checks) }, Call: func(q *db.Queries) error {
			_, err := q.ListProjectInboxVisualChecks(ctx, db.ListProjectInboxVisualChecksParams{Project: *f.Project, AllWorkspaces: sc.AllWorkspaces,
				WorkspaceIds: nonNilIDs(sc.WorkspaceIDs), Status: f.Status, MinConfidence: f.MinConfidence, BeforeAt: f.BeforeAt, BeforeID: before,
				RowLimit: int32(f.Limit)})
			return err
		}})
	}
	if err := s.st.QueryGeneric(ctx, "inbox", stmts...); err != nil {
		return nil, nil, err
	}
	return props, checks, nil
}
