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
		out = append(out, m.def)
	}
	return out
}

type match struct {
	def  Definition
	args []Arg
}

func matchAll(text string) []match {
	c := catalogOnce()
	text = strings.TrimSpace(text)
	var out []match
	for i, e := range c.exprs {
		if args, ok := e.Match(text); ok {
			d := c.defs[i]
			d.Parameters = slices.Clone(d.Parameters)
			d.Examples = slices.Clone(d.Examples)
			out = append(out, match{def: d, args: args})
		}
	}
	return out
}
