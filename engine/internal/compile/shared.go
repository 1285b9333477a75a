package compile

import (
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/sdods/sdods/engine/internal/jsonv"
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

// sharing is switched off by a test that compares shared subexpressions with their evaluation.
var sharing = true

// iterators are the operators that bind a name for their body (see iterate).
var iterators = map[string]bool{"map": true, "filter": true, "some": true, "all": true}

// share returns n, the compiled form of src in scope sc, remembered within an evaluation when
// src is a function call or a list operation whose value stays the same for the evaluation.
func (c *compiler) share(src *jsonv.Node, n *node, sc *scope) *node {
	if !sharing || n.constant || c.cur != nil || !c.unit.stable(src, sc, nil) {
		return n
	}
	var key strings.Builder
	canonical(&key, src)
	sh := c.unit.sharedOf(key.String())
	id := sh.id
	eval := n.eval
	return &node{ptr: n.ptr, str: n.str, count: n.count, eval: func(fr *frame) (any, error) {
		if !sh.many.Load() {
			return eval(fr) // nothing else computes it (yet)
		}
		rt := fr.rt
		if m := rt.memo; id < len(m) && m[id].gen == rt.gen && rt.steps+m[id].cost <= rt.limit {
			rt.steps += m[id].cost
			return m[id].v, nil
		}
		start := rt.steps
		v, err := eval(fr)
		if err != nil {
			return nil, err
		}
		rt.remember(id, v, rt.steps-start)
		return v, nil
	}}
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

// stable reports whether the expression src, in scope sc (nil: no enclosing bindings) with the
// names bound inside it, reads nothing but roots that stay the same for an evaluation: no
// binding of the enclosing scope, no varying root, no custom operator, and only functions of
// which the same holds (see function.pure).
func (u *Unit) stable(src *jsonv.Node, sc *scope, bound []string) bool {
	switch src.Kind {
	case jsonv.Array:
		for _, it := range src.Items {
			if !u.stable(it, sc, bound) {
				return false
			}
		}
		return true
	case jsonv.Object:
	default:
		return true
	}
	if len(src.Members) == 1 && src.Members[0].Key == "var" {
		p := src.Members[0].Value
		if p.Kind != jsonv.String {
			return false
		}
		root, _, _ := strings.Cut(p.Text, ".")
		for _, b := range bound {
			if b == root {
				return true
			}
		}
		if sc != nil {
			if _, _, local := sc.lookup(root); local {
				return false
			}
		}
		return !u.varying[root]
	}
	if len(src.Members) != 2 {
		return false
	}
	form, argsNode := src.Members[0], src.Members[1].Value
	if form.Key == "args" {
		form, argsNode = src.Members[1], src.Members[0].Value
	}
	if form.Value.Kind != jsonv.String || argsNode.Kind != jsonv.Array {
		return false
	}
	name, args := form.Value.Text, argsNode.Items
	switch form.Key {
	case "fn":
		if f := u.funcs[name]; f == nil || !f.pure {
			return false
		}
	case "op":
		if strings.HasPrefix(name, "x-") {
			return false
		}
		if name == "literal" {
			return true // data, not an expression
		}
		if iterators[name] && (len(args) == 2 || len(args) == 3) {
			bind := DefaultIterName
			if len(args) == 3 {
				if args[1].Kind != jsonv.String {
					return false
				}
				bind = args[1].Text
			}
			return u.stable(args[0], sc, bound) && u.stable(args[len(args)-1], sc, append(bound[:len(bound):len(bound)], bind))
		}
	default:
		return false
	}
	for _, a := range args {
		if !u.stable(a, sc, bound) {
			return false
		}
	}
	return true
}

// markPure sets function.pure for the functions of a valid unit (no cycles), callees first.
func (u *Unit) markPure(order []*function) {
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
		f.pure = f.def != nil && u.stable(f.def, nil, f.params)
	}
	for _, f := range order {
		visit(f)
	}
}

// canonical writes a key of the JSON tree n: equal keys for equal trees, members in document
// order.
func canonical(b *strings.Builder, n *jsonv.Node) {
	switch n.Kind {
	case jsonv.Null:
		b.WriteByte('n')
	case jsonv.Bool:
		if n.Bool {
			b.WriteByte('t')
		} else {
			b.WriteByte('f')
		}
	case jsonv.Number:
		b.WriteByte('#')
		b.WriteString(strconv.Quote(n.Text))
	case jsonv.String:
		b.WriteString(strconv.Quote(n.Text))
	case jsonv.Array:
		b.WriteByte('[')
		for _, it := range n.Items {
			canonical(b, it)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case jsonv.Object:
		b.WriteByte('{')
		for _, m := range n.Members {
			b.WriteString(strconv.Quote(m.Key))
			b.WriteByte(':')
			canonical(b, m.Value)
			b.WriteByte(',')
		}
		b.WriteByte('}')
	}
}
