// Package date implements the engine's dates (spec/v1/dates.md): a date "YYYY-MM-DD" or a
// date-time "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)" written with ASCII digits and nothing
// after it, offsets up to 23:59, and a UTC date in the years 0001 to 9999 (proleptic Gregorian).
package date

import (
	"errors"
	"strconv"
)

// Value is a parsed date or date-time, held as its UTC date and time of day.
type Value struct {
	DateOnly bool
	Year     int   // UTC year, 1..9999
	Month    int   // 1..12
	Day      int   // 1..31
	Nanos    int64 // nanoseconds since UTC midnight; 0 for a date
}

const (
	nsPerSecond = int64(1e9)
	nsPerDay    = 86400 * nsPerSecond
)

// Errors returned by Parse and Add; their text is part of evaluation error messages.
var (
	ErrSyntax = errors.New("not a date (YYYY-MM-DD) or date-time (YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM))")
	ErrField  = errors.New("a month, day, hour, minute, second or offset is out of range")
	ErrRange  = errors.New("the UTC date is outside the years 0001 to 9999")
)

func digits(s string, i, n int) (int, bool) {
	if i+n > len(s) {
		return 0, false
	}
	v := 0
	for j := i; j < i+n; j++ {
		c := s[j]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// IsLeap reports whether y is a leap year of the proleptic Gregorian calendar.
func IsLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// DaysIn returns the number of days of month m of year y.
func DaysIn(y, m int) int {
	switch m {
	case 2:
		if IsLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// Parse reads a date or a date-time; it refuses anything else, including trailing text,
// non-ASCII digits, lowercase t or z, a missing offset, second 60 and offsets beyond 23:59.
func Parse(s string) (Value, error) {
	if len(s) != 10 {
		return parseDateTime(s)
	}
	p, err := PlainDate(s)
	if err != nil {
		return Value{}, err
	}
	return p.Value(), nil
}

// Plain is a date "YYYY-MM-DD" packed as year<<9 | month<<5 | day, so that dates order as their
// Plain values do; every date is positive. Rules read the same dates again and again (a field,
// ctx.today), and a Plain is small enough to be remembered with the value it was read from.
type Plain int32

// PlainDate reads a date "YYYY-MM-DD" (no date-time), in one go: dates are what rules parse most.
// For a string of 10 bytes it fails as Parse does; any other length is ErrSyntax.
func PlainDate(s string) (Plain, error) {
	if len(s) != 10 {
		return 0, ErrSyntax
	}
	y0, y1, y2, y3 := s[0]-'0', s[1]-'0', s[2]-'0', s[3]-'0'
	m0, m1, d0, d1 := s[5]-'0', s[6]-'0', s[8]-'0', s[9]-'0'
	if s[4] != '-' || s[7] != '-' || y0 > 9 || y1 > 9 || y2 > 9 || y3 > 9 || m0 > 9 || m1 > 9 || d0 > 9 || d1 > 9 {
		return 0, ErrSyntax
	}
	y := int(y0)*1000 + int(y1)*100 + int(y2)*10 + int(y3)
	mo := int(m0)*10 + int(m1)
	d := int(d0)*10 + int(d1)
	if mo < 1 || mo > 12 || d < 1 || (d > 28 && d > DaysIn(y, mo)) {
		return 0, ErrField
	}
	if y < 1 {
		return 0, ErrRange
	}
	return Plain(y<<9 | mo<<5 | d), nil
}

// Year, Month and Day return the parts of the date p.
func (p Plain) Year() int  { return int(p >> 9) }
func (p Plain) Month() int { return int(p>>5) & 15 }
func (p Plain) Day() int   { return int(p) & 31 }

// Value returns the date p as a Value.
func (p Plain) Value() Value {
	return Value{DateOnly: true, Year: p.Year(), Month: p.Month(), Day: p.Day()}
}

// Days returns the day number of the date p (1970-01-01 is 0), as Value.Days: daysFromCivil of
// a year that is not negative, which needs no floor division and no era.
func (p Plain) Days() int64 {
	y, m := uint64(p>>9), int(p>>5)&15
	if m <= 2 {
		y--
	}
	return int64(y*365+y/4-y/100+y/400) + daysFromMarch[m] + int64(p&31) - 1 - 719468
}

// YearsBetweenPlain is YearsBetween of two dates: b's year minus a's, less one when b's month
// and day come before a's, negated when b is before a.
func YearsBetweenPlain(a, b Plain) int {
	if b < a {
		return -YearsBetweenPlain(b, a)
	}
	n := b.Year() - a.Year()
	if b&511 < a&511 {
		n--
	}
	return n
}

// DayNumber returns the day number of the date year-month-day (1970-01-01 is 0), as Value.Days.
func DayNumber(year, month, day int) int64 { return daysFromCivil(year, month, day) }

// parseDateTime is Parse of a string that is not 10 bytes long: a date-time or nothing.
func parseDateTime(s string) (Value, error) {
	if len(s) < 20 || s[4] != '-' || s[7] != '-' {
		return Value{}, ErrSyntax
	}
	y, ok1 := digits(s, 0, 4)
	mo, ok2 := digits(s, 5, 2)
	d, ok3 := digits(s, 8, 2)
	if !ok1 || !ok2 || !ok3 {
		return Value{}, ErrSyntax
	}
	// date-time
	if s[10] != 'T' || s[13] != ':' || s[16] != ':' {
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

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// daysFromMarch[m] is the number of days from 1 March to the first of month m in a year that
// begins in March: (153*((m+9)%12)+2)/5 of daysFromCivil, looked up (16 entries, so that the
// month of a Plain, 4 bits, needs no bounds check).
var daysFromMarch = [16]int64{0, 306, 337, 0, 31, 61, 92, 122, 153, 184, 214, 245, 275}

// daysFromCivil returns the day number of y-m-d, with 1970-01-01 as day 0 (H. Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	yy := int64(y)
	if m <= 2 {
		yy--
	}
	era := floorDiv(yy, 400)
	yoe := yy - era*400
	var doy int64
	if m >= 1 && m <= 12 {
		doy = daysFromMarch[m] + int64(d) - 1
	} else {
		mp := int64((m + 9) % 12)
		doy = (153*mp+2)/5 + int64(d) - 1
	}
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func civilFromDays(z int64) (int, int, int) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return int(y), int(m), int(d)
}

// Days returns the day number of the UTC date (1970-01-01 is 0).
func (v Value) Days() int64 { return daysFromCivil(v.Year, v.Month, v.Day) }

// instant returns nanoseconds since 1970-01-01T00:00Z as (days, nanos of day) to avoid overflow.
func less(a, b Value) bool {
	if a.Year != b.Year {
		return a.Year < b.Year
	}
	if a.Month != b.Month {
		return a.Month < b.Month
	}
	if a.Day != b.Day {
		return a.Day < b.Day
	}
	return a.Nanos < b.Nanos
}

// YearsBetween returns the whole years from a to b: for b not before a, b's year minus a's year,
// less one when b's month, day and time of day come before a's (so 2000-02-29 to 2001-02-28 is
// 0 and to 2001-03-01 is 1); when b is before a, the negation of YearsBetween(b, a).
func YearsBetween(a, b Value) int {
	if less(b, a) {
		return -YearsBetween(b, a)
	}
	n := b.Year - a.Year
	x, y := a, b
	x.Year, y.Year = 0, 0
	if less(y, x) {
		n--
	}
	return n
}

// DaysBetween returns the whole days (24 hours) from a to b, truncated toward zero.
func DaysBetween(a, b Value) int64 {
	dd := b.Days() - a.Days()
	dn := b.Nanos - a.Nanos
	if dd > 0 && dn < 0 {
		return dd - 1
	}
	if dd < 0 && dn > 0 {
		return dd + 1
	}
	return dd
}

// Unit is a dateAdd unit.
type Unit int

// The units dateAdd accepts.
const (
	Days Unit = iota
	Months
	Years
)

// ParseUnit returns the unit named "days", "months" or "years".
func ParseUnit(s string) (Unit, bool) {
	switch s {
	case "days":
		return Days, true
	case "months":
		return Months, true
	case "years":
		return Years, true
	}
	return 0, false
}

// Add returns v moved by n units. Months and years keep the day of month, clamped to the last
// day of the resulting month (2024-01-31 + 1 month = 2024-02-29); the time of day is kept.
// The result must lie in the years 0001 to 9999.
func Add(v Value, n int64, u Unit) (Value, error) {
	const maxSpan = 10000 * 366
	if n > maxSpan || n < -maxSpan {
		return Value{}, ErrRange
	}
	switch u {
	case Days:
		y, m, d := civilFromDays(v.Days() + n)
		v.Year, v.Month, v.Day = y, m, d
	case Months, Years:
		if u == Years {
			n *= 12
		}
		total := int64(v.Year)*12 + int64(v.Month-1) + n
		y := floorDiv(total, 12)
		m := int(floorMod(total, 12)) + 1
		if y < 1 || y > 9999 {
			return Value{}, ErrRange
		}
		v.Year, v.Month = int(y), m
		if dm := DaysIn(v.Year, m); v.Day > dm {
			v.Day = dm
		}
	}
	if v.Year < 1 || v.Year > 9999 {
		return Value{}, ErrRange
	}
	return v, nil
}

// String writes a date as YYYY-MM-DD and a date-time in UTC as YYYY-MM-DDTHH:MM:SS[.fraction]Z,
// the fraction without trailing zeros.
func (v Value) String() string {
	if y, m, d := v.Year, v.Month, v.Day; v.DateOnly && uint(y) <= 9999 && uint(m) <= 99 && uint(d) <= 99 {
		// a date (as Parse and Add make them), written directly
		b := [10]byte{byte('0' + y/1000), byte('0' + y/100%10), byte('0' + y/10%10), byte('0' + y%10), '-',
			byte('0' + m/10), byte('0' + m%10), '-', byte('0' + d/10), byte('0' + d%10)}
		return string(b[:])
	}
	b := make([]byte, 0, 30)
	b = pad(b, v.Year, 4)
	b = append(b, '-')
	b = pad(b, v.Month, 2)
	b = append(b, '-')
	b = pad(b, v.Day, 2)
	if v.DateOnly {
		return string(b)
	}
	sec := v.Nanos / nsPerSecond
	frac := v.Nanos % nsPerSecond
	b = append(b, 'T')
	b = pad(b, int(sec/3600), 2)
	b = append(b, ':')
	b = pad(b, int(sec/60%60), 2)
	b = append(b, ':')
	b = pad(b, int(sec%60), 2)
	if frac != 0 {
		f := []byte(strconv.FormatInt(frac+nsPerSecond, 10))[1:]
		for len(f) > 0 && f[len(f)-1] == '0' {
			f = f[:len(f)-1]
		}
		b = append(b, '.')
		b = append(b, f...)
	}
	return string(append(b, 'Z'))
}

// pad appends v in decimal with leading zeros to n digits (a negative v, which no date holds, as
// strconv writes it, padded the same way).
func pad(b []byte, v, n int) []byte {
	var buf [20]byte
	var d []byte
	if v < 0 {
		d = strconv.AppendInt(buf[:0], int64(v), 10)
	} else {
		i := len(buf)
		for v >= 10 {
			i--
			buf[i] = byte('0' + v%10)
			v /= 10
		}
		i--
		buf[i] = byte('0' + v)
		d = buf[i:]
	}
	for i := len(d); i < n; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}
