package runs

import (
	"context"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestJSONTimeMatchesGo: jsonTime, the run list's times, writes a timestamp as the API's Go
// encoders do (the JSON string of time.RFC3339Nano of a UTC time) and as api_time (schema 000029)
// does, whatever the session's time zone and DateStyle: fractions with trailing zeros, none, one
// microsecond, and the range's ends; NULL for NULL.
func TestJSONTimeMatchesGo(t *testing.T) {
	s, _ := storetest.Open(t)
	ctx := context.Background()
	times := []time.Time{
		time.Date(2026, 11, 27, 5, 0, 20, 123456000, time.UTC),
		time.Date(2026, 11, 27, 5, 0, 20, 0, time.UTC),
		time.Date(2026, 11, 27, 5, 0, 20, 100000000, time.UTC),
		time.Date(2026, 11, 27, 5, 0, 20, 1000, time.UTC),
		time.Date(2026, 11, 27, 5, 0, 20, 120000000, time.FixedZone("plus", 5*3600+30*60)),
		time.Date(1, 1, 1, 0, 0, 0, 10000, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC),
		time.Date(2000, 2, 29, 23, 59, 59, 500000000, time.UTC),
	}
	for i := 0; i < 200; i++ { // spread over the years, microsecond precision
		times = append(times, time.Unix(int64(i)*1_234_567_891+int64(i%7)*86400, int64(i%13)*76_543_000).UTC())
	}
	tx, err := s.Pool.Begin(ctx) // the session's settings change in this transaction only
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	for _, zone := range []string{"UTC", "America/St_Johns", "Asia/Kathmandu"} {
		for _, style := range []string{"ISO, MDY", "SQL, DMY", "German", "Postgres, YMD"} {
			if _, err := tx.Exec(ctx, `SELECT set_config('TimeZone', $1, true), set_config('DateStyle', $2, true)`, zone, style); err != nil {
				t.Fatal(err)
			}
			for _, tm := range times {
				var got, api string
				if err := tx.QueryRow(ctx, `SELECT `+jsonTime("$1::timestamptz")+`, api_time($1)`, tm).Scan(&got, &api); err != nil {
					t.Fatal(err)
				}
				if want := `"` + tm.UTC().Format(time.RFC3339Nano) + `"`; got != want || api != want[1:len(want)-1] {
					t.Errorf("zone %s, DateStyle %s: %v is %s, api_time %q, Go writes %s", zone, style, tm, got, api, want)
				}
			}
		}
	}
	var null *string
	if err := tx.QueryRow(ctx, `SELECT `+jsonTime("NULL::timestamptz")).Scan(&null); err != nil || null != nil {
		t.Fatalf("NULL: %v %v", null, err)
	}
}
