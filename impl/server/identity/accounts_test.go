package identity_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/identity"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

func mustService(t *testing.T) *identity.Service {
	t.Helper()
	st, _ := storetest.Open(t)
	svc, err := identity.New(st, identity.DefaultThrottle)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func code(err error) apierr.Code { return apierr.From(err).Code }

func ptr[T any](v T) *T { return &v }

const password = "correct horse battery staple"

func TestUsersAndTheLastInstanceAdmin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := mustService(t)
	admin, err := svc.CreateUser(ctx, " ada@example.com ", "Ada", password, true)
	if err != nil || admin.Email != "ada@example.com" || !admin.InstanceAdmin {
		t.Fatalf("create: %+v %v", admin, err)
	}
	if _, err := svc.CreateUser(ctx, "ada@example.com", "Ada again", password, false); code(err) != apierr.Conflict {
		t.Fatalf("an email twice: %v", err)
	}
	if _, err := svc.CreateUser(ctx, "bob@example.com", "Bob", "short", false); err == nil {
		t.Fatal("a short password was accepted")
	}
	if _, err := svc.UpdateUser(ctx, admin.ID, identity.UserChange{InstanceAdmin: ptr(false)}); code(err) != apierr.Conflict {
		t.Fatalf("demote the last admin: %v", err)
	}
	if _, err := svc.UpdateUser(ctx, admin.ID, identity.UserChange{Disabled: ptr(true)}); code(err) != apierr.Conflict {
		t.Fatalf("disable the last admin: %v", err)
	}
	if _, err := svc.UpdateUser(ctx, uuid.New(), identity.UserChange{DisplayName: ptr("x")}); code(err) != apierr.NotFound {
		t.Fatalf("an unknown user: %v", err)
	}
	// Two admins demoting each other at once: one of them stays.
	bob, err := svc.CreateUser(ctx, "bob@example.com", "Bob", password, true)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, id := range []uuid.UUID{admin.ID, bob.ID} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = svc.UpdateUser(ctx, id, identity.UserChange{InstanceAdmin: ptr(false)})
		}()
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("concurrent demotions: %v, %v; want exactly one refused", errs[0], errs[1])
	}
	admins, err := svc.ListUsers(ctx, identity.UserFilter{Limit: 10})
	n := 0
	for _, u := range admins {
		if u.InstanceAdmin {
			n++
		}
	}
	if err != nil || n != 1 {
		t.Fatalf("%d admins left (%v)", n, err)
	}
	u, err := svc.UpdateProfile(ctx, bob.ID, ptr("Robert"), ptr("ADA@example.com"))
	if code(err) != apierr.Conflict {
		t.Fatalf("take another's email (case-insensitively): %+v %v", u, err)
	}
	if u, err = svc.UpdateProfile(ctx, bob.ID, ptr("Robert"), nil); err != nil || u.DisplayName != "Robert" {
		t.Fatalf("profile: %+v %v", u, err)
	}
}

func TestSessionsAndTokensOfAUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := mustService(t)
	u, err := svc.CreateUser(ctx, "ada@example.com", "Ada", password, false)
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.CreateUser(ctx, "bob@example.com", "Bob", password, false)
	if err != nil {
		t.Fatal(err)
	}
	var sessions []identity.Session
	for range 3 {
		res, err := svc.Login(ctx, "ada@example.com", password, identity.ClientMeta{UserAgent: "test"})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, res.Session)
	}
	if err := svc.RevokeSession(ctx, other.ID, sessions[0].ID); code(err) != apierr.NotFound {
		t.Fatalf("revoke another user's session: %v", err)
	}
	if err := svc.RevokeSession(ctx, u.ID, sessions[0].ID); err != nil {
		t.Fatal(err)
	}
	n, err := svc.RevokeOtherSessions(ctx, u.ID, sessions[2].ID)
	if err != nil || n != 1 {
		t.Fatalf("revoke others: %d %v", n, err)
	}
	live, err := svc.Sessions(ctx, u.ID)
	if err != nil || len(live) != 1 || live[0].ID != sessions[2].ID {
		t.Fatalf("sessions left: %+v %v", live, err)
	}

	created, err := svc.CreateToken(ctx, u.ID, "ci", []string{"runs:write"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.RevokeToken(ctx, other.ID, false, created.Token.ID); code(err) != apierr.NotFound {
		t.Fatalf("revoke another user's token: %v", err)
	}
	tokens, err := svc.Tokens(ctx, u.ID, identity.TokenPage{Limit: 10})
	if err != nil || len(tokens) != 1 || tokens[0].Name != "ci" {
		t.Fatalf("tokens: %+v %v", tokens, err)
	}
	if err := svc.RevokeToken(ctx, other.ID, true, created.Token.ID); err != nil {
		t.Fatalf("an instance admin revokes: %v", err)
	}
	if tokens, _ = svc.Tokens(ctx, u.ID, identity.TokenPage{Limit: 10}); len(tokens) != 0 {
		t.Fatalf("a revoked token is listed: %+v", tokens)
	}
}
