package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers the pgx5:// driver
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/schema"
)

// Migration is the state of the schema: the applied version and whether a migration failed midway.
type Migration struct {
	Version uint
	Dirty   bool
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

// MigrateUp applies every pending migration.
func MigrateUp(databaseURL string) error {
	m, err := newMigrate(databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate up: %w", err)
	}
	return nil
}

// MigrateDown reverts the given number of migrations (all of them when steps is 0).
func MigrateDown(databaseURL string, steps int) error {
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

// MigrationVersion returns the applied version (0 when none is).
func MigrationVersion(databaseURL string) (Migration, error) {
	m, err := newMigrate(databaseURL)
	if err != nil {
		return Migration{}, err
	}
	defer m.Close()
	v, dirty, err := m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return Migration{}, nil
	}
	if err != nil {
		return Migration{}, fmt.Errorf("migration version: %w", err)
	}
	return Migration{Version: v, Dirty: dirty}, nil
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
