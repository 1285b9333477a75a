// Package steplib is the built-in step library: every step is declared once as data (a Definition
// with its Cucumber Expression, parameters and examples) and implemented against HTTP and a headless
// Chromium driven through the DevTools protocol. Match tells which definitions a step text matches;
// a Session executes steps for one scenario.
package steplib

import (
	"slices"
	"sort"
	"strings"
	"sync"
)

// Param describes one parameter of a step: those of the pattern in order, then a docstring or a
// data table when the step takes one.
type Param struct {
	Name string
	// Type is one of string, int, float, selector, url, json, docstring, datatable.
	Type        string
	Description string
}

// Definition is one built-in step.
type Definition struct {
	// ID is stable across releases, e.g. "http.request".
	ID string
	// Category is "http", "browser", "data" or "process".
	Category string
	// Keyword is "Given", "When", "Then" or "*" (any); matching ignores it.
	Keyword string
	// Pattern is a Cucumber Expression.
	Pattern     string
	Parameters  []Param
	Description string
	// Examples are Gherkin step lines (keyword included); a docstring or table follows on the next lines.
	Examples []string
}

// compiled is the catalog with its expressions compiled once.
type compiled struct {
	defs  []Definition
	exprs []*Expression
}

var catalogOnce = sync.OnceValue(func() compiled {
	defs := slices.Clone(catalog)
	sort.Slice(defs, func(i, j int) bool { return defs[i].ID < defs[j].ID })
	c := compiled{defs: defs, exprs: make([]*Expression, len(defs))}
	for i, d := range defs {
		c.exprs[i] = MustCompileExpression(d.Pattern)
	}
	return c
})

// Definitions returns all built-in step definitions, sorted by ID; the caller may modify the slice.
func Definitions() []Definition {
	c := catalogOnce()
	out := make([]Definition, len(c.defs))
	for i, d := range c.defs {
		d.Parameters = slices.Clone(d.Parameters)
		d.Examples = slices.Clone(d.Examples)
		out[i] = d
	}
	return out
}

// Match returns every definition whose pattern matches the whole step text (without its keyword):
// none means the step is undefined, more than one that it is ambiguous.
func Match(text string) []Definition {
	var out []Definition
	for _, m := range matchAll(text) {
		d := m.def
		d.Parameters = slices.Clone(d.Parameters)
		d.Examples = slices.Clone(d.Examples)
		out = append(out, d)
	}
	return out
}

// match is a definition a step text matched, with the arguments it captured. def shares its
// slices with the catalog (read only); args belong to the caller.
type match struct {
	def  Definition
	args []Arg
}

// matchCacheMax bounds the step texts whose matches a matcher keeps. A run's steps repeat (the
// same assertion in every scenario, the same request in every run), while an outline's rows are
// distinct texts each: when the cache is full it starts afresh rather than growing.
const matchCacheMax = 8192

// matcher matches step texts against a compiled catalog and keeps what each text matched: the
// index of each definition, in catalog order, with the captured arguments. Matching does not
// depend on variables (${name} is interpolated in the arguments afterwards), so a text always has
// the same matches; ambiguous and undefined texts are kept like the others.
type matcher struct {
	c     compiled
	limit int
	mu    sync.RWMutex
	memo  map[string][]cachedMatch
}

type cachedMatch struct {
	def  int
	args []Arg
}

func newMatcher(c compiled, limit int) *matcher {
	return &matcher{c: c, limit: limit, memo: map[string][]cachedMatch{}}
}

// stepMatcher is the built-in catalog's matcher.
var stepMatcher = sync.OnceValue(func() *matcher { return newMatcher(catalogOnce(), matchCacheMax) })

// matchAll returns the built-in definitions the step text matches.
func matchAll(text string) []match { return stepMatcher().all(text) }

// all returns the definitions the step text (trimmed) matches, in catalog order, each with its
// own copy of the arguments.
func (m *matcher) all(text string) []match {
	text = strings.TrimSpace(text)
	m.mu.RLock()
	cms, ok := m.memo[text]
	m.mu.RUnlock()
	if !ok {
		cms = m.c.match(text)
		m.mu.Lock()
		if len(m.memo) >= m.limit {
			clear(m.memo)
		}
		m.memo[text] = cms
		m.mu.Unlock()
	}
	if len(cms) == 0 {
		return nil
	}
	out := make([]match, len(cms))
	for i, cm := range cms {
		out[i] = match{def: m.c.defs[cm.def], args: slices.Clone(cm.args)}
	}
	return out
}

// match matches the text against every definition.
func (c compiled) match(text string) []cachedMatch {
	var out []cachedMatch
	for i, e := range c.exprs {
		if args, ok := e.Match(text); ok {
			out = append(out, cachedMatch{def: i, args: args})
		}
	}
	return out
}
