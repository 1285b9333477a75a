package machine

import (
	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/num"
	"github.com/sdods/sdods/engine/internal/syntax"
	"github.com/sdods/sdods/engine/internal/value"
)

// Numbers carried unboxed. A number that is not a small integer costs an allocation when it
// becomes a value (see value.Number), and most numbers that operators compute are read by
// another operator at once: a comparison (debt / income > 0.4), more arithmetic, round, min or
// sum. Nodes that compute numbers offer num, their evaluation without the box, and the operators
// that read numbers read their arguments through it; a number is boxed only where it leaves
// (a result, a memo, a frame slot, a list or a host's operator). Each node's num evaluates and
// charges exactly as its eval does.

// numFn evaluates a node whose value is usually a number: ok reports that the value is the
// number f, and v is then its box or nil when it has none; otherwise the value is v.
type numFn func(fr *frame) (f float64, ok bool, v any, err error)

// number evaluates n as num does, through n.num when the node offers it.
func (n *node) number(fr *frame) (float64, bool, any, error) {
	if n.num != nil {
		return n.num(fr)
	}
	v, err := n.get(fr)
	f, ok := v.(float64)
	return f, ok, v, err
}

// numberOf returns number of n as a function, for a node to call directly rather than through
// number: n.num, or n's evaluation read as a number.
func numberOf(n *node) numFn {
	if n.num != nil {
		return n.num
	}
	if n.constant {
		v := n.value
		f, ok := v.(float64)
		return func(*frame) (float64, bool, any, error) { return f, ok, v, nil }
	}
	return func(fr *frame) (float64, bool, any, error) {
		v, err := n.eval(fr)
		f, ok := v.(float64)
		return f, ok, v, err
	}
}

// boxed returns a value read by number as a value.
func boxed(f float64, ok bool, v any) any {
	if ok && v == nil {
		return value.Number(f)
	}
	return v
}

// numCost is cost1 of a value read by number.
func numCost(ok bool, v any) int {
	if ok {
		return 1
	}
	return cost1(v)
}

// evalNum returns the eval of a node whose num is calc: calc's number boxed.
//
//go:noinline
func evalNum(calc numFn) evalFn {
	return func(fr *frame) (any, error) {
		f, ok, v, err := calc(fr)
		if ok {
			return boxed(f, ok, v), nil
		}
		return v, err
	}
}

// nullOrMismatch is what an operator reading two numbers (numbers) does when one of them, read
// by number, is not a number: null when either is null, else the type error of the first that
// is not a number.
func nullOrMismatch(ptr, op string, xok bool, x any, yok bool, y any) error {
	if (!xok && x == nil) || (!yok && y == nil) {
		return nil
	}
	if !xok {
		return typeErr(ptr, op, 0, "a number", x)
	}
	if !yok {
		return typeErr(ptr, op, 1, "a number", y)
	}
	return nil
}

// buildDivide builds / and mod: binary(opDiv) and binary(opMod), reading their arguments and
// offering their result unboxed.
//
//go:noinline
func buildDivide(mod bool) builder {
	op, slow := "/", opDiv
	if mod {
		op, slow = "mod", opMod
	}
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		if !c.unit.on(Unbox) {
			return binary(slow)(c, name, ptr, raw, sc, depth)
		}
		args := c.compileArgs(raw, ptr, sc, depth)
		a, b := args[0], args[1]
		// one pointer for the node to keep across the evaluation of a
		k := &struct {
			y       numFn
			mod     bool
			ptr, op string
		}{numberOf(b), mod, ptr, op}
		x := numberOf(a)
		calc := func(fr *frame) (float64, bool, any, error) {
			xf, xok, xv, err := x(fr)
			if err != nil {
				return 0, false, nil, err
			}
			yf, yok, yv, err := k.y(fr)
			if err != nil {
				return 0, false, nil, err
			}
			if !xok || !yok {
				if err := fr.rt.charge(k.ptr, numCost(xok, xv)+numCost(yok, yv)); err != nil {
					return 0, false, nil, err
				}
				return 0, false, nil, nullOrMismatch(k.ptr, k.op, xok, xv, yok, yv)
			}
			if !fr.rt.spend(2) {
				return 0, false, nil, fr.rt.exhausted(k.ptr)
			}
			if yf == 0 {
				return 0, false, nil, nil
			}
			var f float64
			var ok bool
			if k.mod {
				f, ok = num.Mod(xf, yf)
			} else {
				f, ok = num.Div(xf, yf)
			}
			if !ok {
				return 0, false, nil, diag.ResultOutOfRange(k.ptr)
			}
			return f, true, nil, nil
		}
		n := &node{ptr: ptr, num: calc, eval: evalNum(calc)}
		if a.constant && b.constant {
			return fold(n)
		}
		return n
	}
}

