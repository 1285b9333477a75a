package machine

import (
	"sort"
	"strings"

	"github.com/sdods/sdods/engine/internal/date"
	"github.com/sdods/sdods/engine/internal/syntax"
)

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
	whole    int // how many expressions read the value of this path, not only paths under it
}

// step reads one path segment of v as variables do. (Type assertions compare the type word with
// a constant, where a type switch would load the type's hash first.)
func (s segment) step(v any) any {
	if t, ok := v.(map[string]any); ok {
		return t[s.key]
	}
	if t, ok := v.([]any); ok && uint(s.index) < uint(len(t)) {
		return t[s.index]
	}
	return nil
}

// Path returns the memoized path root.segs[0]...; nil when root varies within an evaluation or
// segs is empty.
func (u *Unit) Path(root string, segs []string) *Path {
	if len(segs) == 0 || u.varying[root] {
		u.readWhole(root) // the caller reads the root itself
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
	p.whole++
	return p
}

// unreadPath takes back one read of the path root.segs that Path recorded: the node that made
// it is not used.
func (u *Unit) unreadPath(root string, segs []string) {
	key := root + "\x00" + strings.Join(segs, "\x00")
	u.mu.Lock()
	if p := u.paths[key]; p != nil && p.whole > 0 {
		p.whole--
	}
	u.mu.Unlock()
}

// memoEntry is the memo of one path or shared subexpression: its value, and the work it charged
// (see compiler.share), when gen is the runtime's generation (of its run, for a subexpression
// remembered within a run).
type memoEntry struct {
	v    any
	cost int64
	gen  uint32
	// v read as a date "YYYY-MM-DD" by a date operator (see runtime.knownDate): 0 until then,
	// notPlain when v is not one
	date date.Plain
}

// notPlain marks a memo entry whose value a date operator found not to be a date "YYYY-MM-DD".
const notPlain date.Plain = -1

// value returns the value of p in the current evaluation.
func (rt *runtime) value(p *Path) any {
	if m := rt.memo; uint(p.id) < uint(len(m)) && m[p.id].gen == rt.gen {
		return m[p.id].v
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
	if q := p.parent; q == nil {
		base = rt.root(p.root, p.rootName)
	} else if m := rt.memo; q.id < len(m) && m[q.id].gen == rt.gen {
		base = m[q.id].v
	} else {
		base = rt.walk(q)
	}
	v := p.seg.step(base)
	if id, m := p.id, rt.memo; uint(id) < uint(len(m)) {
		m[id] = memoEntry{v: v, gen: rt.gen}
		rt.memoHigh = len(m) // (a store, where keeping the highest entry costs a test too)
	} else {
		rt.remember(id, v, 0, rt.gen)
	}
	return v
}

// remember memoizes entry id, stamped (the evaluation's generation or the run's).
func (rt *runtime) remember(id int, v any, cost int64, stamp uint32) {
	if id >= len(rt.memo) {
		rt.growMemo(id)
	}
	rt.memo[id] = memoEntry{v: v, cost: cost, gen: stamp}
	if id >= rt.memoHigh {
		rt.memoHigh = id + 1
	}
}

// growMemo makes room for memo entry id.
func (rt *runtime) growMemo(id int) {
	rt.memo = append(rt.memo, make([]memoEntry, 2*id+8-len(rt.memo))...)
}

// Value returns the value of p in the evaluation Begin started.
func (m *Machine) Value(p *Path) any { return m.rt.value(p) }

// dateSource is where a date operator's argument comes from, so that the date in it is read once
// per evaluation: a path (its memo index is id), a varying root, or another expression (id is
// then the memo index of the date last read from such an argument, see Unit.lastDate); konst is
// a date written as a string literal, read at load.
type dateSource struct {
	id            int
	path, varying bool
	konst         date.Plain
}

// dateSource returns where the argument n, compiled in scope sc, comes from.
func (c *compiler) dateSource(n *syntax.Expr, sc *scope) dateSource {
	src := dateSource{id: c.unit.lastDate()}
	if n.Kind == syntax.String {
		src.konst, _ = date.PlainDate(n.Text)
		return src
	}
	root, p, ok := c.rootVariable(n, sc)
	switch {
	case !ok:
		return src
	case p != nil:
		return dateSource{id: p.id, path: true}
	}
	src.varying = c.unit.varying[root]
	return src
}

// known reports whether src is a path, a varying root or a date literal.
func (src dateSource) known() bool { return src.path || src.varying || src.konst != 0 }

// lastDateKey is the key of Unit.paths under which the memo index of Unit.lastDate is kept (no
// path has it: a root name is not empty).
const lastDateKey = "\x00"

// lastDate returns the memo index of the date a date operator read last from an argument that
// is not a path.
func (u *Unit) lastDate() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.paths[lastDateKey]
	if p == nil {
		p = &Path{id: u.nmemo}
		u.paths[lastDateKey] = p
		u.nmemo++
	}
	return p.id
}

// A date operator reads the value v, a string of 10 bytes s, of its argument src as a date, not
// positive when it is not one, with
//
//	p := rt.knownDate(src, s)
//	if p == 0 {
//		p = rt.readDate(src, v, s)
//	}
//
// The date of a path's value is read once per evaluation and kept in the path's memo entry,
// which holds s (the argument has just read it, and an entry is written once per evaluation).
// The date of any other argument, such as the field value a varying root holds, is kept with
// the value until a date operator reads another one: the rules of a field read its value again
// and again.

// knownDate returns the date s read before in this evaluation, or 0: kept in the memo entry of
// the path src, or in that of the last date read, when its value is s (for the same string the
// pointers are equal, and memequal returns at once). It inlines: a date read before costs a few
// loads.
func (rt *runtime) knownDate(src dateSource, s string) date.Plain {
	if m := rt.memo; src.id < len(m) {
		if e := &m[src.id]; e.gen == rt.gen && (src.path || isString(e.v, s)) {
			return e.date
		}
	}
	return 0
}

// readDate reads the date s, the value v of the argument src, when knownDate has not, and keeps
// it.
func (rt *runtime) readDate(src dateSource, v any, s string) date.Plain {
	if src.konst != 0 {
		return src.konst
	}
	p, err := date.PlainDate(s)
	if err != nil {
		p = notPlain
	}
	m := rt.memo
	switch {
	case src.id >= len(m):
		if !src.path {
			rt.remember(src.id, v, 0, rt.gen)
			rt.memo[src.id].date = p
		}
	case src.path:
		if m[src.id].gen == rt.gen {
			m[src.id].date = p
		}
	default:
		m[src.id] = memoEntry{v: v, gen: rt.gen, date: p}
		rt.memoHigh = max(rt.memoHigh, src.id+1)
	}
	return p
}

// isString reports whether v is the string s.
func isString(v any, s string) bool {
	t, ok := v.(string)
	return ok && t == s
}

// A reader reads an argument that is a variable without calling its node, when that is a root
// (path nil) or a memoized path already read in this evaluation; otherwise the node evaluates
// it. A call costs more than the read: rules read value and data paths in most operators.
type reader struct {
	path   *Path
	global int
}

// reader returns the reader of the argument n, compiled in scope sc; nil when n is not such a
// variable.
func (c *compiler) reader(n *syntax.Expr, sc *scope) *reader {
	if !c.unit.on(Readers) {
		return nil
	}
	root, p, ok := c.rootVariable(n, sc)
	switch {
	case !ok:
		return nil
	case p != nil:
		return &reader{path: p, global: -1}
	}
	c.unit.readWhole(root)
	return &reader{global: c.unit.global(root)}
}

// rootVariable resolves the expression n, compiled in scope sc, when it reads a variable root
// (p is then nil) or a memoized path under one (p is its Path); ok is false for anything else,
// a malformed path included (compileVar reports it).
func (c *compiler) rootVariable(n *syntax.Expr, sc *scope) (root string, p *Path, ok bool) {
	text := c.rootPath(n, sc)
	if text == "" {
		return "", nil, false
	}
	root, rest, dotted := strings.Cut(text, ".")
	if !dotted {
		return root, nil, true
	}
	segs := strings.Split(rest, ".")
	for _, s := range segs {
		if s == "" {
			return "", nil, false
		}
	}
	if p := c.unit.Path(root, segs); p != nil {
		return root, p, true
	}
	return "", nil, false
}

// quick reads r's variable, ok false when it cannot without calling the argument's node (or r
// is nil). It inlines: a few loads.
func (rt *runtime) quick(r *reader) (v any, ok bool) {
	if r == nil {
		return nil, false
	}
	if p := r.path; p != nil {
		if m := rt.memo; p.id < len(m) && m[p.id].gen == rt.gen {
			return m[p.id].v, true
		}
		return nil, false
	}
	if g := r.global; uint(g) < uint(len(rt.globals)) && rt.env == nil {
		return rt.globals[g], true
	}
	return nil, false
}

// readWhole records that root is read other than through a memoized path.
func (u *Unit) readWhole(root string) {
	u.mu.Lock()
	u.whole[root]++
	u.mu.Unlock()
}

// unreadWhole takes back one read readWhole recorded: the node that made it is not used.
func (u *Unit) unreadWhole(root string) {
	u.mu.Lock()
	u.whole[root]--
	u.mu.Unlock()
}

// Read is one memoized path of the tree Unit.Reads returns: its Path, its last segment, whether
// some expression reads its value (Whole) rather than only paths under it, and those paths.
type Read struct {
	Path  *Path
	Key   string
	Whole bool
	Kids  []*Read
}

// Reads tells what the expressions compiled so far read of the root: whole when some of them
// read the root itself (or anything but a memoized path under it), and otherwise the tree of
// the memoized paths under it, their segments in sorted order. A host that knows the roots
// before an evaluation can then decode only these paths and hand their values to the machine
// (Machine.Preset), leaving the root null: nothing else reads it. A root nothing reads has
// whole false and no paths.
func (u *Unit) Reads(root string) (whole bool, paths []*Read) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.whole[root] > 0 || u.varying[root] {
		return true, nil
	}
	byPath := map[*Path]*Read{}
	var top []*Read
	keys := make([]string, 0, len(u.paths))
	for k := range u.paths {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a parent's key is a prefix of its children's: parents come first
	for _, k := range keys {
		p := u.paths[k]
		if p.rootName != root { // (the last date's entry has no root)
			continue
		}
		r := &Read{Path: p, Key: p.seg.key, Whole: p.whole > 0}
		byPath[p] = r
		if p.parent == nil {
			top = append(top, r)
		} else {
			parent := byPath[p.parent]
			parent.Kids = append(parent.Kids, r)
		}
	}
	return false, top
}

// Step reads the last segment of p in v, as an evaluation walking p does from its parent's
// value.
func Step(p *Path, v any) any { return p.seg.step(v) }

// Preset gives p the value v for the evaluation Begin started, as if it had read it: v must be
// what the path holds in the roots the host would otherwise bind (see Unit.Reads).
func (m *Machine) Preset(p *Path, v any) { m.rt.remember(p.id, v, 0, m.rt.gen) }
