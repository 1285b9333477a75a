package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers the pgx5:// driver
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/sdods/sdods/schema"
)

// Migration is the state of the schema: the applied version of our migrations (schema/), whether
// one of them failed midway, and the applied version of River's job-queue migrations.
type Migration struct {
	Version uint
	Dirty   bool
	// River is the latest applied River migration (0 when River's tables do not exist).
	River int
}

func newMigrate(databaseURL string) (*migrate.Migrate, error) {
	src, err := iofs.New(schema.Migrations, ".")
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, migrateURL(databaseURL))
	if err != nil {
		return nil, fmt.Errorf("open migrations: %w", err)
	}
	return m, nil
}

// migrateURL turns a postgres:// URL into the pgx5:// form golang-migrate's pgx driver registers.
func migrateURL(databaseURL string) string {
	for _, prefix := range []string{"postgres://", "postgresql://"} {
		if strings.HasPrefix(databaseURL, prefix) {
			return "pgx5://" + strings.TrimPrefix(databaseURL, prefix)
		}
	}
	return databaseURL
}

// MigrateUp applies every pending migration: ours (schema/), then River's (the job queue of
// impl/server/jobs). Each migration runs in its own transaction, and concurrent callers (several
// processes starting at once) wait for each other: golang-migrate and riverLock hold advisory locks.
func MigrateUp(databaseURL string) error {
	m, err := newMigrate(databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate up: %w", err)
	}
	return migrateRiver(databaseURL, rivermigrate.DirectionUp, nil)
}

// MigrateDown reverts the given number of our migrations; steps 0 reverts all of them and
// River's too (an empty database). River's tables stay when only some steps are reverted: they do
// not depend on ours.
func MigrateDown(databaseURL string, steps int) error {
	if steps <= 0 {
		if err := migrateRiver(databaseURL, rivermigrate.DirectionDown, &rivermigrate.MigrateOpts{TargetVersion: -1}); err != nil {
			return err
		}
	}
	m, err := newMigrate(databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if steps > 0 {
		err = m.Steps(-steps)
	} else {
		err = m.Down()
	}
	if err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate down: %w", err)
	}
	return nil
}

// riverLockKey is the advisory lock that serialises River migrations across processes (River's
// migrator takes none); golang-migrate uses its own key for ours.
const riverLockKey = int64(0x5d0d5_7177e7)

// migrateRiver applies River's migrations in direction, each in its own transaction (rivermigrate's
// discipline, as golang-migrate does for ours), holding riverLockKey on a separate connection.
func migrateRiver(databaseURL string, direction rivermigrate.Direction, opts *rivermigrate.MigrateOpts) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pool, err := riverPool(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	lock, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	defer lock.Release()
	if _, err := lock.Exec(ctx, "SELECT pg_advisory_lock($1)", riverLockKey); err != nil {
		return fmt.Errorf("river migrations: lock: %w", err)
	}
	defer func() { _, _ = lock.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", riverLockKey) }()
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quietLogger()})
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	if _, err := migrator.Migrate(ctx, direction, opts); err != nil {
		return fmt.Errorf("river migrate %s: %w", direction, err)
	}
	return nil
}

// riverVersion is the latest applied River migration, 0 when there is none.
func riverVersion(databaseURL string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := riverPool(ctx, databaseURL)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quietLogger()})
	if err != nil {
		return 0, err
	}
	versions, err := migrator.ExistingVersions(ctx)
	if err != nil {
		return 0, fmt.Errorf("river migration version: %w", err)
	}
	if len(versions) == 0 {
		return 0, nil
	}
	return versions[len(versions)-1].Version, nil
}

func riverPool(ctx context.Context, databaseURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	cfg.MaxConns = 2 // the lock's connection and the migrator's
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	return pool, nil
}

// quietLogger drops rivermigrate's per-migration info lines; failures come back as errors.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// MigrationVersion returns the applied version (0 when none is).
func MigrationVersion(databaseURL string) (Migration, error) {
	m, err := newMigrate(databaseURL)
	if err != nil {
		return Migration{}, err
	}
	defer m.Close()
	v, dirty, err := m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		v, dirty, err = 0, false, nil
	}
	if err != nil {
		return Migration{}, fmt.Errorf("migration version: %w", err)
	}
	rv, err := riverVersion(databaseURL)
	if err != nil {
		return Migration{}, err
	}
	return Migration{Version: v, Dirty: dirty, River: rv}, nil
}

// EnsureDatabase creates the database named in databaseURL when it does not exist yet.
func EnsureDatabase(ctx context.Context, databaseURL string) error {
	_, err := CreateDatabase(ctx, databaseURL)
	return err
}

// CreateDatabase creates the database named in databaseURL when it does not exist yet, by
// connecting to the server's maintenance database `postgres`, and reports whether it did.
func CreateDatabase(ctx context.Context, databaseURL string) (bool, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return false, fmt.Errorf("parse database url: %w", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" || name == "postgres" {
		return false, nil
	}
	admin := *u
	admin.Path = "/postgres"
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return false, fmt.Errorf("connect to maintenance database: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return false, fmt.Errorf("look up database %s: %w", name, err)
	}
	if exists {
		return false, nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil && !IsUniqueViolation(err) {
		return false, fmt.Errorf("create database %s: %w", name, err)
	}
	return true, nil
}
