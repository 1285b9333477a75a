package jobs_test

import (
	"context"
	"testing"
	"time"

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
	jobs.RegisterCleanup(reg, st, 15*time.Minute)
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
