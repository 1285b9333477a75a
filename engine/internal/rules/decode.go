package rules

import (
	"sync"
	"sync/atomic"

	"github.com/sdods/sdods/engine/internal/jsonv"
	"github.com/sdods/sdods/engine/internal/machine"
	"github.com/sdods/sdods/engine/internal/value"
)

// A request written as JSON is decoded straight into what the rules read: the paths of the
// request roots they read (machine.Unit.Reads, found at load) get their values as the text is
// scanned, and only those values are built; the rest of the text is checked and dropped. The
// evaluation then starts with those paths read (machine.Machine.Preset) and the roots null, as
// nothing reads them. A root some rule reads as a whole (or through anything but a memoized
// path) is decoded in full, as ParseRequest does. The decoder accepts only requests that
// ParseRequest accepts unchanged and says no to anything else (malformed JSON, text that is not
// UTF-8, a duplicate member, a number beyond double range, nesting past the limit, a malformed
// view, locale or ruleset, or only an object too large for its duplicate check); the caller
// then takes the slow path, which names the problem.
//
// The values are decoded into storage the decoder reuses for its next request (jsonv.Arena): the
// maps, lists and boxes of one request are those of the one before, the strings parts of the
// body. So nothing decoded may be read after the evaluation, and the two ways a value leaves it
// take copies (jsonv.Detach): the values of the states in the result, and the arguments of a
// host's custom operator, which may keep them. Copying a scalar costs little; copying an object
// or a list on every call could cost as much as the evaluation (an operator given a list in a
// loop over it), so the first time a program's operator is given one, the program stops
// decoding into arenas (readPlan.fresh): its requests are then decoded into new values, as
// ParseRequest does, and its operators given them as they are.

// readPlan is what a program's rules read of the request roots.
type readPlan struct {
	whole [gCtx + 1]bool        // by global index: the root is decoded in full
	kids  [gCtx + 1][]*readNode // otherwise: the paths read under it
	paths []*machine.Path       // the paths read as a whole, by slot
	// how many strings the last request decoded kept: the size of the next one's first slab
	// (see jsonv.Scanner.Expect); requests to one ruleset are alike
	strs atomic.Int32
	// the host's custom operators, each given copies of its arguments (see detaching)
	ops map[string]machine.Operator
	// set once an operator was given an object or a list: requests are no longer decoded into
	// arenas (see decode.go's note)
	fresh atomic.Bool
}

// readNode is one memoized path under a root: its last segment, its slot when some rule reads
// its value (-1 when only paths under it are read) and those paths.
type readNode struct {
	key  string
	word uint64 // jsonv.Word(key)
	path *machine.Path
	slot int
	kids []*readNode
}

// planReads builds the read plan of what unit has compiled, for the host's custom operators ops.
func planReads(unit *machine.Unit, ops map[string]machine.Operator) *readPlan {
	pl := &readPlan{}
	if ops != nil {
		pl.ops = make(map[string]machine.Operator, len(ops))
		for name, op := range ops {
			pl.ops[name] = pl.detaching(op)
		}
	}
	for g := gData; g <= gCtx; g++ {
		whole, reads := unit.Reads(globalRoots[g])
		pl.whole[g] = whole
		pl.kids[g] = pl.nodes(reads)
	}
	return pl
}

func (pl *readPlan) nodes(reads []*machine.Read) []*readNode {
	out := make([]*readNode, 0, len(reads))
	for _, r := range reads {
		n := &readNode{key: r.Key, word: jsonv.Word(r.Key), path: r.Path, slot: -1}
		if r.Whole {
			n.slot = len(pl.paths)
			pl.paths = append(pl.paths, r.Path)
		}
		if len(r.Kids) > 0 {
			n.kids = pl.nodes(r.Kids) // (nil for a leaf: see members)
		}
		out = append(out, n)
	}
	return out
}

// decoded is a request decoded for one program: the roots decoded in full, view, locale and
// ruleset id, and the values of the plan's paths by slot.
type decoded struct {
	req  Request
	view Location
	id   string
	vals []any
	// the maps, lists and boxes of the values, reused from one request to the next, unless
	// fresh: this request's values are new (see readPlan.fresh)
	arena jsonv.Arena
	fresh bool
}

var decodedPool = sync.Pool{New: func() any { return new(decoded) }}

// decode decodes raw for p; ok is false for anything ParseRequest would not accept unchanged.
func (p *Program) decode(raw []byte, d *decoded) bool {
	pl := p.reads
	if cap(d.vals) < len(pl.paths) {
		d.vals = make([]any, len(pl.paths))
	}
	d.vals = d.vals[:len(pl.paths)]
	// the text itself: every string kept is copied (jsonv.Borrow), and nothing else of it is
	// kept past this call
	sc := jsonv.Borrow(raw)
	defer sc.Release()
	if d.fresh = pl.fresh.Load(); !d.fresh {
		sc.Use(&d.arena)
	}
	sc.Expect(int(pl.strs.Load()))
	defer func() { pl.strs.Store(int32(min(sc.Boxed(), 1024))) }()
	root := func(g int) (any, bool) {
		if pl.whole[g] {
			if sc.Null() {
				return nil, true
			}
			m, ok := sc.Object(value.MaxEnvDepth)
			return m, ok
		}
		if sc.Null() {
			return nil, true
		}
		if sc.Peek() != '{' {
			return nil, false
		}
		return nil, d.object(sc, pl.kids[g], value.MaxEnvDepth)
	}
	d.req = Request{}
	return quickRequest(sc, &d.req, &d.id, &d.view, root)
}

