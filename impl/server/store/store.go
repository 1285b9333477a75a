// Package store is the PostgreSQL adapter of the test automation server: the connection pool,
// migrations and transactions around the sqlc-generated queries in gen/db.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sdods/sdods/gen/db"
)

// DefaultURL is the database the server uses when DATABASE_URL is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/sdods?sslmode=disable"

// Store owns the connection pool and hands out queries, alone or inside a transaction.
type Store struct {
	Pool *pgxpool.Pool
	*db.Queries
}

// BackgroundConns is how many of the pool's connections the server's background work may hold
// at once: one LISTEN each for run and agent events, held for the process's life, and the job
// queue's own statements.
const BackgroundConns = 4

// DefaultMaxConns is the pool's size unless the database URL sets pool_max_conns: twice as many
// connections for requests as the process has CPUs (at least four), plus BackgroundConns. pgx's
// default, max(4, CPUs), left two connections for requests on a two-core machine once both
// LISTENs held theirs: sixteen concurrent requests queued for them, and a job statement waiting
// for a WAL flush held one of the two (docs/benchmarks.md, read paths, round 4).
func DefaultMaxConns() int32 {
	return int32(max(4, 2*runtime.GOMAXPROCS(0)) + BackgroundConns)
}

// Open connects to url and checks the connection; it does not migrate.
func Open(ctx context.Context, url string) (*Store, error) {
	return OpenTraced(ctx, url, nil)
}

// OpenTraced is Open with tracer (when not nil) seeing every statement of the pool: for
// benchmarks that replay a request's own SQL (docs/benchmarks.md, read paths).
func OpenTraced(ctx context.Context, url string, tracer pgx.QueryTracer) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if tracer != nil {
		cfg.ConnConfig.Tracer = tracer
	}
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		registerRawJSON(c.TypeMap())
		registerUUID(c.TypeMap())
		registerArrays(c.TypeMap())
		return nil
	}
	// The server's queries are index look-ups and reads of small rollups whose row estimates can
	// still pass jit_above_cost; PostgreSQL's JIT then spends 0.5–1 s compiling a query that runs in
	// milliseconds (docs/benchmarks.md, statistics). Off unless the URL sets it (…?jit=on).
	if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set {
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	// The list queries take optional filters as "(parameter IS NULL OR column = parameter)". A
	// prepared statement's generic plan (PostgreSQL's choice after five executions) cannot drop the
	// filters not given, so it cannot pick the index of the one that is (a branch among 100,000
	// runs read the project's whole index: docs/benchmarks.md, read paths). Every execution is
	// planned with its values unless the URL says otherwise (…?plan_cache_mode=auto).
	if _, set := cfg.ConnConfig.RuntimeParams["plan_cache_mode"]; !set {
		cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns()
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database %s@%s/%s: %w", cfg.ConnConfig.User, cfg.ConnConfig.Host, cfg.ConnConfig.Database, err)
	}
	return &Store{Pool: pool, Queries: db.New(translating{pool})}, nil
}

// registerRawJSON makes json and jsonb columns scanned into json.RawMessage a copy of the bytes
// the database sent. pgx's own codecs scan a json.RawMessage with json.Unmarshal, which checks
// every byte of a document PostgreSQL produced valid before copying it: a run's steps were
// scanned twice, once by that check and once by the reader (issue 31 item 3). Other targets keep
// pgx's behaviour (encoding/json).
func registerRawJSON(m *pgtype.Map) {
	m.RegisterType(&pgtype.Type{Name: "json", OID: pgtype.JSONOID, Codec: &pgtype.JSONCodec{Marshal: json.Marshal, Unmarshal: unmarshalRaw}})
	m.RegisterType(&pgtype.Type{Name: "jsonb", OID: pgtype.JSONBOID, Codec: &pgtype.JSONBCodec{Marshal: json.Marshal, Unmarshal: unmarshalRaw}})
}

// registerUUID makes a uuid.UUID parameter encode as the 16 bytes it is. pgx otherwise takes it as
// a driver.Valuer: its text, which the binary uuid codec refuses (an error formatted with
// fmt.Errorf), scanned back and encoded — a runner batch sends about 1,000 of them in its arrays
// (docs/benchmarks.md, runner round 4).
func registerUUID(m *pgtype.Map) {
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{tryWrapUUIDEncodePlan}, m.TryWrapEncodePlanFuncs...)
}

func tryWrapUUIDEncodePlan(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
	switch v := value.(type) {
	case uuid.UUID:
		return &uuidEncodePlan{}, [16]byte(v), true
	case []uuid.UUID:
		// As [][16]byte, which pgx encodes without reflection (2 allocations an id instead of 3).
		return &uuidSliceEncodePlan{}, uuidBytes(v), true
	case [][]byte:
		// pgx reads a [][]byte (a batch's attachment contents) by reflection otherwise.
		return &bytesSliceEncodePlan{}, pgtype.FlatArray[[]byte](v), true
	}
	return nil, nil, false
}

// uuidBytes returns ids as [][16]byte; nil stays nil (NULL, not an empty array).
func uuidBytes(ids []uuid.UUID) [][16]byte {
	if ids == nil {
		return nil
	}
	out := make([][16]byte, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

type uuidSliceEncodePlan struct{ next pgtype.EncodePlan }

func (p *uuidSliceEncodePlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *uuidSliceEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	return p.next.Encode(uuidBytes(value.([]uuid.UUID)), buf)
}

type bytesSliceEncodePlan struct{ next pgtype.EncodePlan }

func (p *bytesSliceEncodePlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *bytesSliceEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	return p.next.Encode(pgtype.FlatArray[[]byte](value.([][]byte)), buf)
}

type uuidEncodePlan struct{ next pgtype.EncodePlan }

func (p *uuidEncodePlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *uuidEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	return p.next.Encode([16]byte(value.(uuid.UUID)), buf)
}

func unmarshalRaw(data []byte, v any) error {
	if raw, ok := v.(*json.RawMessage); ok {
		*raw = append((*raw)[:0:0], data...)
		return nil
	}
	return json.Unmarshal(data, v)
}

// Close releases every connection.
func (s *Store) Close() { s.Pool.Close() }

// WithTx runs fn in one transaction: committed when fn returns nil, rolled back otherwise.
func (s *Store) WithTx(ctx context.Context, fn func(q *db.Queries) error) error {
	var fnErr error
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		q := db.New(translating{tx})
		openTxs.Store(q, tx)
		defer openTxs.Delete(q)
		fnErr = fn(q)
		return fnErr
	})
	if fnErr != nil {
		return fnErr // fn's own error, its queries' errors translated already
	}
	return Translate(err) // begin or commit
}

// openTxs maps the queries WithTx hands out to their transaction while fn runs.
var openTxs sync.Map

// TxOf returns the transaction of queries handed out by WithTx, while its fn runs: for what must
// write in the same transaction without sqlc (River's jobs.InsertTx).
func TxOf(q *db.Queries) (pgx.Tx, bool) {
	tx, ok := openTxs.Load(q)
	if !ok {
		return nil, false
	}
	return tx.(pgx.Tx), true
}

// Health reports the database round-trip time, or why it failed.
func (s *Store) Health(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := s.DatabaseNow(ctx); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// IsNotFound reports whether err means that a queried row does not exist.
func IsNotFound(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// IsUniqueViolation reports whether err is a violated unique constraint.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
