package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestAuditListFilters: each filter of the audit list (read through its own index since 000022)
// keeps the entries it names, newest first, and until keeps those before it.
func TestAuditListFilters(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		apptest.Token(t, admin, "runs:read")
	}
	// Refused: an anonymous mutation is audited as denied.
	if st, _, _ := s.Do(t, http.MethodPost, "/api/tokens", "application/json", []byte(`{"name":"x","scopes":["runs:read"]}`)); st != http.StatusUnauthorized {
		t.Fatalf("anonymous token: %d", st)
	}
	all, err := admin.ListAuditWithResponse(ctx, &serverclient.ListAuditParams{Limit: ptr(200)})
	if err != nil || all.JSON200 == nil || len(all.JSON200.Items) < 5 {
		t.Fatalf("audit: %v %s", err, all.Body)
	}
	entries := all.JSON200.Items
	count := func(keep func(serverclient.AuditEntry) bool) int {
		n := 0
		for _, e := range entries {
			if keep(e) {
				n++
			}
		}
		return n
	}
	middle := entries[len(entries)/2].CreatedAt
	for _, tc := range []struct {
		name   string
		params serverclient.ListAuditParams
		keep   func(serverclient.AuditEntry) bool
	}{
		{"operation", serverclient.ListAuditParams{Action: ptr("createToken")}, func(e serverclient.AuditEntry) bool { return e.Operation == "createToken" }},
		{"target kind", serverclient.ListAuditParams{TargetKind: ptr("token")}, func(e serverclient.AuditEntry) bool { return e.Target != nil && e.Target.Kind == "token" }},
		{"outcome", serverclient.ListAuditParams{Outcome: ptr(serverclient.ListAuditParamsOutcome("denied"))}, func(e serverclient.AuditEntry) bool { return e.Outcome == "denied" }},
		{"until", serverclient.ListAuditParams{Until: &middle}, func(e serverclient.AuditEntry) bool { return e.CreatedAt.Before(middle) }},
		{"since and until", serverclient.ListAuditParams{Since: ptr(middle.Add(-time.Hour)), Until: ptr(middle.Add(time.Microsecond))},
			func(e serverclient.AuditEntry) bool { return !e.CreatedAt.After(middle) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := count(tc.keep)
			if want == 0 {
				t.Fatalf("the test's entries have none to keep: %s", all.Body)
			}
			p := tc.params
			p.Limit = ptr(200)
			r, err := admin.ListAuditWithResponse(ctx, &p)
			if err != nil || r.JSON200 == nil {
				t.Fatalf("%v %s", err, r.Body)
			}
			for i, e := range r.JSON200.Items {
				if !tc.keep(e) || (i > 0 && e.CreatedAt.After(r.JSON200.Items[i-1].CreatedAt)) {
					t.Fatalf("entry %d %+v", i, e)
				}
			}
			if len(r.JSON200.Items) != want {
				t.Errorf("%d entries, want %d: %s", len(r.JSON200.Items), want, r.Body)
			}
		})
	}
}
