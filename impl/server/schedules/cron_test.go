package schedules_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/schedules"
)

func TestParseRefusesWithColumn(t *testing.T) {
	cases := []struct {
		expr  string
		col   int
		field string
		msg   string
	}{
		{"", 1, "", "empty"},
		{"* * * *", 8, "", "4 fields"},
		{"* * * * * * *", 13, "", "7 fields"},
		{"61 * * * *", 1, "minute", "out of range 0-59"},
		{"0 24 * * *", 3, "hour", "out of range 0-23"},
		{"0 0 0 * *", 5, "day-of-month", "out of range 1-31"},
		{"0 0 1 13 *", 7, "month", "out of range 1-12"},
		{"0 0 * * 8", 9, "day-of-week", "out of range 0-7"},
		{"0 0 * * mon-xyz", 13, "day-of-week", `"xyz" is not`},
		{"*/0 * * * *", 3, "minute", "step 0"},
		{"0 0 5-1 * *", 5, "day-of-month", "backwards"},
		{"0 0 30 2 *", 5, "day-of-month", "never fires"},
		{"1,,2 * * * *", 3, "minute", "empty list element"},
		{"@fortnightly", 1, "", "unknown macro"},
		{"0 0 ? * ?x", 9, "day-of-week", ""},
		{"? * * * *", 1, "minute", "only allowed"},
		{"60 * * * * *", 1, "second", "out of range"},
		{"  x * * * *", 3, "minute", "not a number"},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			_, err := schedules.Parse(c.expr)
			var pe *schedules.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v", err)
			}
			if pe.Column != c.col || pe.Field != c.field || !strings.Contains(pe.Msg, c.msg) {
				t.Fatalf("got column %d field %q msg %q", pe.Column, pe.Field, pe.Msg)
			}
		})
	}
}

func TestParseAndNext(t *testing.T) {
	cases := []struct {
		expr, after string
		want        []string
	}{
		{"0 6 * * 1-5", "2026-11-27T07:00:00Z", []string{"2026-11-30T06:00:00Z", "2026-12-01T06:00:00Z"}}, // Friday → Monday
		{"*/15 * * * * *", "2026-01-01T00:00:01Z", []string{"2026-01-01T00:00:15Z", "2026-01-01T00:00:30Z"}},
		{"@weekly", "2026-11-26T00:00:00Z", []string{"2026-11-29T00:00:00Z", "2026-12-06T00:00:00Z"}},
		{"@monthly", "2026-01-31T00:00:00Z", []string{"2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"}},
		{"@yearly", "2026-06-01T00:00:00Z", []string{"2027-01-01T00:00:00Z"}},
		{"0 0 29 2 *", "2026-01-01T00:00:00Z", []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
		// Both day fields restricted: either matches (the 13th or any Friday).
		{"0 0 13 * fri", "2026-11-01T00:00:00Z", []string{"2026-11-06T00:00:00Z", "2026-11-13T00:00:00Z", "2026-11-20T00:00:00Z"}},
		// Day of week 7 is Sunday.
		{"0 12 * * 7", "2026-11-26T00:00:00Z", []string{"2026-11-29T12:00:00Z"}},
		{"0 0 1 JAN,jul ?", "2026-02-01T00:00:00Z", []string{"2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z"}},
		{"5/20 * * * *", "2026-01-01T00:00:00Z", []string{"2026-01-01T00:05:00Z", "2026-01-01T00:25:00Z", "2026-01-01T00:45:00Z", "2026-01-01T01:05:00Z"}},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			spec, err := schedules.Parse(c.expr)
			if err != nil {
				t.Fatal(err)
			}
			after := mustTime(t, c.after)
			for _, w := range c.want {
				f, ok := spec.Next(after, time.UTC)
				if !ok || f.At.Format(time.RFC3339) != w {
					t.Fatalf("after %s: %s %v, want %s", after.Format(time.RFC3339), f.At.Format(time.RFC3339), ok, w)
				}
				after = f.At
			}
		})
	}
}

// FuzzParse: any input either parses into an expression whose next firing lies after the start and
// matches itself again (Next is idempotent on its own result's predecessor), or is refused with a
// column inside the expression (or just past its end).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"* * * * *", "0 6 * * 1-5", "*/15 * * * * *", "@hourly", "0 0 30 2 *", "5/20 1-3,7 ? JAN-mar sun", "1,,2 * * * *", "0 0 13 * fri", "@x", "  \t0 0 * * *"} {
		f.Add(s)
	}
	loc, _ := time.LoadLocation("America/New_York")
	start := time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr string) {
		spec, err := schedules.Parse(expr)
		if err != nil {
			var pe *schedules.ParseError
			if !errors.As(err, &pe) || pe.Column < 1 || pe.Column > len(expr)+1 || pe.Msg == "" {
				t.Fatalf("%q: %v", expr, err)
			}
			return
		}
		first, ok := spec.Next(start, loc)
		if !ok {
			return // matches nothing within 30 years (a weekday's Feb 29, say)
		}
		if !first.At.After(start) {
			t.Fatalf("%q: %s is not after %s", expr, first.At, start)
		}
		again, ok := spec.Next(first.At.Add(-time.Nanosecond), loc)
		if !ok || !again.At.Equal(first.At) {
			t.Fatalf("%q: next before %s is %s", expr, first.At, again.At)
		}
	})
}
