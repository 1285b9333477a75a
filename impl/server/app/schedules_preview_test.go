package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestScheduleNextPreview checks GET /api/schedules/next?cron=…&timezone=…, the cron helper of the
// web UI: an unsaved expression gets the firings the scheduler would give it, with the same DST
// decisions; a bad expression or zone is a 400 naming the problem; schedule=<id> lists one saved
// schedule's firings, and they equal its preview.
func TestScheduleNextPreview(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	ctx := context.Background()
	until := time.Now().Add(3 * 365 * 24 * time.Hour)
	preview := func(t *testing.T, cron, zone string) *serverclient.ListUpcomingRunsResponse {
		t.Helper()
		r, err := admin.ListUpcomingRunsWithResponse(ctx, &serverclient.ListUpcomingRunsParams{Cron: &cron, Timezone: &zone, Limit: ptr(10), Until: &until})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	t.Run("every Sunday of March at 02:30 in New York", func(t *testing.T) {
		r := preview(t, "30 2 * 3 sun", "America/New_York")
		// The window is at most 366 days: the four or five Sundays of the next March.
		if r.JSON200 == nil || len(r.JSON200.Items) < 4 || len(r.JSON200.Items) > 5 {
			t.Fatalf("%d %s", r.StatusCode(), r.Body)
		}
		gaps := 0
		for i, u := range r.JSON200.Items {
			if u.ScheduleId != nil || u.ScheduleName != nil || u.Project != nil || u.Timezone != "America/New_York" {
				t.Errorf("item %d names a schedule: %+v", i, u)
			}
			if i > 0 && !u.At.After(r.JSON200.Items[i-1].At) {
				t.Errorf("item %d not after the previous one", i)
			}
			if u.Dst != nil {
				// The second Sunday of March: 02:30 does not exist, the firing is at 03:00 EDT.
				gaps++
				if *u.Dst != serverclient.DstDecisionGap || u.WallTime == nil || !strings.HasSuffix(*u.WallTime, "T02:30:00") || !strings.HasSuffix(u.Local, "T03:00:00-04:00") {
					t.Errorf("item %d: %+v, want the gap decision at 03:00-04:00", i, u)
				}
			} else if !strings.Contains(u.Local, "T02:30:00-0") {
				t.Errorf("item %d local %s, want 02:30", i, u.Local)
			}
		}
		// Exactly one of them is the second Sunday, when the clocks spring forward.
		if gaps != 1 {
			t.Errorf("%d gap decisions in %+v", gaps, r.JSON200.Items)
		}
	})

	t.Run("refused", func(t *testing.T) {
		r := preview(t, "0 25 * * *", "UTC")
		if r.StatusCode() != http.StatusBadRequest || !strings.Contains(string(r.Body), "column 3 (hour)") {
			t.Errorf("bad hour: %d %s", r.StatusCode(), r.Body)
		}
		r = preview(t, "0 1 * * *", "Mars/Olympus")
		if r.StatusCode() != http.StatusBadRequest || !strings.Contains(string(r.Body), "unknown time zone") {
			t.Errorf("bad zone: %d %s", r.StatusCode(), r.Body)
		}
	})

	t.Run("one saved schedule", func(t *testing.T) {
		mk := func(name, cron, zone string) serverclient.Schedule {
			r, err := admin.CreateScheduleWithResponse(ctx, serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: name, Cron: cron, Timezone: &zone})
			if err != nil || r.JSON201 == nil {
				t.Fatalf("create: %v %s", err, r.Body)
			}
			return *r.JSON201
		}
		a := mk("nightly", "30 1 * * *", "Europe/London")
		mk("often", "*/5 * * * *", "UTC")
		r, err := admin.ListUpcomingRunsWithResponse(ctx, &serverclient.ListUpcomingRunsParams{Schedule: &a.Id, Limit: ptr(10), Until: &until})
		if err != nil || r.JSON200 == nil || len(r.JSON200.Items) != 10 {
			t.Fatalf("%v %s", err, r.Body)
		}
		p := preview(t, "30 1 * * *", "Europe/London")
		for i, u := range r.JSON200.Items {
			if u.ScheduleId == nil || *u.ScheduleId != a.Id || *u.ScheduleName != "nightly" || *u.Project != "shop" {
				t.Fatalf("item %d is not of the schedule: %+v", i, u)
			}
			if !u.At.Equal(p.JSON200.Items[i].At) || u.Local != p.JSON200.Items[i].Local {
				t.Errorf("item %d: saved %s, preview %s", i, u.Local, p.JSON200.Items[i].Local)
			}
		}
	})
}