// buildRound builds round: strictDirect(callRound), reading the number and offering the result
// unboxed.
func buildRound(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
	if !c.unit.on(Unbox) {
		return strictDirect(callRound)(c, name, ptr, raw, sc, depth)
	}
	args := c.compileArgs(raw, ptr, sc, depth)
	x := args[0]
	var places *node
	if len(args) == 2 {
		places = args[1]
	}
	xnum := numberOf(x)
	calc := func(fr *frame) (float64, bool, any, error) {
		xf, xok, xv, err := xnum(fr)
		if err != nil {
			return 0, false, nil, err
		}
		var p any
		if places != nil {
			if p, err = places.get(fr); err != nil {
				return 0, false, nil, err
			}
		}
		cost := numCost(xok, xv)
		if places != nil {
			cost += cost1(p)
		}
		if err := fr.rt.charge(ptr, cost); err != nil {
			return 0, false, nil, err
		}
		if !xok {
			vals := [2]any{xv, p}
			v, err := opRound(ptr, vals[:len(args)])
			return 0, false, v, err
		}
		k := int64(0)
		if places != nil {
			if p == nil {
				return 0, false, nil, nil
			}
			if k, err = integer(ptr, "round", 1, p, -15, 15); err != nil {
				return 0, false, nil, err
			}
		}
		f, ok := num.Round(xf, int(k))
		if !ok {
			return 0, false, nil, diag.ResultOutOfRange(ptr)
		}
		return f, true, nil, nil
	}
	n := &node{ptr: ptr, num: calc, eval: evalNum(calc)}
	if allConstant(args) {
		return fold(n)
	}
	return n
}

// maxUnboxed is the most arguments min and max read unboxed (in arrays on the stack).
const maxUnboxed = 8

// buildExtreme builds min (max false) and max (max true): strict(opMin) and strict(opMax), without
// the list of arguments, reading them unboxed and offering the result unboxed (or as the box of
// the argument it is).
//
//go:noinline
func buildExtreme(max bool) builder {
	op, slow := "min", opMin
	if max {
		op, slow = "max", opMax
	}
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		if !c.unit.on(Unbox) || len(raw) > maxUnboxed {
			return strict(slow)(c, name, ptr, raw, sc, depth)
		}
		args := c.compileArgs(raw, ptr, sc, depth)
		var calc numFn
		if len(args) == 1 {
			// one argument: a list of numbers, or a number
			a := args[0]
			calc = func(fr *frame) (float64, bool, any, error) {
				v, err := a.get(fr)
				if err != nil {
					return 0, false, nil, err
				}
				if err := fr.rt.charge(ptr, cost1(v)); err != nil {
					return 0, false, nil, err
				}
				if l, ok := v.([]any); ok {
					return extremeOf(ptr, op, max, l)
				}
				vals := [1]any{v}
				return extremeOf(ptr, op, max, vals[:])
			}
		} else {
			nums := make([]numFn, len(args))
			for i, a := range args {
				nums[i] = numberOf(a)
			}
			calc = func(fr *frame) (float64, bool, any, error) {
				var fs [maxUnboxed]float64
				var oks [maxUnboxed]bool
				var vs [maxUnboxed]any
				cost := 0
				for i, num := range nums {
					f, ok, v, err := num(fr)
					if err != nil {
						return 0, false, nil, err
					}
					fs[i], oks[i], vs[i] = f, ok, v
					cost += numCost(ok, v)
				}
				if err := fr.rt.charge(ptr, cost); err != nil {
					return 0, false, nil, err
				}
				// as extremeOf: a null makes the result null, else the first argument that
				// is not a number fails
				best, at, bad := 0.0, -1, -1
				for i := range args {
					switch {
					case oks[i]:
						if at < 0 || (max && fs[i] > best) || (!max && fs[i] < best) {
							best, at = fs[i], i
						}
					case vs[i] == nil:
						return 0, false, nil, nil
					case bad < 0:
						bad = i
					}
				}
				if bad >= 0 {
					return 0, false, nil, typeErr(ptr, op, bad, "a number", vs[bad])
				}
				return best, true, vs[at], nil
			}
		}
		n := &node{ptr: ptr, num: calc, eval: evalNum(calc)}
		if allConstant(args) {
			return fold(n)
		}
		return n
	}
}

// extremeOf is extreme of the numbers items, with the box of the item it is.
func extremeOf(ptr, op string, max bool, items []any) (float64, bool, any, error) {
	best, at, bad := 0.0, -1, -1
	for i, x := range items {
		switch t := x.(type) {
		case float64:
			if at < 0 || (max && t > best) || (!max && t < best) {
				best, at = t, i
			}
		case nil:
			return 0, false, nil, nil // null decides, whatever the other items are
		default:
			if bad < 0 {
				bad = i
			}
		}
	}
	if bad >= 0 {
		return 0, false, nil, typeErr(ptr, op, bad, "a number", items[bad])
	}
	if at < 0 {
		return 0, false, nil, nil
	}
	return best, true, items[at], nil
}

