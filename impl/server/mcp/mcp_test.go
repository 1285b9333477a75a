package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// world is a server with a workspace "shop" (editor and viewer members), a project "shop-web"
// with one passing feature, and the tokens the tests use.
type world struct {
	s      *apptest.Server
	admin  *apptest.Browser
	editor *apptest.Browser
	viewer *apptest.Browser
}

func newWorld(t *testing.T) *world {
	t.Helper()
	s := apptest.Start(t)
	return populate(t, s)
}

func populate(t *testing.T, s *apptest.Server) *world {
	t.Helper()
	ctx := context.Background()
	admin := s.Setup(t)
	editor, _ := s.SignIn(t, admin, "editor@example.com")
	viewer, _ := s.SignIn(t, admin, "viewer@example.com")
	m := func(email, role string) serverclient.HierarchyMember {
		return serverclient.HierarchyMember{Email: openapi_types.Email(email), Role: serverclient.HierarchyMemberRole(role)}
	}
	sync := serverclient.SyncHierarchyJSONRequestBody{Orgs: []serverclient.HierarchyOrg{{Slug: "acme", Name: "Acme",
		Workspaces: &[]serverclient.HierarchyWorkspace{{Slug: "shop", Name: "Shop", Members: &[]serverclient.HierarchyMember{
			m("editor@example.com", "editor"), m("viewer@example.com", "viewer")}}}}}}
	if r, err := admin.SyncHierarchyWithResponse(ctx, sync); err != nil || r.StatusCode() != 200 {
		t.Fatalf("sync: %v", err)
	}
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop-web", Name: "Shop web", WorkspaceSlug: "shop"}); err != nil || r.StatusCode() != 201 {
		t.Fatalf("create project: %v", err)
	}
	star := "*"
	if r, err := admin.PutFeatureWithResponse(ctx, "shop-web", "smoke/log.feature", &serverclient.PutFeatureParams{IfMatch: &star},
		serverclient.PutFeatureJSONRequestBody{Content: "Feature: Log\n\n  Scenario: Logs\n    Given I log \"mcp\"\n"}); err != nil || r.StatusCode() >= 300 {
		t.Fatalf("put feature: %v %s", err, r.Body)
	}
	return &world{s: s, admin: admin, editor: editor, viewer: viewer}
}

// connect opens an mcp-go client on /mcp with a bearer token; legacy selects the 2025-11-25
// session protocol, otherwise the client speaks 2026-07-28.
func connect(t *testing.T, url, token string, legacy bool, header ...string) *client.Client {
	t.Helper()
	return connectB(t, url, token, legacy, header...)
}

