package machine

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
	return func(fr *frame) (any, error) {
		v, err := ch.base.get(fr)
		if err != nil {
			return nil, err
		}
		rt, steps := fr.rt, ch.steps
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
}
