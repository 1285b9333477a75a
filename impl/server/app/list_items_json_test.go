package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestListItemsMatchTheirDetail: the agent job list is written as JSON from its binary rows by the
// service (impl/server/agents/joblist.go, issue 31 item 3; byte for byte what the statement that
// built it in session 11 wrote) and spliced into the page; the review inbox and the
// schedule list read their items' users (creator, pauser, decider) with the page instead of one
// statement per item. Each item must decode to what the item's detail (GET /api/agents/jobs/{id},
// GET /api/proposals/{id}, GET /api/schedules/{id} of a schedule that never fired: encoded in Go,
// its users looked up, as the list items were before) decodes to — with every optional field null
// and set, unicode and HTML characters, times with and without a fraction, stored documents of
// each JSON type — and the pages, followed by nextCursor, must concatenate to the whole list.
func TestListItemsMatchTheirDetail(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop", Name: "shop", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
		t.Fatalf("create project: %v %s", err, r.Body)
	}
	token := apptest.Token(t, admin, "agents:read", "schedules:read")
	_, ann := s.SignIn(t, admin, "ann@example.com")
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
	}
	const odd = `<b>Zoë & "Ann"</b> \ 日本 ` + "\u2028\u2029\t\x01 😀"
	oddJSON, _ := json.Marshal(odd)
	exec(`UPDATE users SET display_name = $1 WHERE id = $2`, odd, ann.Id)
	var project, run uuid.UUID
	if err := conn.QueryRow(ctx, `SELECT id FROM projects WHERE slug = 'shop'`).Scan(&project); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `INSERT INTO runs (project_id, status) VALUES ($1, 'passed') RETURNING id`, project).Scan(&run); err != nil {
		t.Fatal(err)
	}

	// Jobs: every optional field null; every one set; input of each JSON type; a creator whose
	// user is gone (the column is set null by the foreign key, so a user deleted here).
	inputs := []string{`{}`, `{"a": {"b": [1, 2.5, -3e2, null, true, "x<y>&z"], "c": null}, "` + "é\u2028" + `": "日本"}`,
		`null`, `[1, 2]`, `"text"`, `12`, `{"big": 12345678901234567890, "small": 1e-7}`}
	for i, in := range inputs {
		set := i%2 == 1
		exec(`INSERT INTO agent_jobs (project_id, kind, status, input, max_seconds, max_tokens, tokens_used, progress, summary, error,
				actor_kind, actor_name, created_by, created_at, updated_at, started_at, finished_at)
			VALUES ($1, 'heal', $2, $3::jsonb, 600, CASE WHEN $4 THEN 5000 END, $5, $6, CASE WHEN $4 THEN $7 END, CASE WHEN $4 THEN 'failed: ' || $7 END,
				'user', 'ann', CASE WHEN $4 THEN $8::uuid END, '2026-11-20 10:00:00+00'::timestamptz + $9 * interval '1.5 second',
				'2026-11-20 10:00:00.1234+00'::timestamptz + $9 * interval '1 minute',
				CASE WHEN $4 THEN '2026-11-20 10:00:01.000001+01'::timestamptz END, CASE WHEN $4 THEN '2026-11-20 12:00:00.5+00'::timestamptz END)`,
			project, []string{"queued", "failed", "succeeded"}[i%3], in, set, i*10, i*7, odd, ann.Id, i)
	}
	var withProposals uuid.UUID
	if err := conn.QueryRow(ctx, `SELECT id FROM agent_jobs WHERE created_by IS NOT NULL ORDER BY created_at LIMIT 1`).Scan(&withProposals); err != nil {
		t.Fatal(err)
	}

	// Proposals: every optional field null; every one set; evidence and target of each JSON type,
	// a target with keys the API does not show and a value that is not a string.
	targets := []string{`{}`, `{"featurePath": "features/a.feature", "etag": "\"e1\"", "scenario": ` + string(oddJSON) + `, "scenarioName": "s", "exampleRow": 3, "extra": "x"}`,
		`null`, `{"baseline": "home", "runId": "` + run.String() + `", "etag": 5}`, `[1]`, `{"runId": "not-a-uuid", "scenario": null}`,
		`{"runId": 5, "baseline": {"x": 1}}`, `{"runId": "` + strings.ToUpper(run.String()) + `"}`}
	for i, target := range targets {
		set := i%2 == 1
		exec(`INSERT INTO proposals (project_id, job_id, kind, status, title, target, diff, evidence, confidence, decided_by, decided_at, reason, created_at, updated_at)
			VALUES ($1, CASE WHEN $2 THEN $3::uuid END, $4, CASE WHEN $2 THEN 'rejected' ELSE 'pending' END, $5, $6::jsonb, CASE WHEN $2 THEN $5 END, $7::jsonb,
				$8, CASE WHEN $2 THEN $9::uuid END, CASE WHEN $2 THEN '2026-11-21 08:00:00.000010+00'::timestamptz END, CASE WHEN $2 THEN 'no: ' || $5 END,
				'2026-11-20 10:00:00+00'::timestamptz + $10 * interval '0.25 second', '2026-11-22 10:00:00+00')`,
			project, set, withProposals, []string{"feature_patch", "quarantine", "classification"}[i%3], fmt.Sprintf("p%d %s", i, odd), target,
			inputs[i%len(inputs)], []float32{0, 0.55, 1, 0.333333, 0.1}[i%5], ann.Id, i)
	}
	// Visual checks: a new baseline (no mismatch), a rejected one, an accepted one.
	for i, status := range []string{"pending", "failed", "accepted"} {
		var id uuid.UUID
		if err := conn.QueryRow(ctx, `INSERT INTO visual_checks (run_id, project_id, scenario_id, step_index, name, browser, viewport, status,
				mismatch_pixels, mismatch_ratio, accepted_by, accepted_at, created_at)
			VALUES ($1, $2, gen_random_uuid(), 0, $3, 'chromium', '640x400', $4, CASE WHEN $5 > 0 THEN 120 END, 0.0123, CASE WHEN $4 = 'accepted' THEN $6::uuid END,
				CASE WHEN $4 = 'accepted' THEN now() END, '2026-11-20 10:00:00.7+00'::timestamptz + $5 * interval '1 second') RETURNING id`,
			run, project, "check "+odd, status, i, ann.Id).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if status == "failed" {
			exec(`INSERT INTO visual_check_rejections (check_id, reason, decided_by) VALUES ($1, $2, $3)`, id, "not now "+odd, ann.Id)
		}
	}
	// Schedules: every optional field null; every one set; paused with and without its time, by
	// and note; templates of each JSON type and with fields of the wrong type.
	templates := []string{`{}`, `{"paths": ["a.feature", ` + string(oddJSON) + `], "tags": "@x and not @y", "environment": "staging", "variables": {"K": "<v>&", "E": ""},
		"label": "L", "timeoutSeconds": 60, "retries": 2}`, `null`, `{"paths": [], "variables": {}, "tags": null}`, `{"tags": 5, "label": ["x"]}`, `[1]`,
		`{"retries": 1.5, "timeoutSeconds": "x", "paths": ["a", 1, null], "variables": {"a": 1, "b": null, "c": "<&>"}}`, `{"paths": "x", "variables": [1], "retries": 2.0}`}
	for i, tmpl := range templates {
		set := i%2 == 1
		exec(`INSERT INTO schedules (project_id, name, cron, timezone, template, overlap, catch_up_window_seconds, catch_up_max, jitter_seconds,
				start_at, end_at, status, paused_at, paused_by, pause_note, pause_after_failures, next_fire_at, created_by, created_at, updated_at)
			VALUES ($1, $2, '0 2 * * *', CASE WHEN $3 THEN 'Europe/Paris' ELSE 'UTC' END, $4::jsonb, CASE WHEN $3 THEN 'buffer_all' ELSE 'skip' END,
				$5, 10, $5, CASE WHEN $3 THEN '2026-11-01 00:00:00.25+00'::timestamptz END, CASE WHEN $3 THEN '2027-01-01 00:00:00+00'::timestamptz END,
				CASE WHEN $5 % 3 = 2 THEN 'paused' ELSE 'active' END, CASE WHEN $5 = 2 OR $5 = 5 THEN '2026-11-25 09:00:00.999999+00'::timestamptz END,
				CASE WHEN $5 = 5 THEN $6::uuid END, CASE WHEN $5 = 5 THEN $7 END, CASE WHEN $3 THEN 3 END,
				CASE WHEN $5 <> 0 THEN '2026-11-28 02:00:00+00'::timestamptz END, CASE WHEN $3 THEN $6::uuid END,
				'2026-11-20 10:00:00+00'::timestamptz + $5 * interval '0.5 second', '2026-11-26 10:00:00.1+00')`,
			project, fmt.Sprintf("s%d %s", i, odd), set, tmpl, i, ann.Id, odd)
	}
	// A creator whose user is gone.
	exec(`UPDATE agent_jobs SET created_by = NULL WHERE id = (SELECT id FROM agent_jobs WHERE created_by IS NOT NULL ORDER BY created_at DESC LIMIT 1)`)

	get := func(path string) []byte {
		t.Helper()
		code, body, _ := s.Do(t, "GET", path, "", nil, "Authorization", "Bearer "+token)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		return body
	}
	type page struct {
		Items      []json.RawMessage `json:"items"`
		NextCursor *string           `json:"nextCursor"`
	}
	decode := func(b []byte) any {
		t.Helper()
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		return v
	}
	for _, c := range []struct {
		name, list, detail string
		want               int
	}{
		{"jobs", "/api/agents/jobs?project=shop", "/api/agents/jobs/", len(inputs)},
		{"proposals", "/api/proposals?project=shop", "/api/proposals/", len(targets) + 3},
		{"schedules", "/api/schedules?project=shop", "/api/schedules/", len(templates)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var all page
			if err := json.Unmarshal(get(c.list+"&limit=200"), &all); err != nil {
				t.Fatal(err)
			}
			if len(all.Items) != c.want || all.NextCursor != nil {
				t.Fatalf("%d items (cursor %v), want %d", len(all.Items), all.NextCursor, c.want)
			}
			var ids []string
			for _, it := range all.Items {
				var head struct{ ID string }
				if err := json.Unmarshal(it, &head); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, head.ID)
				got, want := decode(it), decode(get(c.detail+head.ID))
				if !reflect.DeepEqual(got, want) {
					t.Errorf("item %s:\nlist   %s\ndetail %s", head.ID, it, get(c.detail+head.ID))
				}
			}
			if c.name == "jobs" {
				// Byte for byte what the statement that built the items wrote (session 11's
				// ListAgentJobs, oldStatementJobItems): the list's answer did not change.
				rows, err := conn.Query(ctx, oldStatementJobItems)
				if err != nil {
					t.Fatal(err)
				}
				old, err := pgx.CollectRows(rows, pgx.RowTo[string])
				if err != nil {
					t.Fatal(err)
				}
				if len(old) != len(all.Items) {
					t.Fatalf("%d items, the old statement %d", len(all.Items), len(old))
				}
				for i, it := range all.Items {
					if string(it) != old[i] {
						t.Errorf("item %d:\nnow %s\nwas %s", i, it, old[i])
					}
				}
			}
			// Pages of 2, followed by their cursor, concatenate to the list.
			var paged []string
			path := c.list + "&limit=2"
			for n := 0; ; n++ {
				var p page
				if err := json.Unmarshal(get(path), &p); err != nil || n > 20 {
					t.Fatalf("page %d: %v", n, err)
				}
				for _, it := range p.Items {
					var head struct{ ID string }
					_ = json.Unmarshal(it, &head)
					paged = append(paged, head.ID)
				}
				if p.NextCursor == nil {
					break
				}
				path = c.list + "&limit=2&cursor=" + *p.NextCursor
			}
			if strings.Join(paged, ",") != strings.Join(ids, ",") {
				t.Fatalf("pages give\n%v\nthe list is\n%v", paged, ids)
			}
		})
	}
	// An empty page.
	if body := get("/api/agents/jobs?project=shop&status=cancelled"); strings.TrimSpace(string(body)) != `{"items":[],"nextCursor":null}` {
		t.Fatalf("empty page: %s", body)
	}
}

