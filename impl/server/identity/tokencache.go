package identity

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/authz"
)

// TokenCacheTTL bounds how long an API token's principal is reused without asking the database.
// A token revoked, or a user disabled, changed or given a new password, through this process
// stops working at once (the cache is emptied when the change commits); through another process
// sharing the database (a second server, the command line), within this long.
const TokenCacheTTL = 5 * time.Second

// tokenCacheMax bounds the cache's memory; when full it is emptied.
const tokenCacheMax = 4096

// tokenCache keeps the principals of API tokens recently authenticated, keyed by the secret's
// SHA-256 (the plaintext token is never kept). It saves a statement per request (the token and
// its user), which for the small read endpoints costs as much as the endpoint's own query.
type tokenCache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]tokenEntry
	// gen counts invalidations: a lookup that began before one does not fill the cache with
	// what it read, which may predate the change.
	gen uint64
	now func() time.Time
	// touched is when this process last wrote each token's last use: once a minute per token,
	// by one request. Without it every request that read the row before the write committed
	// wrote it too, one after the other behind the row's lock, each waiting for a WAL flush: a
	// stall of all concurrent requests of a token once a minute.
	touched map[uuid.UUID]time.Time
}

type tokenEntry struct {
	principal authz.Principal
	until     time.Time // cached until (TTL), never past the token's own expiry
}

func newTokenCache() *tokenCache {
	return &tokenCache{entries: map[[sha256.Size]byte]tokenEntry{}, touched: map[uuid.UUID]time.Time{}, now: time.Now}
}

// get returns a copy of the live cached principal of the token whose hash is key, and the
// generation to pass to put after a miss.
func (c *tokenCache) get(key [sha256.Size]byte) (*authz.Principal, uint64) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, c.gen
	}
	if !now.Before(e.until) {
		delete(c.entries, key)
		return nil, c.gen
	}
	p := e.principal // a copy: a request may not change what the next one gets
	return &p, c.gen
}

// put keeps p for the token whose hash is key, unless the cache was invalidated since gen.
func (c *tokenCache) put(key [sha256.Size]byte, p *authz.Principal, gen uint64) {
	until := c.now().Add(TokenCacheTTL)
	if !p.ExpiresAt.IsZero() && p.ExpiresAt.Before(until) {
		until = p.ExpiresAt
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.entries) >= tokenCacheMax {
		clear(c.entries)
	}
	c.entries[key] = tokenEntry{principal: *p, until: until}
}

// claimTouch reports whether the caller should write the token's last use (last read from the
// database): when it is older than sessionTouchEvery and no other request of this process wrote
// it since.
func (c *tokenCache) claimTouch(id uuid.UUID, lastUsed *time.Time) bool {
	now := c.now()
	if lastUsed != nil && now.Sub(*lastUsed) <= sessionTouchEvery {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if at, ok := c.touched[id]; ok && now.Sub(at) <= sessionTouchEvery {
		return false
	}
	if len(c.touched) >= tokenCacheMax {
		clear(c.touched)
	}
	c.touched[id] = now
	return true
}

// invalidate forgets every cached token; called after a change to tokens or users commits.
func (c *tokenCache) invalidate() {
	c.mu.Lock()
	c.gen++
	clear(c.entries)
	c.mu.Unlock()
}
