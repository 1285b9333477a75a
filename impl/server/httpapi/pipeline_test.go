package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/gen/serverstub"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/httpapi"
	"github.com/sdods/sdods/impl/server/oas"
)

// bearerAnyone treats any bearer credential as an instance admin token with every scope: the
// pipeline's own behaviour is under test here, not authentication.
type bearerAnyone struct{}

func (bearerAnyone) Authenticate(r *http.Request, _ *oas.Operation) (*authz.Principal, error) {
	if r.Header.Get("Authorization") == "" {
		return nil, nil
	}
	return &authz.Principal{UserID: "test", Method: authz.MethodSession, InstanceAdmin: true}, nil
}

func mustPipeline(tb testing.TB, api http.Handler, log *slog.Logger) http.Handler {
	tb.Helper()
	doc, err := serverapi.GetSpec()
	if err != nil {
		tb.Fatal(err)
	}
	table, err := oas.Build(doc)
	if err != nil {
		tb.Fatal(err)
	}
	enf, err := authz.New()
	if err != nil {
		tb.Fatal(err)
	}
	h, err := httpapi.Pipeline{Log: log, Doc: doc, Table: table, Auth: bearerAnyone{}, Enforcer: enf, MaxBody: 1024}.Handler(api)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func TestPanicBecomesInternalErrorWithoutDetail(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	h := mustPipeline(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("secret detail") }), log)
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var e struct {
		Error struct{ Code, Message, Hint string }
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != "internal" {
		t.Fatalf("body %s", body)
	}
	if strings.Contains(string(body), "secret detail") {
		t.Fatal("the panic value leaked into the response")
	}
	if !strings.Contains(logs.String(), "secret detail") {
		t.Fatal("the panic was not logged")
	}
}

func TestWildcardPathReachesTheHandlerAsOneParameter(t *testing.T) {
	var got string
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.URL.EscapedPath() })
	h := mustPipeline(t, api, slog.New(slog.NewTextHandler(io.Discard, nil)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/projects/shop/features/checkout/pay.feature", nil))
	if rec.Code != http.StatusUnauthorized { // routed (an unrouted path is 404), then refused
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/trace/assets/app.js", nil)
	req.Header.Set("Authorization", "Bearer test")
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || got != "/trace/assets%2Fapp.js" {
		t.Fatalf("status %d, handler saw %q: %s", rec.Code, got, rec.Body)
	}
}

func TestErrorCodesEqualTheDocumentEnum(t *testing.T) {
	doc, err := serverapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	ref := doc.Components.Schemas["ErrorCode"]
	if ref == nil || ref.Value == nil {
		t.Fatal("no ErrorCode schema in openapi/server.yaml")
	}
	inDoc := map[string]bool{}
	for _, v := range ref.Value.Enum {
		inDoc[v.(string)] = true
	}
	inGo := map[string]bool{}
	for _, c := range apierr.Codes() {
		inGo[string(c)] = true
		if !inDoc[string(c)] {
			t.Errorf("apierr code %s is not in the ErrorCode enum", c)
		}
	}
	for c := range inDoc {
		if !inGo[c] {
			t.Errorf("ErrorCode %s has no apierr constant", c)
		}
	}
}

func TestUnimplementedOperationAnswers501(t *testing.T) {
	_, err := serverstub.Unimplemented{}.ListSchedules(context.Background(), serverapi.ListSchedulesRequestObject{})
	rec := httptest.NewRecorder()
	apierr.Write(rec, httptest.NewRequest("GET", "/api/schedules", nil), nil, err)
	if rec.Code != http.StatusNotImplemented || !strings.Contains(rec.Body.String(), `"code":"not_implemented"`) ||
		!strings.Contains(rec.Body.String(), "listSchedules") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
