package schedules

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/sdods/sdods/impl/textclip"
)

// Spec is a parsed cron expression: which seconds, minutes, hours, days of the month, months and days
// of the week match, as bit sets. Five-field expressions match second 0.
type Spec struct {
	expr                          string
	sec, min, hour, dom, mon, dow uint64
	// domStar and dowStar tell that the field was written as * or ?: when both day fields are
	// restricted, a day matches either of them (as in Vixie cron), otherwise it must match both.
	domStar, dowStar bool
}

// ParseError is a cron expression refused, with the 1-based column where the problem starts.
type ParseError struct {
	Column int
	Field  string // second, minute, hour, day-of-month, month, day-of-week, or "" for the whole expression
	Msg    string
}

func (e *ParseError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("column %d: %s", e.Column, e.Msg)
	}
	return fmt.Sprintf("column %d (%s): %s", e.Column, e.Field, e.Msg)
}

var macros = map[string]string{
	"@yearly":   "0 0 0 1 1 *",
	"@annually": "0 0 0 1 1 *",
	"@monthly":  "0 0 0 1 * *",
	"@weekly":   "0 0 0 * * 0",
	"@daily":    "0 0 0 * * *",
	"@midnight": "0 0 0 * * *",
	"@hourly":   "0 0 * * * *",
}

type fieldDef struct {
	name     string
	min, max int
	names    []string // names[i] is value min+i
}

var (
	fSecond = fieldDef{name: "second", min: 0, max: 59}
	fMinute = fieldDef{name: "minute", min: 0, max: 59}
	fHour   = fieldDef{name: "hour", min: 0, max: 23}
	fDom    = fieldDef{name: "day-of-month", min: 1, max: 31}
	fMonth  = fieldDef{name: "month", min: 1, max: 12,
		names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}}
	// Day of the week accepts 7 for Sunday, folded onto 0.
	fDow = fieldDef{name: "day-of-week", min: 0, max: 7, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}}
)

// Parse reads a cron expression: five fields (minute hour day-of-month month day-of-week), six with
// seconds first, or a macro (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly).
// Fields take *, ?, numbers, names (JAN-DEC, SUN-SAT), ranges a-b, steps */n a-b/n a/n and lists.
// It refuses anything else with a ParseError naming the column and field.
func Parse(expr string) (spec *Spec, err error) {
	s := strings.TrimSpace(expr)
	lead := strings.Index(expr, s) // columns count in the expression as written
	if s == "" {
		return nil, &ParseError{Column: 1, Msg: "the expression is empty"}
	}
	if strings.HasPrefix(s, "@") {
		m, ok := macros[strings.ToLower(s)]
		if !ok {
			return nil, &ParseError{Column: lead + 1, Msg: fmt.Sprintf("unknown macro %q; use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly", textclip.Clip(s, 40))}
		}
		sp, err := Parse(m)
		if err != nil {
			return nil, err
		}
		sp.expr = expr
		return sp, nil
	}
	type tok struct {
		text string
		col  int
	}
	var toks []tok
	for i := 0; i < len(expr); {
		if expr[i] == ' ' || expr[i] == '\t' {
			i++
			continue
		}
		j := i
		for j < len(expr) && expr[j] != ' ' && expr[j] != '\t' {
			j++
		}
		toks = append(toks, tok{expr[i:j], i + 1})
		i = j
	}
	defs := []fieldDef{fSecond, fMinute, fHour, fDom, fMonth, fDow}
	switch len(toks) {
	case 5:
		toks = append([]tok{{"0", 0}}, toks...)
	case 6:
	default:
		col := len(expr) + 1
		if len(toks) > 6 {
			col = toks[6].col
		}
		return nil, &ParseError{Column: col, Msg: fmt.Sprintf("%d fields; write 5 (minute hour day-of-month month day-of-week) or 6 (with seconds first)", len(toks))}
	}
	sp := &Spec{expr: expr}
	sets := []*uint64{&sp.sec, &sp.min, &sp.hour, &sp.dom, &sp.mon, &sp.dow}
	for i, t := range toks {
		bits, err := parseField(t.text, t.col, defs[i])
		if err != nil {
			return nil, err
		}
		*sets[i] = bits
	}
	if sp.dow&(1<<7) != 0 {
		sp.dow = sp.dow&^(1<<7) | 1
	}
	sp.domStar = strings.HasPrefix(toks[3].text, "*") || strings.HasPrefix(toks[3].text, "?")
	sp.dowStar = strings.HasPrefix(toks[5].text, "*") || strings.HasPrefix(toks[5].text, "?")
	// A day of the month that no chosen month has would make the expression never fire.
	if !sp.domStar && sp.dowStar {
		possible := false
		for m := 1; m <= 12 && !possible; m++ {
			if sp.mon&(1<<m) == 0 {
				continue
			}
			for d := 1; d <= daysIn(m); d++ {
				if sp.dom&(1<<d) != 0 {
					possible = true
					break
				}
			}
		}
		if !possible {
			return nil, &ParseError{Column: toks[3].col, Field: fDom.name, Msg: "no chosen month has this day, so the expression never fires"}
		}
	}
	return sp, nil
}

