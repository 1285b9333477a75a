package machine

import "github.com/sdods/sdods/engine/internal/value"

// Conditions (the Conds pass): a node whose value is always a boolean (and, or, not, the
// comparisons, matches, isEmpty, isDate) may also be compiled as a test, node.cond, which returns
// that boolean unboxed. A parent that reads a condition (and, or, not) calls its operands' tests
// rather than their evals, and a program whose value is such a boolean runs with Machine.Test,
// without boxing its result for the caller to unbox. A test charges exactly what the node's eval
// charges, in the same order, and fails where it fails: it is the same work with the boolean
// handed over directly.

// condFn evaluates a node whose value is always a boolean.
type condFn func(fr *frame) (bool, error)

// boxCond returns the eval of a node whose test is cond: for nodes whose own work outweighs a
// call (matches, isDate), the test is written once and the eval boxes its result.
func boxCond(cond condFn) evalFn {
	return func(fr *frame) (any, error) {
		b, err := cond(fr)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
}

// withCond sets n's test when the Conds pass runs, and returns n.
func (c *compiler) withCond(n *node, cond condFn) *node {
	if c.unit.on(Conds) && !n.constant {
		n.cond = cond
	}
	return n
}

// truthOf reads operand i of op (and, or) as a condition: its test when it has one, else its
// value read as truth does.
func truthOf(fr *frame, a *node, ptr, op string, i int) (bool, error) {
	if a.cond != nil {
		return a.cond(fr)
	}
	v, err := a.get(fr)
	if err != nil {
		return false, err
	}
	if t, ok := v.(bool); ok {
		return t, nil
	}
	return truth(ptr, op, i, v)
}

// short2Cond is short2's test: and/or of two operands, each read as a condition.
//
//go:noinline
func short2Cond(name, ptr string, a, b *node, stop bool) condFn {
	k := &struct {
		b         *node
		name, ptr string
		stop      bool
	}{b, name, ptr, stop}
	if ac, bc := a.cond, b.cond; ac != nil && bc != nil {
		return func(fr *frame) (bool, error) {
			t, err := ac(fr)
			if err != nil || t == k.stop {
				return t, err
			}
			return bc(fr)
		}
	}
	if ac := a.cond; ac != nil {
		return func(fr *frame) (bool, error) {
			t, err := ac(fr)
			if err != nil || t == k.stop {
				return t, err
			}
			return truthOf(fr, k.b, k.ptr, k.name, 1)
		}
	}
	return func(fr *frame) (bool, error) {
		t, err := truthOf(fr, a, k.ptr, k.name, 0)
		if err != nil || t == k.stop {
			return t, err
		}
		return truthOf(fr, k.b, k.ptr, k.name, 1)
	}
}

// condition returns the chain's test when its value is always a boolean: its last step is not
// or isEmpty (whose operator functions return booleans), or nil.
//
//go:noinline
func (ch *chain) condition() condFn {
	last := ch.steps[len(ch.steps)-1].kind
	if last != stepNot && last != stepIsEmpty {
		return nil
	}
	nots := true
	for _, st := range ch.steps {
		nots = nots && st.kind == stepNot
	}
	if base := ch.base.cond; nots && base != nil && !ch.pre {
		// not(not(...(a condition))): steps1 on a boolean charges cost1 of a boolean, one unit,
		// at each not
		steps := ch.steps
		return func(fr *frame) (bool, error) {
			b, err := base(fr)
			if err != nil {
				return false, err
			}
			for i := range steps {
				if !fr.rt.spend(1) {
					return false, fr.rt.exhausted(steps[i].ptr)
				}
				b = !b
			}
			return b, nil
		}
	}
	plan, null := ch.plans()
	nullTrue, _ := null.v.(bool)
	// the plans of evaluation, the string's being a boolean (plan.empty) since the last step
	// makes one
	base := ch.base.path // a memoized path is read here, without the base's call
	return func(fr *frame) (bool, error) {
		rt := fr.rt
		var v any
		if base != nil {
			if m := rt.memo; uint(base.id) < uint(len(m)) && m[base.id].gen == rt.gen {
				v = m[base.id].v
			} else {
				v = rt.walk(base)
			}
		} else {
			var err error
			if v, err = ch.base.get(fr); err != nil {
				return false, err
			}
		}
		if s, ok := v.(string); ok && plan.ok {
			t := s
			if plan.trim {
				t = trimSpace(s)
			}
			cost := plan.pre + plan.before*int64(1+len(s)/64) + plan.after*int64(1+len(t)/64) + plan.nots
			if rt.steps+cost <= rt.limit {
				rt.steps += cost
				return (t == "") != (plan.nots&1 == 1), nil
			}
		} else if v == nil && null.ok && rt.steps+null.cost <= rt.limit {
			rt.steps += null.cost
			return nullTrue, nil
		}
		v, err := ch.steps1(fr, v)
		b, _ := v.(bool)
		return b, err
	}
}

// unboxed returns the boolean of a result that is one (or of an error), for the slow paths of
// the tests below, whose operator functions return booleans.
func unboxed(v any, err error) (bool, error) {
	b, _ := v.(bool)
	return b, err
}

// equalNodeCond is equalNode's test.
//
//go:noinline
func equalNodeCond(negate bool, ptr string, x, y *node, rx, ry *reader) condFn {
	k := &struct {
		y      *node
		ry     *reader
		negate bool
		ptr    string
	}{y, ry, negate, ptr}
	return func(fr *frame) (bool, error) {
		// a variable is read without its node's call (see reader)
		a, ok := fr.rt.quick(rx)
		if !ok {
			var err error
			if a, err = x.get(fr); err != nil {
				return false, err
			}
		}
		b, ok := fr.rt.quick(k.ry)
		if !ok {
			var err error
			if b, err = k.y.get(fr); err != nil {
				return false, err
			}
		}
		if as, ok := a.(string); ok {
			if bs, ok := b.(string); ok {
				if !fr.rt.spend(2 + len(as)/64 + len(bs)/64) {
					return false, fr.rt.exhausted(k.ptr)
				}
				return (as == bs) != k.negate, nil
			}
		} else if af, ok := a.(float64); ok {
			if bf, ok := b.(float64); ok {
				if !fr.rt.spend(2) {
					return false, fr.rt.exhausted(k.ptr)
				}
				return (af == bf) != k.negate, nil
			}
		}
		if err := fr.rt.chargeWeight(k.ptr, a); err != nil {
			return false, err
		}
		if err := fr.rt.chargeWeight(k.ptr, b); err != nil {
			return false, err
		}
		return value.Equal(a, b) != k.negate, nil
	}
}

// equalConstCond is equalConst's test.
//
//go:noinline
func equalConstCond(negate bool, ptr string, other *node, r *reader, kv any, w int64) condFn {
	k := &constEqual{arg: other, r: r, w: w, negate: negate, ptr: ptr}
	switch cv := kv.(type) {
	case string:
		k.s = cv
		return func(fr *frame) (bool, error) {
			v, ok := fr.rt.quick(k.r) // (false when r is nil)
			if !ok {
				var err error
				if v, err = k.arg.eval(fr); err != nil {
					return false, err
				}
			}
			s, ok := v.(string)
			if !ok {
				return unboxed(k.other(fr, v))
			}
			if !fr.rt.spend(1 + len(s)/64 + int(k.w)) {
				return false, fr.rt.exhausted(k.ptr)
			}
			return (s == k.s) != k.negate, nil
		}
	case bool:
		k.b = cv
		return func(fr *frame) (bool, error) {
			v, ok := fr.rt.quick(k.r) // (false when r is nil)
			if !ok {
				var err error
				if v, err = k.arg.eval(fr); err != nil {
					return false, err
				}
			}
			b, ok := v.(bool)
			if !ok {
				return unboxed(k.other(fr, v))
			}
			if !fr.rt.spend(1 + int(k.w)) {
				return false, fr.rt.exhausted(k.ptr)
			}
			return (b == k.b) != k.negate, nil
		}
	case float64:
		k.f = cv
		if num := other.num; num != nil {
			return func(fr *frame) (bool, error) {
				f, ok, v, err := num(fr)
				if err != nil {
					return false, err
				}
				if !ok {
					return unboxed(k.other(fr, v))
				}
				if !fr.rt.spend(1 + int(k.w)) {
					return false, fr.rt.exhausted(k.ptr)
				}
				return (f == k.f) != k.negate, nil
			}
		}
		return func(fr *frame) (bool, error) {
			v, ok := fr.rt.quick(k.r) // (false when r is nil)
			if !ok {
				var err error
				if v, err = k.arg.eval(fr); err != nil {
					return false, err
				}
			}
			f, ok := v.(float64)
			if !ok {
				return unboxed(k.other(fr, v))
			}
			if !fr.rt.spend(1 + int(k.w)) {
				return false, fr.rt.exhausted(k.ptr)
			}
			return (f == k.f) != k.negate, nil
		}
	case nil:
		return func(fr *frame) (bool, error) {
			v, ok := fr.rt.quick(k.r) // (false when r is nil)
			if !ok {
				var err error
				if v, err = k.arg.eval(fr); err != nil {
					return false, err
				}
			}
			if v == nil {
				if !fr.rt.spend(1 + int(k.w)) {
					return false, fr.rt.exhausted(k.ptr)
				}
				return !k.negate, nil
			}
			vw := scalarWeight(v)
			if vw == 0 {
				return unboxed(k.other(fr, v))
			}
			if !fr.rt.spend(int(vw + k.w)) {
				return false, fr.rt.exhausted(k.ptr)
			}
			return k.negate, nil
		}
	}
	return nil
}

// compareConstCond is compareConst's test.
//
//go:noinline
func compareConstCond(kind int, slow func(ptr string, a, b any) (any, error), ptr string, a *node, r *reader, yv any, y float64) condFn {
	k := &constCompare{a: a, r: r, kind: kind, y: y, ptr: ptr, slow: slow, yv: yv}
	if num := a.num; num != nil {
		return func(fr *frame) (bool, error) {
			xf, ok, x, err := num(fr)
			if err != nil {
				return false, err
			}
			if !ok {
				return unboxed(k.other(fr, x))
			}
			if !fr.rt.spend(2) {
				return false, fr.rt.exhausted(k.ptr)
			}
			return test(k.kind, xf, k.y), nil
		}
	}
	return func(fr *frame) (bool, error) {
		x, ok := fr.rt.quick(k.r) // (false when r is nil)
		if !ok {
			var err error
			if x, err = k.a.eval(fr); err != nil {
				return false, err
			}
		}
		xf, ok := x.(float64)
		if !ok {
			return unboxed(k.other(fr, x))
		}
		if !fr.rt.spend(2) {
			return false, fr.rt.exhausted(k.ptr)
		}
		return test(k.kind, xf, k.y), nil
	}
}
