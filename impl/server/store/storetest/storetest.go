// Package storetest gives each test a freshly created, migrated PostgreSQL database on the real
// server, dropped when the test ends.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/impl/server/store"
)

// AdminURL is the server used by tests: SDODS_TEST_DATABASE_URL, else the local server's
// maintenance database.
func AdminURL() string {
	if u := os.Getenv("SDODS_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// NewDatabase creates a new database, migrates it up and returns its URL; the database is
// dropped when tb ends.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		tb.Fatalf("connect to test PostgreSQL (set SDODS_TEST_DATABASE_URL): %v", err)
	}
	defer admin.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "sdods_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, AdminURL())
		if err != nil {
			tb.Logf("drop test database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Logf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(AdminURL())
	if err != nil {
		tb.Fatalf("parse admin url: %v", err)
	}
	u.Path = "/" + name
	dbURL := u.String()
	if err := store.MigrateUp(dbURL); err != nil {
		tb.Fatalf("migrate test database: %v", err)
	}
	return dbURL
}

// Open returns a Store on a new database (see NewDatabase), closed when tb ends.
func Open(tb testing.TB) (*store.Store, string) {
	tb.Helper()
	dbURL := NewDatabase(tb)
	s, err := store.Open(context.Background(), dbURL)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(s.Close)
	return s, dbURL
}
