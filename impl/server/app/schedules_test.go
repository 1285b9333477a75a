package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

const waitFeature = `Feature: Wait

  Scenario: Waits
    Given I wait 30 seconds
`

func scheduleRuns(t *testing.T, admin *apptest.Browser, id uuid.UUID, trigger serverclient.RunTrigger) []serverclient.RunSummary {
	t.Helper()
	r, err := admin.ListRunsWithResponse(context.Background(), &serverclient.ListRunsParams{ScheduleId: &id, Trigger: &[]serverclient.RunTrigger{trigger}, Limit: ptr(200)})
	if err != nil || r.JSON200 == nil {
		t.Fatalf("list runs: %v %s", err, r.Body)
	}
	return r.JSON200.Items
}

func getSchedule(t *testing.T, admin *apptest.Browser, id uuid.UUID) serverclient.Schedule {
	t.Helper()
	r, err := admin.GetScheduleWithResponse(context.Background(), id)
	if err != nil || r.JSON200 == nil {
		t.Fatalf("get schedule: %v %s", err, r.Body)
	}
	return *r.JSON200
}

// TestSchedulesEndToEnd drives the nine schedule operations through the real server: a
// seconds-level schedule fires real runs (trigger schedule) through the River tick, pause stops it
// with a note and resume records what it passed, run-now obeys the overlap policy unless forced,
// the upcoming list applies the DST decision, bad input is refused with the cron column, and every
// write is audited.
func TestSchedulesEndToEnd(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	ctx := context.Background()
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/health.feature": strings.Split(healthFeature, "  Scenario: A check that fails")[0], "slow/wait.feature": waitFeature})

	// Refused input: the error names where.
	for _, c := range []struct {
		body serverclient.CreateScheduleJSONRequestBody
		want string
	}{
		{serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: "bad", Cron: "0 25 * * *"}, "column 3 (hour): 25 is out of range 0-23"},
		{serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: "bad", Cron: "* * * *"}, "4 fields"},
		{serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: "bad", Cron: "@daily", Timezone: ptr("Mars/Olympus_Mons")}, "unknown time zone"},
		{serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: "bad", Cron: "@daily", Timezone: ptr("../../etc/passwd")}, "unknown time zone"},
		{serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: "bad", Cron: "@daily", Run: &serverclient.RunTemplate{Environment: ptr("nope")}}, "environment nope does not exist"},
		{serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: "bad", Cron: "@daily", Run: &serverclient.RunTemplate{Paths: &[]string{"missing"}}}, "path missing matches no feature"},
		{serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: "bad", Cron: "@daily", Run: &serverclient.RunTemplate{Tags: ptr("@a and (")}}, "tag expression"},
	} {
		r, err := admin.CreateScheduleWithResponse(ctx, c.body)
		if err != nil || r.StatusCode() != http.StatusBadRequest || !strings.Contains(string(r.Body), c.want) {
			t.Fatalf("create %+v: %v %d %s", c.body, err, r.StatusCode(), r.Body)
		}
	}

	// A schedule every two seconds fires runs that execute like any run.
	every, err := admin.CreateScheduleWithResponse(ctx, serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: "health every 2s",
		Cron: "*/2 * * * * *", Run: &serverclient.RunTemplate{Environment: ptr("local"), Paths: &[]string{"api"}}, Overlap: ptr(serverclient.ScheduleOverlapAllowAll)})
	if err != nil || every.JSON201 == nil {
		t.Fatalf("create: %v %s", err, every.Body)
	}
	sid := every.JSON201.Id
	if every.JSON201.Status != "active" || every.JSON201.NextRunAt == nil || every.JSON201.Timezone != "UTC" || every.JSON201.Overlap != "allow_all" {
		t.Fatalf("created %s", every.Body)
	}
	if again, _ := admin.CreateScheduleWithResponse(ctx, serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: "health every 2s", Cron: "@daily"}); again.StatusCode() != http.StatusConflict {
		t.Fatalf("same name: %d %s", again.StatusCode(), again.Body)
	}
	deadline := time.Now().Add(60 * time.Second)
	var fired []serverclient.RunSummary
	for {
		fired = scheduleRuns(t, admin, sid, serverclient.RunTriggerSchedule)
		passed := 0
		for _, r := range fired {
			if r.Status == "passed" {
				passed++
			}
		}
		if passed >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the schedule did not fire two passing runs: %+v", fired)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, r := range fired {
		if r.ScheduleId == nil || *r.ScheduleId != sid || r.Trigger != "schedule" || r.Label == nil || *r.Label != "health every 2s" {
			t.Fatalf("scheduled run %+v", r)
		}
	}
	got := getSchedule(t, admin, sid)
	if len(got.RecentFirings) < 2 || got.LastRunId == nil || got.LastRunStatus == nil || got.CreatedBy == nil || got.CreatedBy.Email != "admin@example.com" {
		t.Fatalf("schedule after firing %+v", got)
	}
	for _, f := range got.RecentFirings {
		if f.Status == "started" && (f.RunId == nil || f.ScheduledAt.Second()%2 != 0 || f.Manual) {
			t.Fatalf("firing %+v", f)
		}
	}

	// Pause with a note: nothing fires; resume records the times passed as missed (paused).
	p, err := admin.PauseScheduleWithResponse(ctx, sid, serverclient.PauseScheduleJSONRequestBody{Note: ptr("release freeze")})
	if err != nil || p.JSON200 == nil || p.JSON200.Status != "paused" || p.JSON200.Paused == nil || *p.JSON200.Paused.Note != "release freeze" ||
		p.JSON200.Paused.By == nil || p.JSON200.Paused.By.Email != "admin@example.com" || p.JSON200.NextRunAt != nil {
		t.Fatalf("pause: %v %s", err, p.Body)
	}
	time.Sleep(1500 * time.Millisecond) // a firing being recorded as the pause came has committed
	before := len(scheduleRuns(t, admin, sid, serverclient.RunTriggerSchedule))
	time.Sleep(5 * time.Second)
	if after := len(scheduleRuns(t, admin, sid, serverclient.RunTriggerSchedule)); after != before {
		t.Fatalf("a paused schedule fired: %d → %d runs", before, after)
	}
	res, err := admin.ResumeScheduleWithResponse(ctx, sid, serverclient.ResumeScheduleJSONRequestBody{Note: ptr("freeze over")})
	if err != nil || res.JSON200 == nil || res.JSON200.Status != "active" || res.JSON200.Paused != nil || res.JSON200.NextRunAt == nil {
		t.Fatalf("resume: %v %s", err, res.Body)
	}
	missed := false
	for _, f := range res.JSON200.RecentFirings {
		if f.Status == "missed" && f.Reason != nil && *f.Reason == "paused" && f.MissedCount != nil && *f.MissedCount >= 2 {
			missed = true
		}
	}
	if !missed {
		t.Fatalf("no missed record of the pause: %+v", res.JSON200.RecentFirings)
	}
	// Replace it with a daily cadence, then delete it: its runs stay.
	up, err := admin.UpdateScheduleWithResponse(ctx, sid, serverclient.UpdateScheduleJSONRequestBody{Name: "health daily", Cron: "0 6 * * *", Timezone: ptr("Europe/Berlin")})
	if err != nil || up.JSON200 == nil || up.JSON200.Cron != "0 6 * * *" || up.JSON200.NextRunAt == nil || up.JSON200.NextRunAt.In(time.UTC).Hour()%24 > 5 {
		t.Fatalf("update: %v %s", err, up.Body)
	}
	if bad, _ := admin.UpdateScheduleWithResponse(ctx, sid, serverclient.UpdateScheduleJSONRequestBody{Name: "x", Cron: "0 6 * * 8"}); bad.StatusCode() != http.StatusBadRequest ||
		!strings.Contains(string(bad.Body), "column 9 (day-of-week)") {
		t.Fatalf("bad update: %d %s", bad.StatusCode(), bad.Body)
	}
	runsBefore := len(scheduleRuns(t, admin, sid, serverclient.RunTriggerSchedule))
	if d, err := admin.DeleteScheduleWithResponse(ctx, sid); err != nil || d.StatusCode() != http.StatusNoContent {
		t.Fatalf("delete: %v %d", err, d.StatusCode())
	}
	if g, _ := admin.GetScheduleWithResponse(ctx, sid); g.StatusCode() != http.StatusNotFound {
		t.Fatalf("get after delete: %d", g.StatusCode())
	}
	if n := len(scheduleRuns(t, admin, sid, serverclient.RunTriggerSchedule)); n < runsBefore {
		t.Fatalf("runs of the deleted schedule: %d, had %d", n, runsBefore)
	}

	// Run-now: manual runs under the schedule; the overlap policy (skip) refuses a second while the
	// first runs, unless forced; the cadence is untouched.
	slow, err := admin.CreateScheduleWithResponse(ctx, serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: "slow nightly", Cron: "30 2 * * *",
		Timezone: ptr("America/New_York"), Run: &serverclient.RunTemplate{Environment: ptr("local"), Paths: &[]string{"slow"}, Label: ptr("nightly wait")}})
	if err != nil || slow.JSON201 == nil {
		t.Fatalf("create slow: %v %s", err, slow.Body)
	}
	slowID, next := slow.JSON201.Id, slow.JSON201.NextRunAt
	first, err := admin.RunScheduleNowWithResponse(ctx, slowID, serverclient.RunScheduleNowJSONRequestBody{})
	if err != nil || first.JSON202 == nil || first.HTTPResponse.Header.Get("Location") != "/api/runs/"+first.JSON202.Id.String() {
		t.Fatalf("run now: %v %s", err, first.Body)
	}
	refused, _ := admin.RunScheduleNowWithResponse(ctx, slowID, serverclient.RunScheduleNowJSONRequestBody{})
	if refused.StatusCode() != http.StatusConflict || !strings.Contains(string(refused.Body), "force") {
		t.Fatalf("second run now under skip: %d %s", refused.StatusCode(), refused.Body)
	}
	forced, err := admin.RunScheduleNowWithResponse(ctx, slowID, serverclient.RunScheduleNowJSONRequestBody{Force: ptr(true)})
	if err != nil || forced.JSON202 == nil {
		t.Fatalf("forced run now: %v %s", err, forced.Body)
	}
	manual := scheduleRuns(t, admin, slowID, serverclient.RunTriggerScheduleManual)
	if len(manual) != 2 || *manual[0].Label != "nightly wait" {
		t.Fatalf("manual runs %+v", manual)
	}
	if r, err := admin.GetRunWithResponse(ctx, forced.JSON202.Id); err != nil || r.JSON200 == nil || r.JSON200.CreatedBy == nil ||
		r.JSON200.Trigger != "schedule_manual" || *r.JSON200.ScheduleId != slowID {
		t.Fatalf("manual run: %v %s", err, r.Body)
	}
	for _, id := range []uuid.UUID{first.JSON202.Id, forced.JSON202.Id} {
		if c, err := admin.CancelRunWithResponse(ctx, id); err != nil || c.StatusCode() >= 300 {
			t.Fatalf("cancel: %v", err)
		}
	}
	got = getSchedule(t, admin, slowID)
	if got.NextRunAt == nil || !got.NextRunAt.Equal(*next) || len(got.RecentFirings) != 2 || !got.RecentFirings[0].Manual || *got.RecentFirings[0].Reason != "forced" {
		t.Fatalf("after run now %+v", got)
	}

	// Upcoming firings across the caller's schedules, with the DST decision: 02:30 on the day New
	// York springs forward does not exist and fires at 03:00 EDT.
	// New York springs forward on the second Sunday of March (next year's, so that it is ahead).
	year := time.Now().Year() + 1
	march1 := time.Date(year, 3, 1, 0, 0, 0, 0, time.UTC)
	springDay := 1 + (7-int(march1.Weekday()))%7 + 7
	dst, err := admin.CreateScheduleWithResponse(ctx, serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: "spring", Cron: fmt.Sprintf("30 2 %d 3 *", springDay),
		Timezone: ptr("America/New_York")})
	if err != nil || dst.JSON201 == nil {
		t.Fatalf("create dst: %v %s", err, dst.Body)
	}
	until := time.Date(year, 3, springDay+1, 0, 0, 0, 0, time.UTC)
	next2, err := admin.ListUpcomingRunsWithResponse(ctx, &serverclient.ListUpcomingRunsParams{Project: ptr("shop"), Until: &until, Limit: ptr(200)})
	if err != nil || next2.JSON200 == nil {
		t.Fatalf("upcoming: %v %s", err, next2.Body)
	}
	var spring *serverclient.UpcomingRun
	for i, u := range next2.JSON200.Items {
		if i > 0 && u.At.Before(next2.JSON200.Items[i-1].At) {
			t.Fatalf("upcoming not soonest first: %+v", next2.JSON200.Items)
		}
		if u.ScheduleId != nil && *u.ScheduleId == dst.JSON201.Id && u.At.Year() == until.Year() {
			spring = &next2.JSON200.Items[i]
		}
	}
	wantAt := time.Date(year, 3, springDay, 7, 0, 0, 0, time.UTC) // 03:00 EDT
	day := fmt.Sprintf("%d-03-%02d", year, springDay)
	if spring == nil || !spring.At.Equal(wantAt) || spring.Dst == nil || *spring.Dst != "gap" || *spring.WallTime != day+"T02:30:00" ||
		spring.Local != day+"T03:00:00-04:00" || spring.Timezone != "America/New_York" {
		t.Fatalf("upcoming spring forward %+v in %s", spring, next2.Body)
	}
	page, err := admin.ListUpcomingRunsWithResponse(ctx, &serverclient.ListUpcomingRunsParams{Project: ptr("shop"), Until: &until, Limit: ptr(1)})
	if err != nil || page.JSON200 == nil || len(page.JSON200.Items) != 1 || page.JSON200.NextCursor == nil {
		t.Fatalf("upcoming page: %v %s", err, page.Body)
	}
	page2, _ := admin.ListUpcomingRunsWithResponse(ctx, &serverclient.ListUpcomingRunsParams{Project: ptr("shop"), Until: &until, Limit: ptr(1), Cursor: page.JSON200.NextCursor})
	if page2.JSON200 == nil || len(page2.JSON200.Items) != 1 || page2.JSON200.Items[0] == page.JSON200.Items[0] || page2.JSON200.Items[0].At.Before(page.JSON200.Items[0].At) {
		t.Fatalf("second page %s after %s", page2.Body, page.Body)
	}
	list, err := admin.ListSchedulesWithResponse(ctx, &serverclient.ListSchedulesParams{Project: ptr("shop"), Status: ptr(serverclient.ScheduleStatusActive)})
	if err != nil || list.JSON200 == nil || len(list.JSON200.Items) != 2 {
		t.Fatalf("list: %v %s", err, list.Body)
	}

	// Every write was audited, those of the scheduler as the system.
	audited := map[string]int{}
	var cursor *string
	for {
		a, err := admin.ListAuditWithResponse(ctx, &serverclient.ListAuditParams{Limit: ptr(200), Cursor: cursor})
		if err != nil || a.JSON200 == nil {
			t.Fatalf("audit: %v %s", err, a.Body)
		}
		for _, e := range a.JSON200.Items {
			if e.Outcome == "success" {
				audited[e.Operation]++
			}
		}
		if cursor = a.JSON200.NextCursor; cursor == nil {
			break
		}
	}
	for _, op := range []string{"createSchedule", "updateSchedule", "deleteSchedule", "pauseSchedule", "resumeSchedule", "runScheduleNow", "fireSchedule"} {
		if audited[op] == 0 {
			t.Errorf("no audit entry of %s: %v", op, audited)
		}
	}
}
