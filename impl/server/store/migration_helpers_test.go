package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/impl/server/store/storetest"
	"github.com/sdods/sdods/schema"
)

// migratedTo is a new database migrated down to version, the migrator that moves it up and down,
// and a connection to it; both are closed when the test ends. A migration's test fills the
// tables at version, then checks them after each step.
func migratedTo(t *testing.T, version uint) (*migrate.Migrate, *pgx.Conn) {
	t.Helper()
	dbURL := storetest.NewDatabase(t)
	src, err := iofs.New(schema.Migrations, ".")
	if err != nil {
		t.Fatal(err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, "pgx5://"+strings.TrimPrefix(dbURL, "postgres://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := m.Migrate(version); err != nil {
		t.Fatalf("down to %d: %v", version, err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return m, conn
}
