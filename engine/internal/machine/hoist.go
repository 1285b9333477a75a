package machine

// Loop-invariant reads. The body of an iteration often reads a path under a binding of the
// enclosing scope, which stays the same for every element: c.email in
// some(xs, c, filter(xs, d, d.email == c.email)). Such a read charges nothing, cannot fail and
// reads the same value while the binding's slot is unchanged (nothing inside the iteration writes
// it), so it is read once each time the iteration starts, into a hidden slot of the frame, and
// the body reads the slot. A read is hoisted to the outermost iteration inside its binding's
// scope, once per binding and path; it happens whether or not the body runs, which nothing can
// observe.

// loop is an iteration whose body is being compiled: the reads it hoists.
type loop struct {
	at    int // the iteration's variable is names[at] of its body's scopes
	reads []hoisted
	index map[string]int // reads by binding and path
}

// hoisted is one hoisted read, kept in slot: the path segs under local slot from, or under alias
// base when that is not nil; when elem is not nil, the element path under the list variable in
// slot from.
type hoisted struct {
	slot int
	from int
	base *node
	segs []segment
	elem *Elem
}

// hoistInto returns the iteration a read of a path under the binding names[i] is hoisted to:
// the outermost one whose variable is bound inside that binding's scope; nil when there is none.
func (s *scope) hoistInto(i int) *loop {
	for _, lp := range s.loops {
		if lp.at > i {
			return lp
		}
	}
	return nil
}

// enter returns the scope of the body of an iteration whose variable is the last binding of s,
// and the iteration as a loop that hoists reads.
func (s *scope) enter() (*scope, *loop) {
	lp := &loop{at: len(s.names) - 1}
	inner := *s
	inner.loops = append(s.loops[:len(s.loops):len(s.loops)], lp)
	return &inner, lp
}

// read returns the node that reads, in the body of lp, the path with key (its binding and
// path), hoisted as mk describes it the first time, in a hidden slot allocated then.
func (lp *loop) read(ptr, key string, n *int, mk func() hoisted) *node {
	k, ok := lp.index[key]
	if !ok {
		h := mk()
		h.slot = *n
		*n++
		if lp.index == nil {
			lp.index = map[string]int{}
		}
		k = len(lp.reads)
		lp.index[key] = k
		lp.reads = append(lp.reads, h)
	}
	slot := lp.reads[k].slot
	return &node{ptr: ptr, read: true, eval: func(fr *frame) (any, error) { return fr.locals[slot], nil }}
}

// after returns list, evaluated as the iteration starts, followed by the reads lp hoists.
func (lp *loop) after(list *node) *node {
	if len(lp.reads) == 0 {
		return list
	}
	reads, eval := lp.reads, list.eval
	return &node{ptr: list.ptr, eval: func(fr *frame) (any, error) {
		v, err := eval(fr)
		if err != nil {
			return nil, err
		}
		for i := range reads {
			h := &reads[i]
			if h.elem != nil {
				i := int(fr.nums[h.from])
				v, ok := fr.rt.kept(h.elem.id, i)
				if !ok {
					v = fr.rt.readElem(h.elem, i, fr.locals[h.from])
				}
				fr.locals[h.slot] = v
				continue
			}
			var b any
			if h.base == nil {
				b = fr.locals[h.from]
			} else if h.base.num != nil {
				// a number has no members; read unboxed, it is not boxed for nothing
				var isNum bool
				_, isNum, b, _ = h.base.num(fr)
				if isNum {
					b = nil
				}
			} else {
				b, _ = h.base.eval(fr)
			}
			fr.locals[h.slot] = walkPath(b, h.segs)
		}
		return v, nil
	}}
}

// walkPath reads the path segs under v as variables do.
func walkPath(v any, segs []segment) any {
	for _, s := range segs {
		switch t := v.(type) {
		case map[string]any:
			v = t[s.key]
		case []any:
			if s.index >= 0 && s.index < len(t) {
				v = t[s.index]
			} else {
				return nil
			}
		default:
			return nil
		}
	}
	return v
}