// buildNumeric builds a one-argument operator that computes a number (abs, sum): unary(slow), and
// when the operator is not part of a longer chain, offering its result unboxed, as calc computes
// it from the argument.
//
//go:noinline
func buildNumeric(slow func(ptr string, a any) (any, error), calc func(ptr string, f float64, ok bool, v any) (float64, bool, any, error)) builder {
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		n := unary(slow)(c, name, ptr, raw, sc, depth)
		if !c.unit.on(Unbox) || n.constant || len(n.chain.steps) != 1 || n.chain.pre {
			return n
		}
		a := numberOf(n.chain.base)
		n.num = func(fr *frame) (float64, bool, any, error) {
			f, ok, v, err := a(fr)
			if err != nil {
				return 0, false, nil, err
			}
			if err := fr.rt.charge(ptr, numCost(ok, v)); err != nil {
				return 0, false, nil, err
			}
			return calc(ptr, f, ok, v)
		}
		n.eval = evalNum(n.num)
		return n
	}
}

func absNum(ptr string, f float64, ok bool, v any) (float64, bool, any, error) {
	if !ok {
		r, err := opAbs(ptr, v)
		return 0, false, r, err
	}
	return num.Abs(f), true, nil, nil
}

func sumNum(ptr string, f float64, ok bool, v any) (float64, bool, any, error) {
	if ok {
		// a number is not a list (its type is all the error names: no box is made for it)
		return 0, false, nil, typeErr(ptr, "sum", 0, "an array of numbers", 0.0)
	}
	return sumOf(ptr, v)
}

// buildSum builds sum: buildNumeric(opSum), and for the sum of a map the map's evaluation
// without its list (see sumOfMap).
func buildSum(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
	n := buildNumeric(opSum, sumNum)(c, name, ptr, raw, sc, depth)
	if n.num == nil || !c.unit.on(Fuse) || n.chain.base.iter == nil {
		return n
	}
	calc := sumOfMap(ptr, n.chain.base.iter)
	// not a chain: an operator applied to it takes it as the base of its own
	return &node{ptr: ptr, num: calc, eval: evalNum(calc)}
}

// iteration is a map over a list: what sumOfMap needs of it.
type iteration struct {
	list, body *node
	slot       int
	ptr, name  string
	// when the map is remembered (see remembered), as what, and its node: once it is computed
	// elsewhere too, its list is taken from there
	shared *sharedExpr
	whole  *node
}

// sumOfMap is sum(map(list, body)) without the list: map's evaluation, with the body's numbers
// read unboxed, then sum's. The charges are those of both (map's, then sum's of a list as long
// as map's), and so are the results and errors: an error of the body comes before sum's null,
// which comes before its type error naming the first element that is not a number.
//
//go:noinline
func sumOfMap(ptr string, it *iteration) numFn {
	body := numberOf(it.body)
	return func(fr *frame) (float64, bool, any, error) {
		if it.shared != nil && it.shared.many.Load() {
			v, err := it.whole.eval(fr)
			if err != nil {
				return 0, false, nil, err
			}
			if err := fr.rt.charge(ptr, cost1(v)); err != nil {
				return 0, false, nil, err
			}
			return sumOf(ptr, v)
		}
		lv, err := it.list.eval(fr)
		if err != nil {
			return 0, false, nil, err
		}
		items, ok := lv.([]any)
		if !ok {
			if lv != nil {
				return 0, false, nil, typeErr(it.ptr, it.name, 0, "an array", lv)
			}
			// map gives null, and the sum of null is null
			if err := fr.rt.charge(ptr, 1); err != nil {
				return 0, false, nil, err
			}
			return 0, false, nil, nil
		}
		if err := fr.rt.charge(it.ptr, len(items)); err != nil {
			return 0, false, nil, err
		}
		var buf [16]float64
		xs := buf[:0]
		if len(items) > len(buf) {
			xs = make([]float64, 0, len(items))
		}
		null, bad, badAt := false, any(nil), -1
		for i, item := range items {
			fr.locals[it.slot] = item
			f, ok, v, err := body(fr)
			if err != nil {
				return 0, false, nil, err
			}
			switch {
			case ok:
				xs = append(xs, f)
			case v == nil:
				null = true
			case badAt < 0:
				bad, badAt = v, i
			}
		}
		if err := fr.rt.charge(ptr, 1+len(items)); err != nil {
			return 0, false, nil, err
		}
		if null {
			return 0, false, nil, nil // null decides, whatever the other elements are
		}
		if badAt >= 0 {
			return 0, false, nil, typeErr(ptr, "sum", badAt, "a number", bad)
		}
		f, ok := num.Add(xs...)
		if !ok {
			return 0, false, nil, diag.ResultOutOfRange(ptr)
		}
		return f, true, nil, nil
	}
}

// sumOf is opSum with the result unboxed.
func sumOf(ptr string, a any) (float64, bool, any, error) {
	if a == nil {
		return 0, false, nil, nil
	}
	l, ok := a.([]any)
	if !ok {
		return 0, false, nil, typeErr(ptr, "sum", 0, "an array of numbers", a)
	}
	var buf [16]float64
	xs, ok, err := numbers(buf[:0], ptr, "sum", l)
	if err != nil || !ok {
		return 0, false, nil, err
	}
	f, ok := num.Add(xs...)
	if !ok {
		return 0, false, nil, diag.ResultOutOfRange(ptr)
	}
	return f, true, nil, nil
}
