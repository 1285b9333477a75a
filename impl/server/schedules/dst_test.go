package schedules_test

import (
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/schedules"
)

// TestDSTTable is the DST decision of docs/schedules.md, zone by zone: a wall time in a
// spring-forward gap fires once at the instant the gap ends; one in a fall-back fold fires once, at
// its first occurrence; a zone that abolished DST has no decision to make after it did.
func TestDSTTable(t *testing.T) {
	type want struct {
		at  string // UTC
		dst string
	}
	cases := []struct {
		name, zone, expr, after string
		want                    []want
	}{
		// America/New_York: 2026-03-08 02:00 EST → 03:00 EDT; 2026-11-01 02:00 EDT → 01:00 EST.
		{"new york minute spring", "America/New_York", "* * * * *", "2026-03-08T06:58:00Z",
			[]want{{"2026-03-08T06:59:00Z", ""}, {"2026-03-08T07:00:00Z", "gap"}, {"2026-03-08T07:01:00Z", ""}}},
		{"new york minute fall", "America/New_York", "* * * * *", "2026-11-01T05:58:00Z",
			[]want{{"2026-11-01T05:59:00Z", "fold"}, {"2026-11-01T07:00:00Z", ""}, {"2026-11-01T07:01:00Z", ""}}},
		{"new york minute fall from the second pass", "America/New_York", "* * * * *", "2026-11-01T06:30:00Z",
			[]want{{"2026-11-01T07:00:00Z", ""}}},
		{"new york hourly spring", "America/New_York", "0 * * * *", "2026-03-08T05:30:00Z",
			[]want{{"2026-03-08T06:00:00Z", ""}, {"2026-03-08T07:00:00Z", "gap"}, {"2026-03-08T08:00:00Z", ""}}},
		{"new york hourly fall", "America/New_York", "@hourly", "2026-11-01T04:30:00Z",
			[]want{{"2026-11-01T05:00:00Z", "fold"}, {"2026-11-01T07:00:00Z", ""}, {"2026-11-01T08:00:00Z", ""}}},
		{"new york daily spring", "America/New_York", "30 2 * * *", "2026-03-07T12:00:00Z",
			[]want{{"2026-03-08T07:00:00Z", "gap"}, {"2026-03-09T06:30:00Z", ""}}},
		{"new york daily fall", "America/New_York", "30 1 * * *", "2026-10-31T12:00:00Z",
			[]want{{"2026-11-01T05:30:00Z", "fold"}, {"2026-11-02T06:30:00Z", ""}}},
		{"new york seconds in the gap", "America/New_York", "*/20 59 1,2 8 3 *", "2026-03-08T06:58:00Z",
			[]want{{"2026-03-08T06:59:00Z", ""}, {"2026-03-08T06:59:20Z", ""}, {"2026-03-08T06:59:40Z", ""}, {"2026-03-08T07:00:00Z", "gap"}}},

		// Europe/London: 2026-03-29 01:00 GMT → 02:00 BST; 2026-10-25 02:00 BST → 01:00 GMT.
		{"london minute spring", "Europe/London", "* * * * *", "2026-03-29T00:58:00Z",
			[]want{{"2026-03-29T00:59:00Z", ""}, {"2026-03-29T01:00:00Z", "gap"}, {"2026-03-29T01:01:00Z", ""}}},
		{"london minute fall", "Europe/London", "* * * * *", "2026-10-25T00:58:00Z",
			[]want{{"2026-10-25T00:59:00Z", "fold"}, {"2026-10-25T02:00:00Z", ""}}},
		{"london hourly fall", "Europe/London", "0 * * * *", "2026-10-24T23:30:00Z",
			[]want{{"2026-10-25T00:00:00Z", "fold"}, {"2026-10-25T02:00:00Z", ""}}},
		{"london hourly spring", "Europe/London", "0 * * * *", "2026-03-28T23:30:00Z",
			[]want{{"2026-03-29T00:00:00Z", ""}, {"2026-03-29T01:00:00Z", "gap"}, {"2026-03-29T02:00:00Z", ""}}},
		{"london daily spring", "Europe/London", "30 1 * * *", "2026-03-28T12:00:00Z",
			[]want{{"2026-03-29T01:00:00Z", "gap"}, {"2026-03-30T00:30:00Z", ""}}},
		{"london daily fall", "Europe/London", "@daily", "2026-10-24T12:00:00Z",
			[]want{{"2026-10-24T23:00:00Z", ""}, {"2026-10-26T00:00:00Z", ""}}},

		// Australia/Lord_Howe shifts by 30 minutes: 2026-10-04 02:00 (+10:30) → 02:30 (+11);
		// 2026-04-05 02:00 (+11) → 01:30 (+10:30).
		{"lord howe minute spring", "Australia/Lord_Howe", "* * * * *", "2026-10-03T15:28:00Z",
			[]want{{"2026-10-03T15:29:00Z", ""}, {"2026-10-03T15:30:00Z", "gap"}, {"2026-10-03T15:31:00Z", ""}}},
		{"lord howe minute fall", "Australia/Lord_Howe", "* * * * *", "2026-04-04T14:58:00Z",
			[]want{{"2026-04-04T14:59:00Z", "fold"}, {"2026-04-04T15:30:00Z", ""}, {"2026-04-04T15:31:00Z", ""}}},
		{"lord howe hourly fall", "Australia/Lord_Howe", "30 * * * *", "2026-04-04T13:00:00Z",
			[]want{{"2026-04-04T13:30:00Z", ""}, {"2026-04-04T14:30:00Z", "fold"}, {"2026-04-04T16:00:00Z", ""}}},
		{"lord howe hourly spring", "Australia/Lord_Howe", "15 * * * *", "2026-10-03T14:00:00Z",
			[]want{{"2026-10-03T14:45:00Z", ""}, {"2026-10-03T15:30:00Z", "gap"}, {"2026-10-03T16:15:00Z", ""}}},
		{"lord howe daily fall", "Australia/Lord_Howe", "45 1 * * *", "2026-04-04T00:00:00Z",
			[]want{{"2026-04-04T14:45:00Z", "fold"}, {"2026-04-05T15:15:00Z", ""}}},
		{"lord howe daily spring", "Australia/Lord_Howe", "15 2 * * *", "2026-10-03T00:00:00Z",
			[]want{{"2026-10-03T15:30:00Z", "gap"}, {"2026-10-04T15:15:00Z", ""}}},

		// America/Sao_Paulo abolished DST in 2019: 2018-11-04 00:00 (-03) → 01:00 (-02) was its last
		// spring forward; on the same date in 2026 nothing happens.
		{"sao paulo daily 2018", "America/Sao_Paulo", "30 0 * * *", "2018-11-03T12:00:00Z",
			[]want{{"2018-11-04T03:00:00Z", "gap"}, {"2018-11-05T02:30:00Z", ""}}},
		{"sao paulo daily 2026", "America/Sao_Paulo", "30 0 * * *", "2026-11-03T12:00:00Z",
			[]want{{"2026-11-04T03:30:00Z", ""}, {"2026-11-05T03:30:00Z", ""}}},
		{"sao paulo minute 2026", "America/Sao_Paulo", "* * * * *", "2026-11-04T02:58:00Z",
			[]want{{"2026-11-04T02:59:00Z", ""}, {"2026-11-04T03:00:00Z", ""}, {"2026-11-04T03:01:00Z", ""}}},
		{"sao paulo hourly 2026", "America/Sao_Paulo", "0 * * * *", "2026-11-04T01:30:00Z",
			[]want{{"2026-11-04T02:00:00Z", ""}, {"2026-11-04T03:00:00Z", ""}, {"2026-11-04T04:00:00Z", ""}}},
		{"sao paulo hourly 2019 fall", "America/Sao_Paulo", "0 * * * *", "2019-02-17T00:30:00Z",
			[]want{{"2019-02-17T01:00:00Z", "fold"}, {"2019-02-17T03:00:00Z", ""}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loc, err := time.LoadLocation(c.zone)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := schedules.Parse(c.expr)
			if err != nil {
				t.Fatal(err)
			}
			after := mustTime(t, c.after)
			for i, w := range c.want {
				f, ok := spec.Next(after, loc)
				if !ok {
					t.Fatalf("firing %d: none", i)
				}
				if got := f.At.Format(time.RFC3339); got != w.at || f.DST != w.dst {
					t.Fatalf("firing %d: %s (dst %q, wall %s), want %s (dst %q)", i, got, f.DST, f.Wall.Format("2006-01-02T15:04:05"), w.at, w.dst)
				}
				after = f.At
			}
		})
	}
}

