package steplib

import (
	"reflect"
	"strings"
	"testing"
)

// uncached matches a text against every definition of c, as matching did before the cache.
func uncached(c compiled, text string) []match {
	var out []match
	for i, e := range c.exprs {
		if args, ok := e.Match(strings.TrimSpace(text)); ok {
			out = append(out, match{def: c.defs[i], args: args})
		}
	}
	return out
}

// sameMatches fails unless got and want name the same definitions with the same arguments.
func sameMatches(t *testing.T, text string, got, want []match) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%q: %d matches, want %d", text, len(got), len(want))
	}
	for i := range got {
		if got[i].def.ID != want[i].def.ID || got[i].def.Pattern != want[i].def.Pattern {
			t.Fatalf("%q: match %d is %s, want %s", text, i, got[i].def.ID, want[i].def.ID)
		}
		if !reflect.DeepEqual(got[i].args, want[i].args) {
			t.Fatalf("%q: match %d args %#v, want %#v", text, i, got[i].args, want[i].args)
		}
	}
}

// The cached matches of every catalog example, of outline rows, of undefined texts, are those of
// matching against every definition, the first time (a miss) and the second (a hit).
func TestMatchCacheSameAsCatalog(t *testing.T) {
	c := catalogOnce()
	m := newMatcher(c, matchCacheMax)
	var texts []string
	for _, d := range c.defs {
		for _, ex := range d.Examples {
			line, _, _ := strings.Cut(ex, "\n")
			_, text, _ := strings.Cut(strings.TrimSpace(line), " ")
			texts = append(texts, text)
		}
	}
	if len(texts) < 50 {
		t.Fatalf("only %d examples", len(texts))
	}
	// An outline's rows: one text per row.
	for _, row := range []string{"1", "2", "${id}", "-7"} {
		texts = append(texts, `I send a GET request to "/items/`+row+`"`, "the response status is "+row)
	}
	texts = append(texts, "nothing matches this step", "  the response status is 200  ", "", "the response status is 99999999999999999999")
	for _, text := range texts {
		want := uncached(c, text)
		sameMatches(t, text, m.all(text), want)
		sameMatches(t, text, m.all(text), want)
	}
	matched := 0
	for _, text := range texts {
		if len(m.all(text)) == 1 {
			matched++
		}
	}
	if matched < 50 {
		t.Fatalf("only %d texts matched one definition", matched)
	}
}

// Ambiguous texts (several definitions) stay ambiguous from the cache, in catalog order, and an
// undefined text stays undefined.
func TestMatchCacheAmbiguous(t *testing.T) {
	defs := []Definition{
		{ID: "a.any", Pattern: "I wait {int} second(s)"},
		{ID: "b.text", Pattern: "I wait {} seconds"},
		{ID: "c.other", Pattern: "I open {string}"},
	}
	c := compiled{defs: defs, exprs: make([]*Expression, len(defs))}
	for i, d := range defs {
		c.exprs[i] = MustCompileExpression(d.Pattern)
	}
	m := newMatcher(c, 4)
	for range 2 {
		got := m.all("I wait 3 seconds")
		if len(got) != 2 || got[0].def.ID != "a.any" || got[1].def.ID != "b.text" {
			t.Fatalf("ambiguous: %+v", got)
		}
		if got[0].args[0].Value != int64(3) || got[1].args[0].Value != "3" {
			t.Fatalf("args: %#v %#v", got[0].args, got[1].args)
		}
		if got := m.all("I wait 1 second"); len(got) != 1 || got[0].def.ID != "a.any" {
			t.Fatalf("one: %+v", got)
		}
		if got := m.all("I close it"); got != nil {
			t.Fatalf("undefined: %+v", got)
		}
	}
}

// A caller changing its arguments (prepare interpolates them in place) does not change the next
// caller's; and the cache starts afresh at its bound instead of growing.
func TestMatchCacheCopiesAndBounds(t *testing.T) {
	c := catalogOnce()
	m := newMatcher(c, 3)
	text := `I send a GET request to "/users/${id}"`
	first := m.all(text)
	first[0].args[1].Value = "/users/42"
	if again := m.all(text); again[0].args[1].Value != "/users/${id}" {
		t.Fatalf("the cached arguments changed: %#v", again[0].args)
	}
	for i := range 10 {
		m.all("the response status is " + string(rune('0'+i)))
		if n := len(m.memo); n > 3 {
			t.Fatalf("%d texts cached, bound 3", n)
		}
	}
	sameMatches(t, text, m.all(text), uncached(c, text))
}

// Match (the catalog's public face) gives copies: changing them leaves the catalog as it was.
func TestMatchReturnsCopies(t *testing.T) {
	d := Match(`I send a GET request to "/x"`)
	if len(d) != 1 {
		t.Fatalf("%d matches", len(d))
	}
	d[0].Parameters[0].Name = "changed"
	if again := Match(`I send a GET request to "/x"`); again[0].Parameters[0].Name == "changed" {
		t.Fatal("Match returned the catalog's own parameters")
	}
}
