package schedules

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
)

// TestCompileCacheKeysByCronAndZone: a compiled schedule is reused only for the same expression in
// the same zone. The same expression in another zone, another expression in the same zone (and
// the same text with other spacing, which names the same times but is another key) each give
// their own firings; so does the cache once emptied at its bound.
func TestCompileCacheKeysByCronAndZone(t *testing.T) {
	after := time.Date(2026, 3, 29, 0, 30, 0, 0, time.UTC) // Berlin springs forward at 01:00 UTC
	next := func(cron, zone string) (time.Time, string) {
		t.Helper()
		c, err := compile(db.Schedule{ID: uuid.New(), Cron: cron, Timezone: zone})
		if err != nil {
			t.Fatal(err)
		}
		f, ok := c.spec.Next(after, c.loc)
		if !ok {
			t.Fatalf("%q in %s: no firing", cron, zone)
		}
		return f.At, c.spec.String() + " " + c.loc.String()
	}
	cases := []struct {
		cron, zone string
		want       time.Time
	}{
		{"0 2 * * *", "UTC", time.Date(2026, 3, 29, 2, 0, 0, 0, time.UTC)},
		{"0 2 * * *", "Europe/Berlin", time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)}, // 02:00 is in the gap: its end
		{"0 2 * * *", "America/New_York", time.Date(2026, 3, 29, 6, 0, 0, 0, time.UTC)},
		{"30 2 * * *", "UTC", time.Date(2026, 3, 29, 2, 30, 0, 0, time.UTC)},
		{"30 2 * * *", "Europe/Berlin", time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)},
		{"0  2 * * *", "UTC", time.Date(2026, 3, 29, 2, 0, 0, 0, time.UTC)},
		{"0 3 * * *", "UTC", time.Date(2026, 3, 29, 3, 0, 0, 0, time.UTC)},
	}
	for round := 0; round < 3; round++ { // the first compiles, the others read the cache
		for _, c := range cases {
			got, what := next(c.cron, c.zone)
			if !got.Equal(c.want) || what != c.cron+" "+c.zone {
				t.Fatalf("round %d: %q in %s: %s (compiled as %s), want %s", round, c.cron, c.zone, got, what, c.want)
			}
		}
		if round == 1 {
			for i := 0; i <= maxCompiled; i++ { // past the bound: the cache is emptied and filled again
				if _, err := compile(db.Schedule{Cron: fmt.Sprintf("%d %d * * *", i%60, i/60%24), Timezone: []string{"UTC", "Europe/Berlin", "Asia/Tokyo"}[i/1440]}); err != nil {
					t.Fatal(err)
				}
			}
			compiledCache.RLock()
			n := len(compiledCache.m)
			compiledCache.RUnlock()
			if n > maxCompiled {
				t.Fatalf("%d compiled schedules kept, bound %d", n, maxCompiled)
			}
		}
	}
	// A stored expression that does not parse is refused every time, never cached as something else.
	for i := 0; i < 2; i++ {
		if _, err := compile(db.Schedule{Cron: "61 2 * * *", Timezone: "UTC"}); err == nil {
			t.Fatal("61 2 * * * compiled")
		}
	}
}
