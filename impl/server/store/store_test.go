package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

func TestMigrateUpDownUp(t *testing.T) {
	dbURL := storetest.NewDatabase(t)
	v, err := store.MigrationVersion(dbURL)
	if err != nil || v.Version == 0 || v.Dirty {
		t.Fatalf("after up: version %+v, err %v", v, err)
	}
	if err := store.MigrateDown(dbURL, 0); err != nil {
		t.Fatalf("down: %v", err)
	}
	if v, err := store.MigrationVersion(dbURL); err != nil || v.Version != 0 {
		t.Fatalf("after down: version %+v, err %v", v, err)
	}
	if err := store.MigrateUp(dbURL); err != nil {
		t.Fatalf("up again: %v", err)
	}
}

func TestWithTxRollsBackOnError(t *testing.T) {
	s, _ := storetest.Open(t)
	ctx := context.Background()
	boom := errTest("boom")
	err := s.WithTx(ctx, func(q *db.Queries) error {
		if err := q.InsertAuditEntry(ctx, db.InsertAuditEntryParams{ActorKind: "system", Operation: "createThing", Outcome: "success", Detail: json.RawMessage(`{}`)}); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("WithTx error = %v, want boom", err)
	}
	rows, err := s.ListAuditEntries(ctx, db.ListAuditEntriesParams{RowLimit: 10})
	if err != nil || len(rows) != 0 {
		t.Fatalf("after rollback: %d rows, err %v", len(rows), err)
	}
	actor := uuid.New()
	if err := s.WithTx(ctx, func(q *db.Queries) error {
		return q.InsertAuditEntry(ctx, db.InsertAuditEntryParams{ActorKind: "user", ActorID: uuid.NullUUID{UUID: actor, Valid: true}, Operation: "createThing", Outcome: "success", Detail: json.RawMessage(`{"a":1}`)})
	}); err != nil {
		t.Fatal(err)
	}
	rows, err = s.ListAuditEntries(ctx, db.ListAuditEntriesParams{RowLimit: 10, ActorID: uuid.NullUUID{UUID: actor, Valid: true}})
	if err != nil || len(rows) != 1 || rows[0].Operation != "createThing" {
		t.Fatalf("after commit: %+v, err %v", rows, err)
	}
}

func TestEnsureDatabaseIsIdempotent(t *testing.T) {
	dbURL := storetest.NewDatabase(t)
	for i := 0; i < 2; i++ {
		if err := store.EnsureDatabase(context.Background(), dbURL); err != nil {
			t.Fatalf("EnsureDatabase #%d: %v", i, err)
		}
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

// River's job tables come and go with ours, and processes starting at once on a new database
// migrate it without tripping over each other.
func TestMigrationsIncludeRiver(t *testing.T) {
	dbURL := storetest.NewDatabase(t)
	v, err := store.MigrationVersion(dbURL)
	if err != nil || v.River == 0 {
		t.Fatalf("after up: %+v, err %v; want River's migrations applied", v, err)
	}
	if err := store.MigrateDown(dbURL, 1); err != nil {
		t.Fatal(err)
	}
	if v2, err := store.MigrationVersion(dbURL); err != nil || v2.River != v.River || v2.Version >= v.Version || v2.Version == 0 {
		// Migration numbers are assigned per branch, so there may be gaps: down 1 goes to the previous one.
		t.Fatalf("down 1: %+v, err %v; want only ours reverted", v2, err)
	}
	if err := store.MigrateDown(dbURL, 0); err != nil {
		t.Fatal(err)
	}
	if v, err := store.MigrationVersion(dbURL); err != nil || v.River != 0 || v.Version != 0 {
		t.Fatalf("down all: %+v, err %v", v, err)
	}
	s, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var tables int
	if err := s.Pool.QueryRow(context.Background(), "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'schema_migrations'").Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("after down all: %d tables left (err %v)", tables, err)
	}
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- store.MigrateUp(dbURL) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent up: %v", err)
		}
	}
	if v2, err := store.MigrationVersion(dbURL); err != nil || v2 != v {
		t.Fatalf("after concurrent up: %+v, err %v; want %+v", v2, err, v)
	}
}

