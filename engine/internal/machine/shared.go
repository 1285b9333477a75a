package machine

import (
	"strings"
	"sync/atomic"

	"github.com/sdods/sdods/engine/internal/syntax"
	"github.com/sdods/sdods/engine/internal/value"
)

// Shared subexpressions. Rules of one ruleset often compute the same thing (the total of a
// cart, the members of a list that match): a function call or a list operation whose value
// depends only on roots that stay the same for an evaluation is computed once per evaluation
// and remembered with the work it charged. A later occurrence, in the same expression or in
// another expression of the unit, charges that work at once and returns the value; when the
// rest of the budget would not cover it, it evaluates as usual, to fail exactly where it would
// have. The evaluation is deterministic and values are never modified, so the value and the
// charges are those of evaluating it again: a charge that fits the budget in total fits it at
// every step. Only successful evaluations are remembered.

// iterators are the operators that bind a name for their body (see iterate).
var iterators = syntax.Iterators

// Stability of an expression's value (see Unit.stability).
const (
	unstable = iota // reads a binding of the enclosing scope, or calls a custom operator
	perRun          // the same within one run (reads a varying root)
	perEval         // the same within one evaluation
)

// share returns n, the compiled form of src (an operator or function call) in scope sc,
// remembered: within an evaluation when src is a function call or a list operation whose value
// stays the same for the evaluation, and within a run when src occurs more than once in the
// expression (c.repeated) and its value stays the same for the run.
func (c *compiler) share(src *syntax.Expr, n *node, sc *scope) *node {
	if !c.unit.on(Share) || n.constant || c.cur != nil {
		return n
	}
	if n.chain != nil && n.chain.base.read {
		// one-value operators on a plain read (an inlined blank(x)): cheaper to evaluate again
		// than to look up, and an operator applied to it can extend the chain
		return n
	}
	switch st := c.unit.stability(src, sc, nil); {
	case st == perEval && (src.Kind == syntax.Call || iterators[src.Text]):
		var key strings.Builder
		syntax.Key(&key, src)
		return remembered(n, c.unit.sharedOf(key.String()), false)
	case st >= perRun && c.repeated[src] != nil:
		c.runShared = true
		return remembered(n, c.repeated[src], true)
	}
	return n
}

// newRun returns the root of a program that remembers subexpressions within a run: it starts
// the run's generation, so that nothing remembered by an earlier run is read.
func newRun(root *node) *node {
	eval := root.eval
	return &node{ptr: root.ptr, eval: func(fr *frame) (any, error) {
		if fr.rt.run++; fr.rt.run == 0 {
			fr.rt.newRuns()
		}
		return eval(fr)
	}}
}

// remembered returns n remembered as sh: within the run when perRun, else within the evaluation.
func remembered(n *node, sh *sharedExpr, perRun bool) *node {
	id := sh.id
	eval := n.eval
	r := &node{ptr: n.ptr, str: n.str, count: n.count}
	if n.iter != nil {
		it := *n.iter
		it.shared, it.whole = sh, r
		r.iter = &it
	}
	r.eval = func(fr *frame) (any, error) {
		if !sh.many.Load() {
			return eval(fr) // nothing else computes it (yet)
		}
		rt := fr.rt
		e, stamp := rt.lookup(id, perRun)
		if e != nil {
			if _, ok := e.v.(unboxedNumber); ok {
				e.v = value.Number(rt.memoNum[id]) // boxed once, for every reader that needs it
			}
			return e.v, nil
		}
		start := rt.steps
		v, err := eval(fr)
		if err != nil {
			return nil, err
		}
		rt.remember(id, v, rt.steps-start, stamp)
		return v, nil
	}
	if num := n.num; num != nil {
		// a number is remembered unboxed, and boxed only when a reader needs it boxed
		r.num = func(fr *frame) (float64, bool, any, error) {
			if !sh.many.Load() {
				return num(fr)
			}
			rt := fr.rt
			e, stamp := rt.lookup(id, perRun)
			if e != nil {
				if _, ok := e.v.(unboxedNumber); ok {
					return rt.memoNum[id], true, nil, nil
				}
				f, ok := e.v.(float64)
				return f, ok, e.v, nil
			}
			start := rt.steps
			f, ok, v, err := num(fr)
			if err != nil {
				return 0, false, nil, err
			}
			if ok && v == nil {
				rt.rememberNumber(id, f, rt.steps-start, stamp)
			} else {
				rt.remember(id, v, rt.steps-start, stamp)
			}
			return f, ok, v, nil
		}
	}
	return r
}

// lookup returns memo entry id of this evaluation (or run, when perRun), when its work fits the
// budget (and then charges it), and the stamp to remember it with. (A method, not a closure the
// nodes share: a call through a closure's variable is not inlined.)
func (rt *runtime) lookup(id int, perRun bool) (*memoEntry, uint32) {
	stamp := rt.gen
	if perRun {
		stamp = rt.run
	}
	if m := rt.memo; id < len(m) && m[id].gen == stamp && rt.steps+m[id].cost <= rt.limit {
		rt.steps += m[id].cost
		return &m[id], stamp
	}
	return nil, stamp
}

