package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

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
