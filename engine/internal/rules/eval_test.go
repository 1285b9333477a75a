package rules

import (
	"math"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/ruleset"
)

// TestInView compares inView, which compares only the levels a rule names, with the rule as the
// specification states it: rules scoped project or module are evaluated under every view;
// otherwise every location level from page down to the rule's scope that both the view and the
// rule name must agree.
func TestInView(t *testing.T) {
	names := []string{"", "a", "b"}
	var locs []Location
	for _, p := range names {
		for _, s := range names {
			for _, c := range names {
				for _, k := range names {
					locs = append(locs, Location{Page: p, Screen: s, Section: c, Component: k})
				}
			}
		}
	}
	want := func(v *Location, level int, l *Location) bool {
		if level < 2 {
			return true
		}
		for i := 2; i <= level; i++ {
			a, b := v.get(i), l.get(i)
			if a != "" && b != "" && a != b {
				return false
			}
		}
		return true
	}
	for level := 0; level < 6; level++ {
		for i := range locs {
			l := &locs[i]
			scope := scopeOf(level, l)
			for j := range locs {
				v := &locs[j]
				view := [4]string{v.Page, v.Screen, v.Section, v.Component}
				if got := inView(&view, scope); got != want(v, level, l) {
					t.Fatalf("level %d rule %+v view %+v: %v", level, *l, *v, got)
				}
			}
		}
	}
}

// TestLocaleChains: the chains resolved at load for no locale and the catalogs' tags, and the
// one chainOf finds for any other tag, are those a request's locale resolves to.
func TestLocaleChains(t *testing.T) {
	var cats []*catalog
	p := &Program{defaultLower: "en", catalogs: map[string]*catalog{}}
	for i, tag := range []string{"en", "fr", "fr-CA", "de-CH-1996"} {
		c := &catalog{tag: tag, index: i, messages: map[string][]ruleset.Part{}}
		if tag == "fr" {
			c.messages[diag.RuleFailed] = []ruleset.Part{{Text: "échec"}}
		}
		cats = append(cats, c)
		p.catalogs[strings.ToLower(tag)] = c
	}
	p.resolveChains(cats)
	r := &run{p: p}
	for _, tag := range []string{"", "en", "EN", "en-US", "fr", "FR", "fr-CA", "fr-ca", "FR-ca", "fr-CA-x-y",
		"de", "de-CH", "de-CH-1996", "DE-ch-1996", "it", "zz-Latn", "fr-", "-", "--fr", "fŕ", "fr-ÇA",
		"fr-CA-" + strings.Repeat("x", 58), "fr-CA-" + strings.Repeat("x", 59)} {
		r.locales(tag)
		var want chain
		want.resolve(p, tag)
		got := *r.chain
		if got.cats != want.cats || got.n != want.n || got.hasFailed != want.hasFailed || len(got.ruleFailed) != len(want.ruleFailed) ||
			got.failedAt != want.failedAt {
			t.Errorf("%q: chain %+v, want %+v", tag, got, want)
		}
	}
}

// appendText writes a message parameter as Text does, numbers of every kind included.
func TestAppendText(t *testing.T) {
	vals := []any{nil, "s", "", true, false, 0.0, math.Copysign(0, -1), 7.0, -42.0, 1e15, 1e21, 1.5, -0.25, 0.1 + 0.2,
		1.0 / 3, 123.45, 1e-7, 5e-324, math.MaxFloat64, math.Inf(1), math.NaN(),
		[]any{1.0, "a"}, map[string]any{"b": 2.5, "a": nil}}
	for _, v := range vals {
		if got, want := string(appendText([]byte("p:"), v)), "p:"+Text(v); got != want {
			t.Errorf("appendText(%#v) = %q, want %q", v, got, want)
		}
	}
}
