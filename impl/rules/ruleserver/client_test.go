package ruleserver_test

import (
	"context"
	"net/http"
	"sort"
	"testing"

	"github.com/sdods/sdods/gen/rulesclient"
)

// The generated Go client (gen/rulesclient, from openapi/rules.yaml) against the real server:
// what a Go caller of the rule server writes, so that a change of the document that breaks its
// callers breaks this test.
func TestGeneratedClient(t *testing.T) {
	s := fixtureServer(t)
	ctx := context.Background()
	bearer := rulesclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	})
	anonymous, err := rulesclient.NewClientWithResponses(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := rulesclient.NewClientWithResponses(s.URL, bearer)
	if err != nil {
		t.Fatal(err)
	}

	if r, err := anonymous.GetLivezWithResponse(ctx); err != nil || r.StatusCode() != http.StatusOK {
		t.Fatalf("livez without a token: %v %s", err, r.Body)
	}
	denied, err := anonymous.ListRulesetsWithResponse(ctx)
	if err != nil || denied.JSON401 == nil || denied.JSON401.Error.Code != rulesclient.ErrorCodeUNAUTHORIZED {
		t.Fatalf("rulesets without a token: %v %d %s", err, denied.StatusCode(), denied.Body)
	}

	list, err := c.ListRulesetsWithResponse(ctx)
	if err != nil || list.JSON200 == nil {
		t.Fatalf("rulesets: %v %s", err, list.Body)
	}
	var ids []string
	for _, r := range list.JSON200.Items {
		ids = append(ids, r.Id)
	}
	sort.Strings(ids)
	if want := []string{"address-book", "checkout", "loan-application", "signup"}; len(ids) != len(want) || ids[0] != want[0] || ids[2] != want[2] || ids[3] != want[3] {
		t.Fatalf("rulesets %v, want %v", ids, want)
	}

	bundle, err := c.GetBundleWithResponse(ctx, "checkout", nil)
	if err != nil || bundle.JSON200 == nil {
		t.Fatalf("bundle: %v %s", err, bundle.Body)
	}
	etag := bundle.HTTPResponse.Header.Get("ETag")
	again, err := c.GetBundleWithResponse(ctx, "checkout", &rulesclient.GetBundleParams{IfNoneMatch: &etag})
	if err != nil || etag == "" || again.StatusCode() != http.StatusNotModified {
		t.Fatalf("bundle with If-None-Match %q: %v %d", etag, err, again.StatusCode())
	}
	missing, err := c.GetBundleWithResponse(ctx, "nope", nil)
	if err != nil || missing.JSON404 == nil || missing.JSON404.Error.Code != rulesclient.ErrorCodeNOTFOUND {
		t.Fatalf("unknown bundle: %v %d %s", err, missing.StatusCode(), missing.Body)
	}

	data := map[string]any{}
	ev, err := c.EvaluateWithResponse(ctx, rulesclient.EvaluationRequest{Ruleset: "signup", Data: &data})
	if err != nil || ev.JSON200 == nil || ev.JSON200.Ruleset.Id != "signup" || len(ev.JSON200.Findings) == 0 {
		t.Fatalf("evaluate an empty signup: %v %d %s", err, ev.StatusCode(), ev.Body)
	}
	unknown, err := c.EvaluateWithResponse(ctx, rulesclient.EvaluationRequest{Ruleset: "nope", Data: &data})
	if err != nil || unknown.JSON404 == nil {
		t.Fatalf("evaluate an unknown ruleset: %v %d %s", err, unknown.StatusCode(), unknown.Body)
	}
}
