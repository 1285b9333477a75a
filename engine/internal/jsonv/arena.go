package jsonv

import (
	"strings"
	"unsafe"
)

// Arena is storage a Scanner decodes values into and that its owner reuses from one text to the
// next (Reset): maps, the backing of lists, and the slabs strings and numbers are boxed in. A
// scanner without one allocates each text's values anew, as values may outlive the text; with
// one, the owner promises that no value decoded before a Reset is read after it, except through
// Detach, which copies a value out of the arena. Strings and member names are then parts of a
// borrowed text rather than copies (see Borrow): the owner also promises that nothing decoded is
// read once the text may change, except through Detach. Objects and lists made per request are most of
// what a decoder allocates, and each allocation brings the collector nearer.
type Arena struct {
	free, made []map[string]any // maps ready for reuse; maps handed out since the last Reset
	anys       []any            // the backing of lists: each list is a part of it
	heads      [][]any          // the slab lists are boxed in (see boxList)
	strs       []string         // the slab strings are boxed in (see Scanner.boxString)
	nums       []float64        // and numbers
}

// Arena limits: larger storage is dropped rather than kept for the next text.
const (
	arenaMapMembers = 8       // a map with more members is not reused (it holds more than a group)
	arenaMaps       = 64      // maps kept for reuse
	arenaSlab       = 1 << 10 // values of a kept slab or list backing
)

// Use makes sc decode into a: maps, lists and boxes come from a until the scanner is released.
func (sc *Scanner) Use(a *Arena) {
	sc.arena = a
	sc.strs, sc.nums = a.strs[:0], a.nums[:0]
}

// takeSlabs gives the slabs sc boxed into back to its arena, on Release: the last (largest) of
// each is kept for the next text.
func (sc *Scanner) takeSlabs() {
	a := sc.arena
	a.strs, a.nums = nil, nil
	if cap(sc.strs) <= arenaSlab {
		a.strs = sc.strs
	}
	if cap(sc.nums) <= arenaSlab {
		a.nums = sc.nums[:0]
	}
}

// newMap returns an empty map for Object: one of the arena's when the scanner has one.
func (sc *Scanner) newMap() map[string]any {
	a := sc.arena
	if a == nil {
		return map[string]any{}
	}
	var m map[string]any
	if n := len(a.free); n > 0 {
		m = a.free[n-1]
		a.free[n-1] = nil
		a.free = a.free[:n-1]
	} else {
		m = make(map[string]any, arenaMapMembers)
	}
	a.made = append(a.made, m)
	return m
}

// newList returns a list of the n values items, in the arena's backing when the scanner has one.
func (sc *Scanner) newList(items []any) []any {
	a, n := sc.arena, len(items)
	if a == nil {
		out := make([]any, n)
		copy(out, items)
		return out
	}
	if cap(a.anys)-len(a.anys) < n {
		// a new backing: lists in the old one stay as they are until Reset
		a.anys = make([]any, 0, max(16, 2*cap(a.anys), n))
	}
	k := len(a.anys)
	a.anys = append(a.anys, items...)
	return a.anys[k : k+n : k+n]
}

// listType is the type word of []any in an interface value.
var listType = typeOf([]any(nil))

// boxList returns l as an interface value, as boxString does a string: in the arena's slab
// of list headers when the scanner has one (any(l) allocates the header).
func (sc *Scanner) boxList(l []any) (v any) {
	a := sc.arena
	if a == nil {
		return l
	}
	if len(a.heads) == cap(a.heads) {
		a.heads = make([][]any, 0, max(slab, 2*cap(a.heads)))
	}
	a.heads = append(a.heads, l)
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = listType, unsafe.Pointer(&a.heads[len(a.heads)-1])
	return v
}

// Reset makes everything decoded into a since the last Reset storage for the next text: maps
// emptied, lists and boxes overwritten. Nothing decoded before may be read after (see Detach).
func (a *Arena) Reset() {
	for _, m := range a.made {
		if len(m) <= arenaMapMembers && len(a.free) < arenaMaps {
			clear(m)
			a.free = append(a.free, m)
		}
	}
	clear(a.made)
	if cap(a.made) > arenaSlab {
		a.made = nil
	}
	a.made = a.made[:0]
	clear(a.strs) // (parts of the text: the slab would keep it from the collector)
	a.strs = a.strs[:0]
	if cap(a.anys) > arenaSlab {
		a.anys = nil
	}
	a.anys = a.anys[:0]
	clear(a.heads)
	if cap(a.heads) > arenaSlab {
		a.heads = nil
	}
	a.heads = a.heads[:0]
}

// Detach returns v, a value decoded into an arena (or computed from such values), as a value
// that no longer shares storage with it: maps and lists are copied, strings and numbers boxed
// anew. (Strings themselves are copies of the text already: see Scanner.Keep.)
func Detach(v any) any {
	switch t := v.(type) {
	case string:
		return strings.Clone(t) // (perhaps part of the text: copied, and boxed anew)
	case float64:
		return any(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[strings.Clone(k)] = Detach(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = Detach(x)
		}
		return out
	}
	return v
}
