package runs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestGenericListMatchesListRuns lists runs through List, which sends a project's hottest
// filters to the statements written for one generic plan (genericList), and through ListRuns
// (listRuns, the general statement), on the same data: every page of every filter is the same
// runs, field for field (reflect.DeepEqual, nil paths apart from empty ones), which is all the
// handler writes the page from. The data has two projects in two workspaces, ties on the creation
// time (the cursor's id decides), NULL and empty tags and branches, and tags with the characters
// LIKE and the escaping treat specially; the callers are an administrator, a member of the first
// workspace only (the second project invisible) and a user of no workspace.
func TestGenericListMatchesListRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	web := testProject(t, st, "genlist")
	o, err := st.CreateOrg(ctx, db.CreateOrgParams{Slug: "org-genlist-other", Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: o.ID, Slug: "genlist-other", Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := projects.NewService(st).Create(ctx, projects.Workspace{ID: w.ID, Slug: w.Slug, Name: w.Name}, "other", "Other", "", projects.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	var member uuid.UUID
	if err := st.Pool.QueryRow(ctx, `INSERT INTO users (email, display_name, password_hash) VALUES ('m@example.com', 'M', 'x') RETURNING id`).Scan(&member); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool.Exec(ctx, `INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'viewer')`, web.WorkspaceID, member); err != nil {
		t.Fatal(err)
	}

	statuses := []string{"failed", "passed", "running", "failed", "cancelled", "queued"}
	branches := []*string{ptrTo("main"), nil, ptrTo("feature/x"), ptrTo("fe%ture"), ptrTo(""), ptrTo("Main"), ptrTo("main")}
	tags := []*string{ptrTo("@nightly"), nil, ptrTo("@Nightly_run and not @slow"), ptrTo("50%"), ptrTo(`a\b`), ptrTo("o'k"), ptrTo(""),
		ptrTo("@smoke"), ptrTo("@été"), ptrTo("@nightly or @smoke"), ptrTo("_")}
	base := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	for i := 0; i < 60; i++ {
		p := web.ID
		if i%4 == 3 {
			p = other.ID
		}
		// Three runs share each creation time: their order, and the cursor, are by id.
		at := base.Add(time.Duration(i/3) * time.Second)
		paths := []string{}
		if i%5 == 0 {
			paths = []string{"a.feature", fmt.Sprintf("dir %d/b.feature", i)}
		}
		if _, err := st.Pool.Exec(ctx, `INSERT INTO runs (project_id, status, trigger, source, paths, tags, branch, created_at, updated_at, counts)
VALUES ($1, $2, 'api', 'execute', $3, $4, $5, $6, $6, '{"total": 1}')`, p, statuses[i%len(statuses)], paths, tags[i%len(tags)], branches[i%len(branches)], at); err != nil {
			t.Fatal(err)
		}
	}

	svc := New(st, nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), Config{})
	slug, otherSlug, unknown := web.Slug, other.Slug, "no-such-project"
	since := base
	sched := uuid.New()
	type shape struct {
		f    ListFilter // without the caller and the limit
		stmt string     // genericList's statement; "" for ListRuns
		some bool       // the administrator's list has runs
	}
	shapes := map[string]shape{
		"project":                 {ListFilter{Project: &slug}, "ListProjectRuns", true},
		"other project":           {ListFilter{Project: &otherSlug}, "ListProjectRuns", true},
		"unknown project":         {ListFilter{Project: &unknown}, "ListProjectRuns", false},
		"failed":                  {ListFilter{Project: &slug, Statuses: []string{"failed"}}, "ListProjectRunsByStatus", true},
		"failed, other project":   {ListFilter{Project: &otherSlug, Statuses: []string{"failed"}}, "ListProjectRunsByStatus", true},
		"no such status":          {ListFilter{Project: &slug, Statuses: []string{"lost"}}, "ListProjectRunsByStatus", false},
		"status, unknown project": {ListFilter{Project: &unknown, Statuses: []string{"failed"}}, "ListProjectRunsByStatus", false},
		"main":                    {ListFilter{Project: &slug, Branches: []string{"main"}}, "ListProjectRunsByBranch", true},
		"branch with %":           {ListFilter{Project: &slug, Branches: []string{"fe%ture"}}, "ListProjectRunsByBranch", true},
		"branch % is no pattern":  {ListFilter{Project: &slug, Branches: []string{"%"}}, "ListProjectRunsByBranch", false},
		"empty branch":            {ListFilter{Project: &slug, Branches: []string{""}}, "ListProjectRunsByBranch", true},
		"main, other project":     {ListFilter{Project: &otherSlug, Branches: []string{"main"}}, "ListProjectRunsByBranch", true},
		"tag nightly":             {ListFilter{Project: &slug, Tags: []string{"nightly"}}, "ListProjectRunsByTags", true},
		"tag NIGHTLY (any case)":  {ListFilter{Project: &slug, Tags: []string{"NIGHTLY"}}, "ListProjectRunsByTags", true},
		"tag _":                   {ListFilter{Project: &slug, Tags: []string{"_"}}, "ListProjectRunsByTags", true},
		"tag %":                   {ListFilter{Project: &slug, Tags: []string{"%"}}, "ListProjectRunsByTags", true},
		`tag \`:                   {ListFilter{Project: &slug, Tags: []string{`\`}}, "ListProjectRunsByTags", true},
		`tag a\b`:                 {ListFilter{Project: &slug, Tags: []string{`a\b`}}, "ListProjectRunsByTags", true},
		"tag o'k":                 {ListFilter{Project: &slug, Tags: []string{"o'k"}}, "ListProjectRunsByTags", true},
		"tag ÉTÉ":                 {ListFilter{Project: &slug, Tags: []string{"ÉTÉ"}}, "ListProjectRunsByTags", true},
		"tag empty":               {ListFilter{Project: &slug, Tags: []string{""}}, "ListProjectRunsByTags", true},
		"tags nightly or smoke":   {ListFilter{Project: &slug, Tags: []string{"nightly", "smoke"}}, "ListProjectRunsByTags", true},
		"tag, other project":      {ListFilter{Project: &otherSlug, Tags: []string{"nightly"}}, "ListProjectRunsByTags", true},
		// Every other shape keeps ListRuns.
		"two statuses":      {ListFilter{Project: &slug, Statuses: []string{"failed", "passed"}}, "", true},
		"two branches":      {ListFilter{Project: &slug, Branches: []string{"main", ""}}, "", true},
		"status and branch": {ListFilter{Project: &slug, Statuses: []string{"failed"}, Branches: []string{"main"}}, "", true},
		"status and tag":    {ListFilter{Project: &slug, Statuses: []string{"failed"}, Tags: []string{"nightly"}}, "", true},
		"branch and tag":    {ListFilter{Project: &slug, Branches: []string{"main"}, Tags: []string{"nightly"}}, "", true},
		"not tag":           {ListFilter{Project: &slug, NotTags: []string{"nightly"}}, "", true},
		"not branch":        {ListFilter{Project: &slug, NotBranches: []string{"main"}}, "", true},
		"trigger":           {ListFilter{Project: &slug, Triggers: []string{"api"}}, "", true},
		"not trigger":       {ListFilter{Project: &slug, NotTriggers: []string{"ui"}}, "", true},
		"since":             {ListFilter{Project: &slug, Since: &since}, "", true},
		"until":             {ListFilter{Project: &slug, Until: &since}, "", false},
		"schedule":          {ListFilter{Project: &slug, ScheduleID: &sched}, "", false},
		"status, all":       {ListFilter{Statuses: []string{"failed"}}, "", true},
		"all":               {ListFilter{}, "", true},
	}
	callers := map[string]func(*ListFilter){
		"administrator": func(f *ListFilter) { f.AllWorkspaces = true },
		"member":        func(f *ListFilter) { f.UserID = member },
		"no workspace":  func(f *ListFilter) { f.UserID = uuid.New() },
	}
	names := make([]string, 0, len(shapes))
	for n := range shapes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		sh := shapes[name]
		for who, as := range callers {
			for _, size := range []int{3, 51} {
				f := sh.f
				as(&f)
				// As the handler asks: a page and one more run, the cursor at the page's last.
				f.Limit = size + 1
				var all int
				for page := 0; ; page++ {
					params, err := svc.listParams(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					if stmt, _ := genericList(ctx, params); stmt != sh.stmt {
						t.Fatalf("%s: statement %q, want %q", name, stmt, sh.stmt)
					}
					got, err := svc.List(ctx, f)
					if err != nil {
						t.Fatalf("%s, %s, page %d: %v", name, who, page, err)
					}
					want, err := svc.listRuns(ctx, params)
					if err != nil {
						t.Fatalf("%s, %s, page %d: ListRuns: %v", name, who, page, err)
					}
					if len(got) != len(want) {
						t.Fatalf("%s, %s, page %d of %d: %d runs, want %d", name, who, page, size, len(got), len(want))
					}
					for i := range want {
						if (got[i].Run.Paths == nil) != (want[i].Run.Paths == nil) || !reflect.DeepEqual(got[i], want[i]) {
							t.Fatalf("%s, %s, page %d of %d, run %d\n got %+v\nwant %+v", name, who, page, size, i, got[i], want[i])
						}
					}
					all += len(got)
					if len(got) <= size {
						break
					}
					f.BeforeAt, f.BeforeID = &got[size-1].Run.CreatedAt, got[size-1].Run.ID
				}
				if want := sh.some && who != "no workspace" && (who == "administrator" || sh.f.Project == nil || *sh.f.Project == slug); (all > 0) != want {
					t.Fatalf("%s, %s: %d runs, want some: %v", name, who, all, want)
				}
			}
		}
	}
}

// TestGenericListCoversListRunsParams fails when ListRunsParams gains a filter: genericList must
// then decide whether its statements can answer it (they answer none but those it checks).
func TestGenericListCoversListRunsParams(t *testing.T) {
	known := []string{"AllWorkspaces", "WorkspaceIds", "Project", "Statuses", "Branches", "NotBranches", "Triggers", "NotTriggers",
		"ScheduleID", "TagPatterns", "NotTagPatterns", "Since", "Until", "BeforeAt", "BeforeID", "RowLimit"}
	var fields []string
	ty := reflect.TypeOf(db.ListRunsParams{})
	for i := 0; i < ty.NumField(); i++ {
		fields = append(fields, ty.Field(i).Name)
	}
	sort.Strings(known)
	sort.Strings(fields)
	if !reflect.DeepEqual(fields, known) {
		t.Fatalf("ListRunsParams has fields %v; genericList knows %v", fields, known)
	}
}

func ptrTo[T any](v T) *T { return &v }
