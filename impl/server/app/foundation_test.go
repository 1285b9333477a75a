package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/app/apptest"
)

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Hint    string `json:"hint"`
	} `json:"error"`
}

func mustErrorBody(tb testing.TB, b []byte) errorBody {
	tb.Helper()
	var e errorBody
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		tb.Fatalf("not the error shape: %s (%v)", b, err)
	}
	return e
}

func TestHealthAndMcpInfo(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	h, err := s.Client.GetHealthWithResponse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.StatusCode() != http.StatusOK || h.JSON200 == nil {
		t.Fatalf("health: %d %s", h.StatusCode(), h.Body)
	}
	if h.JSON200.Status != "ok" || h.JSON200.Database.Status != "up" || h.JSON200.Database.LatencyMs == nil || h.JSON200.Version == "" {
		t.Fatalf("health body: %s", h.Body)
	}
	if rid := h.HTTPResponse.Header.Get("X-Request-Id"); rid == "" {
		t.Error("no X-Request-Id on the response")
	}

	m, err := s.Client.GetMcpInfoWithResponse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.StatusCode() != http.StatusOK || m.JSON200 == nil || m.JSON200.Endpoint != "/mcp" || string(m.JSON200.Transport) != "streamable-http" {
		t.Fatalf("mcp info: %d %s", m.StatusCode(), m.Body)
	}
	// Without a credential no tool is usable: the list is the caller's (docs/mcp.md).
	if len(m.JSON200.Tools) != 0 || m.JSON200.ProtocolVersions[0] != "2026-07-28" {
		t.Fatalf("anonymous mcp info: %s", m.Body)
	}
	admin := s.Setup(t)
	m, err = s.Bearer(t, apptest.Token(t, admin, "mcp", "runs:read", "runs:write")).GetMcpInfoWithResponse(ctx)
	if err != nil || m.JSON200 == nil {
		t.Fatalf("mcp info with a token: %v", err)
	}
	names := map[string]bool{}
	for _, tool := range m.JSON200.Tools {
		names[tool.Name] = true
	}
	if !names["createRun"] || !names["listRuns"] || !names["runAndWait"] || names["login"] || names["mcpPost"] || names["updateMe"] || names["listFeatures"] {
		t.Fatalf("mcp tools should be those the token's scopes allow: %v", names)
	}
}

func TestHealthDegradedWhenDatabaseIsGone(t *testing.T) {
	s := apptest.Start(t)
	s.Stop() // the run workers hold a listening connection; closing the pool waits for it
	s.App.Store.Close()
	h, err := s.Client.GetHealthWithResponse(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 503 with the same body, so that a probe keyed on the status sees it (issue 18 item 10).
	if h.StatusCode() != http.StatusServiceUnavailable || h.JSON503 == nil || h.JSON503.Status != "degraded" || h.JSON503.Database.Status != "down" {
		t.Fatalf("health with a closed pool: %d %s", h.StatusCode(), h.Body)
	}
}

func TestMalformedInputIsA400NamingTheMember(t *testing.T) {
	s := apptest.Start(t)
	const jsonCT = "application/json"
	cases := []struct {
		name, method, path, contentType, body string
		status                                int
		code                                  string
		hintHas                               []string
	}{
		{"bad JSON", "POST", "/api/auth/login", jsonCT, `{"email": "a@b.c", "password": `, 400, "bad_request", []string{"body"}},
		{"wrong type", "POST", "/api/auth/login", jsonCT, `{"email": "a@b.c", "password": 42}`, 400, "validation_failed", []string{"/password"}},
		{"unknown member", "POST", "/api/auth/login", jsonCT, `{"email": "a@b.c", "password": "x", "remember": true}`, 400, "validation_failed", []string{"remember"}},
		{"missing member", "POST", "/api/auth/login", jsonCT, `{"email": "a@b.c"}`, 400, "validation_failed", []string{"password"}},
		{"bad email format", "POST", "/api/auth/setup", jsonCT, `{"email": "not-an-email", "password": "long enough password", "displayName": "A"}`, 400, "validation_failed", []string{"/email"}},
		{"empty body", "POST", "/api/auth/login", jsonCT, ``, 400, "validation_failed", []string{"body"}},
		{"wrong content type", "POST", "/api/auth/login", "text/plain", `email=a`, 415, "unsupported_media_type", nil},
		{"bad path parameter", "GET", "/api/runs/not-a-uuid", "", ``, 400, "validation_failed", []string{"id"}},
		{"bad query parameter", "GET", "/api/runs?limit=100000", "", ``, 400, "validation_failed", []string{"limit"}},
		{"bad query type", "GET", "/api/runs?limit=many", "", ``, 400, "validation_failed", []string{"limit"}},
		{"unknown route", "GET", "/api/nothing-here", "", ``, 404, "not_found", nil},
		{"unknown method", "PATCH", "/api/health", "", ``, 405, "method_not_allowed", nil},
		{"protected without credentials", "GET", "/api/runs", "", ``, 401, "unauthorized", nil},
		{"feature path with slashes is one parameter", "GET", "/api/projects/shop/features/checkout/pay.feature", "", ``, 401, "unauthorized", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body, hdr := s.Do(t, tc.method, tc.path, tc.contentType, []byte(tc.body))
			t.Logf("%s", body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
				t.Errorf("content type %q", hdr.Get("Content-Type"))
			}
			e := mustErrorBody(t, body)
			if e.Error.Code != tc.code {
				t.Fatalf("code %q, want %q: %s", e.Error.Code, tc.code, body)
			}
			for _, want := range tc.hintHas {
				if !strings.Contains(e.Error.Hint, want) {
					t.Errorf("hint %q does not name %q", e.Error.Hint, want)
				}
			}
		})
	}
}

func TestOversizedBodyIs413(t *testing.T) {
	s := apptest.Start(t) // MaxBody is 1 MiB in apptest
	big := `{"email": "a@b.c", "password": "` + strings.Repeat("x", 2<<20) + `"}`
	status, body, _ := s.Do(t, "POST", "/api/auth/login", "application/json", []byte(big))
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d: %.200s", status, body)
	}
	if e := mustErrorBody(t, body); e.Error.Code != "payload_too_large" {
		t.Fatalf("code %s", e.Error.Code)
	}
}
