package machine

import "math"

// A chain is a nest of operators that each take one value, such as
// isEmpty(trim(text(coalesce(x, "")))) or not(isDate(x)): a base node, then steps applied from
// the innermost out. It is evaluated as one node, in a loop, rather than as a node per operator:
// each step charges what its operator charges (cost1 of its argument, at its pointer) in the same
// order, then does what the operator does, so results, errors and the point where the budget
// runs out are those of the nested nodes.

// stepKind says how a step computes; stepCall calls the operator function, the others are
// operators with a direct path for their common operands.
type stepKind uint8

const (
	stepCall stepKind = iota
	stepCoalesce
	stepText
	stepTrim
	stepIsEmpty
	stepNot
)

// step is one operator of a chain.
type step struct {
	kind stepKind
	ptr  string
	fn   func(ptr string, a any) (any, error) // the operator, for every step but coalesce
	// the value of coalesce(x, c1, c2, ...) when x is null: the first constant fallback that is
	// not null (the fallbacks are constants, so evaluating them has no effect)
	fallback any
}

type chain struct {
	base  *node
	steps []step
	// pre, when set, charges one unit at prePtr before the first step: the call of an inlined
	// function whose body is the chain (see compiler.inline). The base is then a plain read,
	// which charges nothing and cannot fail, so charging after it is charging before it.
	pre    bool
	prePtr string
}

// extend returns the chain of an operator st applied to the node a: a's own chain with st
// appended when a has one (and the Fuse pass runs), else a chain of st on a.
func (c *compiler) extend(a *node, st step) *chain {
	if c.unit.on(Fuse) && a.chain != nil {
		steps := make([]step, 0, len(a.chain.steps)+1)
		return &chain{base: a.chain.base, steps: append(append(steps, a.chain.steps...), st),
			pre: a.chain.pre, prePtr: a.chain.prePtr}
	}
	return &chain{base: a, steps: []step{st}}
}

// evaluation returns the chain's evaluation, a node's eval. A string is carried unboxed (s, with
// str true) from the step that made it to the next, and boxed only when an operator function or
// the result needs it; v is its box when it still is the one it came in.
//
//go:noinline
func (ch *chain) evaluation() evalFn {
	plan, null := ch.plans()
	if !plan.ok && !null.ok {
		return func(fr *frame) (any, error) {
			v, err := ch.base.get(fr)
			if err != nil {
				return nil, err
			}
			return ch.steps1(fr, v)
		}
	}
	return func(fr *frame) (any, error) {
		v, err := ch.base.get(fr)
		if err != nil {
			return nil, err
		}
		rt := fr.rt
		if s, ok := v.(string); ok && plan.ok {
			t := s
			if plan.trim {
				t = trimSpace(s)
			}
			cost := plan.pre + plan.before*int64(1+len(s)/64) + plan.after*int64(1+len(t)/64) + plan.nots
			if rt.steps+cost <= rt.limit {
				rt.steps += cost
				switch {
				case plan.empty:
					return (t == "") != (plan.nots&1 == 1), nil
				case len(t) == len(s):
					return v, nil
				}
				return t, nil
			}
		} else if v == nil && null.ok && rt.steps+null.cost <= rt.limit {
			rt.steps += null.cost
			return null.v, nil
		}
		return ch.steps1(fr, v)
	}
}

// A strPlan is what the steps of a chain do to a string when each takes its direct path:
// coalesce and text leave it as it is, trim trims it (trimming again changes nothing more), and
// isEmpty makes it a boolean, which not negates. Each step but coalesce charges cost1 of its
// operand, so the work is counted from the lengths of the string before and after its trim,
// and spent at once when the budget covers it all: charges only add up, so no step on the way
// could have exhausted it. When it does not, the steps run one by one (steps1) and fail where
// they would.
type strPlan struct {
	ok     bool  // every step takes its direct path for every string
	pre    int64 // the chain's own charge (see chain.pre)
	before int64 // steps that charge the string as it came (up to its trim)
	after  int64 // steps that charge it trimmed
	trim   bool
	empty  bool  // the string becomes isEmpty's boolean
	nots   int64 // nots applied to that boolean
}

// nullPlan is the value of a chain on null, and the work it charges: the same every time, when
// the steps do not fail (their operators are functions of their operands).
type nullPlan struct {
	ok   bool
	v    any
	cost int64
}

// plans returns the chain's plans for a string and for null.
func (ch *chain) plans() (plan strPlan, null nullPlan) {
	plan.ok = true
	if ch.pre {
		plan.pre = 1
	}
	boolean := false
	for _, st := range ch.steps {
		switch {
		case st.kind == stepCoalesce:
		case boolean && st.kind == stepNot:
			plan.nots++
		case boolean:
			plan.ok = false
		case st.kind == stepText || st.kind == stepTrim || st.kind == stepIsEmpty:
			if plan.trim {
				plan.after++
			} else {
				plan.before++
			}
			plan.trim = plan.trim || st.kind == stepTrim
			if st.kind == stepIsEmpty {
				plan.empty, boolean = true, true
			}
		default:
			plan.ok = false
		}
	}
	direct := true
	for _, st := range ch.steps {
		direct = direct && st.kind != stepCall
	}
	if direct {
		rt := &runtime{limit: math.MaxInt64}
		v, err := ch.steps1(&frame{rt: rt}, nil)
		switch v.(type) {
		case nil, bool, string:
			null = nullPlan{ok: err == nil, v: v, cost: rt.steps}
		}
	}
	return plan, null
}

// steps1 evaluates the steps on the base's value v one by one, charging each as its operator
// does.
func (ch *chain) steps1(fr *frame, v any) (any, error) {
	rt, steps := fr.rt, ch.steps
	var err error
	if ch.pre && !rt.spend(1) {
		return nil, rt.exhausted(ch.prePtr)
	}
	s, str := v.(string)
	for i := range steps {
		st := &steps[i]
		if str {
			// a string: the direct paths of text, trim and isEmpty
			if st.kind == stepCoalesce {
				continue
			}
			if !rt.spend(1 + len(s)/64) {
				return nil, rt.exhausted(st.ptr)
			}
			switch st.kind {
			case stepText:
				continue // a string is its own text
			case stepTrim:
				if t := trimSpace(s); len(t) != len(s) {
					s, v = t, nil // a new string, boxed when needed
				}
				continue
			case stepIsEmpty:
				v, str = s == "", false
				continue
			}
			if v == nil {
				v = s
			}
		} else {
			if st.kind == stepCoalesce {
				if v == nil {
					v = st.fallback
					s, str = v.(string)
				}
				continue
			}
			if !rt.spend(cost1(v)) {
				return nil, rt.exhausted(st.ptr)
			}
			switch st.kind {
			case stepText:
				if v == nil {
					continue // null stays null
				}
			case stepNot:
				if b, ok := v.(bool); ok {
					v = !b
					continue
				}
			}
		}
		if v, err = st.fn(st.ptr, v); err != nil {
			return nil, err
		}
		s, str = v.(string)
	}
	if str && v == nil {
		return s, nil
	}
	return v, nil
}
