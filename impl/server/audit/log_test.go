package audit_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

func TestRecordedEntriesAreListedNewestFirst(t *testing.T) {
	t.Parallel()
	st, _ := storetest.Open(t)
	actor := uuid.New()
	req := &audit.Request{Operation: "createProject", Method: "POST", Path: "/api/projects", RequestID: "r1", SuccessStatus: 201,
		Actor: audit.Actor{Kind: "user", ID: actor, Name: "ada@example.com"}}
	ctx := audit.WithRequest(context.Background(), req)
	for i, name := range []string{"web", "api", "app"} {
		err := st.WithTx(ctx, func(q *db.Queries) error {
			return audit.Record(ctx, q, audit.Target{Kind: "project", ID: name, Name: name}, map[string]any{"n": i})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !req.Recorded() {
		t.Fatal("the request is not marked recorded")
	}
	// Outside a request (a command) the actor is the system.
	if err := st.WithTx(context.Background(), func(q *db.Queries) error {
		return audit.Record(context.Background(), q, audit.Target{Kind: "user", ID: "x"}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	log := audit.NewLog(st.Queries)
	page, err := log.List(context.Background(), audit.Filter{ActorID: &actor, Limit: 2})
	if err != nil || len(page) != 3 || page[0].Target.Name != "app" || page[0].Status != 201 || page[0].Actor.Name != "ada@example.com" || page[0].Detail["n"] != float64(2) {
		t.Fatalf("first page (2 and one more): %+v %v", page, err)
	}
	rest, err := log.List(context.Background(), audit.Filter{ActorID: &actor, BeforeAt: &page[1].At, BeforeID: page[1].ID, Limit: 10})
	if err != nil || len(rest) != 1 || rest[0].Target.Name != "web" {
		t.Fatalf("second page: %+v %v", rest, err)
	}
	kind := "user"
	sys, err := log.List(context.Background(), audit.Filter{TargetKind: &kind, Limit: 10})
	if err != nil || len(sys) != 1 || sys[0].Actor.Kind != "system" || sys[0].Actor.ID != uuid.Nil || sys[0].Detail != nil {
		t.Fatalf("the command's entry: %+v %v", sys, err)
	}
}
