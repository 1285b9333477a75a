package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/httpapi"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestListItemsMatchTheSummaries: the run list's items, written as JSON by their statement
// (runs.Service.ListPage), decode to the tokens encoding/json writes for the RunSummary the handler
// made of the same run's row before (httpapi's runSummary over runs.Service.Get; the run detail
// still uses it): the same members in the same order, each present or absent alike, the same
// strings, numbers and times. Over runs with every optional column null and with every one set;
// strings of unicode, HTML, quote, backslash and control characters; counts empty, full, with the
// runner's ambiguous, with quarantined set and null; times with and without fractions, a negative
// and a multi-day duration; equal creation times (the id breaks the tie); and paged through with
// the cursor's key, every run once, newest first.
func TestListItemsMatchTheSummaries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	o, err := st.CreateOrg(ctx, db.CreateOrgParams{Slug: "org-shop", Name: "Org"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: o.ID, Slug: "shop", Name: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := projects.NewService(st).Create(ctx, projects.Workspace{ID: w.ID, Slug: w.Slug, Name: w.Name}, "web <&> ☃", "Web", "", projects.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	svc := runs.New(st, nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), runs.Config{})

	odd := []string{"plain", "ünïcødé ☃ 𝄞", `<b>&amp;</b> "quoted" \back\slash`, "tab\tnew\nline\r\x01\x1f\u007f", "\u2028\u2029 sep", ""}
	counts := []string{`{}`, `{"total": 7, "passed": 3, "failed": 2, "pending": 1, "skipped": 1, "undefined": 0, "flaky": 1}`,
		`{"total": 3, "passed": 1, "failed": 1, "ambiguous": 1, "flaky": 0, "pending": 0, "skipped": 0, "undefined": 0}`,
		`{"failed": 4, "quarantined": 2, "total": 4}`, `{"quarantined": null, "total": 1, "passed": 1}`, `{"total": 2147483648}`}
	base := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	times := []time.Time{base, base.Add(123456 * time.Microsecond), base.Add(100 * time.Millisecond), base.Add(time.Microsecond)}
	str := func(i int) *string {
		if i%3 == 0 {
			return nil
		}
		s := odd[i%len(odd)]
		return &s
	}
	const n = 23
	for i := range n {
		created := times[i%len(times)].Add(time.Duration(i/2) * time.Second) // pairs of runs created at once
		var started, finished *time.Time
		switch i % 5 {
		case 1:
			started = ref(created.Add(1500 * time.Microsecond))
		case 2:
			started, finished = ref(created.Add(time.Second)), ref(created.Add(time.Second+2999*time.Microsecond))
		case 3: // finished before it started
			started, finished = ref(created.Add(time.Second)), ref(created.Add(time.Second-1500*time.Microsecond))
		case 4:
			started, finished = ref(created), ref(created.Add(50*time.Hour+123456*time.Microsecond))
		}
		var schedule *uuid.UUID
		if i%4 == 1 {
			schedule = ref(uuid.New())
		}
		paths := []string{}
		for k := range i % 4 {
			paths = append(paths, odd[(i+k)%len(odd)]+"/x.feature")
		}
		_, err := st.Pool.Exec(ctx, `INSERT INTO runs (project_id, status, trigger, source, label, paths, tags, environment, branch, commit_sha,
				process_name, schedule_id, created_at, updated_at, started_at, finished_at, counts, error, variables)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, 'not in the list', '{"a": "b"}')`,
			p.ID, []string{"queued", "running", "passed", "failed", "errored", "cancelled", "timed_out"}[i%7],
			[]string{"ui", "api", "schedule", "process", "integration", "mcp", "agent"}[i%7], []string{"execute", "ingest"}[i%2],
			str(i), paths, str(i+1), str(i+2), str(i+4), str(i+5), str(i+7), schedule, created, created.Add(time.Duration(i)*time.Millisecond),
			started, finished, counts[i%len(counts)])
		if err != nil {
			t.Fatal(err)
		}
	}

	var seen []runs.Key
	f := runs.ListFilter{AllWorkspaces: true, Limit: 4}
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("the cursor does not end")
		}
		page, err := svc.ListPage(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(page.Items, &items); err != nil || items == nil {
			t.Fatalf("items %s: %v", page.Items, err)
		}
		if len(items) > f.Limit || (page.Next != nil && len(items) != f.Limit) {
			t.Fatalf("%d items on a page of %d, next %v", len(items), f.Limit, page.Next)
		}
		for _, item := range items {
			var head struct {
				ID uuid.UUID `json:"id"`
			}
			if err := json.Unmarshal(item, &head); err != nil {
				t.Fatal(err)
			}
			r, err := svc.Get(ctx, head.ID)
			if err != nil {
				t.Fatal(err)
			}
			sum := httpapi.RunSummary(r.Run, r.ProjectSlug)
			// Times in UTC: pgx reads them in the process's zone (time.Local), which the answers
			// showed as their offset; the statement writes UTC, the same instant.
			sum.CreatedAt, sum.UpdatedAt = sum.CreatedAt.UTC(), sum.UpdatedAt.UTC()
			for _, tp := range []**time.Time{&sum.StartedAt, &sum.FinishedAt} {
				if *tp != nil {
					*tp = ref((*tp).UTC())
				}
			}
			want, err := json.Marshal(sum)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameTokens(item, want); err != nil {
				t.Fatalf("run %s: %v\n got: %s\nwant: %s", head.ID, err, item, want)
			}
			seen = append(seen, runs.Key{At: r.Run.CreatedAt, ID: r.Run.ID})
		}
		if page.Next == nil {
			break
		}
		if last := seen[len(seen)-1]; !page.Next.At.Equal(last.At) || page.Next.ID != last.ID {
			t.Fatalf("next %v, the page's last item %v", page.Next, last)
		}
		f.BeforeAt, f.BeforeID = &page.Next.At, page.Next.ID
	}
	if len(seen) != n {
		t.Fatalf("%d runs listed, %d created", len(seen), n)
	}
	if !slices.IsSortedFunc(seen, func(a, b runs.Key) int {
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return bytes.Compare(b.ID[:], a.ID[:])
	}) {
		t.Fatalf("not newest first, then by id: %v", seen)
	}

	// A user of no workspace: an empty array, no cursor.
	page, err := svc.ListPage(ctx, runs.ListFilter{UserID: uuid.New(), Limit: 10})
	if err != nil || string(page.Items) != "[]" || page.Next != nil {
		t.Fatalf("a user of no workspace: %s %v %v", page.Items, page.Next, err)
	}
}

// sameTokens reports how two JSON documents' token streams differ: members by name in their
// order, strings as decoded, numbers as written.
func sameTokens(got, want []byte) error {
	g, w := json.NewDecoder(bytes.NewReader(got)), json.NewDecoder(bytes.NewReader(want))
	g.UseNumber()
	w.UseNumber()
	for i := 0; ; i++ {
		gt, gerr := g.Token()
		wt, werr := w.Token()
		if errors.Is(gerr, io.EOF) && errors.Is(werr, io.EOF) {
			return nil
		}
		if gerr != nil || werr != nil {
			return fmt.Errorf("token %d: %v, want %v (%v, %v)", i, gt, wt, gerr, werr)
		}
		if gt != wt {
			return fmt.Errorf("token %d: %#v, want %#v", i, gt, wt)
		}
	}
}

func ref[T any](v T) *T { return &v }