// TestJSONScannedOnce: a json or jsonb column scanned into json.RawMessage is the bytes the
// database sent (no validation pass), NULL is nil, and other targets still decode.
func TestJSONScannedOnce(t *testing.T) {
	s, _ := storetest.Open(t)
	ctx := context.Background()
	var raw, null, text json.RawMessage
	var decoded struct{ A []int }
	err := s.Pool.QueryRow(ctx, `SELECT '{"a": [1, 2], "b": "x"}'::jsonb, NULL::jsonb, '{"a":  [3]}'::json, '{"A": [4, 5]}'::jsonb`).Scan(&raw, &null, &text, &decoded)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != `{"a": [1, 2], "b": "x"}` || null != nil || string(text) != `{"a":  [3]}` || len(decoded.A) != 2 || decoded.A[1] != 5 {
		t.Fatalf("raw %q, null %q, text %q, decoded %+v", raw, null, text, decoded)
	}
	// The scanned bytes are the reader's own: a later row does not overwrite them.
	rows, err := s.Pool.Query(ctx, `SELECT jsonb_build_object('n', n) FROM generate_series(1, 3) n`)
	if err != nil {
		t.Fatal(err)
	}
	var all []json.RawMessage
	for rows.Next() {
		var r json.RawMessage
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	if rows.Err() != nil || len(all) != 3 || string(all[0]) != `{"n": 1}` || string(all[2]) != `{"n": 3}` {
		t.Fatalf("rows %q %v", all, rows.Err())
	}
}

// A uuid.UUID parameter is encoded as its 16 bytes, not through its driver.Valuer text (which the
// binary codec refuses, then parses back: 20 allocations an id), alone and in arrays, and
// reads back the same.
func TestUUIDParametersEncodedAsBytes(t *testing.T) {
	s, _ := storetest.Open(t)
	ctx := context.Background()
	ids := make([]uuid.UUID, 100)
	for i := range ids {
		ids[i] = uuid.New()
	}
	var one uuid.UUID
	var back []uuid.UUID
	if err := s.Pool.QueryRow(ctx, `SELECT $1::uuid, $2::uuid[]`, ids[0], ids).Scan(&one, &back); err != nil {
		t.Fatal(err)
	}
	if one != ids[0] || len(back) != len(ids) || back[99] != ids[99] {
		t.Fatalf("read back %v and %d ids (last %v), want %v and %d ids (last %v)", one, len(back), back[len(back)-1], ids[0], len(ids), ids[99])
	}
	c, err := s.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	m := c.Conn().TypeMap()
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := m.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, ids, buf[:0]); err != nil {
			t.Fatal(err)
		}
	})
	// pgx boxes each element of a slice it reads by reflection (3 allocations an id); through the
	// valuer it was 20; as [][16]byte, 2 (pgx boxes the element, then wraps it for the codec).
	if allocs > 250 {
		t.Errorf("encoding 100 ids: %.0f allocations, want at most 2.5 an id", allocs)
	}

	// nil is still NULL, an empty slice an empty array; contents ([][]byte) keep a nil element NULL.
	var nilIDs, noIDs []uuid.UUID = nil, []uuid.UUID{}
	var isNull, isEmpty bool
	var contents [][]byte
	if err := s.Pool.QueryRow(ctx, `SELECT $1::uuid[] IS NULL, cardinality($2::uuid[]) = 0, $3::bytea[]`, nilIDs, noIDs,
		[][]byte{[]byte("a"), {}, nil}).Scan(&isNull, &isEmpty, &contents); err != nil {
		t.Fatal(err)
	}
	if !isNull || !isEmpty || len(contents) != 3 || string(contents[0]) != "a" || contents[1] == nil || len(contents[1]) != 0 || contents[2] != nil {
		t.Errorf("nil ids NULL %v, empty ids empty %v, contents %q", isNull, isEmpty, contents)
	}
}

