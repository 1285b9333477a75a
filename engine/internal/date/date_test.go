package date_test

import (
	"testing"

	"github.com/sdods/sdods/engine/internal/date"
)

func mustParse(tb testing.TB, s string) date.Value {
	tb.Helper()
	v, err := date.Parse(s)
	if err != nil {
		tb.Fatalf("Parse(%q): %v", s, err)
	}
	return v
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" means refused
	}{
		{"2024-02-29", "2024-02-29"},
		{"2023-02-29", ""},
		{"1900-02-29", ""},
		{"2000-02-29", "2000-02-29"},
		{"0001-01-01", "0001-01-01"},
		{"0000-12-31", ""},
		{"9999-12-31", "9999-12-31"},
		{"2024-13-01", ""},
		{"2024-00-10", ""},
		{"2024-01-00", ""},
		{"2024-1-01", ""},
		{"2024-01-01 ", ""},
		{" 2024-01-01", ""},
		{"2024-01-01x", ""},
		{"２０２４-01-01", ""},
		{"2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"},
		{"2024-01-01T10:00:00z", ""},
		{"2024-01-01t10:00:00Z", ""},
		{"2024-01-01T10:00:00", ""},
		{"2024-01-01T10:00Z", ""},
		{"2024-01-01T10:00:60Z", ""},
		{"2024-01-01T24:00:00Z", ""},
		{"2024-01-01T10:00:00.5Z", "2024-01-01T10:00:00.5Z"},
		{"2024-01-01T10:00:00.123456789Z", "2024-01-01T10:00:00.123456789Z"},
		{"2024-01-01T10:00:00.1234567890Z", ""},
		{"2024-01-01T10:00:00.Z", ""},
		{"2024-01-01T10:00:00+23:59", "2023-12-31T10:01:00Z"},
		{"2024-01-01T10:00:00-23:59", "2024-01-02T09:59:00Z"},
		{"2024-01-01T10:00:00+24:00", ""},
		{"2024-01-01T10:00:00+05:60", ""},
		{"2024-01-01T10:00:00+0530", ""},
		{"2024-01-01T10:00:00+05:30x", ""},
		{"0001-01-01T00:30:00+01:00", ""},
		{"0001-01-01T01:00:00+01:00", "0001-01-01T00:00:00Z"},
		{"9999-12-31T23:00:00-02:00", ""},
		{"9999-12-31T23:00:00+02:00", "9999-12-31T21:00:00Z"},
		{"0000-12-31T23:00:00-01:00", "0001-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := date.Parse(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("Parse(%q) = %v, want refusal", tt.in, v)
				}
				return
			}
			if err != nil || v.String() != tt.want {
				t.Fatalf("Parse(%q) = %v, %v; want %s", tt.in, v, err, tt.want)
			}
		})
	}
}

