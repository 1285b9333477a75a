package compile

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/internal/date"
)

// trimSpace must remove exactly what strings.Trim with the six ASCII white space characters
// removes: every string of up to three bytes over an alphabet of spaces, their neighbours, other
// white space and the bytes of multi-byte sequences, and longer ones around text.
func TestTrimSpaceMatchesStringsTrim(t *testing.T) {
	const cutset = "\t\n\v\f\r "
	alphabet := []string{"", "\t", "\n", "\v", "\f", "\r", " ", "\x08", "\x0e", "\x1f", "!", "a", "\u00a0", "\u2003", "\x85", "\xa0", "é", "\xff"}
	check := func(s string) {
		t.Helper()
		if got, want := trimSpace(s), strings.Trim(s, cutset); got != want {
			t.Fatalf("trimSpace(%q) = %q, want %q", s, got, want)
		}
	}
	for _, a := range alphabet {
		for _, b := range alphabet {
			for _, c := range alphabet {
				check(a + b + c)
				check(a + b + " x y " + c + b)
			}
		}
	}
	for c := range 256 {
		check(string(rune(c)))
		check(string([]byte{byte(c)}) + "mid" + string([]byte{byte(c)}))
	}
}

// yearsBetween, daysBetween and isDate read two dates without building date.Values: they must
// answer, and fail, as reading both arguments through Parse does, for every pair of arguments
// from dates around leap days and year ends, invalid dates, date-times, other strings and
// non-strings.
func TestPlainDatesMatchParsing(t *testing.T) {
	args := []any{"2000-02-29", "2001-02-28", "2001-03-01", "2004-02-29", "1999-12-31", "2000-01-01", "2025-06-15",
		"2025-06-01", "0001-01-01", "9999-12-31", "2023-02-29", "2024-13-01", "0000-12-31", "2024-1-01x", "２０２４-01",
		"2024-02-29T12:00:00Z", "2024-02-28T23:30:00-01:00", "", "abcdefghij", nil, 1.0, true, []any{}}
	general := map[string]func(ptr string, a, b any) (any, error){
		"yearsBetween": func(ptr string, a, b any) (any, error) {
			x, y, ok, err := twoDates(ptr, "yearsBetween", a, b)
			if err != nil || !ok {
				return nil, err
			}
			return float64(date.YearsBetween(x, y)), nil
		},
		"daysBetween": func(ptr string, a, b any) (any, error) {
			x, y, ok, err := twoDates(ptr, "daysBetween", a, b)
			if err != nil || !ok {
				return nil, err
			}
			return float64(date.DaysBetween(x, y)), nil
		},
	}
	fast := map[string]func(ptr string, a, b any) (any, error){"yearsBetween": opYearsBetween, "daysBetween": opDaysBetween}
	for name, op := range fast {
		for _, a := range args {
			for _, b := range args {
				v, err := op("/p", a, b)
				gv, gerr := general[name]("/p", a, b)
				if !reflect.DeepEqual(v, gv) || describe(err) != describe(gerr) {
					t.Fatalf("%s(%v, %v) = %v %s, reading through Parse %v %s", name, a, b, v, describe(err), gv, describe(gerr))
				}
			}
		}
	}
	for _, a := range args {
		s, ok := a.(string)
		_, perr := date.Parse(s)
		if v, _ := opIsDate("/p", a); v != (ok && perr == nil) {
			t.Fatalf("isDate(%v) = %v", a, v)
		}
	}
}
