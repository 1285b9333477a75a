package identity

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/authz"
)

func TestTokenCacheBounds(t *testing.T) {
	now := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	newCache := func() *tokenCache {
		c := newTokenCache()
		c.now = func() time.Time { return now }
		return c
	}
	key := sha256.Sum256([]byte("amx_secret"))
	t.Run("a lookup begun before an invalidation fills nothing", func(t *testing.T) {
		c := newCache()
		_, gen := c.get(key)
		c.invalidate() // a revocation commits while the lookup reads the old row
		c.put(key, &authz.Principal{UserID: "u"}, gen)
		if p, _ := c.get(key); p != nil {
			t.Fatalf("a principal read before the revocation was cached: %+v", p)
		}
	})
	t.Run("kept no longer than the TTL", func(t *testing.T) {
		c := newCache()
		_, gen := c.get(key)
		c.put(key, &authz.Principal{UserID: "u"}, gen)
		c.now = func() time.Time { return now.Add(TokenCacheTTL - time.Nanosecond) }
		if p, _ := c.get(key); p == nil {
			t.Fatal("not cached")
		}
		c.now = func() time.Time { return now.Add(TokenCacheTTL) }
		if p, _ := c.get(key); p != nil {
			t.Fatal("kept past the TTL")
		}
	})
	t.Run("kept no longer than the token lives", func(t *testing.T) {
		c := newCache()
		_, gen := c.get(key)
		c.put(key, &authz.Principal{UserID: "u", ExpiresAt: now.Add(time.Second)}, gen)
		c.now = func() time.Time { return now.Add(time.Second) }
		if p, _ := c.get(key); p != nil {
			t.Fatal("an expired token was served from the cache")
		}
	})
	t.Run("bounded in size", func(t *testing.T) {
		c := newCache()
		for i := range tokenCacheMax + 10 {
			c.put(sha256.Sum256([]byte{byte(i), byte(i >> 8)}), &authz.Principal{}, c.gen)
		}
		if len(c.entries) > tokenCacheMax {
			t.Fatalf("%d entries", len(c.entries))
		}
	})
}

// TestTokenTouchedOncePerMinute: of the requests that read a token's stale last use at once,
// one writes it; the next write comes a minute later.
func TestTokenTouchedOncePerMinute(t *testing.T) {
	now := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	c := newTokenCache()
	c.now = func() time.Time { return now }
	id := uuid.New()
	stale := now.Add(-2 * sessionTouchEvery)
	claims := 0
	for range 16 {
		if c.claimTouch(id, &stale) {
			claims++
		}
	}
	if claims != 1 {
		t.Fatalf("%d of 16 concurrent requests write the last use", claims)
	}
	fresh := now.Add(2*sessionTouchEvery - time.Second)
	c.now = func() time.Time { return now.Add(2 * sessionTouchEvery) }
	if c.claimTouch(id, &fresh) {
		t.Fatal("a fresh last use written again")
	}
	if !c.claimTouch(id, nil) {
		t.Fatal("a token never used, a minute after the last write, not written")
	}
}
