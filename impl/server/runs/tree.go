package runs

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sdods/sdods/impl/server/store"
)

// scenarioTreeSQL is a run's scenarios without their steps and error: what the run's scenario
// tree shows. It is read here rather than through gen/db because its rows are decoded from
// PostgreSQL's binary format straight into one buffer per request (a 2,000-scenario run made
// 20,000 allocations through pgx's generic scan: docs/benchmarks.md, read paths round 2).
const scenarioTreeSQL = `SELECT id, position, module, feature_path, feature_name, name, line, tags, example_row, status, attempts, duration_ms, dataset
FROM run_scenarios WHERE run_id = $1 ORDER BY position`

// treeOIDs are the types of scenarioTreeSQL's columns, checked before decoding them.
var treeOIDs = [...]uint32{pgtype.UUIDOID, pgtype.Int4OID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.Int4OID,
	pgtype.TextArrayOID, pgtype.Int4OID, pgtype.TextOID, pgtype.Int4OID, pgtype.Int8OID, pgtype.TextOID}

// treeRow is one row of scenarioTreeSQL: strings as offsets into the request's text buffer,
// tags as a range of the request's tag offsets.
type treeRow struct {
	id                           uuid.UUID
	position, line, attempts     int32
	exampleRow                   int32
	durationMs                   int64
	module, path, feature, name  span
	status, dataset              span
	tagsFrom, tagsTo             int32
	hasRow, hasDuration, hasData bool
}

type span struct{ from, to int32 }

// ScenarioTree lists a run's scenarios in execution order without their steps and error (nil
// in the result): what the run's scenario tree shows, a fraction of the bytes of Scenarios. The
// rows' strings share one allocation, their tags one slice, their optional numbers two arrays:
// the number of allocations does not grow with the number of scenarios.
func (s *Service) ScenarioTree(ctx context.Context, runID uuid.UUID) ([]Scenario, error) {
	rows, err := s.st.Pool.Query(ctx, scenarioTreeSQL, pgx.QueryResultFormats{pgx.BinaryFormatCode}, runID)
	if err != nil {
		return nil, store.Translate(err)
	}
	defer rows.Close()
	fds := rows.FieldDescriptions()
	if len(fds) != len(treeOIDs) {
		return nil, fmt.Errorf("scenario tree: %d columns, want %d", len(fds), len(treeOIDs))
	}
	for i, fd := range fds {
		if fd.DataTypeOID != treeOIDs[i] || fd.Format != pgx.BinaryFormatCode {
			return nil, fmt.Errorf("scenario tree: column %s has type %d format %d, want type %d binary", fd.Name, fd.DataTypeOID, fd.Format, treeOIDs[i])
		}
	}
	text := make([]byte, 0, 32<<10)
	var tags []span
	var out []treeRow
	for rows.Next() {
		v := rows.RawValues()
		var r treeRow
		if len(v[0]) != 16 {
			return nil, fmt.Errorf("scenario tree: uuid of %d bytes", len(v[0]))
		}
		copy(r.id[:], v[0])
		if r.position, err = int4(v[1]); err != nil {
			return nil, err
		}
		r.module, text = addText(text, v[2])
		r.path, text = addText(text, v[3])
		r.feature, text = addText(text, v[4])
		r.name, text = addText(text, v[5])
		if r.line, err = int4(v[6]); err != nil {
			return nil, err
		}
		r.tagsFrom = int32(len(tags))
		if v[7] != nil {
			if tags, text, err = addTextArray(tags, text, v[7]); err != nil {
				return nil, err
			}
		}
		r.tagsTo = int32(len(tags))
		if v[8] != nil {
			r.hasRow = true
			if r.exampleRow, err = int4(v[8]); err != nil {
				return nil, err
			}
		}
		r.status, text = addText(text, v[9])
		if r.attempts, err = int4(v[10]); err != nil {
			return nil, err
		}
		if v[11] != nil {
			if len(v[11]) != 8 {
				return nil, fmt.Errorf("scenario tree: int8 of %d bytes", len(v[11]))
			}
			r.hasDuration, r.durationMs = true, int64(binary.BigEndian.Uint64(v[11]))
		}
		if v[12] != nil {
			r.hasData = true
			r.dataset, text = addText(text, v[12])
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, store.Translate(err)
	}
	return treeScenarios(runID, out, text, tags), nil
}

// treeScenarios turns the decoded rows into Scenarios whose strings are slices of one string
// made of text, and whose pointers point into arrays allocated once.
func treeScenarios(runID uuid.UUID, rows []treeRow, text []byte, tags []span) []Scenario {
	all := string(text) // one copy: every string of the response is a slice of it
	str := func(s span) string { return all[s.from:s.to] }
	tagStrs := make([]string, len(tags))
	for i, t := range tags {
		tagStrs[i] = str(t)
	}
	var nRow, nDur, nData int
	for i := range rows {
		if rows[i].hasRow {
			nRow++
		}
		if rows[i].hasDuration {
			nDur++
		}
		if rows[i].hasData {
			nData++
		}
	}
	exampleRows, durations, datasets := make([]int32, 0, nRow), make([]int64, 0, nDur), make([]string, 0, nData)
	out := make([]Scenario, len(rows))
	for i := range rows {
		r := &rows[i]
		sc := &out[i]
		*sc = Scenario{ID: r.id, RunID: runID, Position: r.position, Module: str(r.module), FeaturePath: str(r.path), FeatureName: str(r.feature),
			Name: str(r.name), Line: r.line, Tags: tagStrs[r.tagsFrom:r.tagsTo:r.tagsTo], Status: str(r.status), Attempts: r.attempts}
		if r.hasRow {
			exampleRows = append(exampleRows, r.exampleRow)
			sc.ExampleRow = &exampleRows[len(exampleRows)-1]
		}
		if r.hasDuration {
			durations = append(durations, r.durationMs)
			sc.DurationMs = &durations[len(durations)-1]
		}
		if r.hasData {
			datasets = append(datasets, str(r.dataset))
			sc.Dataset = &datasets[len(datasets)-1]
		}
	}
	return out
}

func int4(b []byte) (int32, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("scenario tree: int4 of %d bytes", len(b))
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

func addText(text, v []byte) (span, []byte) {
	from := int32(len(text))
	text = append(text, v...)
	return span{from, int32(len(text))}, text
}

// addTextArray appends the elements of a binary one-dimensional text[] (store.DecodeTextArray)
// as spans of text. A NULL element is refused: tags are never NULL.
func addTextArray(tags []span, text, v []byte) ([]span, []byte, error) {
	err := store.DecodeTextArray(v, func(e []byte) {
		var s span
		s, text = addText(text, e)
		tags = append(tags, s)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("scenario tree: tags: %w", err)
	}
	return tags, text, nil
}
