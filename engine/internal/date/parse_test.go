package date

import (
	"strconv"
	"testing"
)

// referenceParse is Parse as it was before dates of 10 bytes took a path of their own.
func referenceParse(s string) (Value, error) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return Value{}, ErrSyntax
	}
	y, ok1 := digits(s, 0, 4)
	mo, ok2 := digits(s, 5, 2)
	d, ok3 := digits(s, 8, 2)
	if !ok1 || !ok2 || !ok3 {
		return Value{}, ErrSyntax
	}
	if len(s) == 10 {
		if mo < 1 || mo > 12 || d < 1 || d > DaysIn(y, mo) {
			return Value{}, ErrField
		}
		if y < 1 {
			return Value{}, ErrRange
		}
		return Value{DateOnly: true, Year: y, Month: mo, Day: d}, nil
	}
	// date-time
	if len(s) < 20 || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return Value{}, ErrSyntax
	}
	hh, ok1 := digits(s, 11, 2)
	mi, ok2 := digits(s, 14, 2)
	ss, ok3 := digits(s, 17, 2)
	if !ok1 || !ok2 || !ok3 {
		return Value{}, ErrSyntax
	}
	i := 19
	var frac int64
	if s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		n := i - start
		if n == 0 || n > 9 {
			return Value{}, ErrSyntax
		}
		f, _ := strconv.ParseInt(s[start:i], 10, 64)
		for k := n; k < 9; k++ {
			f *= 10
		}
		frac = f
	}
	if i >= len(s) {
		return Value{}, ErrSyntax
	}
	var off int // minutes east of UTC
	switch s[i] {
	case 'Z':
		i++
	case '+', '-':
		if len(s) != i+6 || s[i+3] != ':' {
			return Value{}, ErrSyntax
		}
		oh, ok1 := digits(s, i+1, 2)
		om, ok2 := digits(s, i+4, 2)
		if !ok1 || !ok2 {
			return Value{}, ErrSyntax
		}
		if oh > 23 || om > 59 {
			return Value{}, ErrField
		}
		off = oh*60 + om
		if s[i] == '-' {
			off = -off
		}
		i += 6
	default:
		return Value{}, ErrSyntax
	}
	if i != len(s) {
		return Value{}, ErrSyntax
	}
	if mo < 1 || mo > 12 || d < 1 || d > DaysIn(y, mo) || hh > 23 || mi > 59 || ss > 59 {
		return Value{}, ErrField
	}
	days := daysFromCivil(y, mo, d)
	ns := (int64(hh)*3600+int64(mi)*60+int64(ss))*nsPerSecond + frac - int64(off)*60*nsPerSecond
	days += floorDiv(ns, nsPerDay)
	ns = floorMod(ns, nsPerDay)
	uy, um, ud := civilFromDays(days)
	if uy < 1 || uy > 9999 {
		return Value{}, ErrRange
	}
	return Value{Year: uy, Month: um, Day: ud, Nanos: ns}, nil
}

// Parse must agree with the general reader on every date of the years around the edges, on every
// string one byte away from a date (each byte replaced by each of the 256) and on prefixes and
// variants of date-times, including the error it returns.
func TestParseDateMatchesTheGeneralReader(t *testing.T) {
	check := func(s string) {
		t.Helper()
		v, err := Parse(s)
		rv, rerr := referenceParse(s)
		if v != rv || err != rerr {
			t.Fatalf("Parse(%q) = %+v, %v; general reader %+v, %v", s, v, err, rv, rerr)
		}
	}
	years := []string{"0000", "0001", "0004", "0100", "0400", "1899", "1900", "1999", "2000", "2023", "2024", "2025", "2100", "9996", "9999"}
	for _, y := range years {
		for m := 0; m <= 19; m++ {
			for d := 0; d <= 39; d++ {
				check(y + "-" + two(m) + "-" + two(d))
			}
		}
	}
	for _, base := range []string{"2024-02-29", "2023-02-28", "2025-06-15", "0001-01-01", "9999-12-31", "2024-04-30"} {
		for i := range len(base) {
			for c := range 256 {
				b := []byte(base)
				b[i] = byte(c)
				check(string(b))
			}
		}
		for _, tail := range []string{"T10:00:00Z", "T23:59:59.5+01:00", "T00:00:00-23:59"} {
			full := base + tail
			for n := range len(full) + 1 {
				check(full[:n])
			}
			for i := range len(full) {
				for _, c := range []byte("0159:-+.TZtz ") {
					b := []byte(full)
					b[i] = c
					check(string(b))
				}
			}
		}
	}
}

func two(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// pad must write what zero-padding strconv.Itoa wrote.
func TestPadMatchesItoa(t *testing.T) {
	for _, v := range []int{-12345, -10, -1, 0, 1, 9, 10, 99, 100, 999, 1000, 2025, 9999, 10000, 123456789} {
		for n := 1; n <= 6; n++ {
			s := strconv.Itoa(v)
			want := s
			for i := len(s); i < n; i++ {
				want = "0" + want
			}
			if got := string(pad([]byte("x"), v, n)); got != "x"+want {
				t.Fatalf("pad(%d, %d) = %q, want %q", v, n, got, "x"+want)
			}
		}
	}
}

// daysFromCivil looks the days from March up for months 1 to 12: it must agree with the formula
// it replaces, for every day of the years around the range dates cover.
func TestDaysFromCivilMatchesTheFormula(t *testing.T) {
	formula := func(y, m, d int) int64 {
		yy := int64(y)
		if m <= 2 {
			yy--
		}
		era := floorDiv(yy, 400)
		yoe := yy - era*400
		mp := int64((m + 9) % 12)
		doy := (153*mp+2)/5 + int64(d) - 1
		doe := yoe*365 + yoe/4 - yoe/100 + doy
		return era*146097 + doe - 719468
	}
	for y := -401; y <= 10401; y++ {
		for m := -1; m <= 14; m++ {
			for _, d := range []int{0, 1, 15, 28, 29, 30, 31, 32} {
				if got, want := daysFromCivil(y, m, d), formula(y, m, d); got != want {
					t.Fatalf("daysFromCivil(%d, %d, %d) = %d, want %d", y, m, d, got, want)
				}
			}
		}
	}
}

// String writes a date directly: it must write what zero-padding each field writes, for dates
// and for values no date holds (negative or larger fields).
func TestStringOfADateMatchesPadding(t *testing.T) {
	for _, y := range []int{-1, 0, 1, 9, 10, 99, 100, 999, 1000, 2024, 9999, 10000} {
		for _, m := range []int{-1, 0, 1, 9, 10, 12, 99, 100} {
			for _, d := range []int{-5, 0, 1, 9, 10, 29, 31, 99, 100} {
				v := Value{DateOnly: true, Year: y, Month: m, Day: d}
				want := string(pad(nil, y, 4)) + "-" + string(pad(nil, m, 2)) + "-" + string(pad(nil, d, 2))
				if got := v.String(); got != want {
					t.Fatalf("%+v.String() = %q, want %q", v, got, want)
				}
			}
		}
	}
}