// unboxedNumber is the value of a memo entry whose number is in runtime.memoNum.
type unboxedNumber struct{}

// rememberNumber remembers the number f as entry id, unboxed.
func (rt *runtime) rememberNumber(id int, f float64, cost int64, stamp uint32) {
	rt.remember(id, unboxedNumber{}, cost, stamp)
	if id >= len(rt.memoNum) {
		rt.growMemoNum()
	}
	rt.memoNum[id] = f
}

// growMemoNum makes memoNum as long as memo.
func (rt *runtime) growMemoNum() {
	rt.memoNum = append(rt.memoNum, make([]float64, len(rt.memo)-len(rt.memoNum))...)
}

// repeats returns a shared subexpression for every operator or function call that occurs more
// than once in the expression n (by key, see syntax.Key), for share.
func (u *Unit) repeats(n *syntax.Expr) map[*syntax.Expr]*sharedExpr {
	keys := map[*syntax.Expr]string{}
	count := map[string]int{}
	var visit func(n *syntax.Expr)
	visit = func(n *syntax.Expr) {
		if n.Kind == syntax.Op || n.Kind == syntax.Call {
			var b strings.Builder
			syntax.Key(&b, n)
			k := b.String()
			keys[n] = k
			count[k]++
		}
		for _, a := range n.Args {
			visit(a)
		}
	}
	visit(n)
	out := map[*syntax.Expr]*sharedExpr{}
	byKey := map[string]*sharedExpr{}
	for node, k := range keys {
		if count[k] < 2 {
			continue
		}
		sh := byKey[k]
		if sh == nil {
			u.mu.Lock()
			sh = &sharedExpr{id: u.nmemo}
			u.nmemo++
			u.mu.Unlock()
			sh.many.Store(true)
			byKey[k] = sh
		}
		out[node] = sh
	}
	return out
}

// sharedExpr is a subexpression that may be shared: its memo index, and whether it occurs more
// than once in the unit (only then is it worth remembering). An expression compiled later may
// set many while the earlier ones evaluate; remembering or not gives the same outcome.
type sharedExpr struct {
	id   int
	many atomic.Bool
}

// sharedOf returns the shared subexpression of canonical key key.
func (u *Unit) sharedOf(key string) *sharedExpr {
	u.mu.Lock()
	defer u.mu.Unlock()
	sh := u.shared[key]
	if sh == nil {
		sh = &sharedExpr{id: u.nmemo}
		u.nmemo++
		u.shared[key] = sh
	} else {
		sh.many.Store(true)
	}
	return sh
}

// stability returns how long the value of the expression src, in scope sc (nil: no enclosing
// bindings) with the names bound inside it, stays the same: perEval when it reads nothing but
// roots that stay the same for an evaluation, perRun when it also reads varying roots, unstable
// when it reads a binding of the enclosing scope or calls a custom operator; a function call
// is as stable as its arguments and the function (see function.stability).
func (u *Unit) stability(src *syntax.Expr, sc *scope, bound []string) int {
	switch src.Kind {
	case syntax.List:
		st := perEval
		for _, it := range src.Args {
			st = min(st, u.stability(it, sc, bound))
		}
		return st
	case syntax.Var:
		root := src.Root
		for _, b := range bound {
			if b == root {
				return perEval
			}
		}
		if sc != nil {
			if _, _, local := sc.lookup(root); local {
				return unstable
			}
		}
		if u.varying[root] {
			return perRun
		}
		return perEval
	case syntax.Op, syntax.Call:
	case syntax.Bad:
		return unstable
	default:
		return perEval
	}
	name, args := src.Text, src.Args
	st := perEval
	switch src.Kind {
	case syntax.Call:
		f := u.funcs[name]
		if f == nil {
			return unstable
		}
		st = f.stability
	case syntax.Op:
		if src.IsCustom() {
			return unstable
		}
		if name == "literal" {
			return perEval // data, not an expression
		}
		if iterators[name] && (len(args) == 2 || len(args) == 3) {
			bind := DefaultIterName
			if len(args) == 3 {
				if args[1].Kind != syntax.String {
					return unstable
				}
				bind = args[1].Text
			}
			return min(u.stability(args[0], sc, bound), u.stability(args[len(args)-1], sc, append(bound[:len(bound):len(bound)], bind)))
		}
	}
	for _, a := range args {
		st = min(st, u.stability(a, sc, bound))
	}
	return st
}

// markStability sets function.stability for the functions of a valid unit (no cycles), callees
// first.
func (u *Unit) markStability(order []*function) {
	done := map[*function]bool{}
	var visit func(f *function)
	visit = func(f *function) {
		if done[f] {
			return
		}
		done[f] = true
		for _, name := range f.calls {
			if g := u.funcs[name]; g != nil {
				visit(g)
			}
		}
		f.stability = unstable
		if f.def != nil {
			f.stability = u.stability(f.def, nil, f.params)
		}
	}
	for _, f := range order {
		visit(f)
	}
}