func TestYearsBetween(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"2000-02-29", "2001-02-28", 0},
		{"2000-02-29", "2001-03-01", 1},
		{"2000-02-29", "2004-02-29", 4},
		{"2000-02-29", "2004-02-28", 3},
		{"2001-02-28", "2004-02-29", 3},
		{"2000-01-01", "2018-01-01", 18},
		{"2000-01-02", "2018-01-01", 17},
		{"2018-01-01", "2000-01-02", -17},
		{"2018-01-01", "2000-01-01", -18},
		{"2000-01-01T00:00:00Z", "2001-01-01T00:00:00+01:00", 0},
		{"2000-01-01T00:00:00Z", "2001-01-01T00:00:00-01:00", 1},
		{"2000-01-01", "2000-12-31", 0},
		{"0001-01-01", "9999-12-31", 9998},
	}
	for _, tt := range tests {
		if got := date.YearsBetween(mustParse(t, tt.a), mustParse(t, tt.b)); got != tt.want {
			t.Errorf("YearsBetween(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestDaysBetween(t *testing.T) {
	tests := []struct {
		a, b string
		want int64
	}{
		{"2024-02-28", "2024-03-01", 2},
		{"2023-02-28", "2023-03-01", 1},
		{"2024-03-01", "2024-02-28", -2},
		{"2024-01-01T12:00:00Z", "2024-01-02T11:59:59Z", 0},
		{"2024-01-01T12:00:00Z", "2024-01-02T12:00:00Z", 1},
		{"2024-01-02T11:59:59Z", "2024-01-01T12:00:00Z", 0},
		{"2024-01-01T00:00:00+02:00", "2024-01-01", 0},
		{"0001-01-01", "9999-12-31", 3652058},
	}
	for _, tt := range tests {
		if got := date.DaysBetween(mustParse(t, tt.a), mustParse(t, tt.b)); got != tt.want {
			t.Errorf("DaysBetween(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestAdd(t *testing.T) {
	tests := []struct {
		in   string
		n    int64
		u    date.Unit
		want string
	}{
		{"2024-01-31", 1, date.Months, "2024-02-29"},
		{"2023-01-31", 1, date.Months, "2023-02-28"},
		{"2024-02-29", 1, date.Years, "2025-02-28"},
		{"2024-02-29", -4, date.Years, "2020-02-29"},
		{"2024-12-31", 1, date.Days, "2025-01-01"},
		{"2024-03-01", -1, date.Days, "2024-02-29"},
		{"2024-01-15", -13, date.Months, "2022-12-15"},
		{"2024-01-01T23:30:00+01:00", 1, date.Days, "2024-01-02T22:30:00Z"},
		{"9999-12-31", 1, date.Days, ""},
		{"0001-01-01", -1, date.Months, ""},
		{"2024-01-01", 1 << 40, date.Days, ""},
	}
	for _, tt := range tests {
		v, err := date.Add(mustParse(t, tt.in), tt.n, tt.u)
		got := ""
		if err == nil {
			got = v.String()
		}
		if got != tt.want {
			t.Errorf("Add(%s, %d, %d) = %q (%v), want %q", tt.in, tt.n, tt.u, got, err, tt.want)
		}
	}
}

// A Plain is the date Parse reads: for every date of the years 0001 to 9999 (written by Value's
// String) PlainDate must read its parts and day number, order the dates as they come, and
// YearsBetweenPlain must agree with YearsBetween against dates around leap days.
func TestPlainMatchesValue(t *testing.T) {
	var prev date.Plain
	for day := date.DayNumber(1, 1, 1); day <= date.DayNumber(9999, 12, 31); day++ {
		v, err := date.Add(date.Value{DateOnly: true, Year: 1970, Month: 1, Day: 1}, day, date.Days)
		if err != nil {
			t.Fatal(day, err)
		}
		p, err := date.PlainDate(v.String())
		if err != nil || p.Value() != v || p.Days() != v.Days() || p.Days() != day || p <= prev {
			t.Fatalf("PlainDate(%s) = %d (%v): %v, day %d, want day %d after %d", v, p, err, p.Value(), p.Days(), day, prev)
		}
		prev = p
	}
	var around []date.Plain
	for _, y := range []int{1, 2, 3, 4, 1999, 2000, 2001, 2003, 2004, 2100, 9998, 9999} {
		for _, md := range [][2]int{{1, 1}, {2, 28}, {2, 29}, {3, 1}, {12, 31}} {
			if s := (date.Value{DateOnly: true, Year: y, Month: md[0], Day: md[1]}).String(); s != "" {
				if p, err := date.PlainDate(s); err == nil {
					around = append(around, p)
				}
			}
		}
	}
	for _, a := range around {
		for _, b := range around {
			if got, want := date.YearsBetweenPlain(a, b), date.YearsBetween(a.Value(), b.Value()); got != want {
				t.Fatalf("YearsBetweenPlain(%v, %v) = %d, want %d", a.Value(), b.Value(), got, want)
			}
		}
	}
}

// PlainDate refuses what Parse refuses among strings of 10 bytes, with the same error.
func TestPlainDateFailsAsParse(t *testing.T) {
	for _, s := range []string{"2023-02-29", "1900-02-29", "0000-12-31", "2024-13-01", "2024-00-10", "2024-01-00", "2024-01-32",
		"2024-04-31", "2024-1-01x", " 2024-01-1", "2024/01/01", "2024-01-0a", "２０２4-01", "abcdefghij", "9999-12-31", "0001-01-01"} {
		_, perr := date.Parse(s)
		_, err := date.PlainDate(s)
		if err != perr {
			t.Errorf("PlainDate(%q): %v, Parse: %v", s, err, perr)
		}
	}
}
