package app_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// The secrets of the redaction test: characters that every encoding changes.
const (
	envSecret  = `k3y/with space&"quote"<é>+plus`
	poolSecret = `p00l pässword/%41&'x'`
	envUser    = "ada"
	poolUser   = "pooled-bob"
)

const echoFeature = `Feature: A target that echoes what it is sent

  Scenario: The target echoes the environment's secret
    Given I use basic authentication with "${USER}" and "${API_KEY}"
    And I set the request header "X-Key" to "${API_KEY}"
    And I set the query parameter "key" to "${API_KEY}"
    When I send a GET request to "/echo"
    And I log "sent ${API_KEY}"
    Then the response JSON at "$.key" is "something else"

  Scenario: The target echoes a pooled account's password
    Given I use an account from the users pool
    And I use basic authentication with "${user.username}" and "${user.password}"
    And I set the query parameter "pw" to "${user.password}"
    When I send a GET request to "/echo"
    Then the response JSON at "$.pw" is "something else"
`

// echoTarget answers every request with what it was sent: the query as received (percent-
// encoded), the X-Key header and the pw parameter JSON-escaped, the Authorization header (base64).
func echoTarget(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Key"), r.URL.Query().Get("pw"), r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"query": r.URL.RawQuery, "key": r.Header.Get("X-Key"), "pw": r.URL.Query().Get("pw"),
			"authorization": r.Header.Get("Authorization")})
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// storedForms are the forms of a secret that must appear nowhere a run stores.
func storedForms(user, secret string) map[string]string {
	js, _ := json.Marshal(secret)
	return map[string]string{
		"plain":              secret,
		"query-escaped":      url.QueryEscape(secret),
		"path-escaped":       url.PathEscape(secret),
		"JSON-escaped":       string(js[1 : len(js)-1]),
		"base64":             base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64 user:secret": base64.StdEncoding.EncodeToString([]byte(user + ":" + secret)),
	}
}

// TestSecretsAreRedactedInEveryStoredForm is issue 17 item 6, refused: a real run sends an
// environment secret and a users-pool password to a local server that echoes them back
// (percent-encoded in the query, JSON-escaped, base64 in the Authorization header), and its
// failing assertions attach the response body. Every place the run stored — the events, the
// scenarios' steps and errors, each artifact's content, trace.json, report.json, report.html —
// holds none of the secrets' forms, and the masks show where they were.
func TestSecretsAreRedactedInEveryStoredForm(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	target, seen := echoTarget(t)
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop", Name: "Shop", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
		t.Fatalf("create project: %v %s", err, r.Body)
	}
	env := serverclient.CreateEnvironmentJSONRequestBody{Name: "local", BaseUrl: &target.URL, Variables: &[]serverclient.EnvVariableInput{
		{Name: "USER", Value: ptr(envUser)}, {Name: "API_KEY", Value: ptr(envSecret), Secret: ptr(true)}}}
	if r, err := admin.CreateEnvironmentWithResponse(ctx, "shop", env); err != nil || r.StatusCode() != http.StatusCreated {
		t.Fatalf("create environment: %v %s", err, r.Body)
	}
	if r, err := admin.CreatePoolAccountWithResponse(ctx, "shop", serverclient.CreatePoolAccountJSONRequestBody{Username: poolUser, Password: poolSecret}); err != nil || r.StatusCode() != http.StatusCreated {
		t.Fatalf("create pool account: %v %s", err, r.Body)
	}
	if r, err := admin.PutFeatureWithResponse(ctx, "shop", "echo.feature", &serverclient.PutFeatureParams{IfMatch: ptr("*")}, serverclient.PutFeatureJSONRequestBody{Content: echoFeature}); err != nil || r.StatusCode() >= 300 {
		t.Fatalf("put feature: %v %s", err, r.Body)
	}
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	if run := waitRun(t, admin.ClientWithResponses, id, terminal); run.Counts.Failed != 2 {
		t.Fatalf("run %s %+v", run.Status, run.Counts)
	}
	// The secrets did go out: the target saw them.
	got := strings.Join(seen(), "\n")
	if !strings.Contains(got, envSecret) || !strings.Contains(got, poolSecret) {
		t.Fatalf("the target did not receive the secrets: %q", got)
	}

	// Everything the run stored.
	stored := map[string]string{}
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for name, q := range map[string]string{
		"events":    `SELECT coalesce(string_agg(data::text, E'\n' ORDER BY seq), '') FROM run_events WHERE run_id = $1`,
		"scenarios": `SELECT coalesce(string_agg(steps::text || coalesce(error::text, ''), E'\n'), '') FROM run_scenarios WHERE run_id = $1`,
		"run":       `SELECT coalesce(error, '') FROM runs WHERE id = $1`,
		"artifacts": `SELECT coalesce(string_agg(name || ' ' || media_type, E'\n'), '') FROM artifacts WHERE run_id = $1`,
	} {
		var text string
		if err := conn.QueryRow(ctx, q, id).Scan(&text); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		stored[name] = text
	}
	rows, err := conn.Query(ctx, `SELECT id::text, name FROM artifacts WHERE run_id = $1`, id)
	if err != nil {
		t.Fatal(err)
	}
	type art struct{ id, name string }
	var arts []art
	for rows.Next() {
		var a art
		if err := rows.Scan(&a.id, &a.name); err != nil {
			t.Fatal(err)
		}
		arts = append(arts, a)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	bodies := 0
	for _, a := range arts {
		f := getFile(t, s, admin, id, "artifacts/"+a.id, nil)
		if f.status != 200 {
			t.Fatalf("artifact %s: %d", a.name, f.status)
		}
		stored["artifact "+a.name+" "+a.id] = string(f.body)
		if a.name == "response body" {
			bodies++
			if !strings.Contains(string(f.body), "***") {
				t.Errorf("a response body with nothing masked: %s", f.body)
			}
		}
	}
	if bodies != 2 {
		t.Fatalf("response bodies attached: %d of %+v", bodies, arts)
	}
	for _, p := range []string{"trace.json", "report.json", "report.html"} {
		f := getFile(t, s, admin, id, p, nil)
		if f.status != 200 {
			t.Fatalf("%s: %d", p, f.status)
		}
		stored[p] = string(f.body)
	}
	if !strings.Contains(stored["events"], "sent ***") || !strings.Contains(stored["scenarios"], `is \"***\"`) {
		t.Fatalf("the masks are not where the secrets were:\nevents %s\nscenarios %s", stored["events"], stored["scenarios"])
	}

	for where, text := range stored {
		for _, secret := range []struct{ user, value string }{{envUser, envSecret}, {poolUser, poolSecret}} {
			for form, v := range storedForms(secret.user, secret.value) {
				if strings.Contains(text, v) {
					t.Errorf("%s holds the %s form of a secret (%q):\n%s", where, form, v, text)
				}
			}
		}
	}
}
