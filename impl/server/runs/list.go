package runs

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sdods/sdods/impl/server/store"
)

// listRunsSQL reads a page of runs, newest first, each run's summary (the API's RunSummary) written
// as JSON by the statement itself: the service splices the items into the page without decoding
// them (issue 31 item 3; docs/benchmarks.md, read paths round 5). Beside the item, the run's id
// and creation time: the page's cursor.
//
// The item is the bytes encoding/json writes for the RunSummary the run's row makes, but for
// string escaping: PostgreSQL's to_json escapes only what JSON requires, not <, >, & and U+2028/9
// as encoding/json does, which decodes to the same strings (TestListItemsMatchTheSummaries). Its
// members are in the order of the schema's (alphabetical) and an absent optional member is left
// out (concat skips a NULL part); times as jsonTime writes them; durationMs is finishedAt −
// startedAt in whole microseconds (a double of seconds, exact to well under a microsecond for
// centuries, rounded), then in milliseconds truncated toward zero as time.Duration.Milliseconds
// does; counts are the stored document's members read as integers in one pass (jsonb_to_record;
// the document is written by the server only, integers), absent ones 0 and quarantined only when
// present and not null. Status, trigger and source are checked by the table against lists of
// plain words, and written unescaped. The expressions are chosen for PostgreSQL's CPU, a third of
// what the first form took (api_time, extract's numerics, a ->> and a cast per count: round 5).
//
// The filters are those of ListFilter; the project's id as a value (an InitPlan), not only through
// the join, so that the planner reads the project's runs in the order of runs_project_idx and
// stops at the page instead of joining all runs of the status to projects and sorting them.
var listRunsSQL = `SELECT r.id, r.created_at, concat('{',
    '"branch":' || to_json(r.branch) || ',',
    '"commit":' || to_json(r.commit_sha) || ',',
    '"counts":{"failed":', coalesce(c.failed, 0), ',"flaky":', coalesce(c.flaky, 0), ',"passed":', coalesce(c.passed, 0),
    ',"pending":', coalesce(c.pending, 0), ',"quarantined":' || c.quarantined, ',"skipped":', coalesce(c.skipped, 0),
    ',"total":', coalesce(c.total, 0), ',"undefined":', coalesce(c.undefined, 0),
    '},"createdAt":', ` + jsonTime("r.created_at") + `,
    ',"durationMs":' || round(date_part('epoch', r.finished_at - r.started_at) * 1000000)::bigint / 1000,
    ',"environment":' || to_json(r.environment),
    ',"finishedAt":' || ` + jsonTime("r.finished_at") + `,
    ',"id":"', r.id, '"',
    ',"label":' || to_json(r.label),
    ',"paths":', array_to_json(r.paths),
    ',"processName":' || to_json(r.process_name),
    ',"project":', to_json(p.slug),
    ',"scheduleId":"' || r.schedule_id || '"',
    ',"source":"', r.source, '"',
    ',"startedAt":' || ` + jsonTime("r.started_at") + `,
    ',"status":"', r.status, '"',
    ',"tags":' || to_json(r.tags),
    ',"trigger":"', r.trigger, '"',
    ',"updatedAt":', ` + jsonTime("r.updated_at") + `, '}')
FROM runs r JOIN projects p ON p.id = r.project_id
  CROSS JOIN LATERAL jsonb_to_record(r.counts)
    AS c(failed bigint, flaky bigint, passed bigint, pending bigint, quarantined bigint, skipped bigint, total bigint, undefined bigint)
WHERE ($1::boolean OR p.workspace_id = ANY($2::uuid[]))
  AND ($3::text IS NULL OR p.slug = $3::text)
  AND ($3::text IS NULL OR r.project_id = (SELECT pp.id FROM projects pp WHERE pp.slug = $3::text))
  AND (cardinality($4::text[]) = 0 OR r.status = ANY($4::text[]))
  AND (cardinality($5::text[]) = 0 OR r.branch = ANY($5::text[]))
  AND (cardinality($6::text[]) = 0 OR r.branch IS NULL OR r.branch <> ALL($6::text[]))
  AND (cardinality($7::text[]) = 0 OR r.trigger = ANY($7::text[]))
  AND (cardinality($8::text[]) = 0 OR r.trigger <> ALL($8::text[]))
  AND ($9::uuid IS NULL OR r.schedule_id = $9::uuid)
  AND (cardinality($10::text[]) = 0 OR r.tags ILIKE ANY($10::text[]))
  AND (cardinality($11::text[]) = 0 OR r.tags IS NULL OR NOT (r.tags ILIKE ANY($11::text[])))
  AND ($12::timestamptz IS NULL OR r.created_at >= $12::timestamptz)
  AND ($13::timestamptz IS NULL OR r.created_at < $13::timestamptz)
  AND ($14::timestamptz IS NULL OR (r.created_at, r.id) < ($14::timestamptz, $15::uuid))
ORDER BY r.created_at DESC, r.id DESC
LIMIT $16`

