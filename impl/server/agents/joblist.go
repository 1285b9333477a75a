package agents

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store"
)

// The job list reads gen/db's ListAgentJobs statement (its text and arguments, as the generated
// code builds them) with binary results and writes each row as the API's AgentJob document
// itself, without pgx's generic scan (as runs.(*Service).listRuns does for the run list): the
// statement used to build the documents, which cost PostgreSQL more than this costs the server
// (docs/benchmarks.md, read paths round 8).
//
// The document is byte for byte what that statement wrote (so what the list answered before):
// the fields of agentJobOut (impl/server/httpapi/agents.go) in its order, an optional field left
// out when null, strings escaped as PostgreSQL's to_json escapes them, times as RFC 3339 in UTC
// with the fraction's trailing zeros dropped, the input as json.Unmarshal into a map leaves it (an
// object as stored, null as null, anything else {}). TestListItemsMatchTheirDetail compares each
// item with the job's detail (GET /api/agents/jobs/{id}, encoded by encoding/json).

// jobListOIDs are the types of ListAgentJobs's columns, checked before any row is decoded.
var jobListOIDs = [...]uint32{
	pgtype.TimestamptzOID, pgtype.UUIDOID, pgtype.TextOID, pgtype.TextOID, pgtype.JSONBOID, // created_at, id, kind, status, input
	pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, // max_seconds, max_tokens, progress, tokens_used
	pgtype.TextOID, pgtype.TextOID, // summary, error
	pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.TimestamptzOID, // updated_at, started_at, finished_at
	pgtype.TextOID, pgtype.UUIDOID, pgtype.TextOID, pgtype.TextOID, // project_slug, creator_id, creator_email, creator_name
	pgtype.UUIDArrayOID, // proposal_ids
}

const (
	jcCreatedAt = iota
	jcID
	jcKind
	jcStatus
	jcInput
	jcMaxSeconds
	jcMaxTokens
	jcProgress
	jcTokensUsed
	jcSummary
	jcError
	jcUpdatedAt
	jcStartedAt
	jcFinishedAt
	jcSlug
	jcCreatorID
	jcCreatorEmail
	jcCreatorName
	jcProposalIDs
)

// listJobs runs ListAgentJobs with binary results and writes at most limit rows as AgentJob
// documents, comma-separated, into page.Items. A project's jobs of one status or of one kind are
// read by ListProjectAgentJobsByStatus or ListProjectAgentJobsByKind under their generic plans
// (store.QueryGeneric): the same rows, without planning them per request.
func (s *Service) listJobs(ctx context.Context, params db.ListAgentJobsParams, limit int) (Page, error) {
	page := Page{Items: make([]byte, 0, 16<<10)}
	var lastAt time.Time
	var lastID [16]byte
	read := func(rows pgx.Rows) error {
		inputFormat := rows.FieldDescriptions()[jcInput].Format
		for rows.Next() {
			v := rows.RawValues()
			if page.N == limit {
				page.More = true
				break
			}
			if page.N > 0 {
				page.Items = append(page.Items, ',')
			}
			var err error
			if page.Items, err = appendJobRow(page.Items, v, inputFormat); err != nil {
				return err
			}
			page.N++
			lastAt, _ = timestamptz(v[jcCreatedAt])
			copy(lastID[:], v[jcID])
		}
		return nil
	}
	// A project's jobs of one status, or of one kind, under their generic plans; any other
	// filters through the general statement.
	var generic func(*db.Queries) error
	switch {
	case params.Project != nil && params.Status != nil && params.Kind == nil:
		generic = func(q *db.Queries) error {
			_, err := q.ListProjectAgentJobsByStatus(ctx, db.ListProjectAgentJobsByStatusParams{Project: *params.Project, Status: *params.Status,
				AllWorkspaces: params.AllWorkspaces, WorkspaceIds: params.WorkspaceIds, BeforeAt: params.BeforeAt, BeforeID: params.BeforeID,
				RowLimit: params.RowLimit})
			return err
		}
	case params.Project != nil && params.Kind != nil && params.Status == nil:
		generic = func(q *db.Queries) error {
			_, err := q.ListProjectAgentJobsByKind(ctx, db.ListProjectAgentJobsByKindParams{Project: *params.Project, Kind: *params.Kind,
				AllWorkspaces: params.AllWorkspaces, WorkspaceIds: params.WorkspaceIds, BeforeAt: params.BeforeAt, BeforeID: params.BeforeID,
				RowLimit: params.RowLimit})
			return err
		}
	}
	if generic != nil {
		if err := s.st.QueryGeneric(ctx, "job list", store.GenericStatement{OIDs: jobListOIDs[:], Read: read, Call: generic}); err != nil {
			return Page{}, err
		}
	} else {
		rows, err := s.st.QueryBinary(ctx, "job list", jobListOIDs[:], func(q *db.Queries) error {
			_, err := q.ListAgentJobs(ctx, params)
			return err
		})
		if err != nil {
			return Page{}, err
		}
		defer rows.Close()
		if err := read(rows); err != nil {
			return Page{}, err
		}
		if err := rows.Err(); err != nil {
			return Page{}, store.Translate(err)
		}
	}
	page.LastAt, page.LastID = lastAt, lastID
	return page, nil
}

