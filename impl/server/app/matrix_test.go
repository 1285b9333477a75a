package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/oas"
)

var update = flag.Bool("update", false, "rewrite golden files")

// caller is one principal of the matrix.
type caller struct {
	name    string
	cookie  *apptest.Browser
	csrf    bool
	bearer  string
	bearer2 string // used when the operation's own scope is the one bearer lacks
}

// TestPolicyMatrix drives every operation as every kind of principal against the real server
// and compares the statuses with policy/matrix.golden; it also checks the invariants that must
// hold whatever the golden file says. Refresh with: go test ./impl/server/app -run TestPolicyMatrix -update
func TestPolicyMatrix(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	wsAdmin, _ := s.SignIn(t, admin, "wsadmin@example.com")
	editor, _ := s.SignIn(t, admin, "editor@example.com")
	viewer, _ := s.SignIn(t, admin, "viewer@example.com")
	outsider, _ := s.SignIn(t, admin, "outsider@example.com")
	_, victim := s.SignIn(t, admin, "victim@example.com")
	sync := serverclient.SyncHierarchyJSONRequestBody{Orgs: []serverclient.HierarchyOrg{{Slug: "acme", Name: "Acme",
		Members: &[]serverclient.HierarchyMember{member("victim@example.com", "member")},
		Workspaces: &[]serverclient.HierarchyWorkspace{{Slug: "shop", Name: "Shop", Members: &[]serverclient.HierarchyMember{
			member("wsadmin@example.com", "admin"), member("editor@example.com", "editor"), member("viewer@example.com", "viewer"),
			member("victim@example.com", "viewer")}}}}}}
	if r, err := admin.SyncHierarchyWithResponse(ctx, sync); err != nil || r.StatusCode() != 200 {
		t.Fatalf("sync: %v", err)
	}
	// The project the project routes address (slug "shop-web"), so that they run for real.
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop-web", Name: "Shop web", WorkspaceSlug: "shop"}); err != nil || r.StatusCode() != 201 {
		t.Fatalf("create project: %v", err)
	}
	// A finished run of that project, for the routes that address a run and its scenario.
	if r, err := admin.PutFeatureWithResponse(ctx, "shop-web", "smoke/log.feature", &serverclient.PutFeatureParams{IfMatch: ptr("*")},
		serverclient.PutFeatureJSONRequestBody{Content: "Feature: Log\n\n  Scenario: Logs\n    Given I log \"matrix\"\n"}); err != nil || r.StatusCode() >= 300 {
		t.Fatalf("put feature: %v %s", err, r.Body)
	}
	runID := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop-web"})
	run := waitRun(t, admin.ClientWithResponses, runID, terminal)
	if run.Status != "passed" {
		t.Fatalf("matrix run %s", run.Status)
	}
	// A schedule of that project for the routes that address one; allow_all, so that every run-now
	// starts whatever the runs before it are doing.
	sched, err := admin.CreateScheduleWithResponse(ctx, serverclient.CreateScheduleJSONRequestBody{Project: "shop-web", Name: "matrix", Cron: "0 6 * * *",
		Overlap: ptr(serverclient.ScheduleOverlapAllowAll)})
	if err != nil || sched.StatusCode() != 201 {
		t.Fatalf("create schedule: %v %s", err, sched.Body)
	}
	allScopes := []string{"account:read", "account:write", "admin:read", "admin:write", "agents:read", "agents:write", "artifacts:read",
		"features:read", "features:write", "mcp", "projects:read", "projects:write", "runs:ingest", "runs:read", "runs:write",
		"schedules:read", "schedules:write", "stats:read", "tokens:read", "tokens:write"}
	callers := []caller{
		{name: "anonymous"},
		{name: "no-csrf", cookie: editor},
		{name: "token-without-scope", bearer: apptest.Token(t, wsAdmin, "mcp"), bearer2: apptest.Token(t, wsAdmin, "runs:read")},
		{name: "non-member", cookie: outsider, csrf: true},
		{name: "viewer", cookie: viewer, csrf: true},
		{name: "editor", cookie: editor, csrf: true},
		{name: "token-with-scope", bearer: apptest.Token(t, wsAdmin, allScopes...)},
		{name: "ws-admin", cookie: wsAdmin, csrf: true},
		{name: "instance-admin", cookie: admin, csrf: true},
	}
	// The same operations as MCP tool calls: the scope-less and full tokens above, and a viewer's
	// token with every scope.
	mcpCallers := []mcpCaller{{name: "mcp-without-scope", token: callers[2].bearer}, {name: "mcp-with-scope", token: callers[6].bearer},
		{name: "mcp-viewer", token: apptest.Token(t, viewer, allScopes...)}}
	doc, err := serverapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	table, err := oas.Build(doc)
	if err != nil {
		t.Fatal(err)
	}
	ops := append([]oas.Operation(nil), table.Ops...)
	// Starting and ending a session go last, so that they cannot change the other rows: a login
	// replaces the caller's session cookie, and the CSRF token of the old one stops matching.
	// Deleting the schedule goes after every other schedule operation, so that they address it.
	last := map[string]int{"deleteSchedule": 1, "login": 2, "logout": 3}
	sort.SliceStable(ops, func(i, j int) bool { return last[ops[i].ID] < last[ops[j].ID] })
	params := map[string]string{"workspaceSlug": "shop", "orgSlug": "acme", "userId": victim.Id.String(), "projectSlug": "shop-web", "slug": "shop-web",
		"runId": runID.String(), "scenarioId": run.Modules[0].Features[0].Scenarios[0].Id.String(),
		"path": "checkout/pay.feature", "name": "smoke", "kind": "git", "envName": "staging", "datasetName": "users",
		"scheduleId": sched.JSON201.Id.String()}

	var golden strings.Builder
	golden.WriteString("# operation × principal → HTTP status, driven against the real server by impl/server/app/matrix_test.go.\n")
	golden.WriteString("# Refresh: go test ./impl/server/app -run TestPolicyMatrix -update\n")
	for _, op := range ops {
		fmt.Fprintf(&golden, "%-24s %-6s %-52s", op.ID, op.Method, op.Path)
		for _, c := range callers {
			status, body := send(t, s, doc, op, params, c)
			fmt.Fprintf(&golden, " %s=%d", c.name, status)
			checkInvariant(t, op, c, status, body)
		}
		for _, c := range mcpCallers {
			status, body := sendMCP(t, s, doc, op, params, c)
			fmt.Fprintf(&golden, " %s=%s", c.name, status)
			checkMCPInvariant(t, op, c, status, body)
		}
		golden.WriteString("\n")
	}
	// No credential of this whole run reached the log.
	logs := s.Logs()
	for _, c := range callers {
		secrets := []string{c.bearer, c.bearer2}
		if c.cookie != nil {
			secrets = append(secrets, c.cookie.CSRF)
			u, _ := url.Parse(s.URL)
			for _, ck := range c.cookie.Jar.Cookies(u) {
				secrets = append(secrets, ck.Value)
			}
		}
		for _, secret := range secrets {
			if secret != "" && strings.Contains(logs, secret) {
				t.Errorf("a credential of %s appears in the server log", c.name)
			}
		}
	}
	if strings.Contains(logs, apptest.AdminPassword) {
		t.Error("a password appears in the server log")
	}
	const path = "../../../policy/matrix.golden"
	if *update {
		if err := os.WriteFile(path, []byte(golden.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden: %v (run with -update)", err)
	}
	if diff := lineDiff(string(want), golden.String()); diff != "" {
		t.Fatalf("policy matrix differs from policy/matrix.golden (run with -update after review):\n%s", diff)
	}
}

// bodyOverride gives the operations whose synthesized body would only reach a 404 one that names
// the matrix's real resources.
var bodyOverride = map[string]string{
	"createRun":      `{"project":"shop-web"}`,
	"createSchedule": `{"project":"shop-web","name":"matrix-new","cron":"0 6 * * *"}`,
	"updateSchedule": `{"name":"matrix","cron":"0 7 * * *","overlap":"allow_all"}`,
}

func checkInvariant(t *testing.T, op oas.Operation, c caller, status int, body []byte) {
	t.Helper()
	public := op.Permission.Target == authz.TargetPublic
	mutating := op.Method != http.MethodGet
	fail := func(why string) { t.Errorf("%s as %s: %d %s — %s", op.ID, c.name, status, body, why) }
	switch {
	case status >= 500 && status != http.StatusNotImplemented:
		fail("a server error")
	case public && (status == 401 || status == 403):
		fail("a public operation refused a caller")
	case public:
	case c.name == "anonymous" && status != http.StatusUnauthorized:
		fail("anonymous must be 401")
	case c.name == "no-csrf" && op.Cookie && mutating && !bytes.Contains(body, []byte("csrf_invalid")):
		fail("a browser session without the CSRF header must be refused")
	case c.name == "no-csrf" && !op.Cookie && status != http.StatusUnauthorized:
		fail("a bearer-only operation must refuse a cookie")
	case c.name == "token-without-scope" && op.Bearer && !bytes.Contains(body, []byte("scope_missing")):
		fail("a token without the operation's scope must be refused")
	case c.name == "token-without-scope" && !op.Bearer && !bytes.Contains(body, []byte("session_required")):
		fail("a session-only operation must refuse a token")
	case c.name == "token-with-scope" && !op.Bearer && !bytes.Contains(body, []byte("session_required")):
		fail("a session-only operation must refuse a token")
	case c.name == "non-member" && op.Permission.Target == authz.TargetWorkspace && status < 300 && !emptyCollection(op, body) && !emptyStats(op, body):
		fail("a non-member reached a workspace resource")
	case c.name == "non-member" && op.Permission.Target == authz.TargetInstance && op.Permission.Action != authz.ActionRead && status < 300:
		fail("a plain user managed the instance")
	case c.name == "viewer" && op.Permission.Target == authz.TargetWorkspace && op.Permission.Action != authz.ActionRead && status < 300:
		fail("a viewer changed a workspace resource")
	case c.name == "editor" && op.Permission.Target == authz.TargetWorkspace && op.Permission.Action == authz.ActionManage && status < 300:
		fail("an editor managed a workspace")
	}
}

// emptyCollection reports whether a workspace-target collection answered an empty page: collections
// are filtered to the caller's workspaces, so a non-member gets one and sees nothing.
func emptyCollection(op oas.Operation, body []byte) bool {
	return op.Method == http.MethodGet && !strings.Contains(op.Path, "{") && bytes.HasPrefix(body, []byte(`{"items":[],`))
}

// emptyStats reports whether a statistics operation answered nothing: every list empty and every
// number zero (statistics are computed over the caller's workspaces only).
func emptyStats(op oas.Operation, body []byte) bool {
	if op.Method != http.MethodGet || !strings.HasPrefix(op.Path, "/api/stats/") {
		return false
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	var empty func(any) bool
	empty = func(v any) bool {
		switch x := v.(type) {
		case []any:
			return len(x) == 0
		case float64:
			return x == 0
		case map[string]any:
			for _, m := range x {
				if !empty(m) {
					return false
				}
			}
		}
		return true
	}
	return empty(v)
}

func send(t *testing.T, s *apptest.Server, doc *openapi3.T, op oas.Operation, params map[string]string, c caller) (int, []byte) {
	t.Helper()
	path := op.Path
	var query []string
	headers := map[string]string{}
	item := doc.Paths.Value(op.Path)
	o := item.GetOperation(op.Method)
	all := append(append(openapi3.Parameters{}, item.Parameters...), o.Parameters...)
	for _, p := range all {
		v := p.Value
		val, ok := params[v.Name]
		if !ok && v.Schema != nil {
			raw, _ := json.Marshal(example(v.Schema.Value, 0))
			val = strings.Trim(string(raw), `"`)
		}
		switch v.In {
		case "path":
			path = strings.Replace(path, "{"+v.Name+"}", val, 1)
		case "query":
			if v.Required {
				query = append(query, v.Name+"="+val)
			}
		case "header":
			if v.Required {
				headers[v.Name] = val
			}
		}
	}
	if len(query) > 0 {
		path += "?" + strings.Join(query, "&")
	}
	var body io.Reader
	contentType := ""
	if o.RequestBody != nil && o.RequestBody.Value != nil {
		content := o.RequestBody.Value.Content
		switch {
		case content.Get("application/json") != nil:
			contentType = "application/json"
			raw, _ := json.Marshal(example(content.Get("application/json").Schema.Value, 0))
			if b, ok := bodyOverride[op.ID]; ok {
				raw = []byte(b)
			}
			body = bytes.NewReader(raw)
		case content.Get("multipart/form-data") != nil:
			var buf bytes.Buffer
			w := multipart.NewWriter(&buf)
			schema := content.Get("multipart/form-data").Schema.Value
			for _, name := range schema.Required {
				if name == "file" {
					fw, _ := w.CreateFormFile("file", "users.csv")
					_, _ = fw.Write([]byte("email,role\na@example.com,admin\n"))
				} else {
					raw, _ := json.Marshal(example(schema.Properties[name].Value, 0))
					_ = w.WriteField(name, strings.Trim(string(raw), `"`))
				}
			}
			_ = w.Close()
			contentType = w.FormDataContentType()
			body = &buf
		default:
			for ct := range content {
				contentType = ct
				break
			}
			body = strings.NewReader("[]")
		}
	}
	req, err := http.NewRequest(op.Method, s.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if op.ID == "putFeature" {
		req.Header.Set("If-Match", "*")
	}
	if strings.HasPrefix(op.Path, "/mcp") {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	client := http.DefaultClient
	switch {
	case c.bearer != "":
		token := c.bearer
		if c.bearer2 != "" && op.Permission.Scope == "mcp" {
			token = c.bearer2
		}
		req.Header.Set("Authorization", "Bearer "+token)
	case c.cookie != nil:
		client = &http.Client{Jar: c.cookie.Jar}
		if c.csrf {
			req.Header.Set("x-csrf-token", c.cookie.CSRF)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s as %s: %v", op.ID, c.name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, b
}

// example returns a small value that satisfies schema.
func example(s *openapi3.Schema, depth int) any {
	if s == nil || depth > 8 {
		return nil
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if s.Default != nil {
		return s.Default
	}
	if len(s.AllOf) > 0 {
		merged := map[string]any{}
		for _, sub := range s.AllOf {
			if m, ok := example(sub.Value, depth+1).(map[string]any); ok {
				for k, v := range m {
					merged[k] = v
				}
			} else if v := example(sub.Value, depth+1); v != nil {
				return v
			}
		}
		return merged
	}
	if len(s.OneOf) > 0 {
		return example(s.OneOf[0].Value, depth+1)
	}
	if len(s.AnyOf) > 0 {
		return example(s.AnyOf[0].Value, depth+1)
	}
	switch {
	case s.Type.Is("object") || len(s.Properties) > 0:
		out := map[string]any{}
		for _, name := range s.Required {
			if p := s.Properties[name]; p != nil {
				out[name] = example(p.Value, depth+1)
			}
		}
		if len(out) < int(s.MinProps) {
			names := make([]string, 0, len(s.Properties))
			for name := range s.Properties {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				if len(out) >= int(s.MinProps) {
					break
				}
				if _, ok := out[name]; !ok {
					out[name] = example(s.Properties[name].Value, depth+1)
				}
			}
		}
		return out
	case s.Type.Is("array"):
		n := int(s.MinItems)
		out := make([]any, 0, n)
		for i := 0; i < n; i++ {
			out = append(out, example(s.Items.Value, depth+1))
		}
		return out
	case s.Type.Is("integer"), s.Type.Is("number"):
		if s.Min != nil {
			return *s.Min
		}
		return 1
	case s.Type.Is("boolean"):
		return false
	case s.Type.Is("string"):
		switch s.Format {
		case "uuid":
			return "00000000-0000-4000-8000-000000000001"
		case "email":
			return "someone@example.com"
		case "date-time":
			return "2030-01-01T00:00:00Z"
		case "date":
			return "2030-01-01"
		case "uri", "url":
			return "http://127.0.0.1:9/x"
		}
		n := int(s.MinLength)
		if n < 12 {
			n = 12
		}
		if s.MaxLength != nil && int(*s.MaxLength) < n {
			n = int(*s.MaxLength)
		}
		return strings.Repeat("a", n)
	}
	return map[string]any{}
}

func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			out = append(out, "- "+a, "+ "+b)
		}
	}
	return strings.Join(out, "\n")
}
