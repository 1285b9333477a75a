package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestStatsRollupConcurrentFinishes finishes runs of one project at the same time whose results
// share their identities, each document listing its cases in another order: the rollup's merges
// (and the statistics version's row, schema 000027) lock the same rows, and every finish must
// commit — none refused as a deadlock — with the rollup still the figures of the results.
func TestStatsRollupConcurrentFinishes(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write", "stats:read")
	bearer := s.Bearer(t, token)

	const cases = 180
	doc := func(round, which int) []byte {
		var b strings.Builder
		fmt.Fprintf(&b, "<testsuite name=\"shop\" timestamp=\"2026-04-0%dT10:00:0%d\">\n", 1+round%3, which)
		for i := range cases {
			n := i
			if which%2 == 1 {
				n = cases - 1 - i // the other document locks the identities in the other order
			}
			if (n+round+which)%7 == 0 {
				fmt.Fprintf(&b, "  <testcase classname=\"k\" name=\"case %d\" time=\"0.%d\"><failure message=\"id %d gone\"/></testcase>\n", n, n%10, n)
			} else {
				fmt.Fprintf(&b, "  <testcase classname=\"k\" name=\"case %d\" time=\"0.%d\"/>\n", n, n%10)
			}
		}
		b.WriteString("</testsuite>\n")
		return []byte(b.String())
	}
	post := func(id uuid.UUID, body []byte) error {
		req, err := http.NewRequest("POST", s.URL+"/api/runs/"+id.String()+"/ingest", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%d %s", resp.StatusCode, out)
		}
		return nil
	}
	const rounds, together = 6, 3
	for round := range rounds {
		ids := make([]uuid.UUID, together)
		for i := range ids {
			ids[i] = ingestRun(t, bearer)
		}
		errs := make([]error, together)
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = post(id, doc(round, i))
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, document %d: %v", round, i, err)
			}
		}
	}

	// The rollup (whole days) against the results (a window one second wider).
	rolled := url.Values{"since": {"2026-04-01T00:00:00Z"}, "until": {"2026-04-04T00:00:00Z"}, "minResults": {"2"}, "flakyOnly": {"false"}, "limit": {"200"}}
	raw := url.Values{}
	for k, v := range rolled {
		raw[k] = v
	}
	raw.Set("since", "2026-03-31T23:59:59Z")
	var a, b serverclient.FlakyScenarioList
	for _, x := range []struct {
		q    url.Values
		into *serverclient.FlakyScenarioList
	}{{rolled, &a}, {raw, &b}} {
		if status, body, _ := s.Do(t, "GET", "/api/stats/flaky?"+x.q.Encode(), "", nil, "Authorization", "Bearer "+token); status != http.StatusOK {
			t.Fatalf("flaky: %d %s", status, body)
		} else if err := json.Unmarshal(body, x.into); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.Items) != cases {
		t.Fatalf("the rollup lists %d identities, want %d", len(a.Items), cases)
	}
	if len(a.Items) != len(b.Items) {
		t.Fatalf("the rollup lists %d identities, the results %d", len(a.Items), len(b.Items))
	}
	for i := range a.Items {
		x, _ := json.Marshal(a.Items[i])
		y, _ := json.Marshal(b.Items[i])
		if !bytes.Equal(x, y) {
			t.Errorf("item %d: the rollup answers\n%s\nthe results\n%s", i, x, y)
		}
	}
}
