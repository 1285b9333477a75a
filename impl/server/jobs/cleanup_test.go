package jobs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/jobs"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// The periodic clean-up, registered as the server does, deletes the login_failures rows whose
// window and lock have ended, at start and then hourly, and keeps those that still count.
func TestCleanupPrunesEndedLoginFailures(t *testing.T) {
	st, _ := storetest.Open(t)
	ctx := context.Background()
	if _, err := st.Pool.Exec(ctx, `INSERT INTO login_failures (key, failures, window_start, locked_until) VALUES
		('addr:old', 3, now() - interval '2 hours', NULL),
		('account:lock-ended', 9, now() - interval '2 hours', now() - interval '1 hour'),
		('account:locked', 9, now() - interval '2 hours', now() + interval '10 minutes'),
		('addr:recent', 2, now() - interval '5 minutes', NULL)`); err != nil {
		t.Fatal(err)
	}
	reg := jobs.NewRegistry()
	blobs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	jobs.RegisterCleanup(reg, st, blobs, jobs.Cleanup{LoginWindow: 15 * time.Minute})
	start(t, st, reg, "p1")
	deadline := time.Now().Add(15 * time.Second)
	for {
		var keys []string
		rows, err := st.Pool.Query(ctx, "SELECT key FROM login_failures ORDER BY key")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k string
			_ = rows.Scan(&k)
			keys = append(keys, k)
		}
		rows.Close()
		if len(keys) == 2 {
			if keys[0] != "account:locked" || keys[1] != "addr:recent" {
				t.Fatalf("kept %v, want the locked and the recent key", keys)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("login_failures after the clean-up: %v", keys)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The session clean-up deletes the sessions whose expiry has passed, at start, and keeps the
// live ones.
func TestCleanupPrunesExpiredSessions(t *testing.T) {
	st, _ := storetest.Open(t)
	ctx := context.Background()
	if _, err := st.Pool.Exec(ctx, `WITH u AS (INSERT INTO users (email, display_name, password_hash) VALUES ('s@example.com', 'S', 'x') RETURNING id)
		INSERT INTO sessions (secret_hash, user_id, expires_at) SELECT h, u.id, e FROM u, (VALUES
			('\x01'::bytea, now() - interval '1 day'),
			('\x02'::bytea, now() - interval '1 second'),
			('\x03'::bytea, now() + interval '1 hour')) AS v(h, e)`); err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg := jobs.NewRegistry()
	jobs.RegisterCleanup(reg, st, blobs, jobs.Cleanup{LoginWindow: 15 * time.Minute})
	start(t, st, reg, "p1")
	deadline := time.Now().Add(15 * time.Second)
	for {
		var left string
		if err := st.Pool.QueryRow(ctx, `SELECT coalesce(string_agg(encode(secret_hash, 'hex'), ',' ORDER BY secret_hash), '') FROM sessions`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == "03" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sessions after the clean-up: %s, want only the live one (03)", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The blob clean-up deletes content that no row references once it is older than the grace, and
// keeps referenced content and content written within the grace.
func TestCleanupPrunesUnreferencedBlobsAfterGrace(t *testing.T) {
	st, _ := storetest.Open(t)
	ctx := context.Background()
	dir := t.TempDir()
	blobs, err := blob.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	put := func(content string, age time.Duration) string {
		info, err := blobs.Put(ctx, strings.NewReader(content), 0)
		if err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-age)
		if err := os.Chtimes(filepath.Join(dir, info.Key[:2], info.Key), old, old); err != nil {
			t.Fatal(err)
		}
		return info.Key
	}
	referenced := put("a,b\n1,2\n", 48*time.Hour)
	orphan := put("left behind by a failed transaction", 48*time.Hour)
	recent := put("its writer has not committed yet", time.Minute)
	if _, err := st.Pool.Exec(ctx, `WITH o AS (INSERT INTO orgs (slug, name) VALUES ('o', 'O') RETURNING id),
		w AS (INSERT INTO workspaces (org_id, slug, name) SELECT id, 'w', 'W' FROM o RETURNING id),
		p AS (INSERT INTO projects (workspace_id, slug, name) SELECT id, 'p', 'P' FROM w RETURNING id)
		INSERT INTO datasets (project_id, name, format, size_bytes, row_count, sha256, blob_key) SELECT id, 'd', 'csv', 8, 1, $1, $1 FROM p`, referenced); err != nil {
		t.Fatal(err)
	}
	exists := func(key string) bool {
		rc, err := blobs.Open(ctx, key)
		if err != nil {
			return false
		}
		rc.Close()
		return true
	}
	reg := jobs.NewRegistry()
	jobs.RegisterCleanup(reg, st, blobs, jobs.Cleanup{LoginWindow: 15 * time.Minute, BlobGrace: time.Hour})
	start(t, st, reg, "p1")
	deadline := time.Now().Add(15 * time.Second)
	for exists(orphan) {
		if time.Now().After(deadline) {
			t.Fatal("the old unreferenced blob was not deleted")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !exists(referenced) || !exists(recent) {
		t.Fatalf("deleted too much: referenced %t, recent %t", exists(referenced), exists(recent))
	}
}