// daysIn is the most days month m can have (February 29).
func daysIn(m int) int {
	switch m {
	case 2:
		return 29
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func parseField(text string, col int, f fieldDef) (uint64, error) {
	var bits uint64
	pos := 0
	for _, part := range strings.Split(text, ",") {
		pcol := col + pos
		pos += len(part) + 1
		if part == "" {
			return 0, &ParseError{Column: pcol, Field: f.name, Msg: "empty list element"}
		}
		b, err := parsePart(part, pcol, f)
		if err != nil {
			return 0, err
		}
		bits |= b
	}
	return bits, nil
}

func parsePart(part string, col int, f fieldDef) (uint64, error) {
	rng, stepText, hasStep := strings.Cut(part, "/")
	lo, hi := f.min, f.max
	if f.name == fDow.name {
		hi = 6 // * and a/n cover Sunday once
	}
	switch {
	case rng == "*" || rng == "?":
		if rng == "?" && f.name != fDom.name && f.name != fDow.name {
			return 0, &ParseError{Column: col, Field: f.name, Msg: "? is only allowed in day-of-month and day-of-week"}
		}
	default:
		a, b, isRange := strings.Cut(rng, "-")
		v, err := value(a, col, f)
		if err != nil {
			return 0, err
		}
		lo = v
		if isRange {
			w, err := value(b, col+len(a)+1, f)
			if err != nil {
				return 0, err
			}
			if w < v {
				return 0, &ParseError{Column: col, Field: f.name, Msg: fmt.Sprintf("range %s-%s runs backwards", a, b)}
			}
			hi = w
		} else if !hasStep {
			hi = v
		}
	}
	step := 1
	if hasStep {
		scol := col + len(rng) + 1
		n, err := strconv.Atoi(stepText)
		if err != nil || len(stepText) > 4 || stepText[0] == '+' || stepText[0] == '-' {
			return 0, &ParseError{Column: scol, Field: f.name, Msg: fmt.Sprintf("step %q is not a number", textclip.Clip(stepText, 40))}
		}
		if n < 1 || n > f.max-f.min+1 {
			return 0, &ParseError{Column: scol, Field: f.name, Msg: fmt.Sprintf("step %d is out of range 1-%d", n, f.max-f.min+1)}
		}
		step = n
	}
	var bits uint64
	for v := lo; v <= hi; v += step {
		bits |= 1 << uint(v)
	}
	return bits, nil
}

func value(s string, col int, f fieldDef) (int, error) {
	if s == "" {
		return 0, &ParseError{Column: col, Field: f.name, Msg: "missing value"}
	}
	for i, n := range f.names {
		if strings.EqualFold(s, n) {
			return f.min + i, nil
		}
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			what := "a number"
			if f.names != nil {
				what = "a number or a name (" + f.names[0] + "…" + f.names[len(f.names)-1] + ")"
			}
			return 0, &ParseError{Column: col, Field: f.name, Msg: fmt.Sprintf("%q is not %s", textclip.Clip(s, 40), what)}
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || len(s) > 4 || n < f.min || n > f.max {
		return 0, &ParseError{Column: col, Field: f.name, Msg: fmt.Sprintf("%s is out of range %d-%d", textclip.Clip(s, 40), f.min, f.max)}
	}
	return n, nil
}

// String returns the expression as written.
func (s *Spec) String() string { return s.expr }

func (s *Spec) dayMatches(t time.Time) bool {
	dom := s.dom&(1<<uint(t.Day())) != 0
	dow := s.dow&(1<<uint(t.Weekday())) != 0
	if s.domStar || s.dowStar {
		return dom && dow
	}
	return dom || dow
}

// searchYears bounds the search for a matching wall time: Feb 29 on a given weekday recurs within 28 years.
const searchYears = 30

// nextWall returns the first wall-clock time after c that the expression matches. Wall times are
// represented in UTC, where every day has 24 hours, so the search never meets a DST transition.
// Within a day, the next matching hour, minute and second are found from the fields' bit sets
// rather than step by step (TestNextWallMatchesStepping compares it with the stepping search).
// The date is carried as numbers (civil-calendar arithmetic on days since 1970) rather than
// broken down from a time.Time at every step.
func (s *Spec) nextWall(c time.Time) (time.Time, bool) {
	u := c.Unix() + 1 // c truncated to the second, plus one
	days := floorDiv(u, 86400)
	sod := int(u - days*86400)
	y, mo, d := civil(days)
	h, mi, sec := sod/3600, sod/60%60, sod%60
	limit := y + searchYears
	// nextDay moves to the start of the following day.
	nextDay := func() {
		days++
		h, mi, sec = 0, 0, 0
		if d++; d > monthDays(y, mo) {
			d = 1
			if mo++; mo > 12 {
				mo, y = 1, y+1
			}
		}
	}
	for {
		if y > limit {
			return time.Time{}, false
		}
		if s.mon&(1<<uint(mo)) == 0 {
			d, h, mi, sec = 1, 0, 0, 0
			if mo++; mo > 12 {
				mo, y = 1, y+1
			}
			days = daysFromCivil(y, mo, 1)
			continue
		}
		if !s.dayMatchesAt(d, int(floorMod(days+4, 7))) { // 1970-01-01 was a Thursday
			nextDay()
			continue
		}
		if k, ok := nextBit(s.hour, h, 24); !ok {
			nextDay()
			continue
		} else if k != h {
			h, mi, sec = k, 0, 0
		}
		if k, ok := nextBit(s.min, mi, 60); !ok {
			if mi, sec = 0, 0; h+1 == 24 {
				nextDay()
			} else {
				h++
			}
			continue
		} else if k != mi {
			mi, sec = k, 0
		}
		if k, ok := nextBit(s.sec, sec, 60); !ok {
			sec = 0
			if mi+1 < 60 {
				mi++
			} else if mi = 0; h+1 < 24 {
				h++
			} else {
				nextDay()
			}
			continue
		} else {
			sec = k
		}
		return time.Unix(days*86400+int64(h*3600+mi*60+sec), 0).UTC(), true
	}
}

// dayMatchesAt is dayMatches for day of the month dom and weekday dow (0 = Sunday).
func (s *Spec) dayMatchesAt(dom, dow int) bool {
	a := s.dom&(1<<uint(dom)) != 0
	b := s.dow&(1<<uint(dow)) != 0
	if s.domStar || s.dowStar {
		return a && b
	}
	return a || b
}

// monthDays is the number of days of month mo of year y (proleptic Gregorian).
func monthDays(y int64, mo int) int {
	if mo == 2 {
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	}
	return daysIn(mo)
}

// civil is the date of the day days after 1970-01-01 (H. Hinnant's civil_from_days).
func civil(days int64) (y int64, mo, d int) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		mo = int(mp + 3)
	} else {
		mo = int(mp - 9)
	}
	y = yoe + era*400
	if mo <= 2 {
		y++
	}
	return y, mo, d
}

// daysFromCivil is the number of days from 1970-01-01 to the date (H. Hinnant's days_from_civil).
func daysFromCivil(y int64, mo, d int) int64 {
	if mo <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := int64(mo + 9)
	if mo > 2 {
		mp = int64(mo - 3)
	}
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// nextBit is the first bit set in set at from or after it and below n.
func nextBit(set uint64, from, n int) (int, bool) {
	rest := set >> uint(from)
	if rest == 0 {
		return 0, false
	}
	k := from + bits.TrailingZeros64(rest)
	return k, k < n
}
