package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sdods/sdods/impl/server/identity"
	"github.com/sdods/sdods/impl/server/store"
)

// CreateToken issues an API token for the user with the given email, as `sdods token create`
// does, and returns the token (shown once; only its hash is stored).
func CreateToken(ctx context.Context, cfg Config, email string, scopes []string, name string, lifetime time.Duration) (string, error) {
	if email == "" || name == "" {
		return "", fmt.Errorf("--user and --name are required")
	}
	for i := range scopes {
		scopes[i] = strings.TrimSpace(scopes[i])
	}
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return "", err
	}
	defer st.Close()
	// The server's database, as sdods serve migrated it: never migrated from here (golang-migrate
	// would even create its table on opening), so that a wrong DATABASE_URL is an error rather
	// than a new schema in some other database.
	var migrated bool
	if err := st.Pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL AND to_regclass('users') IS NOT NULL`).Scan(&migrated); err != nil {
		return "", fmt.Errorf("database %s: %w", redactURL(cfg.DatabaseURL), err)
	}
	if !migrated {
		return "", fmt.Errorf("database %s has no sdods schema: is it the server's? (start the server once with sdods serve, or pass its --database-url / DATABASE_URL)", redactURL(cfg.DatabaseURL))
	}
	ident, err := identity.New(st, identity.DefaultThrottle)
	if err != nil {
		return "", err
	}
	u, err := ident.UserByEmail(ctx, email)
	if err != nil {
		return "", err
	}
	var expires *time.Time
	if lifetime > 0 {
		t := time.Now().Add(lifetime)
		expires = &t
	}
	t, err := ident.CreateToken(ctx, u.ID, name, scopes, expires)
	if err != nil {
		return "", err
	}
	return t.Secret, nil
}
