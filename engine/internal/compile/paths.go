package compile

// Variable paths whose values are memoized within an evaluation. Rules read the same paths over
// and over (data.account.email is a field of three rules and a variable of two), and each step
// of a path is a map lookup. A path under a root that stays the same for a whole evaluation
// (every root but Config.Varying) gets a Path at load: the first read in an evaluation walks it
// (through its parent, itself memoized) and stores the value; the next reads take it from the
// memo. Values are never modified during an evaluation, so a memoized read returns exactly what
// a walk would, and reads charge no budget either way.

// Path is a memoized variable path: its parent path (nil for a step from the root), the root's
// global index and the last step.
type Path struct {
	id       int
	parent   *Path
	root     int
	rootName string
	seg      segment
}

// step reads one path segment of v as variables do.
func (s segment) step(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return t[s.key]
	case []any:
		if s.index >= 0 && s.index < len(t) {
			return t[s.index]
		}
	}
	return nil
}

// Path returns the memoized path root.segs[0]...; nil when root varies within an evaluation or
// segs is empty.
func (u *Unit) Path(root string, segs []string) *Path {
	if len(segs) == 0 || u.varying[root] {
		return nil
	}
	g := u.global(root)
	u.mu.Lock()
	defer u.mu.Unlock()
	var p *Path
	key := root
	for _, s := range segs {
		key += "\x00" + s
		q := u.paths[key]
		if q == nil {
			q = &Path{id: u.nmemo, parent: p, root: g, rootName: root, seg: segment{key: s, index: asIndex(s)}}
			u.paths[key] = q
			u.nmemo++
		}
		p = q
	}
	return p
}

// memoEntry is the memo of one path or shared subexpression: its value, and the work it charged
// (see compiler.share), when gen is the runtime's generation (of its run, for a subexpression
// remembered within a run).
type memoEntry struct {
	v    any
	cost int64
	gen  uint32
}

// value returns the value of p in the current evaluation.
func (rt *runtime) value(p *Path) any {
	if v, ok := rt.memoized(p); ok {
		return v
	}
	return rt.walk(p)
}

// memoized returns the value of p when the evaluation has already read it. It inlines, so that
// a memoized read costs a few loads where value would cost a call.
func (rt *runtime) memoized(p *Path) (any, bool) {
	if m := rt.memo; p.id < len(m) && m[p.id].gen == rt.gen {
		return m[p.id].v, true
	}
	return nil, false
}

// walk reads p through its parent's value and memoizes it.
func (rt *runtime) walk(p *Path) any {
	var base any
	if p.parent == nil {
		base = rt.root(p.root, p.rootName)
	} else if v, ok := rt.memoized(p.parent); ok {
		base = v
	} else {
		base = rt.walk(p.parent)
	}
	v := p.seg.step(base)
	rt.remember(p.id, v, 0, rt.gen)
	return v
}

// remember memoizes entry id, stamped (the evaluation's generation or the run's).
func (rt *runtime) remember(id int, v any, cost int64, stamp uint32) {
	if id >= len(rt.memo) {
		rt.memo = append(rt.memo, make([]memoEntry, 2*id+8-len(rt.memo))...)
	}
	rt.memo[id] = memoEntry{v, cost, stamp}
	if id >= rt.memoHigh {
		rt.memoHigh = id + 1
	}
}

// Value returns the value of p in the evaluation Begin started.
func (m *Machine) Value(p *Path) any { return m.rt.value(p) }