// jsonTime is the SQL of the JSON string of the timestamptz col as the API writes a time: Go's
// time.RFC3339Nano in UTC ("2006-01-02T15:04:05.999999Z", no fraction when it is zero), NULL when
// col is. It is api_time's result (schema 000029; TestJSONTimeMatchesGo) at a third of its CPU:
// to_json of a timestamp writes the ISO form with the fraction's trailing zeros dropped whatever
// the session's DateStyle, and the zone is then the letter Z.
func jsonTime(col string) string {
	return `left(to_json((` + col + `) AT TIME ZONE 'UTC')::text, -1) || 'Z"'`
}

// listOIDs are the types of listRunsSQL's columns, checked before reading them.
var listOIDs = [...]uint32{pgtype.UUIDOID, pgtype.TimestamptzOID, pgtype.TextOID}

// Page is a page of a list whose items the statement wrote as JSON.
type Page struct {
	// Items is a JSON array of the page's items, written by the statement.
	Items []byte
	// Next is the sort key of the page's last item when more items follow it, else nil.
	Next *Key
}

// Key is a run's place in the list: newest first, by creation time then id.
type Key struct {
	At time.Time
	ID uuid.UUID
}

// ListPage lists runs by f, f.Limit at most (one when it is less): their summaries as the API
// writes them (RunSummary; no variables, error or creator: the list shows none), in one JSON
// array the service does not decode, and the last one's key when more runs follow.
func (s *Service) ListPage(ctx context.Context, f ListFilter) (Page, error) {
	limit := max(f.Limit, 1)
	var wsIDs []uuid.UUID
	if !f.AllWorkspaces {
		var err error
		if wsIDs, err = s.st.UserWorkspaceIDs(ctx, f.UserID); err != nil {
			return Page{}, err
		}
	}
	if wsIDs == nil {
		wsIDs = []uuid.UUID{}
	}
	var scheduleID, beforeID uuid.NullUUID
	if f.ScheduleID != nil {
		scheduleID = uuid.NullUUID{UUID: *f.ScheduleID, Valid: true}
	}
	if f.BeforeAt != nil {
		beforeID = uuid.NullUUID{UUID: f.BeforeID, Valid: true}
	}
	rows, err := s.st.Pool.Query(ctx, listRunsSQL, pgx.QueryResultFormats{pgx.BinaryFormatCode},
		f.AllWorkspaces, wsIDs, f.Project, orEmpty(f.Statuses), orEmpty(f.Branches), orEmpty(f.NotBranches),
		orEmpty(f.Triggers), orEmpty(f.NotTriggers), scheduleID, tagPatterns(f.Tags), tagPatterns(f.NotTags),
		f.Since, f.Until, f.BeforeAt, beforeID, int64(limit)+1)
	if err != nil {
		return Page{}, store.Translate(err)
	}
	defer rows.Close()
	fds := rows.FieldDescriptions()
	if len(fds) != len(listOIDs) {
		return Page{}, fmt.Errorf("run list: %d columns, want %d", len(fds), len(listOIDs))
	}
	for i, fd := range fds {
		if fd.DataTypeOID != listOIDs[i] || fd.Format != pgx.BinaryFormatCode {
			return Page{}, fmt.Errorf("run list: column %s has type %d format %d, want type %d binary", fd.Name, fd.DataTypeOID, fd.Format, listOIDs[i])
		}
	}
	// About 600 bytes a summary; the guess is capped, as a page's limit is the caller's.
	items := make([]byte, 1, min(limit, 100)*640+2)
	items[0] = '['
	var last Key
	var page Page
	n := 0
	for rows.Next() {
		v := rows.RawValues()
		if n == limit {
			page.Next = &last
			break
		}
		if len(v[0]) != 16 || len(v[1]) != 8 || v[2] == nil {
			return Page{}, fmt.Errorf("run list: a row of %d, %d and %d bytes", len(v[0]), len(v[1]), len(v[2]))
		}
		copy(last.ID[:], v[0])
		if last.At, err = timestamptz(v[1]); err != nil {
			return Page{}, err
		}
		if n > 0 {
			items = append(items, ',')
		}
		items = append(items, v[2]...)
		n++
	}
	if err := rows.Err(); err != nil {
		return Page{}, store.Translate(err)
	}
	page.Items = append(items, ']')
	return page, nil
}

// pgEpochMicros is PostgreSQL's epoch, 2000-01-01 UTC, in microseconds since Unix's.
const pgEpochMicros = 946_684_800_000_000

// timestamptz reads a timestamptz in PostgreSQL's binary format (microseconds since 2000-01-01
// UTC) as pgx does (time.Unix's time zone); infinity is refused: no run is created at it.
func timestamptz(b []byte) (time.Time, error) {
	us := int64(binary.BigEndian.Uint64(b))
	if us == math.MaxInt64 || us == math.MinInt64 {
		return time.Time{}, fmt.Errorf("run list: an infinite creation time")
	}
	us += pgEpochMicros
	return time.Unix(us/1_000_000, us%1_000_000*1000), nil
}
