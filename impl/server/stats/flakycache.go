package stats

import (
	"container/list"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
)

// FlakyCacheEntries bounds the flaky answers kept in memory (docs/stats.md, "Caching").
const FlakyCacheEntries = 256

// flakyCache keeps the last FlakyCacheEntries flaky answers read from the rollup, each with the
// statistics versions of the projects it covered (StatsVersions). The versions live in the
// database and change in the transaction that changes the rollup, so an answer is served only
// while no process has changed what it was computed from.
type flakyCache struct {
	mu      sync.Mutex
	max     int
	order   *list.List // front: most recently used
	entries map[string]*list.Element
	hits    atomic.Int64
}

type flakyEntry struct {
	key, versions string
	items         []serverapi.FlakyScenario
	more          bool
	// body is the page as the API encodes it, set by the first request that encodes it: the key
	// includes the offset and limit, so the page's cursor is the same for every request.
	body atomic.Pointer[[]byte]
}

// FlakyPage is one page of Flaky. Body is nil for an answer that is not cached; otherwise it holds
// the encoded page once some request stored it, shared by the requests served from the entry.
type FlakyPage struct {
	Items []serverapi.FlakyScenario
	More  bool
	Body  *atomic.Pointer[[]byte]
}

func newFlakyCache(max int) *flakyCache {
	return &flakyCache{max: max, order: list.New(), entries: map[string]*list.Element{}}
}

// get answers the cached page for key when it was computed at versions. The slice is a copy: the
// caller may append to or reorder it.
func (c *flakyCache) get(key, versions string) (FlakyPage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return FlakyPage{}, false
	}
	v := e.Value.(*flakyEntry)
	if v.versions != versions {
		return FlakyPage{}, false
	}
	c.order.MoveToFront(e)
	c.hits.Add(1)
	return FlakyPage{Items: slices.Clone(v.items), More: v.more, Body: &v.body}, true
}

// put stores the page computed at versions and answers it with its entry's body memo.
func (c *flakyCache) put(key, versions string, items []serverapi.FlakyScenario, more bool) FlakyPage {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := &flakyEntry{key: key, versions: versions, items: slices.Clone(items), more: more}
	if e, ok := c.entries[key]; ok {
		e.Value = v
		c.order.MoveToFront(e)
	} else {
		c.entries[key] = c.order.PushFront(v)
	}
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.entries, last.Value.(*flakyEntry).key)
	}
	return FlakyPage{Items: items, More: more, Body: &v.body}
}

func (c *flakyCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// flakyKey is everything a rollup flaky answer depends on besides the versions: who asks (the
// workspaces they see), the filters, the window's days and the page.
func flakyKey(sc Scope, since, until time.Time, fq FlakyQuery) string {
	var b strings.Builder
	if sc.AllWorkspaces {
		b.WriteString("all")
	} else {
		ids := slices.Clone(sc.WorkspaceIDs)
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
		for _, id := range ids {
			b.WriteString(id.String())
			b.WriteByte(',')
		}
	}
	opt := func(s *string) string {
		if s == nil {
			return "-"
		}
		return "=" + *s
	}
	ws := "-"
	if sc.Workspace != nil {
		ws = sc.Workspace.String()
	}
	fmt.Fprintf(&b, "|%s|%s|%s|%s|%d|%t|%s|%t|%d|%d", ws, opt(sc.Project), since.Format(time.DateOnly), until.Format(time.DateOnly),
		fq.MinResults, fq.FlakyOnly, fq.Sort, fq.Descending, fq.Offset, fq.Limit)
	return b.String()
}

// FlakyCacheHits counts the flaky answers served from the cache (tests check it is not dead).
func (s *Service) FlakyCacheHits() int64 { return s.flaky.hits.Load() }
