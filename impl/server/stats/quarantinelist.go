package stats

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/store"
)

// The quarantine list reads gen/db's ListQuarantines statement (its text and arguments, as the
// generated code builds them) but decodes the rows from PostgreSQL's binary format itself, as the
// run list does (runs.(*Service).listRuns), straight into the API's items: pgx's generic scan into
// sqlc's rows and the garbage it left were a sixth of the list's own Go CPU (docs/benchmarks.md,
// read paths round 8, session 12). The items are those toAPI made of the scan
// (TestQuarantineListMatchesScan).

// quarantineOIDs are the types of ListQuarantines's columns (scenario_quarantines.*), checked
// before any row is decoded.
var quarantineOIDs = [...]uint32{pgtype.UUIDOID, pgtype.UUIDOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, // id … name
	pgtype.Int4OID, pgtype.TextOID, pgtype.TextOID, pgtype.TimestamptzOID, pgtype.Int4OID, pgtype.Int4OID, // example_row … clean_streak
	pgtype.UUIDOID, pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.TextOID} // created_by … release_reason

const (
	qcID = iota
	qcProjectID
	qcIdentity
	qcFeaturePath
	qcName
	qcExampleRow
	qcOwner
	qcReason
	qcExpiresAt
	qcReleaseAfter
	qcCleanStreak
	qcCreatedBy
	qcCreatedAt
	qcReleasedAt
	qcReleaseReason
)

type qspan struct{ from, to int32 }

// quarantineRow is one decoded row: its strings spans of the page's text.
type quarantineRow struct {
	q                                       serverapi.Quarantine // but for its strings and optional members
	identity, path, name, owner, reason, rr qspan
	hasRR                                   bool
	exampleRow, releaseAfter                *int
	expiresAt, releasedAt                   *time.Time
}

func qint4(v []byte) (int, error) {
	if len(v) != 4 {
		return 0, fmt.Errorf("quarantine list: int4 of %d bytes", len(v))
	}
	return int(int32(binary.BigEndian.Uint32(v))), nil
}

