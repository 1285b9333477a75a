package features_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/features"
)

// TestListMatchesScan: the feature list decoded from binary rows (list.go) is what pgx's scan of
// the same statement into sqlc's rows gave (the list before): names null and set, tags none, one
// and several, unicode and odd characters, times with and without a fraction, a page limit.
func TestListMatchesScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, p := mustProject(t)
	svc := features.NewService(st, nil)
	const odd = `<b>Zoë & "Ann"</b> \ 日本 ` + "\u2028\t\x01 😀"
	for i, c := range []struct {
		path, module string
		name         *string
		tags         []string
	}{
		{"a.feature", "", nil, []string{}},
		{"b/c.feature", "b", strPtr(odd), []string{"@smoke"}},
		{"b/d é.feature", "b", strPtr(""), []string{"@a", "@" + odd, "@smoke", ""}},
		{"z/" + odd + ".feature", "z", strPtr("Z"), []string{"@x"}},
	} {
		if _, err := st.Pool.Exec(ctx, `INSERT INTO features (project_id, path, module, content, etag, name, tags, scenario_count, size_bytes, created_at, updated_at)
			VALUES ($1, $2, $3, 'x', $4, $5, $6, $7::int, $8, '2026-11-20 10:00:00+00'::timestamptz + $7::int * interval '0.123457 second', now())`,
			p.ID, c.path, c.module, `"e`+c.path+`"`, c.name, c.tags, i, 1000*i-5); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []features.ListFilter{{Limit: 10}, {Limit: 2}, {Tag: "smoke", Limit: 10}, {Prefix: "b", Limit: 10}, {After: strPtr("b/c.feature"), Limit: 1}} {
		got, err := svc.List(ctx, p.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		params := db.ListFeaturesParams{ProjectID: p.ID, AfterPath: f.After, RowLimit: int32(f.Limit + 1)}
		if f.Tag != "" {
			params.Tag = strPtr("@" + f.Tag)
		}
		if f.Prefix != "" {
			params.Prefix = strPtr(f.Prefix + "/")
		}
		rows, err := st.ListFeatures(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]features.Stored, len(rows))
		for i, r := range rows {
			want[i] = features.Stored{ID: r.ID, Path: r.Path, Module: r.Module, Name: r.Name, Tags: r.Tags, Etag: r.Etag, ScenarioCount: int(r.ScenarioCount),
				SizeBytes: int(r.SizeBytes), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
		}
		if len(want) == 0 {
			t.Fatalf("%+v: no features: the case tests nothing", f)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v:\n got %#v\nwant %#v", f, got, want)
		}
	}
}
