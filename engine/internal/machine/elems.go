package machine

import (
	"strconv"
	"sync/atomic"

	"github.com/sdods/sdods/engine/internal/syntax"
)

// Element paths. Rules read the same members of a list's elements again and again: each rule on
// a typed field of a list entity reads the field in every element, a rule that compares the
// elements with each other reads a member of every element once per element, and several rules
// read the same member. A path under the elements of a memoized list path (see Path) is an Elem;
// when it has more than one reader, its value in element i is read once per evaluation and kept,
// as a memoized path's is. Readers are counted at load: a rule checking a typed field (see
// eval), a read in an expression, counted twice when its iteration runs more than once per
// evaluation. A kept value is the value a read would give, and reads charge no budget either way.

// Elem is a path under the elements of a memoized list path: its parent path (nil for a step
// from the element) and the last step.
type Elem struct {
	id      int
	parent  *Elem
	seg     segment
	readers atomic.Int32
}

// Elem returns the element path segs under the elements of list, counting one more reader of
// it; nil when list is nil or segs empty.
func (u *Unit) Elem(list *Path, segs []string) *Elem { return u.elem(list, segs, 1, false) }

// elem returns the element path segs under the elements of list, counting weight more readers
// of it, and of the paths it is read through when prefixes.
func (u *Unit) elem(list *Path, segs []string, weight int32, prefixes bool) *Elem {
	if list == nil || len(segs) == 0 {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.elems == nil {
		u.elems = map[string]*Elem{}
	}
	var e *Elem
	key := strconv.Itoa(list.id)
	for i, s := range segs {
		key += "\x00" + s
		q := u.elems[key]
		if q == nil {
			q = &Elem{id: u.nelem, parent: e, seg: segment{key: s, index: asIndex(s)}}
			u.elems[key] = q
			u.nelem++
		}
		if prefixes || i == len(segs)-1 {
			q.readers.Add(weight)
		}
		e = q
	}
	return e
}

// Shared reports whether the values of e are kept within an evaluation: it has more than one
// reader.
func (e *Elem) Shared() bool { return e.readers.Load() > 1 }

// Elem returns the value of e in element i, el, of its list (as Value gave it) in the
// evaluation Begin started.
func (m *Machine) Elem(e *Elem, i int, el any) any {
	if v, ok := m.rt.kept(e.id, i); ok {
		return v
	}
	return m.rt.readElem(e, i, el)
}

// elemSpan is where the values of an element path kept in an evaluation (of generation gen)
// are: arena[off:off+n], by element index, unread{} for an element not read yet, in a region
// of the arena with room for size.
type elemSpan struct {
	gen          uint32
	off, n, size int
}

// unread marks an element whose value is not kept (yet).
type unread struct{}

// kept returns the value of element path id in element i when it is kept. It inlines: a kept
// value costs a few loads.
func (rt *runtime) kept(id, i int) (any, bool) {
	if t := rt.elems; id < len(t) {
		if x := &t[id]; x.gen == rt.gen && i < x.n {
			v := rt.arena[x.off+i]
			_, no := v.(unread)
			return v, !no
		}
	}
	return nil, false
}

// readElem reads e in element i, el, when it is not kept: through its parent, and keeps it
// when it is shared.
func (rt *runtime) readElem(e *Elem, i int, el any) any {
	base := el
	if p := e.parent; p != nil {
		var ok bool
		if base, ok = rt.kept(p.id, i); !ok {
			base = rt.readElem(p, i, el)
		}
	}
	v := e.seg.step(base)
	if e.Shared() {
		rt.keep(e.id, i, v)
	}
	return v
}

// keep keeps v as the value of element path id in element i. End clears the arena with the
// memo, which the list the element is of was read through (values are not kept otherwise).
func (rt *runtime) keep(id, i int, v any) {
	if rt.memoHigh == 0 {
		return
	}
	if id >= len(rt.elems) {
		rt.elems = append(rt.elems, make([]elemSpan, id+1-len(rt.elems))...)
	}
	x := &rt.elems[id]
	if x.gen != rt.gen {
		*x = elemSpan{gen: rt.gen, off: len(rt.arena)}
	}
	if i >= x.size {
		// a larger region: in place when it is the last one, else at the end
		size := max(2*(i+1), 8)
		off := x.off
		if off+x.size != len(rt.arena) {
			off = len(rt.arena)
		}
		rt.reserve(off + size)
		if off != x.off {
			copy(rt.arena[off:], rt.arena[x.off:x.off+x.n])
			x.off = off
		}
		x.size = size
	}
	for j := x.n; j < i; j++ {
		rt.arena[x.off+j] = unread{}
	}
	x.n = max(x.n, i+1)
	rt.arena[x.off+i] = v
}

// reserve makes the arena n values long, or longer.
func (rt *runtime) reserve(n int) {
	if n <= len(rt.arena) {
		return
	}
	if n > cap(rt.arena) {
		a := make([]any, len(rt.arena), max(n, 2*cap(rt.arena)))
		copy(a, rt.arena)
		clear(rt.arena) // nothing of the evaluation stays reachable from the old one
		rt.arena = a
	}
	rt.arena = rt.arena[:n]
}

// listVar is the variable of an iteration over the elements of a memoized list path: paths
// under it are element paths, read with the element's index, which the iteration stores in the
// frame's nums at the variable's slot when indexed (the locals hold the element there).
type listVar struct {
	list    *Path
	nested  bool // the iteration may run more than once per evaluation
	indexed bool // some read in the body needs the index
}

// listOf returns the list path the expression n, compiled in scope sc of the frame of a
// program, reads; nil when it is no memoized path.
func (c *compiler) listOf(n *syntax.Expr, sc *scope) *Path {
	if !c.unit.on(ElemPaths) || c.cur != nil {
		return nil
	}
	_, p, _ := c.rootVariable(n, sc)
	return p
}

// elemRead returns the node that reads the element path e under the list variable in slot.
// (Not inlined, so that its closures are compiled with what they call inlined.)
//
//go:noinline
func elemRead(ptr string, e *Elem, slot int) *node {
	if e.parent == nil && e.seg.index < 0 {
		// a member of the element, read in place when it is read once
		key := e.seg.key
		return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			el := fr.locals[slot]
			if !e.Shared() {
				if m, ok := el.(map[string]any); ok {
					return m[key], nil
				}
				return nil, nil
			}
			i := int(fr.nums[slot])
			if v, ok := fr.rt.kept(e.id, i); ok {
				return v, nil
			}
			return fr.rt.readElem(e, i, el), nil
		}}
	}
	return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		i := int(fr.nums[slot])
		if v, ok := fr.rt.kept(e.id, i); ok {
			return v, nil
		}
		return fr.rt.readElem(e, i, fr.locals[slot]), nil
	}}
}