// appendJobRow appends one row of ListAgentJobs as the API's AgentJob document; inputFormat is
// the input's (jsonb) format.
func appendJobRow(b []byte, v [][]byte, inputFormat int16) ([]byte, error) {
	if len(v) != len(jobListOIDs) {
		return b, fmt.Errorf("job list: %d values, want %d", len(v), len(jobListOIDs))
	}
	for _, c := range [...]int{jcCreatedAt, jcID, jcKind, jcStatus, jcInput, jcMaxSeconds, jcProgress, jcTokensUsed, jcUpdatedAt, jcSlug, jcProposalIDs} {
		if v[c] == nil {
			return b, fmt.Errorf("job list: NULL in NOT NULL column %d", c)
		}
	}
	var err error
	b = append(b, `{"createdAt":`...)
	if b, err = appendPGTime(b, v[jcCreatedAt]); err != nil {
		return b, err
	}
	// The creator: all three of the user's columns, as the statement's concatenation needed.
	if v[jcCreatorID] != nil && v[jcCreatorEmail] != nil && v[jcCreatorName] != nil {
		b = append(b, `,"createdBy":{"displayName":`...)
		b = appendPGString(b, v[jcCreatorName])
		b = append(b, `,"email":`...)
		b = appendPGString(b, v[jcCreatorEmail])
		b = append(b, `,"id":`...)
		if b, err = appendUUID(b, v[jcCreatorID]); err != nil {
			return b, err
		}
		b = append(b, '}')
	}
	if v[jcError] != nil {
		b = append(b, `,"error":`...)
		b = appendPGString(b, v[jcError])
	}
	if v[jcFinishedAt] != nil {
		b = append(b, `,"finishedAt":`...)
		if b, err = appendPGTime(b, v[jcFinishedAt]); err != nil {
			return b, err
		}
	}
	b = append(b, `,"id":`...)
	if b, err = appendUUID(b, v[jcID]); err != nil {
		return b, err
	}
	b = append(b, `,"input":`...)
	// An object's text starts with {.
	in, err := store.JSONBText(v[jcInput], inputFormat)
	if err != nil || len(in) < 1 {
		return b, fmt.Errorf("job list: input: %v", err)
	}
	switch {
	case in[0] == '{':
		b = append(b, in...)
	case string(in) == "null":
		b = append(b, "null"...)
	default:
		b = append(b, "{}"...)
	}
	b = append(b, `,"kind":`...)
	b = appendPGString(b, v[jcKind])
	b = append(b, `,"maxSeconds":`...)
	if b, err = appendInt4(b, v[jcMaxSeconds]); err != nil {
		return b, err
	}
	if v[jcMaxTokens] != nil {
		b = append(b, `,"maxTokens":`...)
		if b, err = appendInt4(b, v[jcMaxTokens]); err != nil {
			return b, err
		}
	}
	b = append(b, `,"progress":`...)
	if b, err = appendInt4(b, v[jcProgress]); err != nil {
		return b, err
	}
	b = append(b, `,"project":`...)
	b = appendPGString(b, v[jcSlug])
	b = append(b, `,"proposalIds":`...)
	if b, err = appendUUIDArray(b, v[jcProposalIDs]); err != nil {
		return b, err
	}
	if v[jcStartedAt] != nil {
		b = append(b, `,"startedAt":`...)
		if b, err = appendPGTime(b, v[jcStartedAt]); err != nil {
			return b, err
		}
	}
	b = append(b, `,"status":`...)
	b = appendPGString(b, v[jcStatus])
	if v[jcSummary] != nil {
		b = append(b, `,"summary":`...)
		b = appendPGString(b, v[jcSummary])
	}
	b = append(b, `,"tokensUsed":`...)
	if b, err = appendInt4(b, v[jcTokensUsed]); err != nil {
		return b, err
	}
	b = append(b, `,"updatedAt":`...)
	if b, err = appendPGTime(b, v[jcUpdatedAt]); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

const hexDigits = "0123456789abcdef"

// appendPGString appends s quoted as PostgreSQL's to_json(text) writes it (escape_json): ", \
// and the control characters escaped (\b \f \n \r \t by name, the others \u00XX), every other
// byte as it is.
func appendPGString(b, s []byte) []byte {
	b = append(b, '"')
	start := 0
	for i, c := range s {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendPGTime appends a binary timestamptz as the statement wrote it
// (left(to_json(t AT TIME ZONE 'UTC')::text, -1) || 'Z"'): RFC 3339 in UTC, the fraction's
// trailing zeros dropped, as time.RFC3339Nano writes it for the years 1 to 9999.
func appendPGTime(b, v []byte) ([]byte, error) {
	t, err := timestamptz(v)
	if err != nil {
		return b, err
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return b, fmt.Errorf("job list: time %v outside the years 1-9999", t.UTC())
	}
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

func timestamptz(v []byte) (time.Time, error) {
	t, err := store.DecodeTimestamptz(v)
	if err != nil {
		return t, fmt.Errorf("agents: %w", err)
	}
	return t, nil
}

func appendInt4(b, v []byte) ([]byte, error) {
	if len(v) != 4 {
		return b, fmt.Errorf("job list: integer of %d bytes", len(v))
	}
	return strconv.AppendInt(b, int64(int32(binary.BigEndian.Uint32(v))), 10), nil
}

// appendUUID appends a binary uuid quoted in its lowercase hyphenated form.
func appendUUID(b, v []byte) ([]byte, error) {
	if len(v) != 16 {
		return b, fmt.Errorf("job list: uuid of %d bytes", len(v))
	}
	b = append(b, '"')
	for i, c := range v {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[c>>4], hexDigits[c&0xF])
	}
	return append(b, '"'), nil
}

// appendUUIDArray appends a binary one-dimensional uuid[] (no NULLs) as a JSON array of strings,
// as array_to_json wrote it: [] when empty, no spaces.
func appendUUIDArray(b, v []byte) ([]byte, error) {
	if len(v) < 12 {
		return b, errors.New("job list: short array")
	}
	ndim, hasNull := binary.BigEndian.Uint32(v), binary.BigEndian.Uint32(v[4:])
	if hasNull != 0 {
		return b, errors.New("job list: NULL in the proposals' ids")
	}
	b = append(b, '[')
	if ndim == 0 {
		return append(b, ']'), nil
	}
	if ndim != 1 || len(v) < 20 {
		return b, fmt.Errorf("job list: array of %d dimensions", ndim)
	}
	n := int(int32(binary.BigEndian.Uint32(v[12:])))
	rest := v[20:]
	if n < 0 || len(rest) != n*20 {
		return b, errors.New("job list: malformed uuid array")
	}
	for i := 0; i < n; i++ {
		if binary.BigEndian.Uint32(rest) != 16 {
			return b, errors.New("job list: malformed uuid array")
		}
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = appendUUID(b, rest[4:20])
		rest = rest[20:]
	}
	return append(b, ']'), nil
}
