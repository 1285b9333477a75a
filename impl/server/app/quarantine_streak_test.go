package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestQuarantineStreakOneStatement writes two results of one quarantined identity in one
// statement (two test suites of one JUnit document with the same class and case: two scenarios
// of the run, one identity) and checks that the statement triggers (schema 000023) count both, in
// the order of the run's scenarios, as one result at a time did: passed then failed leaves no
// streak, failed then passed a streak of one, and a release reached in the middle of a statement
// is final. Ingesting a run's report again writes its results as updates: a changed result
// counts, the same result written again does not.
func TestQuarantineStreakOneStatement(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write", "admin:read")
	bearer := s.Bearer(t, token)
	call := jsonCaller(s, token)
	// doc is a report with one suite per outcome (P passed, F failed), each with checkout › pays.
	doc := func(outcomes string) []byte {
		var b strings.Builder
		b.WriteString("<testsuites>")
		for i, o := range outcomes {
			b.WriteString(`<testsuite name="suite` + string(rune('a'+i)) + `">`)
			if o == 'F' {
				b.WriteString(`<testcase classname="checkout" name="pays" time="1"><failure message="declined"/></testcase>`)
			} else {
				b.WriteString(`<testcase classname="checkout" name="pays" time="1"/>`)
			}
			b.WriteString("</testsuite>")
		}
		b.WriteString("</testsuites>")
		return []byte(b.String())
	}
	ingest := func(t *testing.T, into *uuid.UUID, outcomes string) {
		t.Helper()
		if *into == uuid.Nil {
			*into = ingestRun(t, bearer)
		}
		if status, _, body := ingestDoc(t, s, token, *into, "application/xml", doc(outcomes)); status != http.StatusOK {
			t.Fatalf("ingest %s: %d %s", outcomes, status, body)
		}
	}
	quarantine := func(t *testing.T) serverclient.Quarantine {
		t.Helper()
		var list serverclient.QuarantineList
		call(t, "GET", "/api/projects/shop/quarantine?includeReleased=true", "", &list)
		if len(list.Items) != 1 {
			t.Fatalf("quarantines %+v", list.Items)
		}
		return list.Items[0]
	}
	if st := call(t, "POST", "/api/projects/shop/quarantine", `{"featurePath":"checkout","scenario":"pays","owner":"ana","reason":"flaps","releaseAfter":3}`, nil); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}

	steps := []struct {
		name     string
		newRun   bool
		outcomes string
		streak   int
		active   bool
	}{
		{"one clean result", true, "P", 1, true},
		{"passed then failed in one statement", true, "PF", 0, true},
		{"failed then passed in one statement", true, "FP", 1, true},
		{"the same results again, as updates", false, "FP", 1, true},
		{"a changed result, as an update", false, "PP", 2, true},
		{"released by the first of two, the second too late", true, "PF", 3, false},
	}
	var run uuid.UUID
	for _, st := range steps {
		if st.newRun {
			run = uuid.Nil
		}
		ingest(t, &run, st.outcomes)
		q := quarantine(t)
		if q.CleanStreak != st.streak || q.Active != st.active {
			t.Fatalf("%s: streak %d, active %v; want %d, %v", st.name, q.CleanStreak, q.Active, st.streak, st.active)
		}
	}
	if q := quarantine(t); q.ReleaseReason == nil || *q.ReleaseReason != "released after 3 consecutive clean results" {
		t.Errorf("release reason %v", q.ReleaseReason)
	}
}
