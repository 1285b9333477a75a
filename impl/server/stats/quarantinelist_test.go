package stats

import (
	"context"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestQuarantineListMatchesScan: the quarantine list decoded from binary rows (quarantinelist.go)
// is what toAPI made of pgx's scan of the same statement (the list before), and its export what
// List built of ListActiveQuarantines's scan: every optional column null and set, open, expired
// and released ones, names repeated and with regular expression characters, unicode and odd
// characters, times with and without a fraction, pages and their cursors.
func TestQuarantineListMatchesScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, p := storetest.OpenWithProject(t)
	const odd = `<b>Zoë & "Ann"</b> \ 日本 ` + "\u2028\t\x01 😀"
	for i := range 9 {
		set := i%2 == 1
		if _, err := st.Pool.Exec(ctx, `INSERT INTO scenario_quarantines (project_id, identity, feature_path, name, example_row, owner, reason,
				expires_at, release_after, clean_streak, created_at, released_at, release_reason)
			VALUES ($1, $2, $3, $4, CASE WHEN $5 THEN $6::int END, $7, $8, CASE WHEN $6::int % 3 = 1 THEN now() - interval '1 hour' WHEN $5 THEN now() + interval '1 day' END,
				CASE WHEN $5 THEN 3 END, $6::int, '2026-11-20 10:00:00+00'::timestamptz + $6::int * interval '0.123457 second',
				CASE WHEN $6::int % 4 = 2 THEN '2026-11-21 10:00:00.5+00'::timestamptz END, CASE WHEN $6::int = 2 THEN $8 END)`,
			p.ID, "id"+odd+string(rune('a'+i)), "f/"+odd+".feature", "s (x.*) "+odd+string(rune('a'+i%3)), set, i, "owner "+odd, "why "+odd); err != nil {
			t.Fatal(err)
		}
	}
	qs := NewQuarantines(st)
	fixed := time.Now()
	qs.now = func() time.Time { return fixed }
	for _, f := range []QuarantineFilter{{IncludeReleased: true, Limit: 50}, {Limit: 50}, {IncludeReleased: true, Limit: 4}, {Limit: 1}} {
		var got, want []serverapi.Quarantine
		var cur *QuarantineCursor
		for page := 0; ; page++ {
			f.After = cur
			l, next, err := qs.List(ctx, p.ID, "web", f)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, l.Items...)
			// The scan, as List read it before.
			params := db.ListQuarantinesParams{ProjectID: p.ID, IncludeReleased: f.IncludeReleased, RowLimit: int32(f.Limit + 1)}
			if c := cur; c != nil {
				params.AfterOpen, params.AfterAt, params.AfterID = &c.Open, &c.At, uuid.NullUUID{UUID: c.ID, Valid: true}
			}
			rows, err := st.ListQuarantines(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			var wantNext *QuarantineCursor
			if len(rows) > f.Limit {
				rows = rows[:f.Limit]
				last := rows[len(rows)-1]
				wantNext = &QuarantineCursor{Open: last.ReleasedAt == nil, At: last.CreatedAt, ID: last.ID}
			}
			for _, r := range rows {
				want = append(want, qs.toAPI(r, "web"))
			}
			if !reflect.DeepEqual(next, wantNext) {
				t.Fatalf("%+v page %d: next %+v, want %+v", f, page, next, wantNext)
			}
			if page == 0 {
				// The export, as List built it before.
				active, err := st.ListActiveQuarantines(ctx, db.ListActiveQuarantinesParams{ProjectID: p.ID, Now: fixed})
				if err != nil {
					t.Fatal(err)
				}
				want := serverapi.QuarantineExport{List: []string{}}
				var names []string
				seen := map[string]bool{}
				for _, r := range active {
					want.List = append(want.List, r.FeaturePath+" › "+r.Name)
					if !seen[r.Name] {
						seen[r.Name] = true
						names = append(names, regexp.QuoteMeta(r.Name))
					}
				}
				if len(names) > 0 {
					want.NamePattern = "^(?:" + strings.Join(names, "|") + ")$"
					want.TagExpression = "not " + runner.QuarantinedTag
				}
				if len(active) < 2 || len(names) < 2 || len(names) == len(active) {
					t.Fatalf("%d active quarantines, %d names: the case tests too little", len(active), len(names))
				}
				if !reflect.DeepEqual(l.Export, want) {
					t.Errorf("%+v: export\n got %+v\nwant %+v", f, l.Export, want)
				}
			}
			if next == nil {
				break
			}
			cur = next
		}
		if len(want) == 0 {
			t.Fatalf("%+v: no quarantines: the case tests nothing", f)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v:\n got %+v\nwant %+v", f, got, want)
		}
	}
}
