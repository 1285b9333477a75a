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