// TestNextFiresEachInstantOnce walks a year of every-minute firings in each zone of the table:
// instants strictly increase, no two firings share one, and every instant outside a DST change
// fires (a whole year, so both transitions are crossed).
func TestNextFiresEachInstantOnce(t *testing.T) {
	spec, err := schedules.Parse("*/15 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	for _, zone := range []string{"America/New_York", "Europe/London", "Australia/Lord_Howe", "America/Sao_Paulo", "UTC"} {
		loc, _ := time.LoadLocation(zone)
		after := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		end := after.AddDate(1, 0, 0)
		n := 0
		for after.Before(end) {
			f, ok := spec.Next(after, loc)
			if !ok || !f.At.After(after) {
				t.Fatalf("%s: after %s: %v %v", zone, after, f, ok)
			}
			if gap := f.At.Sub(after); gap > 15*time.Minute && f.DST == "" {
				// Only the second pass of a fold may leave a longer silence.
				if prev := wallOf(after, loc); !isFoldAt(after, loc) {
					t.Fatalf("%s: %s after %s (wall %s) with no DST decision", zone, f.At, after, prev)
				}
			}
			after = f.At
			n++
		}
		if n < 365*96-8 || n > 365*96 {
			t.Fatalf("%s: %d firings in a year", zone, n)
		}
	}
}

func wallOf(t time.Time, loc *time.Location) string { return t.In(loc).Format("15:04 MST") }

// isFoldAt reports whether the hour after t holds a fall-back transition.
func isFoldAt(t time.Time, loc *time.Location) bool {
	_, a := t.In(loc).Zone()
	_, b := t.Add(2 * time.Hour).In(loc).Zone()
	return b < a
}

func mustTime(tb testing.TB, s string) time.Time {
	tb.Helper()
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}
