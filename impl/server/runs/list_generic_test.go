package runs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/store"
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
//
// Tags are listed with the walk's limit as the server has it (the data is far smaller: the walk
// reaches the project's end) and with a limit of a few runs (tagWalk), so that pages come from
// the trigram index too. Not parallel: it sets tagWalk, which parallel tests then read.
func TestGenericListMatchesListRuns(t *testing.T) {
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
		"no such tag":             {ListFilter{Project: &slug, Tags: []string{"no-such-tag"}}, "ListProjectRunsByTags", false},
		"tag smoke or none":       {ListFilter{Project: &slug, Tags: []string{"no-such-tag", "smoke"}}, "ListProjectRunsByTags", true},
		"tag not, of a tag expr.": {ListFilter{Project: &slug, Tags: []string{"not @slow"}}, "ListProjectRunsByTags", true},
		"tag, unknown project":    {ListFilter{Project: &unknown, Tags: []string{"nightly"}}, "ListProjectRunsByTags", false},
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
	// The shapes as the server lists them, then the tags again with a walk of a few runs.
	type run struct {
		name string
		walk struct{ min, perRow int32 }
	}
	var passes []run
	for _, n := range names {
		passes = append(passes, run{n, tagWalk})
	}
	for _, n := range names {
		if shapes[n].stmt == "ListProjectRunsByTags" {
			passes = append(passes, run{n, struct{ min, perRow int32 }{1, 2}}, run{n, struct{ min, perRow int32 }{5, 1}})
		}
	}
	defer func(w struct{ min, perRow int32 }) { tagWalk = w }(tagWalk)
	for _, r := range passes {
		name, sh := fmt.Sprintf("%s (walk %d, %d a row)", r.name, r.walk.min, r.walk.perRow), shapes[r.name]
		tagWalk = r.walk
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

// sqlRecorder is a db.DBTX that keeps the statement it is asked to run.
type sqlRecorder struct{ sql string }

var errSQLRecorded = errors.New("recorded")

func (r *sqlRecorder) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, errSQLRecorded
}

func (r *sqlRecorder) Query(_ context.Context, sql string, _ ...any) (pgx.Rows, error) {
	r.sql = sql
	return nil, errSQLRecorded
}

func (r *sqlRecorder) QueryRow(context.Context, string, ...any) pgx.Row { return nil }

// TestGenericListPlansReadTheProjectsIndex explains each statement's generic plan for a project
// of two runs next to nine that share 20,000 (analysed): each reads the project's runs only, from
// an index that starts with the project. With "r.project_id = (SELECT …)" the list and the tags
// read runs_created_idx, everyone's runs, to find the small project's two (docs/benchmarks.md,
// read paths round 10). At this size the planner may read the project's runs with a bitmap and
// sort them (the average project has 2,000); at 200,000 runs it reads the index in order.
func TestGenericListPlansReadTheProjectsIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	big := testProject(t, st, "genplan")
	small := secondProject(t, st, big, "small")
	// Nine more projects share the 20,000 runs in turn (as a busy installation's runs interleave).
	conn := seededConn(t, st, "force_generic_plan",
		seed{`INSERT INTO projects (workspace_id, slug, name) SELECT $1, 'busy-' || i, 'Busy' FROM generate_series(1, 9) i`, []any{big.WorkspaceID}},
		seed{`INSERT INTO runs (project_id, status, trigger, source, paths, tags, branch, created_at, updated_at, counts)
SELECT CASE WHEN g % 7000 = 0 THEN $1::uuid ELSE (SELECT id FROM projects WHERE slug = 'busy-' || (1 + g % 9)) END,
       CASE WHEN g % 5 = 0 THEN 'failed' ELSE 'passed' END, 'api', 'execute', '{}',
       CASE WHEN g % 3 = 0 THEN '@nightly' ELSE '@smoke' END, CASE WHEN g % 2 = 0 THEN 'main' ELSE 'feature/' || (g % 100) END,
       now() - make_interval(secs => g), now(), '{}'
FROM generate_series(1, 20000) g`, []any{small.ID}})
	slug := small.Slug
	for _, c := range []struct {
		f     ListFilter
		index string
		args  string
	}{
		{ListFilter{Project: &slug}, "runs_project_idx", `'small', true, '{}', NULL, NULL, 51`},
		{ListFilter{Project: &slug, Statuses: []string{"failed"}}, "runs_project_status_idx", `'small', 'failed', true, '{}', NULL, NULL, 51`},
		{ListFilter{Project: &slug, Branches: []string{"main"}}, "runs_project_branch_idx", `'small', 'main', true, '{}', NULL, NULL, 51`},
		{ListFilter{Project: &slug, Tags: []string{"nightly"}}, "runs_project_idx", `'small', true, '{}', '{%nightly%}', NULL, NULL, 51, 2040`},
	} {
		c.f.AllWorkspaces, c.f.Limit = true, 51
		params, err := (&Service{st: st}).listParams(ctx, c.f)
		if err != nil {
			t.Fatal(err)
		}
		name, call := genericList(ctx, params)
		var rec sqlRecorder
		if err := call(db.New(&rec)); !errors.Is(err, errSQLRecorded) {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := conn.Exec(ctx, "PREPARE explained AS "+rec.sql); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows, err := conn.Query(ctx, "EXPLAIN (COSTS OFF) EXECUTE explained("+c.args+")", pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		rows.Close()
		if _, err := conn.Exec(ctx, "DEALLOCATE explained"); err != nil {
			t.Fatal(err)
		}
		text := strings.Join(lines, "\n")
		if !strings.Contains(text, "Scan using "+c.index+" on runs") && !strings.Contains(text, "Bitmap Index Scan on "+c.index) ||
			strings.Contains(text, "runs_created_idx") || strings.Contains(text, "Seq Scan on runs") {
			t.Errorf("%s: the generic plan does not read the project's runs from %s:\n%s", name, c.index, text)
		}
	}
}

// TestTagListReadsAboutThePage explains ListProjectRunsByTags's generic plan, executed (EXPLAIN
// ANALYZE), for a project of 20,000 runs next to one of 5,000 tagged "@elsewhere": a tag on a
// third of its runs, on 5 of them, on none of them, and one only the other project's runs have.
// Each reads (rows out of runs, by any scan, and rows its filters removed) at most twice the
// walk's limit and the tag's own runs, never the project's 20,000: the walk stops at its limit and
// the trigram index gives the rare tag's runs. Before schema 000036 an absent tag read every run
// of the project (docs/benchmarks.md, read paths round 11).
func TestTagListReadsAboutThePage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	wide := testProject(t, st, "tagplan")
	other := secondProject(t, st, wide, "other")
	conn := seededConn(t, st, "force_generic_plan", seed{`INSERT INTO runs (project_id, status, trigger, source, tags, created_at, updated_at, counts)
SELECT CASE WHEN g % 5 = 0 THEN $2::uuid ELSE $1::uuid END, 'passed', 'api', 'execute',
       CASE WHEN g % 5 = 0 THEN '@elsewhere' WHEN g % 5000 = 1 THEN '@rare and @smoke' WHEN g % 3 = 0 THEN '@nightly' ELSE '@smoke' END,
       now() - make_interval(secs => g), now(), '{}'
FROM generate_series(1, 25000) g`, []any{wide.ID, other.ID}})
	slug := wide.Slug
	for _, c := range []struct {
		tag  string
		want int // runs on the page
		max  int // rows read: the walk's limit (2,040 for 51) twice (the walk, its count), the tag's runs, a few more
	}{
		{"nightly", 51, 200},
		{"rare", 5, 2*2040 + 5 + 10},
		{"no-such-tag", 0, 2*2040 + 10},
		{"elsewhere", 0, 2*2040 + 10},
	} {
		f := ListFilter{Project: &slug, Tags: []string{c.tag}, AllWorkspaces: true, Limit: 51}
		params, err := (&Service{st: st}).listParams(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		name, call := genericList(ctx, params)
		if name != "ListProjectRunsByTags" {
			t.Fatalf("%s: statement %s", c.tag, name)
		}
		var rec sqlRecorder
		if err := call(db.New(&rec)); !errors.Is(err, errSQLRecorded) {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := conn.Exec(ctx, "PREPARE explained AS "+rec.sql); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows, err := conn.Query(ctx, fmt.Sprintf("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE explained('%s', true, '{}', '{%%%s%%}', NULL, NULL, 51, %d)",
			slug, c.tag, tagWalkLimit(51)), pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "DEALLOCATE explained"); err != nil {
			t.Fatal(err)
		}
		text := strings.Join(lines, "\n")
		read, got := rowsReadFromRuns(lines), rowsOut(lines[0])
		if got != c.want || read > c.max || strings.Contains(text, "Seq Scan on runs") || strings.Contains(text, "runs_created_idx") {
			t.Errorf("tag %s: %d runs (want %d), %d rows read from runs (at most %d):\n%s", c.tag, got, c.want, read, c.max, text)
		}
	}
}

// TestListRunsReadsAboutThePage explains ListRuns's custom plan (the server plans it with its
// values), executed, for filters that no run of a 20,000-run project matches: a trigger, and a
// tag beside a status. Each reads a few rows, from runs_project_trigger_idx and the tags'
// trigram index (schema 000036), where they read every run of the project before.
func TestListRunsReadsAboutThePage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	wide := testProject(t, st, "listplan")
	conn := seededConn(t, st, "force_custom_plan", seed{`INSERT INTO runs (project_id, status, trigger, source, tags, branch, created_at, updated_at, counts)
SELECT $1::uuid, CASE WHEN g % 5 = 0 THEN 'failed' ELSE 'passed' END, CASE WHEN g % 3 = 0 THEN 'schedule' ELSE 'api' END, 'execute',
       CASE WHEN g % 7 = 0 THEN '@nightly' END, CASE WHEN g % 2 = 0 THEN 'main' ELSE 'feature/' || (g % 100) END,
       now() - make_interval(secs => g), now(), '{}'
FROM generate_series(1, 20000) g`, []any{wide.ID}})
	slug := wide.Slug
	var rec sqlRecorder
	if _, err := db.New(&rec).ListRuns(ctx, db.ListRunsParams{}); !errors.Is(err, errSQLRecorded) {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "PREPARE explained AS "+rec.sql); err != nil {
		t.Fatal(err)
	}
	// ListRuns's arguments: all_workspaces, workspace_ids, project, statuses, branches,
	// not_branches, triggers, not_triggers, schedule_id, tag_patterns, not_tag_patterns, since,
	// until, before_at, before_id, row_limit.
	for _, c := range []struct{ name, args string }{
		{"trigger ui", `true, '{}', '` + slug + `', '{}', '{}', '{}', '{ui}', '{}', NULL, '{}', '{}', NULL, NULL, NULL, NULL, 51`},
		{"failed, no such tag", `true, '{}', '` + slug + `', '{failed}', '{}', '{}', '{}', '{}', NULL, '{%no-such-tag%}', '{}', NULL, NULL, NULL, NULL, 51`},
		{"main, no such tag", `true, '{}', '` + slug + `', '{}', '{main}', '{}', '{}', '{}', NULL, '{%no-such-tag%}', '{}', NULL, NULL, NULL, NULL, 51`},
		{"schedule, no such tag", `true, '{}', '` + slug + `', '{}', '{}', '{}', '{schedule}', '{}', NULL, '{%no-such-tag%}', '{}', NULL, NULL, NULL, NULL, 51`},
	} {
		rows, err := conn.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE explained("+c.args+")", pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if read, got := rowsReadFromRuns(lines), rowsOut(lines[0]); got != 0 || read > 10 {
			t.Errorf("%s: %d runs, %d rows read from runs (at most 10):\n%s", c.name, got, read, strings.Join(lines, "\n"))
		}
	}
}

var actualRows = regexp.MustCompile(`actual rows=(\d+) loops=(\d+)`)

// rowsReadFromRuns adds up, in an EXPLAIN ANALYZE plan, the rows that scans of runs returned and
// those their filters and rechecks removed.
func rowsReadFromRuns(lines []string) int {
	var n int
	onRuns := false
	for _, l := range lines {
		if strings.Contains(l, "->") || !strings.HasPrefix(l, " ") {
			onRuns = strings.Contains(l, " on runs ")
			if m := actualRows.FindStringSubmatch(l); onRuns && m != nil {
				rows, _ := strconv.Atoi(m[1])
				loops, _ := strconv.Atoi(m[2])
				n += rows * loops
			}
			continue
		}
		if i := strings.Index(l, "Rows Removed by "); onRuns && i >= 0 {
			v, _ := strconv.Atoi(strings.TrimSpace(l[strings.LastIndex(l, ":")+1:]))
			n += v
		}
	}
	return n
}

// rowsOut is the rows a plan's top node returned.
func rowsOut(line string) int {
	m := actualRows.FindStringSubmatch(line)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// secondProject creates another project, slug, in first's workspace.
func secondProject(t *testing.T, st *store.Store, first projects.Project, slug string) projects.Project {
	t.Helper()
	p, err := projects.NewService(st).Create(context.Background(), projects.Workspace{ID: first.WorkspaceID, Slug: first.WorkspaceSlug, Name: first.WorkspaceName},
		slug, slug, "", projects.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// seed is one statement of seededConn, with its arguments.
type seed struct {
	sql  string
	args []any
}

// seededConn runs the seeds on a connection of st with the triggers off (the rollup's and the
// quarantine's are not what the plan tests measure), analyses the tables and sets plan_cache_mode
// to mode for what the test explains on the connection, which it returns (released at the end).
func seededConn(t *testing.T, st *store.Store, mode string, seeds ...seed) *pgxpool.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := st.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Release)
	if _, err := conn.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	for _, sd := range seeds {
		if _, err := conn.Exec(ctx, sd.sql, sd.args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `RESET session_replication_role; ANALYZE runs; ANALYZE projects; SET plan_cache_mode = `+mode); err != nil {
		t.Fatal(err)
	}
	return conn
}
