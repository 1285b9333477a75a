package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sdods/sdods/gen/db"
)

// The hottest lists (runs, agent jobs, the review inbox) send gen/db's statement (its text and
// arguments, as the generated code builds them) but decode the rows from PostgreSQL's binary
// format themselves: pgx's generic scan into sqlc's rows, and the garbage it left, were half of a
// list's Go CPU (docs/benchmarks.md, read paths rounds 7 and 8). QueryBinary is that query;
// DecodeUUID and DecodeTimestamptz read the binary values the decoders share.

// errRecorded stops a generated query at its Query call, once statementRecorder has kept it.
var errRecorded = errors.New("statement recorded, not run")

// statementRecorder is a db.DBTX that keeps the statement and arguments of the one query it is
// asked to run instead of running it.
type statementRecorder struct {
	sql  string
	args []any
}

func (r *statementRecorder) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, errRecorded
}

func (r *statementRecorder) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	r.sql, r.args = sql, args
	return nil, errRecorded
}

func (r *statementRecorder) QueryRow(context.Context, string, ...any) pgx.Row { return errRow{} }

type errRow struct{}

func (errRow) Scan(...any) error { return errRecorded }

// QueryBinary sends the statement that call makes on its *db.Queries (recorded, not run by the
// call itself) with binary results, and checks that the columns have the types oids, in order,
// before any row is read. what names the list in errors. The caller reads rows.RawValues and
// closes the rows.
func (s *Store) QueryBinary(ctx context.Context, what string, oids []uint32, call func(*db.Queries) error) (pgx.Rows, error) {
	var rec statementRecorder
	if err := call(db.New(&rec)); !errors.Is(err, errRecorded) {
		return nil, fmt.Errorf("%s: recording the statement: %v", what, err)
	}
	args := make([]any, 0, 1+len(rec.args))
	args = append(append(args, pgx.QueryResultFormats{pgx.BinaryFormatCode}), rec.args...)
	rows, err := s.Pool.Query(ctx, rec.sql, args...)
	if err != nil {
		return nil, Translate(err)
	}
	fds := rows.FieldDescriptions()
	if len(fds) != len(oids) {
		rows.Close()
		return nil, fmt.Errorf("%s: %d columns, want %d", what, len(fds), len(oids))
	}
	for i, fd := range fds {
		if fd.DataTypeOID != oids[i] || fd.Format != pgx.BinaryFormatCode {
			rows.Close()
			return nil, fmt.Errorf("%s: column %s has type %d format %d, want type %d binary", what, fd.Name, fd.DataTypeOID, fd.Format, oids[i])
		}
	}
	return rows, nil
}

// DecodeUUID reads a binary uuid.
func DecodeUUID(b []byte) (uuid.UUID, error) {
	var u uuid.UUID
	if len(b) != 16 {
		return u, fmt.Errorf("uuid of %d bytes", len(b))
	}
	copy(u[:], b)
	return u, nil
}

// usecPerSec and y2kUnixSec convert PostgreSQL's timestamptz (microseconds since 2000-01-01 UTC);
// pgInfinity is 'infinity' in the binary format ('-infinity' is its negation minus one).
const (
	usecPerSec = 1_000_000
	y2kUnixSec = 946_684_800
	pgInfinity = 1<<63 - 1
)

// DecodeTimestamptz reads a binary timestamptz as pgx does (time.Unix: in time.Local); the
// infinities are an error.
func DecodeTimestamptz(b []byte) (time.Time, error) {
	if len(b) != 8 {
		return time.Time{}, fmt.Errorf("timestamptz of %d bytes", len(b))
	}
	us := int64(binary.BigEndian.Uint64(b))
	if us == pgInfinity || us == -pgInfinity-1 {
		return time.Time{}, errors.New("infinite timestamptz")
	}
	return time.Unix(y2kUnixSec+us/usecPerSec, us%usecPerSec*1000), nil
}

// DecodeTextArray calls each with the bytes of every element of a binary one-dimensional text[]
// (dimensions, has-null flag, element type, then per dimension its length and lower bound, then
// each element as a length and its bytes), in order; an empty array calls it never. A NULL
// element is an error, as a scan into []string makes it.
func DecodeTextArray(v []byte, each func(elem []byte)) error {
	if len(v) < 12 {
		return errors.New("short array header")
	}
	switch ndim := int32(binary.BigEndian.Uint32(v)); ndim {
	case 0:
		return nil
	case 1:
	default:
		return fmt.Errorf("%d dimensions", ndim)
	}
	if len(v) < 20 {
		return errors.New("short array header")
	}
	n := int(int32(binary.BigEndian.Uint32(v[12:])))
	p := v[20:]
	for range n {
		if len(p) < 4 {
			return errors.New("short element")
		}
		l := int(int32(binary.BigEndian.Uint32(p)))
		if l < 0 || len(p) < 4+l {
			return errors.New("NULL or short element")
		}
		each(p[4 : 4+l])
		p = p[4+l:]
	}
	return nil
}
