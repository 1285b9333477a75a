package schedules

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// nextWallStepping is the step-by-step search nextWall replaced: the reference it is compared with.
func (s *Spec) nextWallStepping(c time.Time) (time.Time, bool) {
	t := c.Truncate(time.Second).Add(time.Second)
	limit := t.Year() + searchYears
wrap:
	if t.Year() > limit {
		return time.Time{}, false
	}
	for s.mon&(1<<uint(t.Month())) == 0 {
		t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		if t.Month() == time.January {
			goto wrap
		}
	}
	for !s.dayMatches(t) {
		t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
		if t.Day() == 1 {
			goto wrap
		}
	}
	for s.hour&(1<<uint(t.Hour())) == 0 {
		t = t.Truncate(time.Hour).Add(time.Hour)
		if t.Hour() == 0 {
			goto wrap
		}
	}
	for s.min&(1<<uint(t.Minute())) == 0 {
		t = t.Truncate(time.Minute).Add(time.Minute)
		if t.Minute() == 0 {
			goto wrap
		}
	}
	for s.sec&(1<<uint(t.Second())) == 0 {
		t = t.Add(time.Second)
		if t.Second() == 0 {
			goto wrap
		}
	}
	return t, true
}

// TestNextWallMatchesStepping compares nextWall with the step-by-step search over random
// expressions (lists, ranges, steps in every field, both day fields) and random times, each
// followed through several firings.
func TestNextWallMatchesStepping(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	field := func(lo, hi int) string {
		switch rng.Intn(5) {
		case 0:
			return "*"
		case 1:
			return fmt.Sprint(lo + rng.Intn(hi-lo+1))
		case 2:
			a := lo + rng.Intn(hi-lo+1)
			return fmt.Sprintf("%d-%d", a, a+rng.Intn(hi-a+1))
		case 3:
			return fmt.Sprintf("*/%d", 1+rng.Intn(hi-lo+1))
		default:
			return fmt.Sprintf("%d,%d", lo+rng.Intn(hi-lo+1), lo+rng.Intn(hi-lo+1))
		}
	}
	compared := 0
	for i := 0; i < 3000; i++ {
		expr := fmt.Sprintf("%s %s %s %s %s %s", field(0, 59), field(0, 59), field(0, 23), field(1, 31), field(1, 12), field(0, 6))
		spec, err := Parse(expr)
		if err != nil {
			continue // a day of the month no month has, and the like
		}
		compared++
		c := time.Date(2024+rng.Intn(6), time.Month(1+rng.Intn(12)), 1+rng.Intn(31), rng.Intn(24), rng.Intn(60), rng.Intn(60), rng.Intn(1e9), time.UTC)
		for k := 0; k < 5; k++ {
			got, ok := spec.nextWall(c)
			want, wantOK := spec.nextWallStepping(c)
			if ok != wantOK || !got.Equal(want) {
				t.Fatalf("%q after %s: %s %v, want %s %v", expr, c.Format(time.RFC3339Nano), got, ok, want, wantOK)
			}
			if !ok {
				break
			}
			c = got
		}
	}
	if compared < 1000 {
		t.Fatalf("only %d expressions parsed", compared)
	}
}

// TestCivilMatchesTime: the date arithmetic nextWall carries agrees with package time's over
// four centuries either side of 1970 (leap centuries, days before the epoch).
func TestCivilMatchesTime(t *testing.T) {
	for days := int64(-146097 * 2); days <= 146097*2; days += 13 {
		tm := time.Unix(days*86400, 0).UTC()
		y, mo, d := civil(days)
		if int(y) != tm.Year() || mo != int(tm.Month()) || d != tm.Day() {
			t.Fatalf("civil(%d) = %d-%d-%d, want %s", days, y, mo, d, tm.Format(time.DateOnly))
		}
		if back := daysFromCivil(y, mo, d); back != days {
			t.Fatalf("daysFromCivil(%d-%d-%d) = %d, want %d", y, mo, d, back, days)
		}
		if wd := int(floorMod(days+4, 7)); wd != int(tm.Weekday()) {
			t.Fatalf("weekday of %s: %d, want %d", tm.Format(time.DateOnly), wd, tm.Weekday())
		}
		if n := monthDays(y, mo); n != time.Date(int(y), time.Month(mo)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
			t.Fatalf("monthDays(%d, %d) = %d", y, mo, n)
		}
	}
}

// resolveReference is resolve without its shortcut away from transitions: the search it skips.
func resolveReference(wall time.Time, loc *time.Location) Firing {
	w := wall.Unix()
	offs := map[int64]bool{}
	for _, u := range []int64{w - 86400, w + 86400} {
		o := offsetAt(u, loc)
		offs[o] = true
		offs[offsetAt(w-o, loc)] = true
	}
	var valid []int64
	minOff := int64(1 << 40)
	for o := range offs {
		minOff = min(minOff, o)
		if offsetAt(w-o, loc) == o {
			valid = append(valid, w-o)
		}
	}
	switch {
	case len(valid) == 1:
		return Firing{At: time.Unix(valid[0], 0).UTC(), Wall: wall}
	case len(valid) > 1:
		first := valid[0]
		for _, v := range valid[1:] {
			first = min(first, v)
		}
		return Firing{At: time.Unix(first, 0).UTC(), Wall: wall, DST: DSTFold}
	}
	start, _ := time.Unix(w-minOff, 0).In(loc).ZoneBounds()
	return Firing{At: start.UTC(), Wall: wall, DST: DSTGap}
}

// TestResolveMatchesReference: every wall time every 7 minutes of 2026 in zones with and without
// transitions (and a half-hour one, and one south of the equator) resolves as the full search
// does, and wallOf gives the wall time the zone shows.
func TestResolveMatchesReference(t *testing.T) {
	for _, name := range []string{"UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "America/Santiago"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Skipf("zone %s: %v", name, err)
		}
		for w := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); w.Year() == 2026; w = w.Add(7 * time.Minute) {
			if got, want := resolve(w, loc), resolveReference(w, loc); got != want {
				t.Fatalf("%s %s: %+v, want %+v", name, w, got, want)
			}
			l := w.In(loc)
			if got, want := wallOf(w, loc), time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), 0, time.UTC); got != want {
				t.Fatalf("wallOf(%s, %s) = %s, want %s", w, name, got, want)
			}
		}
	}
}
