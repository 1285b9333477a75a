// Package storetest gives each test a freshly created, migrated PostgreSQL database on the real
// server, dropped when the test ends.
//
// Migrating a database from nothing takes seconds and the tests create hundreds, so NewDatabase
// migrates one template database per set of migrations (sdods_template_<hash>, see template) and
// copies it with CREATE DATABASE … TEMPLATE; it then still runs store.MigrateUp on the copy (a
// no-op when the template is current), so every test database is what MigrateUp makes of it.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/schema"
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
	tmpl, err := template()
	if err != nil {
		tb.Fatalf("template database: %v", err)
	}
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
	if err := inUseRetry(ctx, func() error { _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+tmpl); return err }); err != nil {
		tb.Fatalf("create test database from %s: %v", tmpl, err)
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
	dbURL := databaseURL(name)
	// A no-op when the template is current; brings the copy up otherwise (e.g. a River upgrade
	// the template's name does not reflect).
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

func databaseURL(name string) string {
	u, err := url.Parse(AdminURL())
	if err != nil {
		panic(fmt.Sprintf("storetest: SDODS_TEST_DATABASE_URL: %v", err))
	}
	u.Path = "/" + name
	return u.String()
}

var templateOnce struct {
	sync.Mutex
	name string
}

// template returns the migrated template database of the current migrations, creating it when
// the server has none: sdods_template_<hash of schema/'s files and River's version>, kept on the
// server for the next test process (test packages run at once, and other checkouts may share the
// server: an advisory lock lets one of them create it while the others wait). It accepts no
// connections, so copying it never waits for a session; drop it freely (the next test creates it
// again).
func template() (string, error) {
	templateOnce.Lock()
	defer templateOnce.Unlock()
	if templateOnce.name != "" {
		return templateOnce.name, nil
	}
	sum := migrationsHash()
	name := "sdods_template_" + hex.EncodeToString(sum[:8])
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return "", fmt.Errorf("connect to test PostgreSQL (set SDODS_TEST_DATABASE_URL): %w", err)
	}
	defer admin.Close(context.Background())
	key := int64(binary.BigEndian.Uint64(sum[8:16]))
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		return "", err
	}
	defer func() { _, _ = admin.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", key) }()
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		// Built under another name and renamed when complete: a process that dies midway leaves
		// no half-migrated template behind (the next one drops its leftover).
		building := name + "_building"
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)"); err != nil {
			return "", err
		}
		if _, err := admin.Exec(ctx, "CREATE DATABASE "+building); err != nil {
			return "", err
		}
		if err := store.MigrateUp(databaseURL(building)); err != nil {
			return "", fmt.Errorf("migrate %s: %w", building, err)
		}
		// MigrateUp closed its connections; their server processes may still be ending.
		for _, stmt := range []string{"ALTER DATABASE " + building + " RENAME TO " + name, "ALTER DATABASE " + name + " ALLOW_CONNECTIONS false"} {
			if err := inUseRetry(ctx, func() error { _, err := admin.Exec(ctx, stmt); return err }); err != nil {
				return "", err
			}
		}
	}
	templateOnce.name = name
	return name, nil
}

// inUseRetry runs exec again while PostgreSQL answers that a database it names is in use
// (SQLSTATE 55006: a session ending, an autovacuum worker).
func inUseRetry(ctx context.Context, exec func() error) error {
	for {
		err := exec()
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// migrationsHash identifies the schema a migrated database has: every file of schema/ and the
// version of River's modules (whose migrations MigrateUp applies too).
func migrationsHash() [32]byte {
	h := sha256.New()
	entries, err := fs.ReadDir(schema.Migrations, ".")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		b, err := fs.ReadFile(schema.Migrations, e.Name())
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if strings.HasPrefix(d.Path, "github.com/riverqueue/river") {
				fmt.Fprintf(h, "%s %s\n", d.Path, d.Version)
			}
		}
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// OpenWithProject is Open with one project in it: organisation acme, workspace shop, project web
// (no settings), what most services' tests start from.
func OpenWithProject(tb testing.TB) (*store.Store, db.Project) {
	tb.Helper()
	ctx := context.Background()
	st, _ := Open(tb)
	o, err := st.CreateOrg(ctx, db.CreateOrgParams{Slug: "acme", Name: "Acme"})
	if err != nil {
		tb.Fatal(err)
	}
	w, err := st.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: o.ID, Slug: "shop", Name: "Shop"})
	if err != nil {
		tb.Fatal(err)
	}
	p, err := st.CreateProject(ctx, db.CreateProjectParams{WorkspaceID: w.ID, Slug: "web", Name: "Web", Settings: []byte(`{}`)})
	if err != nil {
		tb.Fatal(err)
	}
	return st, p
}
