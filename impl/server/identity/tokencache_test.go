package identity_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/identity"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestTokenCacheRevocation checks the bound on a cached token: a change made through the
// process that caches it takes effect at once; one made by another process sharing the database
// within identity.TokenCacheTTL.
func TestTokenCacheRevocation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	here, err := identity.New(st, identity.DefaultThrottle)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := identity.New(st, identity.DefaultThrottle) // another server on the same database
	if err != nil {
		t.Fatal(err)
	}
	var offset atomic.Int64
	identity.SetTokenClock(here, func() time.Time { return time.Now().Add(time.Duration(offset.Load())) })
	admin, err := here.CreateUser(ctx, "root@example.com", "Root", password, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		change func(t *testing.T, user, token uuid.UUID)
		// afterTTL: the change is seen only once the cached principal is older than the TTL.
		afterTTL bool
	}{
		{"revoked here", func(t *testing.T, user, token uuid.UUID) {
			if err := here.RevokeToken(ctx, user, false, token); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"user disabled here", func(t *testing.T, user, _ uuid.UUID) {
			if _, err := here.UpdateUser(ctx, user, identity.UserChange{Disabled: ptr(true)}); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"password changed here", func(t *testing.T, user, _ uuid.UUID) {
			if _, err := here.ChangePassword(ctx, user, uuid.Nil, password, password+" again"); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"revoked by another process", func(t *testing.T, user, token uuid.UUID) {
			if err := elsewhere.RevokeToken(ctx, admin.ID, true, token); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"user disabled by another process", func(t *testing.T, user, _ uuid.UUID) {
			if _, err := elsewhere.UpdateUser(ctx, user, identity.UserChange{Disabled: ptr(true)}); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			offset.Store(0)
			u, err := here.CreateUser(ctx, uuid.NewString()+"@example.com", "U", password, false)
			if err != nil {
				t.Fatal(err)
			}
			created, err := here.CreateToken(ctx, u.ID, "ci", []string{"runs:read"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second one from the cache
				if p, err := here.AuthenticateToken(ctx, created.Secret); err != nil || p == nil || p.UserID != u.ID.String() {
					t.Fatalf("a live token: %+v %v", p, err)
				}
			}
			c.change(t, u.ID, created.Token.ID)
			p, err := here.AuthenticateToken(ctx, created.Secret)
			if err != nil {
				t.Fatal(err)
			}
			if !c.afterTTL {
				if p != nil {
					t.Fatalf("the token still works after the change: %+v", p)
				}
				return
			}
			if p == nil {
				t.Fatal("the cache was not used: another process's change seen at once") // the test would prove nothing
			}
			offset.Store(int64(identity.TokenCacheTTL))
			if p, err := here.AuthenticateToken(ctx, created.Secret); err != nil || p != nil {
				t.Fatalf("the token still works %s after another process's change: %+v %v", identity.TokenCacheTTL, p, err)
			}
		})
	}
}

// TestTokenCacheGivesEachRequestItsOwnPrincipal: a request that changes its principal does not
// change the next request's.
func TestTokenCacheGivesEachRequestItsOwnPrincipal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := mustService(t)
	u, err := svc.CreateUser(ctx, "ada@example.com", "Ada", password, false)
	if err != nil {
		t.Fatal(err)
	}
	created, err := svc.CreateToken(ctx, u.ID, "ci", []string{"runs:read"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.AuthenticateToken(ctx, created.Secret)
	if err != nil || p == nil {
		t.Fatal(p, err)
	}
	p.InstanceAdmin, p.UserID = true, uuid.NewString()
	again, err := svc.AuthenticateToken(ctx, created.Secret)
	if err != nil || again == nil || again.InstanceAdmin || again.UserID != u.ID.String() {
		t.Fatalf("the cached principal was changed by a request: %+v %v", again, err)
	}
}