// listQuarantines runs ListQuarantines with binary results and returns its rows as the API's
// items (project their project), at most limit of them, and whether more follow; last is the last
// item's cursor.
func (qs *Quarantines) listQuarantines(ctx context.Context, p db.ListQuarantinesParams, project string, limit int) ([]serverapi.Quarantine, *QuarantineCursor, error) {
	rows, err := qs.st.QueryBinary(ctx, "quarantine list", quarantineOIDs[:], func(q *db.Queries) error {
		_, err := q.ListQuarantines(ctx, p)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	text := make([]byte, 0, 8<<10)
	str := func(v []byte) qspan {
		from := int32(len(text))
		text = append(text, v...)
		return qspan{from, int32(len(text))}
	}
	ints := make([]int, 0, 2*limit)
	times := make([]time.Time, 0, 2*limit)
	decoded := make([]quarantineRow, 0, limit)
	more := false
	for rows.Next() {
		if len(decoded) == limit {
			more = true
			break
		}
		v := rows.RawValues()
		if len(v) != len(quarantineOIDs) {
			return nil, nil, fmt.Errorf("quarantine list: %d values, want %d", len(v), len(quarantineOIDs))
		}
		for _, c := range [...]int{qcID, qcIdentity, qcFeaturePath, qcName, qcOwner, qcReason, qcCleanStreak, qcCreatedAt} {
			if v[c] == nil {
				return nil, nil, fmt.Errorf("quarantine list: NULL in NOT NULL column %d", c)
			}
		}
		var r quarantineRow
		if r.q.Id, err = store.DecodeUUID(v[qcID]); err != nil {
			return nil, nil, err
		}
		r.identity, r.path, r.name, r.owner, r.reason = str(v[qcIdentity]), str(v[qcFeaturePath]), str(v[qcName]), str(v[qcOwner]), str(v[qcReason])
		if v[qcReleaseReason] != nil {
			r.hasRR, r.rr = true, str(v[qcReleaseReason])
		}
		for _, c := range [...]struct {
			dst **int
			v   []byte
		}{{&r.exampleRow, v[qcExampleRow]}, {&r.releaseAfter, v[qcReleaseAfter]}} {
			if c.v == nil {
				continue
			}
			n, err := qint4(c.v)
			if err != nil {
				return nil, nil, err
			}
			ints = append(ints, n) // never past its capacity: the pointers stay valid
			*c.dst = &ints[len(ints)-1]
		}
		for _, c := range [...]struct {
			dst **time.Time
			v   []byte
		}{{&r.expiresAt, v[qcExpiresAt]}, {&r.releasedAt, v[qcReleasedAt]}} {
			if c.v == nil {
				continue
			}
			t, err := store.DecodeTimestamptz(c.v)
			if err != nil {
				return nil, nil, err
			}
			times = append(times, t) // never past its capacity
			*c.dst = &times[len(times)-1]
		}
		if r.q.CleanStreak, err = qint4(v[qcCleanStreak]); err != nil {
			return nil, nil, err
		}
		if r.q.CreatedAt, err = store.DecodeTimestamptz(v[qcCreatedAt]); err != nil {
			return nil, nil, err
		}
		decoded = append(decoded, r)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, store.Translate(err)
	}
	all := string(text)
	s := func(sp qspan) string { return all[sp.from:sp.to] }
	rrs := make([]string, 0, len(decoded))
	out := make([]serverapi.Quarantine, len(decoded))
	for i := range decoded {
		r := &decoded[i]
		q := r.q
		q.Identity, q.Project, q.FeaturePath, q.Scenario, q.Owner, q.Reason = s(r.identity), project, s(r.path), s(r.name), s(r.owner), s(r.reason)
		q.ExampleRow, q.ReleaseAfter, q.ExpiresAt, q.ReleasedAt = r.exampleRow, r.releaseAfter, r.expiresAt, r.releasedAt
		if r.hasRR {
			rrs = append(rrs, s(r.rr))
			q.ReleaseReason = &rrs[len(rrs)-1]
		}
		q.Active = q.ReleasedAt == nil && (q.ExpiresAt == nil || q.ExpiresAt.After(qs.now()))
		out[i] = q
	}
	var next *QuarantineCursor
	if more && len(out) > 0 {
		last := out[len(out)-1]
		next = &QuarantineCursor{Open: last.ReleasedAt == nil, At: last.CreatedAt, ID: last.Id}
	}
	return out, next, nil
}

// exportOIDs are the types of ListActiveQuarantines's columns (feature_path, name).
var exportOIDs = [...]uint32{pgtype.TextOID, pgtype.TextOID}

// export is the export of every quarantine of the project active now, from ListActiveQuarantines's
// binary rows: each "path › name" a slice of one string, the names' pattern (each name once)
// matching exactly them, the tag expression that leaves out the quarantined tag; an empty list
// and pattern when none is active.
func (qs *Quarantines) export(ctx context.Context, projectID uuid.UUID) (serverapi.QuarantineExport, error) {
	out := serverapi.QuarantineExport{List: []string{}}
	rows, err := qs.st.QueryBinary(ctx, "quarantine export", exportOIDs[:], func(q *db.Queries) error {
		_, err := q.ListActiveQuarantines(ctx, db.ListActiveQuarantinesParams{ProjectID: projectID, Now: qs.now()})
		return err
	})
	if err != nil {
		return out, err
	}
	defer rows.Close()
	var text []byte
	var items []struct{ from, name, to int32 }
	for rows.Next() {
		v := rows.RawValues()
		if len(v) != 2 || v[0] == nil || v[1] == nil {
			return out, errors.New("quarantine export: NULL or missing feature_path or name")
		}
		from := int32(len(text))
		text = append(append(text, v[0]...), " › "...)
		name := int32(len(text))
		text = append(text, v[1]...)
		items = append(items, struct{ from, name, to int32 }{from, name, int32(len(text))})
	}
	if err := rows.Err(); err != nil {
		return out, store.Translate(err)
	}
	if len(items) == 0 {
		return out, nil
	}
	all := string(text)
	out.List = make([]string, len(items))
	names := make([]string, 0, len(items))
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		out.List[i] = all[it.from:it.to]
		if name := all[it.name:it.to]; !seen[name] {
			seen[name] = true
			names = append(names, regexp.QuoteMeta(name))
		}
	}
	out.NamePattern = "^(?:" + strings.Join(names, "|") + ")$"
	out.TagExpression = "not " + runner.QuarantinedTag
	return out, nil
}
