package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sdods/sdods/gen/db"
)

// The pool plans every execution with its values (plan_cache_mode=force_custom_plan, Open): the
// lists' general statements take optional filters as "(parameter IS NULL OR …)", which a generic
// plan cannot drop. For a list's hottest filters that planning cost PostgreSQL more than running
// the statement (0.2–0.5 ms against 0.1–0.3 ms: docs/benchmarks.md, read paths round 9), so those
// lists have statements written without optional index filters, whose one generic plan is the
// index path a custom plan picks. QueryGeneric sends them so planned: in one round trip after
// genericPlanSQL, which sets plan_cache_mode for the implicit transaction the round trip is (its
// Sync ends it; an error rolls it back), so the connection plans as before afterwards.

// genericPlanSQL makes the statements after it in the same round trip use their generic plan:
// prepared once per connection (pgx's statement cache), each planned once per connection.
const genericPlanSQL = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`

// GenericStatement is one statement of a QueryGeneric round trip: the statement that Call makes
// on its *db.Queries (recorded, not run by the call itself), the types of its columns, in order,
// and Read, given its rows once their types are checked.
type GenericStatement struct {
	OIDs []uint32
	Call func(*db.Queries) error
	Read func(pgx.Rows) error
}

// QueryGeneric sends stmts in one round trip, each under its generic plan, and reads each one's
// rows with its Read, in order. what names the list in errors. In a pipeline pgx asks for each
// column in its preferred format: text and jsonb as text (JSONBText reads both forms), every
// other type binary, which it checks.
func (s *Store) QueryGeneric(ctx context.Context, what string, stmts ...GenericStatement) error {
	var batch pgx.Batch
	batch.Queue(genericPlanSQL)
	for _, st := range stmts {
		var rec statementRecorder
		if err := st.Call(db.New(&rec)); !errors.Is(err, errRecorded) {
			return fmt.Errorf("%s: recording the statement: %v", what, err)
		}
		batch.Queue(rec.sql, rec.args...)
	}
	br := s.Pool.SendBatch(ctx, &batch)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return Translate(err)
	}
	for _, st := range stmts {
		if err := readGeneric(br, what, st); err != nil {
			return err
		}
	}
	return Translate(br.Close())
}

func readGeneric(br pgx.BatchResults, what string, st GenericStatement) error {
	rows, err := br.Query()
	if err != nil {
		return Translate(err)
	}
	defer rows.Close()
	fds := rows.FieldDescriptions()
	if len(fds) != len(st.OIDs) {
		return fmt.Errorf("%s: %d columns, want %d", what, len(fds), len(st.OIDs))
	}
	for i, fd := range fds {
		textual := fd.DataTypeOID == pgtype.TextOID || fd.DataTypeOID == pgtype.JSONBOID
		if fd.DataTypeOID != st.OIDs[i] || (fd.Format != pgx.BinaryFormatCode && !textual) {
			return fmt.Errorf("%s: column %s has type %d format %d, want type %d", what, fd.Name, fd.DataTypeOID, fd.Format, st.OIDs[i])
		}
	}
	if err := st.Read(rows); err != nil {
		return err
	}
	rows.Close()
	return Translate(rows.Err())
}

// JSONBText is a jsonb value's text: in the binary format a version byte (1) and the text, in
// the text format the text itself.
func JSONBText(v []byte, format int16) ([]byte, error) {
	if format == pgx.TextFormatCode {
		return v, nil
	}
	if len(v) < 1 || v[0] != 1 {
		return nil, errors.New("not jsonb version 1")
	}
	return v[1:], nil
}
