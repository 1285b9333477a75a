package httpapi_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/httpapi"
	"github.com/sdods/sdods/impl/server/schedules"
)

// TestSchedulePageMatchesEncodingJSON: the schedule list page written from the service's
// schedules is, byte for byte, what encoding/json writes for the page of their toSchedule
// documents, as the handler answered before: random schedules (nulls, paused or not with and
// without a pauser and note, templates with nil and empty lists and maps, unicode, invalid UTF-8,
// HTML characters, times in several zones, emails that encoding/json refuses, one with firings),
// nil and empty pages. An email encoding/json refuses fails both.
func TestSchedulePageMatchesEncodingJSON(t *testing.T) {
	emails := []string{"ann@example.com", "Ann <ann@example.com>", "a&b@example.com", `"a<b>"@example.com`, "é@example.com", "not an email", ""}
	compared, refused := 0, 0
	for seed := uint64(0); seed < 400; seed++ {
		g := gen{rand.New(rand.NewPCG(seed, seed*11+5))}
		user := func() *schedules.User {
			if g.maybe() {
				return nil
			}
			// Mostly valid emails, so that most pages encode.
			e := emails[g.r.IntN(3)]
			if g.r.IntN(8) == 0 {
				e = emails[g.r.IntN(len(emails))]
			}
			return &schedules.User{ID: uuid.New(), Email: e, DisplayName: g.str()}
		}
		var items []schedules.Schedule
		switch g.r.IntN(5) {
		case 0:
		case 1:
			items = []schedules.Schedule{}
		default:
			for n := 1 + g.r.IntN(5); n > 0; n-- {
				status := []string{"active", "paused", g.str()}[g.r.IntN(3)]
				sc := schedules.Schedule{ID: uuid.New(), Project: g.str(), WorkspaceID: uuid.New(), Name: g.str(), Cron: g.str(), Timezone: g.str(),
					Template: schedules.Template{Paths: g.strs(), Tags: g.strp(), Environment: g.strp(), Label: g.strp(), TimeoutSeconds: g.intp(), Retries: g.intp()},
					Overlap:  g.str(), CatchUpWindowSeconds: g.r.IntN(5000) - 5, CatchUpMax: g.r.IntN(20), JitterSeconds: g.r.IntN(100),
					StartAt: g.timep(), EndAt: g.timep(), PauseAfterFailures: g.intp(), Status: status, PausedAt: g.timep(), PausedBy: user(),
					PauseNote: g.strp(), NextRunAt: g.timep(), LastRunAt: g.timep(), LastRunID: g.uuidp(), LastRunStatus: g.strp(),
					ConsecutiveFailures: g.r.IntN(9), RecentFirings: []schedules.FiringRecord{}, CreatedBy: user(), CreatedAt: g.time(), UpdatedAt: g.time()}
				switch g.r.IntN(4) {
				case 0:
					sc.Template.Variables = map[string]string{}
				case 1:
					sc.Template.Variables = map[string]string{g.str(): g.str(), g.str(): g.str(), "b": g.str(), "a": g.str()}
				}
				switch g.r.IntN(8) {
				case 0:
					sc.RecentFirings = nil
				case 1:
					sc.RecentFirings = []schedules.FiringRecord{{ScheduledAt: g.time(), RecordedAt: g.time(), Status: "missed", Reason: g.str(),
						MissedCount: 2, LastScheduledAt: g.timep(), RunID: g.uuidp(), RunStatus: g.strp()}}
				}
				items = append(items, sc)
			}
		}
		page := serverapi.ScheduleList{NextCursor: g.strp()}
		if items != nil {
			page.Items = []serverapi.Schedule{}
		}
		for _, sc := range items {
			page.Items = append(page.Items, httpapi.ToSchedule(sc))
		}
		var want bytes.Buffer
		wantErr := json.NewEncoder(&want).Encode(page)
		got, err := httpapi.AppendSchedules([]byte("prefix"), items, page.NextCursor)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("seed %d: error %v, encoding/json's %v", seed, err, wantErr)
		}
		if err != nil {
			refused++
			continue
		}
		compared++
		if !bytes.HasPrefix(got, []byte("prefix")) {
			t.Fatalf("seed %d: the encoder did not append", seed)
		}
		got = append(got[len("prefix"):], '\n')
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("seed %d: differs from encoding/json\n got: %s\nwant: %s", seed, got, want.Bytes())
		}
	}
	if compared < 300 || refused == 0 {
		t.Fatalf("%d pages compared, %d refused: the generator no longer covers both", compared, refused)
	}
}