func connectB(t testing.TB, url, token string, legacy bool, header ...string) *client.Client {
	t.Helper()
	headers := map[string]string{"Authorization": "Bearer " + token}
	for i := 0; i+1 < len(header); i += 2 {
		headers[header[i]] = header[i+1]
	}
	var opts []client.ClientOption
	if legacy {
		opts = append(opts, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	}
	endpoint := url + "/mcp"
	if strings.Contains(url, "?") {
		base, query, _ := strings.Cut(url, "?")
		endpoint = base + "/mcp?" + query
	}
	tr, err := transport.NewStreamableHTTP(endpoint, transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if legacy {
		init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	}
	init.Params.ClientInfo = mcp.Implementation{Name: "sdods-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func callTool(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func toolNames(t *testing.T, c *client.Client) map[string]mcp.Tool {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPBothProtocolEras drives the endpoint with mcp-go's own client in the stateless
// 2026-07-28 protocol and in the 2025-11-25 session protocol: the tools list, a read tool with
// structured content, a write tool whose result matches the REST API's.
func TestMCPBothProtocolEras(t *testing.T) {
	w := newWorld(t)
	token := apptest.Token(t, w.editor, "mcp", "runs:read", "runs:write", "projects:read", "features:read", "features:write")
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			c := connect(t, w.s.URL, token, legacy)
			want := mcp.LATEST_PROTOCOL_VERSION
			if legacy {
				want = mcp.ProtocolVersion20251125
			}
			if c.ProtocolVersion() != want {
				t.Fatalf("protocol %q, want %q", c.ProtocolVersion(), want)
			}
			tools := toolNames(t, c)
			for _, name := range []string{"listProjects", "createRun", "getRun", "getFeature", "putFeature"} {
				if _, ok := tools[name]; !ok {
					t.Errorf("tool %s missing from tools/list", name)
				}
			}
			// Scopes the token lacks leave their tools out of the list.
			for _, name := range []string{"listUsers", "listAudit", "createSchedule", "getInsights"} {
				if _, ok := tools[name]; ok {
					t.Errorf("tool %s listed for a token without its scope", name)
				}
			}
			res := callTool(t, c, "listProjects", nil)
			if res.IsError || !strings.Contains(text(res), `"shop-web"`) {
				t.Fatalf("listProjects: %v %s", res.IsError, text(res))
			}
			if _, ok := res.StructuredContent.(map[string]any); !ok {
				t.Fatalf("listProjects: no structured content: %#v", res.StructuredContent)
			}
			res = callTool(t, c, "getFeature", map[string]any{"slug": "shop-web", "path": "smoke/log.feature"})
			if res.IsError || !strings.Contains(text(res), "Scenario: Logs") {
				t.Fatalf("getFeature: %s", text(res))
			}
			// Bad input is refused by the REST validation, with the API's error body.
			res = callTool(t, c, "getRun", map[string]any{"runId": "not-a-uuid"})
			if !res.IsError || !strings.Contains(text(res), "validation_failed") {
				t.Fatalf("getRun with a bad id: %v %s", res.IsError, text(res))
			}
			res = callTool(t, c, "createRun", map[string]any{"body": map[string]any{"project": "shop-web"}})
			if res.IsError || !strings.Contains(text(res), `"queued"`) {
				t.Fatalf("createRun: %s", text(res))
			}
		})
	}
}

// mcpPost sends one raw JSON-RPC message to /mcp.
func mcpPost(t *testing.T, url string, header map[string]string, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func raw(t *testing.T, method, url string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url+"/mcp", nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestMCPSessionsAcrossProcesses opens a 2025-11-25 session on one sdods process and uses and
// ends it on another sharing the database; an ended or foreign session is 404 everywhere.
func TestMCPSessionsAcrossProcesses(t *testing.T) {
	a := apptest.Start(t)
	w := populate(t, a)
	b := apptest.StartOn(t, a.DatabaseURL, nil)
	token := apptest.Token(t, w.editor, "mcp", "projects:read")
	other := apptest.Token(t, w.viewer, "mcp", "projects:read")
	auth := map[string]string{"Authorization": "Bearer " + token}
	status, body, hdr := mcpPost(t, a.URL, auth, initialize)
	sid := hdr.Get("Mcp-Session-Id")
	if status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s (session %q)", status, body, sid)
	}
	withSession := map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	if status, body, _ := mcpPost(t, b.URL, withSession, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != 202 {
		t.Fatalf("initialized on b: %d %s", status, body)
	}
	status, body, _ = mcpPost(t, b.URL, withSession, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"listProjects","arguments":{}}}`)
	if status != 200 || !strings.Contains(body, "shop-web") {
		t.Fatalf("tools/call on b: %d %s", status, body)
	}
	// The GET stream opens on either process for a known session.
	if status, _ := raw(t, http.MethodGet, b.URL, withSession); status != 200 {
		t.Fatalf("GET stream on b: %d", status)
	}
	// Another user's token cannot use the session.
	foreign := map[string]string{"Authorization": "Bearer " + other, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	if status, body, _ := mcpPost(t, a.URL, foreign, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); status != 404 {
		t.Fatalf("foreign session: %d %s", status, body)
	}
	if status, body := raw(t, http.MethodDelete, b.URL, withSession); status != 200 {
		t.Fatalf("DELETE on b: %d %s", status, body)
	}
	if status, body, _ := mcpPost(t, a.URL, withSession, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); status != 404 {
		t.Fatalf("ended session on a: %d %s", status, body)
	}
	if status, _ := raw(t, http.MethodGet, a.URL, withSession); status != 404 {
		t.Fatalf("GET stream of an ended session: %d", status)
	}
	// The stateless protocol has no GET stream nor DELETE.
	modern := map[string]string{"Authorization": "Bearer " + token, "Mcp-Protocol-Version": "2026-07-28"}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if status, body := raw(t, m, a.URL, modern); status != 405 {
			t.Errorf("%s with 2026-07-28: %d %s", m, status, body)
		}
	}
}

// TestMCPRefusals: cookies, tokens without the mcp scope, foreign origins and protocol version
// mismatches are refused; a tool call without the operation's scope, or by a viewer starting a
// run, is refused exactly as the REST request is; tool calls are audited as coming through MCP.
func TestMCPRefusals(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	u := w.s.URL
	// A browser session cookie is refused, as a token without the mcp scope.
	req, _ := http.NewRequest(http.MethodPost, u+"/mcp", strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	for _, ck := range w.editor.Jar.Cookies(req.URL) {
		req.AddCookie(ck)
	}
	req.Header.Set("x-csrf-token", w.editor.CSRF)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("cookie: %d", resp.StatusCode)
	}
	noMCP := apptest.Token(t, w.editor, "runs:read")
	if status, body, _ := mcpPost(t, u, map[string]string{"Authorization": "Bearer " + noMCP}, initialize); status != 403 || !strings.Contains(body, "scope_missing") {
		t.Fatalf("token without mcp: %d %s", status, body)
	}
	mcpOnly := apptest.Token(t, w.editor, "mcp")
	// A foreign Origin is refused; the server's own is accepted.
	if status, body, _ := mcpPost(t, u, map[string]string{"Authorization": "Bearer " + mcpOnly, "Origin": "https://evil.example"}, initialize); status != 403 {
		t.Fatalf("foreign origin: %d %s", status, body)
	}
	if status, body, _ := mcpPost(t, u, map[string]string{"Authorization": "Bearer " + mcpOnly, "Origin": u}, initialize); status != 200 {
		t.Fatalf("own origin: %d %s", status, body)
	}
	// 2026-07-28: the header and _meta versions must agree; an unsupported version is refused
	// with the versions served.
	call := func(version string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version +
			`","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	}
	h := map[string]string{"Authorization": "Bearer " + mcpOnly, "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	if status, body, _ := mcpPost(t, u, h, call("2026-07-28")); status != 200 || !strings.Contains(body, `"tools"`) {
		t.Fatalf("stateless tools/list: %d %s", status, body)
	}
	if status, body, _ := mcpPost(t, u, map[string]string{"Authorization": "Bearer " + mcpOnly, "Mcp-Method": "tools/list"}, call("2026-07-28")); status != 400 || !strings.Contains(body, fmt.Sprint(mcp.HEADER_MISMATCH)) {
		t.Fatalf("missing header: %d %s", status, body)
	}
	if status, body, _ := mcpPost(t, u, h, call("2025-11-25")); status != 400 || !strings.Contains(body, fmt.Sprint(mcp.HEADER_MISMATCH)) {
		t.Fatalf("header and _meta disagree: %d %s", status, body)
	}
	h["Mcp-Protocol-Version"] = "2099-01-01"
	if status, body, _ := mcpPost(t, u, h, call("2099-01-01")); status != 400 || !strings.Contains(body, fmt.Sprint(mcp.UNSUPPORTED_PROTOCOL_VERSION)) {
		t.Fatalf("unsupported version: %d %s", status, body)
	}

	// A token with mcp alone lists no workspace tool, and a call is refused like REST.
	c := connect(t, u, mcpOnly, false)
	if tools := toolNames(t, c); len(tools) != 0 {
		names := []string{}
		for n := range tools {
			names = append(names, n)
		}
		t.Errorf("a token with mcp alone lists %v", names)
	}
	res := callTool(t, c, "listProjects", nil)
	_, restBody, _ := w.s.Do(t, http.MethodGet, "/api/projects", "", nil, "Authorization", "Bearer "+mcpOnly)
	if !res.IsError || !strings.Contains(text(res), "scope_missing") || strings.TrimSpace(text(res)) != strings.TrimSpace(string(restBody)) {
		t.Fatalf("listProjects without projects:read: %v %s (REST: %s)", res.IsError, text(res), restBody)
	}

	// A viewer's token with every run scope still cannot start a run.
	viewerTok := apptest.Token(t, w.viewer, "mcp", "runs:read", "runs:write")
	vc := connect(t, u, viewerTok, true)
	if _, ok := toolNames(t, vc)["createRun"]; !ok {
		t.Fatal("createRun not listed for a token with runs:write")
	}
	res = callTool(t, vc, "createRun", map[string]any{"body": map[string]any{"project": "shop-web"}})
	if !res.IsError || !strings.Contains(text(res), `"forbidden"`) {
		t.Fatalf("viewer createRun: %v %s", res.IsError, text(res))
	}
	runs, err := w.admin.ListRunsWithResponse(ctx, &serverclient.ListRunsParams{})
	if err != nil || runs.JSON200 == nil || len(runs.JSON200.Items) != 0 {
		t.Fatalf("a run exists after the viewer's refused call: %v %s", err, runs.Body)
	}

	// An editor's run through MCP is audited, marked as coming through MCP.
	editorTok := apptest.Token(t, w.editor, "mcp", "runs:write")
	ec := connect(t, u, editorTok, false)
	if res := callTool(t, ec, "createRun", map[string]any{"body": map[string]any{"project": "shop-web"}}); res.IsError {
		t.Fatalf("editor createRun: %s", text(res))
	}
	var via, op, denied string
	err = w.s.App.Store.Pool.QueryRow(ctx, `SELECT detail->>'via', operation FROM audit_entries WHERE operation = 'createRun' AND outcome = 'success'`).Scan(&via, &op)
	if err != nil || via != "mcp" {
		t.Fatalf("audit of the MCP run: %v via=%q", err, via)
	}
	err = w.s.App.Store.Pool.QueryRow(ctx, `SELECT detail->>'via' FROM audit_entries WHERE operation = 'createRun' AND outcome = 'denied'`).Scan(&denied)
	if err != nil || denied != "mcp" {
		t.Fatalf("audit of the viewer's refused run: %v via=%q", err, denied)
	}
}

// TestMCPToolsetsAndInfo: a client selects toolsets by query parameter or header; GET
// /api/mcp/info lists the tools the caller's token may use.
func TestMCPToolsetsAndInfo(t *testing.T) {
	w := newWorld(t)
	token := apptest.Token(t, w.editor, "mcp", "runs:read", "runs:write", "features:read", "projects:read")
	c := connect(t, w.s.URL, token, false, "Mcp-Toolsets", "features")
	tools := toolNames(t, c)
	if _, ok := tools["listFeatures"]; !ok {
		t.Errorf("features toolset lacks listFeatures: %v", tools)
	}
	if _, ok := tools["createRun"]; ok {
		t.Error("createRun listed outside the selected toolsets")
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "listProjects"
	if _, err := c.CallTool(context.Background(), req); err == nil {
		t.Error("a tool outside the selected toolsets answered")
	}
	c2 := connect(t, w.s.URL+"?toolsets=runs,stats", token, true)
	tools = toolNames(t, c2)
	if _, ok := tools["createRun"]; !ok || tools["listFeatures"].Name != "" {
		t.Errorf("toolsets=runs,stats: %v", tools)
	}
	status, body, _ := w.s.Do(t, http.MethodGet, "/api/mcp/info", "", nil, "Authorization", "Bearer "+token)
	if status != 200 {
		t.Fatalf("info: %d %s", status, body)
	}
	var info struct {
		ProtocolVersions []string `json:"protocolVersions"`
		Tools            []struct{ Name, Toolset string }
		Toolsets         []struct {
			Name  string
			Tools int
		}
	}
	if err := json.Unmarshal(body, &info); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, tl := range info.Tools {
		names[tl.Name] = tl.Toolset
	}
	if names["createRun"] != "runs" || names["listFeatures"] != "features" || names["listUsers"] != "" || len(info.ProtocolVersions) < 2 || info.ProtocolVersions[0] != "2026-07-28" {
		t.Fatalf("info: %s", body)
	}
	status, body, _ = w.s.Do(t, http.MethodGet, "/api/mcp/info", "", nil)
	if status != 200 || !strings.Contains(string(body), `"tools":[]`) {
		t.Fatalf("anonymous info: %d %s", status, body)
	}
	if status, body, _ := mcpPost(t, w.s.URL, map[string]string{"Authorization": "Bearer " + token, "Mcp-Toolsets": "nope"}, initialize); status != 400 {
		t.Fatalf("unknown toolset: %d %s", status, body)
	}
}

// TestMCPAllowedOrigins: an origin named in --mcp-allowed-origins may call /mcp, any other is 403.
func TestMCPAllowedOrigins(t *testing.T) {
	s := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.MCPAllowedOrigins = []string{"https://agent.example"} })
	token := apptest.Token(t, s.Setup(t), "mcp")
	for origin, want := range map[string]int{"https://agent.example": 200, "https://other.example": 403, "http://agent.example": 403} {
		if status, body, _ := mcpPost(t, s.URL, map[string]string{"Authorization": "Bearer " + token, "Origin": origin}, initialize); status != want {
			t.Errorf("Origin %s: %d %s, want %d", origin, status, body, want)
		}
	}
	cfg := app.Config{Addr: "127.0.0.1:0", DatabaseURL: "postgres://x", DataDir: t.TempDir(), MaxBody: 1, LogFormat: "text", MCPAllowedOrigins: []string{"agent.example"}}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "mcp-allowed-origins") {
		t.Errorf("an origin without a scheme was accepted: %v", err)
	}
}
