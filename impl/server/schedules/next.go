package schedules

import (
	"hash/fnv"
	"time"
)

// DST decisions applied to a wall time named by a cron expression.
const (
	// DSTGap: the wall time does not exist (clocks spring forward over it); the firing is at the
	// next valid instant, the end of the gap. All wall times of one gap fire once there.
	DSTGap = "gap"
	// DSTFold: the wall time occurs twice (clocks fall back over it); the firing is at its first
	// occurrence only.
	DSTFold = "fold"
)

// Firing is one scheduled time: the instant it fires, the wall time the expression named and the
// DST decision that mapped one to the other ("" when the wall time exists exactly once).
type Firing struct {
	At   time.Time // UTC
	Wall time.Time // wall-clock time in the schedule's zone, represented in UTC
	DST  string
}

// Local returns the firing instant in loc.
func (f Firing) Local(loc *time.Location) time.Time { return f.At.In(loc) }

// offsetAt is loc's UTC offset in seconds at the Unix time u.
func offsetAt(u int64, loc *time.Location) int64 {
	_, off := time.Unix(u, 0).In(loc).Zone()
	return int64(off)
}

// resolve maps a wall time of loc to the instant that fires for it: the only instant showing that
// wall time; in a fold the earlier of the two; in a gap the instant the gap ends.
func resolve(wall time.Time, loc *time.Location) Firing {
	w := wall.Unix()
	// Away from a transition (the same offset a day before and a day after, and at the instant
	// that offset gives), the wall time exists once: what the search below finds, without its map.
	if before := offsetAt(w-86400, loc); before == offsetAt(w+86400, loc) && offsetAt(w-before, loc) == before {
		return Firing{At: time.Unix(w-before, 0).UTC(), Wall: wall}
	}
	offs := map[int64]bool{}
	for _, u := range []int64{w - 86400, w + 86400} {
		o := offsetAt(u, loc)
		offs[o] = true
		offs[offsetAt(w-o, loc)] = true
	}
	var valid []int64
	minOff := int64(1 << 40)
	for o := range offs {
		if o < minOff {
			minOff = o
		}
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
			if v < first {
				first = v
			}
		}
		return Firing{At: time.Unix(first, 0).UTC(), Wall: wall, DST: DSTFold}
	}
	// In a gap the wall time read with the offset before the transition lies after it; the zone
	// period holding that instant starts where the gap ends.
	start, _ := time.Unix(w-minOff, 0).In(loc).ZoneBounds()
	return Firing{At: start.UTC(), Wall: wall, DST: DSTGap}
}

// wallOf is the wall-clock time of the instant t in loc, represented in UTC.
func wallOf(t time.Time, loc *time.Location) time.Time {
	u := t.Unix()
	return wallAt(u, offsetAt(u, loc))
}

// wallAt is the wall-clock time of the Unix time u at the UTC offset off (seconds), represented
// in UTC: t.In(loc)'s date and clock, whole seconds, without breaking the date down.
func wallAt(u, off int64) time.Time { return time.Unix(u+off, 0).UTC() }

// maxSteps bounds the wall times examined by one Next call (an every-second expression walks back
// three hours of wall time near a transition).
const maxSteps = 200000

// Next returns the first firing strictly after the instant after, with the DST decisions applied,
// or false when the expression matches nothing in the next 30 years.
//
// The map from wall times to instants is non-decreasing, so the first matching wall time whose
// instant lies after `after` is the answer. Near a transition the search starts three hours of wall
// time earlier, because a wall time before after's own can map after it (a gap) and wall times of a
// fold's second pass map to their first occurrence, before it.
func (s *Spec) Next(after time.Time, loc *time.Location) (Firing, bool) {
	u := after.Unix()
	off, later := offsetAt(u, loc), offsetAt(u+3*86400, loc)
	start := wallAt(u, off)
	if offsetAt(u-3*86400, loc) != later || off != later {
		start = start.Add(-3 * time.Hour)
	}
	c := start.Add(-time.Second)
	for i := 0; i < maxSteps; i++ {
		var ok bool
		if c, ok = s.nextWall(c); !ok {
			return Firing{}, false
		}
		f := resolve(c, loc)
		if f.At.After(after) {
			return f, true
		}
	}
	return Firing{}, false
}

// Between returns the firings in (after, until], at most max of them, and whether more remain.
func (s *Spec) Between(after, until time.Time, loc *time.Location, max int) ([]Firing, bool) {
	var out []Firing
	for {
		f, ok := s.Next(after, loc)
		if !ok || f.At.After(until) {
			return out, false
		}
		if len(out) == max {
			return out, true
		}
		out = append(out, f)
		after = f.At
	}
}

// Jitter is the delay of the firing of schedule id at t: a value in [0, max] seconds fixed by
// (id, t), so every process computes the same.
func Jitter(id [16]byte, t time.Time, max int) time.Duration {
	if max <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write(id[:])
	var b [8]byte
	u := uint64(t.Unix())
	for i := range b {
		b[i] = byte(u >> (8 * i))
	}
	h.Write(b[:])
	return time.Duration(h.Sum64()%uint64(max+1)) * time.Second
}
