package store

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
)

// RetryAfterSeconds is what a client is told to wait when the database is unreachable.
const RetryAfterSeconds = 5

// Translate maps a database error to the API's error, once, for every query: no rows → not_found,
// a unique violation → conflict, a database that cannot be reached (refused, reset, shut down,
// out of connections) → unavailable with Retry-After. The cause stays wrapped, so IsNotFound and
// IsUniqueViolation still see it; anything else is returned as is (internal, logged).
func Translate(err error) error {
	if err == nil {
		return nil
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return err
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return apierr.Wrap(err, apierr.NotFound, "the resource does not exist", "check the identifier in the path")
	case IsUniqueViolation(err):
		return apierr.Wrap(err, apierr.Conflict, "the resource exists already", "choose another name, or change the existing one")
	case IsUnavailable(err):
		e := apierr.Wrap(err, apierr.Unavailable, "the database is unavailable", "retry after the number of seconds in Retry-After")
		e.RetryAfter = RetryAfterSeconds
		return e
	}
	return err
}

// IsUnavailable reports whether err means that the database cannot be reached or will not serve
// now, rather than that a statement failed.
func IsUnavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case len(pgErr.Code) == 5 && pgErr.Code[:2] == "08": // connection exception
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", pgErr.Code == "53300", pgErr.Code == "3D000":
			// admin or crash shutdown, cannot connect now, too many connections, database gone
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	var opErr *net.OpError
	return errors.As(err, &connectErr) || errors.As(err, &opErr) || errors.As(err, &netErr) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || pgconn.Timeout(err) && !errors.Is(err, context.Canceled)
}

// translating is the DBTX every query of the store goes through: its errors are translated.
type translating struct{ db db.DBTX }

func (t translating) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := t.db.Exec(ctx, sql, args...)
	return tag, Translate(err)
}

func (t translating) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := t.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, Translate(err)
	}
	return translatedRows{rows}, nil
}

func (t translating) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return translatedRow{t.db.QueryRow(ctx, sql, args...)}
}

type translatedRow struct{ pgx.Row }

func (r translatedRow) Scan(dest ...any) error { return Translate(r.Row.Scan(dest...)) }

type translatedRows struct{ pgx.Rows }

func (r translatedRows) Err() error { return Translate(r.Rows.Err()) }

func (r translatedRows) Scan(dest ...any) error { return Translate(r.Rows.Scan(dest...)) }
