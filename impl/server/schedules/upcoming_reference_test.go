package schedules_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/schedules"
)

// TestUpcomingMatchesEveryFiringSorted: the upcoming list, at once and paged, is every firing of
// every schedule in the window (each computed alone by Spec.Between from the creation instant,
// none after the schedule's end), sorted by time then schedule id, with the same DST decisions,
// local times and jitter: what the merge gives is what the schedules fire, in order.
func TestUpcomingMatchesEveryFiringSorted(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	end := t0.Add(3 * time.Hour)
	kinds := []schedules.Input{
		{Cron: "*/7 * * * *"},
		{Cron: "0 */2 * * *", Timezone: "America/New_York"},
		{Cron: "30 1 * * *", Timezone: "Europe/Berlin", JitterSeconds: 120},
		{Cron: "*/13 * * * *", Timezone: "Asia/Kolkata", EndAt: &end},
		{Cron: "0 * * * *"}, // several of these: ties on every hour
		{Cron: "15,45 * * * *", Timezone: "Australia/Lord_Howe"},
		{Cron: "0 10 * * *", JitterSeconds: 3600},
	}
	type ref struct {
		sc schedules.Schedule
		f  schedules.Firing
	}
	until := t0.Add(26 * time.Hour)
	var want []ref
	for i := 0; i < 24; i++ {
		in := kinds[i%len(kinds)]
		in.Name = fmt.Sprintf("s%02d", i)
		sc := w.create(in)
		spec, err := schedules.Parse(sc.Cron)
		if err != nil {
			t.Fatal(err)
		}
		loc, err := schedules.LoadZone(sc.Timezone)
		if err != nil {
			t.Fatal(err)
		}
		fs, _ := spec.Between(t0, until, loc, 10000)
		for _, f := range fs {
			if sc.EndAt == nil || !f.At.After(*sc.EndAt) {
				want = append(want, ref{sc, f})
			}
		}
	}
	slices.SortFunc(want, func(a, b ref) int {
		if c := a.f.At.Compare(b.f.At); c != 0 {
			return c
		}
		return bytes.Compare(a.sc.ID[:], b.sc.ID[:])
	})
	check := func(what string, got []schedules.Upcoming) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d firings, want %d", what, len(got), len(want))
		}
		for i, u := range got {
			r := want[i]
			loc, _ := schedules.LoadZone(r.sc.Timezone)
			if u.ScheduleID != r.sc.ID || u.Firing != r.f || !u.Local.Equal(r.f.At) || u.Local.Location().String() != loc.String() ||
				u.ScheduleName != r.sc.Name || u.Project != "shop" || u.Timezone != r.sc.Timezone {
				t.Fatalf("%s, item %d: %s %+v (local %s), want %s %+v", what, i, u.ScheduleName, u.Firing, u.Local, r.sc.Name, r.f)
			}
			if r.sc.JitterSeconds == 0 && u.StartsBy != nil {
				t.Fatalf("%s, item %d: starts by %s without jitter", what, i, u.StartsBy)
			}
			if r.sc.JitterSeconds > 0 && (u.StartsBy == nil || !u.StartsBy.Equal(r.f.At.Add(schedules.Jitter(r.sc.ID, r.f.At, r.sc.JitterSeconds)))) {
				t.Fatalf("%s, item %d: starts by %v", what, i, u.StartsBy)
			}
		}
	}
	all, more, err := w.svc.ListUpcoming(ctx, schedules.UpcomingFilter{AllWorkspaces: true, Until: until, Limit: len(want) + 10})
	if err != nil || more {
		t.Fatalf("%v, more %v", err, more)
	}
	check("at once", all)
	for _, limit := range []int{1, 5, 17, 64} {
		var paged []schedules.Upcoming
		f := schedules.UpcomingFilter{AllWorkspaces: true, Project: ptrTo("shop"), Until: until, Limit: limit}
		for {
			page, more, err := w.svc.ListUpcoming(ctx, f)
			if err != nil || len(page) > limit {
				t.Fatalf("limit %d: %d items, %v", limit, len(page), err)
			}
			paged = append(paged, page...)
			if !more {
				break
			}
			last := page[len(page)-1]
			f.AfterAt, f.AfterID = &last.Firing.At, last.ScheduleID
		}
		check(fmt.Sprintf("pages of %d", limit), paged)
	}
}