// oldStatementJobItems is the item column of ListAgentJobs when the statement built the job
// list's documents (read paths round 5), for the project shop, newest first.
const oldStatementJobItems = `SELECT ('{"createdAt":' || left(to_json(j.created_at AT TIME ZONE 'UTC')::text, -1) || 'Z"'
        || coalesce(',"createdBy":{"displayName":' || to_json(u.display_name)::text || ',"email":' || to_json(u.email)::text || ',"id":"' || u.id::text || '"}', '')
        || coalesce(',"error":' || to_json(j.error)::text, '')
        || coalesce(',"finishedAt":' || left(to_json(j.finished_at AT TIME ZONE 'UTC')::text, -1) || 'Z"', '')
        || ',"id":"' || j.id::text || '","input":'
        || CASE jsonb_typeof(j.input) WHEN 'object' THEN j.input::text WHEN 'null' THEN 'null' ELSE '{}' END
        || ',"kind":' || to_json(j.kind)::text || ',"maxSeconds":' || j.max_seconds::text
        || coalesce(',"maxTokens":' || j.max_tokens::text, '')
        || ',"progress":' || j.progress::text || ',"project":' || to_json(p.slug)::text
        || ',"proposalIds":' || array_to_json(ARRAY(SELECT pr.id FROM proposals pr WHERE pr.job_id = j.id ORDER BY pr.created_at, pr.id))::text
        || coalesce(',"startedAt":' || left(to_json(j.started_at AT TIME ZONE 'UTC')::text, -1) || 'Z"', '')
        || ',"status":' || to_json(j.status)::text
        || coalesce(',"summary":' || to_json(j.summary)::text, '')
        || ',"tokensUsed":' || j.tokens_used::text || ',"updatedAt":' || left(to_json(j.updated_at AT TIME ZONE 'UTC')::text, -1) || 'Z"}')::text
FROM agent_jobs j JOIN projects p ON p.id = j.project_id LEFT JOIN users u ON u.id = j.created_by
WHERE p.slug = 'shop'
ORDER BY j.created_at DESC, j.id DESC`