// object reads an object whose paths kids are read, at most depth deep.
func (d *decoded) object(sc *jsonv.Scanner, kids []*readNode, depth int) bool {
	if depth < 1 || !(sc.Next('{') || sc.Consume('{')) {
		return false
	}
	if sc.Next('}') || sc.Space() && sc.Consume('}') {
		return true
	}
	mark := sc.Mark()
	ok := d.members(sc, kids, depth, mark)
	sc.Unmark(mark)
	return ok
}

// members reads the members of an object whose paths kids are read, after its first '{'. A
// duplicate member says no, as Scanner.Key does: the names of kids are told apart by which kid
// they match (a bit each), the others recorded with Scanner.Unique.
func (d *decoded) members(sc *jsonv.Scanner, kids []*readNode, depth, mark int) bool {
	var read uint64 // the kids read, by index
	for count := 1; ; count++ {
		k, w, ok := sc.Name()
		if !ok || count > jsonv.MaxKeys {
			return false
		}
		kid := -1
		for j, n := range kids {
			// (words and lengths first: they settle names of up to eight bytes, most of them,
			// without memequal's call)
			if n.word == w && len(n.key) == len(k) && (len(k) <= 8 || n.key[8:] == k[8:]) {
				kid = j
				break
			}
		}
		switch {
		case kid < 0:
			ok = sc.Unique(mark, k, w) && sc.Skip(depth-1)
		case kid < 64:
			if read&(1<<kid) != 0 {
				return false
			}
			read |= 1 << kid
			if n := kids[kid]; n.slot >= 0 && n.kids == nil {
				// a path read and nothing under it (most are): node without its call
				var v any
				if v, ok = sc.Value(depth - 1); ok {
					d.vals[n.slot] = v
				}
			} else {
				ok = d.node(sc, n, depth-1)
			}
		default:
			ok = sc.Unique(mark, k, w) && d.node(sc, kids[kid], depth-1)
		}
		if !ok {
			return false
		}
		if sc.Next(',') {
			continue
		}
		if sc.Next('}') {
			return true
		}
		if more, ok := sc.After('}'); !more {
			return ok
		}
	}
}

// node reads the value of the path n, at most depth deep.
func (d *decoded) node(sc *jsonv.Scanner, n *readNode, depth int) bool {
	if n.slot < 0 {
		c, near := sc.Near()
		if !near {
			c = sc.Peek()
		}
		switch c {
		case '{':
			return d.object(sc, n.kids, depth)
		case '[':
			// an index of a list: the list is decoded, and the paths under it read from it
		default:
			return sc.Skip(depth) // nothing under a scalar
		}
	}
	v, ok := sc.Value(depth)
	if !ok {
		return false
	}
	if n.slot >= 0 {
		d.vals[n.slot] = v
	}
	if n.kids != nil {
		d.fill(n.kids, v)
	}
	return true
}

// fill reads the paths kids under the value v, decoded in full.
func (d *decoded) fill(kids []*readNode, v any) {
	if v == nil {
		return
	}
	for _, n := range kids {
		w := machine.Step(n.path, v)
		if n.slot >= 0 {
			d.vals[n.slot] = w
		}
		d.fill(n.kids, w)
	}
}

// release returns d to the pool, keeping nothing of the request.
func (d *decoded) release() {
	clear(d.vals)
	d.arena.Reset()
	d.req, d.view, d.id = Request{}, Location{}, ""
	decodedPool.Put(d)
}

// EvaluateJSONInto decodes the request raw for this program and evaluates it into res (see
// EvaluateInto), when it is one ParseRequest accepts unchanged; handled is false otherwise, and
// then the caller takes the slow path, which names the problem. A request naming another ruleset
// than id is refused with the slow path's diagnostic.
func (p *Program) EvaluateJSONInto(raw []byte, id string, res *Result) (handled bool, err error) {
	d := decodedPool.Get().(*decoded)
	defer d.release()
	if !p.decode(raw, d) {
		return false, nil
	}
	if d.id != "" && d.id != id {
		return true, Mismatch(d.id, id)
	}
	if d.fresh {
		p.evaluate(&d.req, d.vals, p.ops, res)
		return true, nil
	}
	p.evaluate(&d.req, d.vals, p.reads.ops, res)
	for i := range res.States {
		for j := range res.States[i].Props {
			pr := &res.States[i].Props[j]
			pr.Value = jsonv.Detach(pr.Value)
		}
	}
	return true, nil
}

// detaching returns op given copies of its arguments (see decode.go's note): a host's operator
// may keep what it is given. The copies are made in the arguments' list, which is the
// operator's already. An object or a list among them turns the plan's requests fresh.
func (pl *readPlan) detaching(op machine.Operator) machine.Operator {
	return func(args []any) (any, error) {
		for i, a := range args {
			switch a.(type) {
			case map[string]any, []any:
				pl.fresh.Store(true)
			}
			args[i] = jsonv.Detach(a)
		}
		return op(args)
	}
}
