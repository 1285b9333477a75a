package stats

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
)

func TestFlakyCacheIsBoundedAndVersioned(t *testing.T) {
	c := newFlakyCache(2)
	page := []serverapi.FlakyScenario{{Scenario: "a"}}
	c.put("k1", "p:1", page, false)
	if _, ok := c.get("k1", "p:2"); ok {
		t.Fatal("an answer of version 1 served at version 2")
	}
	if got, ok := c.get("k1", "p:1"); !ok || got.Items[0].Scenario != "a" {
		t.Fatal("the answer of version 1 not served at version 1")
	}
	c.put("k2", "p:1", page, true)
	c.get("k1", "p:1") // k1 most recently used: k2 goes next
	c.put("k3", "p:1", page, false)
	if c.len() != 2 {
		t.Fatalf("%d entries, want 2", c.len())
	}
	if _, ok := c.get("k2", "p:1"); ok {
		t.Fatal("the least recently used entry was kept")
	}
	if _, ok := c.get("k1", "p:1"); !ok {
		t.Fatal("the most recently used entry was evicted")
	}
	if c.hits.Load() != 3 {
		t.Fatalf("%d hits, want 3", c.hits.Load())
	}
	// The encoded page is shared by the requests an entry serves, and gone with a new version.
	body := []byte("page")
	c.put("k1", "p:1", page, false).Body.Store(&body)
	if got, _ := c.get("k1", "p:1"); got.Body.Load() != &body {
		t.Fatal("the encoded page is not served with its entry")
	}
	c.put("k1", "p:2", page, false)
	if got, _ := c.get("k1", "p:2"); got.Body.Load() != nil {
		t.Fatal("the encoded page of version 1 is served at version 2")
	}
}

func TestFlakyKeyTellsScopesApart(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	shop, other := "shop", "other"
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	base := func() (Scope, time.Time, time.Time, FlakyQuery) {
		return Scope{WorkspaceIDs: []uuid.UUID{a, b}, Project: &shop}, day, day.AddDate(0, 0, 30),
			FlakyQuery{MinResults: 10, FlakyOnly: true, Sort: "flakyRate", Descending: true, Limit: 50}
	}
	sc, since, until, fq := base()
	ref := flakyKey(sc, since, until, fq)
	swapped := sc
	swapped.WorkspaceIDs = []uuid.UUID{b, a}
	if flakyKey(swapped, since, until, fq) != ref {
		t.Error("the order of the caller's workspaces changes the key")
	}
	variants := map[string]func(*Scope, *time.Time, *time.Time, *FlakyQuery){
		"workspaces": func(s *Scope, _, _ *time.Time, _ *FlakyQuery) { s.WorkspaceIDs = []uuid.UUID{a} },
		"all":        func(s *Scope, _, _ *time.Time, _ *FlakyQuery) { s.AllWorkspaces = true },
		"workspace":  func(s *Scope, _, _ *time.Time, _ *FlakyQuery) { s.Workspace = &a },
		"project":    func(s *Scope, _, _ *time.Time, _ *FlakyQuery) { s.Project = &other },
		"no project": func(s *Scope, _, _ *time.Time, _ *FlakyQuery) { s.Project = nil },
		"since":      func(_ *Scope, since, _ *time.Time, _ *FlakyQuery) { *since = since.AddDate(0, 0, 1) },
		"until":      func(_ *Scope, _, until *time.Time, _ *FlakyQuery) { *until = until.AddDate(0, 0, 1) },
		"min":        func(_ *Scope, _, _ *time.Time, q *FlakyQuery) { q.MinResults = 2 },
		"flakyOnly":  func(_ *Scope, _, _ *time.Time, q *FlakyQuery) { q.FlakyOnly = false },
		"sort":       func(_ *Scope, _, _ *time.Time, q *FlakyQuery) { q.Sort = "health" },
		"order":      func(_ *Scope, _, _ *time.Time, q *FlakyQuery) { q.Descending = false },
		"offset":     func(_ *Scope, _, _ *time.Time, q *FlakyQuery) { q.Offset = 50 },
		"limit":      func(_ *Scope, _, _ *time.Time, q *FlakyQuery) { q.Limit = 10 },
	}
	for name, change := range variants {
		sc, since, until, fq := base()
		change(&sc, &since, &until, &fq)
		if k := flakyKey(sc, since, until, fq); k == ref {
			t.Errorf("%s: same key %s", name, k)
		}
	}
}