// A batch's []string and []time.Time parameters are encoded without pgx's per-element boxing, to
// the same bytes as pgx's own codec, and read back the same.
func TestArrayParametersEncodedFlat(t *testing.T) {
	s, _ := storetest.Open(t)
	ctx := context.Background()
	strs := []string{"", "a", `{"type":"log","message":"é \u003c \"q\""}`, "NULL", "{x,y}"}
	at := time.Date(2026, 11, 27, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	times := []time.Time{at, {}, at.Add(-time.Hour * 24 * 365 * 40)}
	c, err := s.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	m, plain := c.Conn().TypeMap(), pgtype.NewMap()
	for _, tc := range []struct {
		oid   uint32
		value any
	}{{pgtype.TextArrayOID, strs}, {pgtype.TextArrayOID, []string{}}, {pgtype.TextArrayOID, []string(nil)},
		{pgtype.TimestamptzArrayOID, times}, {pgtype.TimestamptzArrayOID, []time.Time{}}, {pgtype.TimestamptzArrayOID, []time.Time(nil)}} {
		got, err := m.Encode(tc.oid, pgtype.BinaryFormatCode, tc.value, []byte{1, 2})
		if err != nil {
			t.Fatal(err)
		}
		want, err := plain.Encode(tc.oid, pgtype.BinaryFormatCode, tc.value, []byte{1, 2})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) || (got == nil) != (want == nil) {
			t.Errorf("%T %v: encoded %x, pgx's codec %x", tc.value, tc.value, got, want)
		}
	}
	var backStrs []string
	var backTimes []time.Time
	var null bool
	if err := s.Pool.QueryRow(ctx, `SELECT $1::text[], $2::timestamptz[], $3::text[] IS NULL`, strs, times, []string(nil)).Scan(&backStrs, &backTimes, &null); err != nil {
		t.Fatal(err)
	}
	if len(backStrs) != len(strs) || backStrs[2] != strs[2] || backStrs[0] != "" || !null {
		t.Errorf("read back %q (NULL %v), want %q", backStrs, null, strs)
	}
	if len(backTimes) != len(times) || !backTimes[0].Equal(at.Truncate(time.Microsecond)) || !backTimes[2].Equal(times[2].Truncate(time.Microsecond)) {
		t.Errorf("read back %v, want %v", backTimes, times)
	}
	many := make([]string, 1000)
	for i := range many {
		many[i] = `{"type":"step.started"}`
	}
	buf := make([]byte, 0, 64<<10)
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := m.Encode(pgtype.TextArrayOID, pgtype.BinaryFormatCode, many, buf[:0]); err != nil {
			t.Fatal(err)
		}
	})
	// pgx's codec: 1,000 (each string boxed).
	if allocs > 10 {
		t.Errorf("encoding 1,000 strings: %.0f allocations", allocs)
	}
}

// The pool keeps room for requests beside the connections background work holds (two LISTENs
// for the process's life, the job queue's statements); a URL's pool_max_conns still wins.
func TestPoolSize(t *testing.T) {
	dbURL := storetest.NewDatabase(t)
	for _, c := range []struct {
		name, url string
		want      int32
	}{
		{"default", dbURL, store.DefaultMaxConns()},
		{"pool_max_conns in the URL", withParam(dbURL, "pool_max_conns=3"), 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := store.Open(context.Background(), c.url)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if got := st.Pool.Config().MaxConns; got != c.want {
				t.Fatalf("MaxConns %d, want %d", got, c.want)
			}
		})
	}
	if forRequests := store.DefaultMaxConns() - store.BackgroundConns; forRequests < 4 {
		t.Fatalf("%d connections left for requests", forRequests)
	}
}

func withParam(u, param string) string {
	if strings.Contains(u, "?") {
		return u + "&" + param
	}
	return u + "?" + param
}
