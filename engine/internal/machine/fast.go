package machine

import (
	"math"
	"strings"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/num"
	"github.com/sdods/sdods/engine/internal/syntax"
	"github.com/sdods/sdods/engine/internal/value"
)

// Builders for the operators that dominate real rules (comparisons, equality, two-operand
// arithmetic and concatenation). Each evaluates and charges exactly as the generic builders do
// (binary, deep, strict), then takes a direct path for the common operand types, without the
// argument slices, the indirect calls and the boxing of the generic ones; every other case is
// handed to the generic operator function, so errors and results are the same.
//
// The functions that return an evaluation closure are marked go:noinline: where the Go compiler
// inlines such a function, it compiles its own copy of the closure, and in that copy it inlines
// none of the calls (charge, cost1, boxed), which costs far more than the call it saves.

// get evaluates n; a constant is read without a call.
func (n *node) get(fr *frame) (any, error) {
	if n.constant {
		return n.value, nil
	}
	return n.eval(fr)
}

// cost1 is argCost of a single argument.
func cost1(v any) int {
	switch t := v.(type) {
	case string:
		return 1 + len(t)/64
	case []any:
		return 1 + len(t)
	case map[string]any:
		return 1 + len(t)
	}
	return 1
}

// scalarWeight is value.Weight of a scalar, 0 for an array or an object.
func scalarWeight(v any) int64 {
	switch t := v.(type) {
	case string:
		return 1 + int64(len(t)/64)
	case []any, map[string]any:
		return 0
	}
	return 1
}

const (
	cmpLT = iota
	cmpLE
	cmpGT
	cmpGE
)

var cmpTests = [...]func(int) bool{
	cmpLT: func(c int) bool { return c < 0 },
	cmpLE: func(c int) bool { return c <= 0 },
	cmpGT: func(c int) bool { return c > 0 },
	cmpGE: func(c int) bool { return c >= 0 },
}

// compare builds <, <=, >, >= (binary(cmpOp(...)) with a direct path for two numbers).
//
//go:noinline
func compare(kind int) builder {
	slow := cmpOp(cmpTests[kind])
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		args := c.compileArgs(raw, ptr, sc, depth)
		a, b := args[0], args[1]
		if yf, ok := b.value.(float64); ok && b.constant && !a.constant && c.unit.on(CompareConst) {
			r := c.reader(raw[0], sc)
			return c.withCond(compareConst(kind, slow, ptr, a, r, b.value, yf), compareConstCond(kind, slow, ptr, a, r, b.value, yf))
		}
		// one pointer for the node to keep across the evaluation of a
		k := &struct {
			y    numFn
			kind int
			ptr  string
			slow func(ptr string, a, b any) (any, error)
		}{numberOf(b), kind, ptr, slow}
		x := numberOf(a)
		n := &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			xf, xok, xv, err := x(fr)
			if err != nil {
				return nil, err
			}
			yf, yok, yv, err := k.y(fr)
			if err != nil {
				return nil, err
			}
			if xok && yok {
				if !fr.rt.spend(2) {
					return nil, fr.rt.exhausted(k.ptr)
				}
				return test(k.kind, xf, yf), nil
			}
			if err := fr.rt.charge(k.ptr, numCost(xok, xv)+numCost(yok, yv)); err != nil {
				return nil, err
			}
			return k.slow(k.ptr, boxed(xf, xok, xv), boxed(yf, yok, yv))
		}}
		if a.constant && b.constant {
			return fold(n)
		}
		return n
	}
}

// compareConst is compare's node when the second argument is a constant number y, boxed as yv
// (x < 8): the same node without reading, weighing and checking the constant at each evaluation.
//
//go:noinline
func compareConst(kind int, slow func(ptr string, a, b any) (any, error), ptr string, a *node, r *reader, yv any, y float64) *node {
	k := &constCompare{a: a, r: r, kind: kind, y: y, ptr: ptr, slow: slow, yv: yv}
	if num := a.num; num != nil {
		return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			xf, ok, x, err := num(fr)
			if err != nil {
				return nil, err
			}
			if !ok {
				return k.other(fr, x)
			}
			if !fr.rt.spend(2) {
				return nil, fr.rt.exhausted(k.ptr)
			}
			return test(k.kind, xf, k.y), nil
		}}
	}
	if r != nil {
		// a variable (see reader)
		return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			x, ok := fr.rt.quick(k.r)
			if !ok {
				var err error
				if x, err = k.a.eval(fr); err != nil {
					return nil, err
				}
			}
			xf, ok := x.(float64)
			if !ok {
				return k.other(fr, x)
			}
			if !fr.rt.spend(2) {
				return nil, fr.rt.exhausted(k.ptr)
			}
			return test(k.kind, xf, k.y), nil
		}}
	}
	return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		x, err := k.a.eval(fr)
		if err != nil {
			return nil, err
		}
		xf, ok := x.(float64)
		if !ok {
			return k.other(fr, x)
		}
		if !fr.rt.spend(2) {
			return nil, fr.rt.exhausted(k.ptr)
		}
		return test(k.kind, xf, k.y), nil
	}}
}

// constCompare is what compareConst's node needs besides its operand: one pointer for the node
// to keep across the operand's evaluation, where the values themselves would all be kept.
type constCompare struct {
	a    *node
	r    *reader
	kind int
	y    float64
	ptr  string
	slow func(ptr string, a, b any) (any, error)
	yv   any
}

// other is compareConst's node when the operand x is not a number.
func (k *constCompare) other(fr *frame, x any) (any, error) {
	if err := fr.rt.charge(k.ptr, cost1(x)+1); err != nil {
		return nil, err
	}
	return k.slow(k.ptr, x, k.yv)
}

// test compares two numbers as comparison kind does. Numbers are never NaN, so this agrees with
// the three-way order.
func test(kind int, x, y float64) bool {
	switch kind {
	case cmpLT:
		return x < y
	case cmpLE:
		return x <= y
	case cmpGT:
		return x > y
	}
	return x >= y
}

// buildEquality builds == (negate false) and != (negate true): deep(opEq) with the weight of a
// constant operand computed once and a direct comparison against a constant string or number.
//
//go:noinline
func buildEquality(negate bool) builder {
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		args := c.compileArgs(raw, ptr, sc, depth)
		x, y := args[0], args[1]
		if x.constant && y.constant {
			return fold(&node{ptr: ptr, eval: func(fr *frame) (any, error) {
				if err := fr.rt.chargeWeight(ptr, x.value); err != nil {
					return nil, err
				}
				if err := fr.rt.chargeWeight(ptr, y.value); err != nil {
					return nil, err
				}
				return value.Equal(x.value, y.value) != negate, nil
			}})
		}
		other, k := x, y
		if x.constant {
			other, k = y, x
		}
		if w := scalarWeight(k.value); k.constant && w > 0 {
			r := c.reader(raw[0], sc)
			if other == y {
				r = c.reader(raw[1], sc)
			}
			return c.withCond(equalConst(negate, ptr, other, r, k.value, w), equalConstCond(negate, ptr, other, r, k.value, w))
		}
		return c.withCond(equalNode(negate, ptr, x, y), equalNodeCond(negate, ptr, x, y, c.reader(raw[0], sc), c.reader(raw[1], sc)))
	}
}

// equalNode is buildEquality's node of two operands that are not constant scalars.
//
//go:noinline
func equalNode(negate bool, ptr string, x, y *node) *node {
	// one pointer for the node to keep across the evaluation of x
	k := &struct {
		y      *node
		negate bool
		ptr    string
	}{y, negate, ptr}
	return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		a, err := x.get(fr)
		if err != nil {
			return nil, err
		}
		b, err := k.y.get(fr)
		if err != nil {
			return nil, err
		}
		// two strings or two numbers: both weights charged at once, which fails exactly when
		// charging them one after the other would
		if as, ok := a.(string); ok {
			if bs, ok := b.(string); ok {
				if !fr.rt.spend(2 + len(as)/64 + len(bs)/64) {
					return nil, fr.rt.exhausted(k.ptr)
				}
				return (as == bs) != k.negate, nil
			}
		} else if af, ok := a.(float64); ok {
			if bf, ok := b.(float64); ok {
				if !fr.rt.spend(2) {
					return nil, fr.rt.exhausted(k.ptr)
				}
				return (af == bf) != k.negate, nil
			}
		}
		if err := fr.rt.chargeWeight(k.ptr, a); err != nil {
			return nil, err
		}
		if err := fr.rt.chargeWeight(k.ptr, b); err != nil {
			return nil, err
		}
		return value.Equal(a, b) != k.negate, nil
	}}
}

// equalConst is buildEquality's node when one operand is the constant scalar kv, of weight w:
// the other is evaluated (constants have no effects, so the order of evaluation does not matter),
// both weights are charged at once, which fails exactly when charging them one after the other
// would, and the other's value is compared with kv directly.
//
//go:noinline
func equalConst(negate bool, ptr string, other *node, r *reader, kv any, w int64) *node {
	k := &constEqual{arg: other, r: r, w: w, negate: negate, ptr: ptr}
	switch cv := kv.(type) {
	case string:
		k.s = cv
		if r != nil {
			// a variable (see reader)
			return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
				v, ok := fr.rt.quick(k.r)
				if !ok {
					var err error
					if v, err = k.arg.eval(fr); err != nil {
						return nil, err
					}
				}
				s, ok := v.(string)
				if !ok {
					return k.other(fr, v)
				}
				if !fr.rt.spend(1 + len(s)/64 + int(k.w)) {
					return nil, fr.rt.exhausted(k.ptr)
				}
				return (s == k.s) != k.negate, nil
			}}
		}
		return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			v, err := k.arg.eval(fr)
			if err != nil {
				return nil, err
			}
			s, ok := v.(string)
			if !ok {
				return k.other(fr, v)
			}
			if !fr.rt.spend(1 + len(s)/64 + int(k.w)) {
				return nil, fr.rt.exhausted(k.ptr)
			}
			return (s == k.s) != k.negate, nil
		}}
	case float64:
		k.f = cv
		if num := other.num; num != nil {
			return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
				f, ok, v, err := num(fr)
				if err != nil {
					return nil, err
				}
				if !ok {
					return k.other(fr, v)
				}
				if !fr.rt.spend(1 + int(k.w)) {
					return nil, fr.rt.exhausted(k.ptr)
				}
				return (f == k.f) != k.negate, nil
			}}
		}
		return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			v, err := k.arg.eval(fr)
			if err != nil {
				return nil, err
			}
			f, ok := v.(float64)
			if !ok {
				return k.other(fr, v)
			}
			if !fr.rt.spend(1 + int(k.w)) {
				return nil, fr.rt.exhausted(k.ptr)
			}
			return (f == k.f) != k.negate, nil
		}}
	case bool:
		k.b = cv
		return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			v, err := k.arg.eval(fr)
			if err != nil {
				return nil, err
			}
			b, ok := v.(bool)
			if !ok {
				return k.other(fr, v)
			}
			if !fr.rt.spend(1 + int(k.w)) {
				return nil, fr.rt.exhausted(k.ptr)
			}
			return (b == k.b) != k.negate, nil
		}}
	}
	// null (x == null, x != null): the value's scalar weight is computed in line, as it is more
	// often a string or a number than null
	if r != nil {
		// a variable (see reader)
		return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			v, ok := fr.rt.quick(k.r)
			if !ok {
				var err error
				if v, err = k.arg.eval(fr); err != nil {
					return nil, err
				}
			}
			if v == nil {
				if !fr.rt.spend(1 + int(k.w)) {
					return nil, fr.rt.exhausted(k.ptr)
				}
				return !k.negate, nil
			}
			vw := scalarWeight(v)
			if vw == 0 {
				return k.other(fr, v)
			}
			if !fr.rt.spend(int(vw + k.w)) {
				return nil, fr.rt.exhausted(k.ptr)
			}
			return k.negate, nil
		}}
	}
	return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		v, err := k.arg.eval(fr)
		if err != nil {
			return nil, err
		}
		if v == nil {
			if !fr.rt.spend(1 + int(k.w)) {
				return nil, fr.rt.exhausted(k.ptr)
			}
			return !k.negate, nil
		}
		vw := scalarWeight(v)
		if vw == 0 {
			return k.other(fr, v)
		}
		if !fr.rt.spend(int(vw + k.w)) {
			return nil, fr.rt.exhausted(k.ptr)
		}
		return k.negate, nil
	}}
}

// constEqual is what equalConst's node needs besides its operand: one pointer for the node to
// keep across the operand's evaluation, where the values themselves would all be kept.
type constEqual struct {
	arg    *node
	r      *reader
	w      int64
	s      string
	f      float64
	b      bool
	negate bool
	ptr    string
}

// other is equalConst's node when the operand v is not of the constant's type: never equal.
func (k *constEqual) other(fr *frame, v any) (any, error) {
	if err := fr.rt.chargeWeightPlus(k.ptr, v, k.w); err != nil {
		return nil, err
	}
	return k.negate, nil
}

// opIn is in: contains with the operands the other way round.
func opIn(ptr string, a, b any) (any, error) { return containsOp(ptr, "in", b, a, 1) }

// buildContains builds contains (in false) and in (in true): deep(opContains) and deep(opIn), with
// a direct comparison when the container is a constant list of scalars (in(x, [12, 24, 36])) or
// the item a constant string (in("admin", roles)).
//
//go:noinline
func buildContains(in bool) builder {
	fn := opContains
	if in {
		fn = opIn
	}
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		args := c.compileArgs(raw, ptr, sc, depth)
		n := deepNode(fn, ptr, args[0], args[1])
		list, item, itemRaw := args[0], args[1], raw[1]
		if in {
			list, item, itemRaw = item, list, raw[0]
		}
		if !c.unit.on(Contain) || n.constant || list.constant == item.constant {
			return n
		}
		if l, ok := list.value.([]any); ok && list.constant {
			if set, ok := scalarSetOf(l); ok {
				return containsConst(ptr, item, c.reader(itemRaw, sc), set, value.Weight(l, math.MaxInt64))
			}
		}
		if s, ok := item.value.(string); ok && item.constant {
			return containsString(fn, ptr, list, s, in, scalarWeight(s))
		}
		return n
	}
}

// scalarSet is a constant list of scalars, as in and contains compare a value with its elements.
type scalarSet struct {
	nums          []float64
	strs          []string
	many          map[string]bool // strs, when there are many
	null, yes, no bool
}

// scalarSetOf returns the scalars of l; ok is false when an element is an array or an object.
func scalarSetOf(l []any) (set *scalarSet, ok bool) {
	set = &scalarSet{}
	for _, x := range l {
		switch t := x.(type) {
		case float64:
			set.nums = append(set.nums, t)
		case string:
			set.strs = append(set.strs, t)
		case bool:
			set.yes, set.no = set.yes || t, set.no || !t
		case nil:
			set.null = true
		default:
			return nil, false
		}
	}
	if len(set.strs) > 16 {
		set.many = map[string]bool{}
		for _, s := range set.strs {
			set.many[s] = true
		}
	}
	return set, true
}

// has reports whether an element of the set equals v (see value.Equal).
func (set *scalarSet) has(v any) bool {
	if s, ok := v.(string); ok {
		if set.many != nil {
			return set.many[s]
		}
		for _, t := range set.strs {
			if t == s {
				return true
			}
		}
		return false
	}
	switch t := v.(type) {
	case float64:
		for _, f := range set.nums {
			if f == t {
				return true
			}
		}
	case bool:
		return (t && set.yes) || (!t && set.no)
	case nil:
		return set.null
	}
	return false // an array or an object equals no scalar
}

// containsConst is buildContains's node when the container is a constant list of scalars, of
// weight w: deepNode's, with the item compared with the elements directly.
//
//go:noinline
func containsConst(ptr string, item *node, r *reader, set *scalarSet, w int64) *node {
	k := &struct {
		item *node
		r    *reader
		set  *scalarSet
		w    int64
		ptr  string
	}{item, r, set, w, ptr}
	return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		v, ok := fr.rt.quick(k.r)
		if !ok {
			var err error
			if v, err = k.item.eval(fr); err != nil {
				return nil, err
			}
		}
		if vw := scalarWeight(v); vw > 0 {
			if !fr.rt.spend(int(vw + k.w)) {
				return nil, fr.rt.exhausted(k.ptr)
			}
		} else if err := fr.rt.chargeWeightPlus(k.ptr, v, k.w); err != nil {
			return nil, err
		}
		return k.set.has(v), nil
	}}
}

// containsString is buildContains's node when the item is the constant string s, of weight w:
// deepNode's, with a list's elements compared with s directly.
//
//go:noinline
func containsString(fn func(ptr string, a, b any) (any, error), ptr string, list *node, s string, in bool, w int64) *node {
	k := &struct {
		fn  func(ptr string, a, b any) (any, error)
		s   string
		w   int64
		ptr string
		in  bool
	}{fn, s, w, ptr, in}
	return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		v, err := list.eval(fr)
		if err != nil {
			return nil, err
		}
		if err := fr.rt.chargeWeightPlus(k.ptr, v, k.w); err != nil {
			return nil, err
		}
		if l, ok := v.([]any); ok {
			for _, x := range l {
				if t, ok := x.(string); ok && t == k.s {
					return true, nil
				}
			}
			return false, nil
		}
		if k.in {
			return k.fn(k.ptr, k.s, v)
		}
		return k.fn(k.ptr, v, k.s)
	}}
}

const (
	arAdd = iota
	arSub
	arMul
)

var arNames = [...]string{arAdd: "+", arSub: "-", arMul: "*"}

// arith builds +, - and *: with two arguments, binary with a direct path for two numbers, offering
// its result unboxed (and boxed without an allocation when it is a small integer); otherwise
// strict(slow).
//
//go:noinline
func arith(kind int, slow func(ptr string, args []any) (any, error)) builder {
	generic := strict(slow)
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		if len(raw) != 2 {
			return generic(c, name, ptr, raw, sc, depth)
		}
		args := c.compileArgs(raw, ptr, sc, depth)
		a, b := args[0], args[1]
		if yf, ok := b.value.(float64); ok && b.constant && !a.constant {
			return arithConst(kind, ptr, a, yf, c.unit.on(Unbox))
		}
		// one pointer for the node to keep across the evaluation of a
		k := &struct {
			y    numFn
			kind int
			ptr  string
		}{numberOf(b), kind, ptr}
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
			if xok && yok {
				if !fr.rt.spend(2) {
					return 0, false, nil, fr.rt.exhausted(k.ptr)
				}
				return arithOf(k.kind, k.ptr, xf, yf)
			}
			if err := fr.rt.charge(k.ptr, numCost(xok, xv)+numCost(yok, yv)); err != nil {
				return 0, false, nil, err
			}
			return 0, false, nil, nullOrMismatch(k.ptr, arNames[k.kind], xok, xv, yok, yv)
		}
		n := &node{ptr: ptr, eval: evalNum(calc)}
		if c.unit.on(Unbox) {
			n.num = calc
		}
		if a.constant && b.constant {
			return fold(n)
		}
		return n
	}
}

// arithOf computes x op y for arith.
func arithOf(kind int, ptr string, x, y float64) (float64, bool, any, error) {
	var f float64
	var ok bool
	switch kind {
	case arAdd:
		f, ok = num.Add2(x, y)
	case arSub:
		f, ok = num.Sub(x, y)
	default:
		f, ok = num.Mul2(x, y)
	}
	if !ok {
		return 0, false, nil, diag.ResultOutOfRange(ptr)
	}
	return f, true, nil, nil
}

// arithConst is arith's two-argument node when the second argument is a constant number y
// (x * 2, x + 1): the same node without reading and checking the constant at each evaluation.
//
//go:noinline
func arithConst(kind int, ptr string, a *node, y float64, unbox bool) *node {
	// one pointer for the node to keep across the evaluation of a
	k := &struct {
		y    float64
		kind int
		ptr  string
	}{y, kind, ptr}
	x := numberOf(a)
	calc := func(fr *frame) (float64, bool, any, error) {
		xf, ok, xv, err := x(fr)
		if err != nil {
			return 0, false, nil, err
		}
		if ok {
			if !fr.rt.spend(2) {
				return 0, false, nil, fr.rt.exhausted(k.ptr)
			}
			return arithOf(k.kind, k.ptr, xf, k.y)
		}
		if err := fr.rt.charge(k.ptr, cost1(xv)+1); err != nil {
			return 0, false, nil, err
		}
		return 0, false, nil, nullOrMismatch(k.ptr, arNames[k.kind], false, xv, true, nil)
	}
	n := &node{ptr: ptr, eval: evalNum(calc)}
	if unbox {
		n.num = calc
	}
	return n
}

// buildConcat builds concat: with two arguments, binary with a direct path for two strings
// (also offered unboxed, as the node's str); otherwise strict(opConcat).
func buildConcat(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
	if len(raw) != 2 {
		return strict(opConcat)(c, name, ptr, raw, sc, depth)
	}
	args := c.compileArgs(raw, ptr, sc, depth)
	a, b := args[0], args[1]
	str := func(fr *frame) (string, bool, any, error) {
		x, err := a.get(fr)
		if err != nil {
			return "", false, nil, err
		}
		y, err := b.get(fr)
		if err != nil {
			return "", false, nil, err
		}
		if err := fr.rt.charge(ptr, cost1(x)+cost1(y)); err != nil {
			return "", false, nil, err
		}
		if xs, ok := x.(string); ok {
			if ys, ok := y.(string); ok {
				return xs + ys, true, nil, nil
			}
		}
		v, err := opConcat(ptr, []any{x, y})
		return "", false, v, err
	}
	n := &node{ptr: ptr, str: str, eval: func(fr *frame) (any, error) {
		s, ok, v, err := str(fr)
		if err != nil {
			return nil, err
		}
		if ok {
			return s, nil
		}
		return v, nil
	}}
	if a.constant && b.constant {
		return fold(n)
	}
	return n
}

// buildAffix builds startsWith (suffix false) and endsWith (suffix true): binary(opStartsWith)
// and binary(opEndsWith), reading a string argument unboxed when its node offers it.
//
//go:noinline
func buildAffix(suffix bool) builder {
	slow := opStartsWith
	if suffix {
		slow = opEndsWith
	}
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		args := c.compileArgs(raw, ptr, sc, depth)
		a, b := args[0], args[1]
		n := &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			x, err := a.get(fr)
			if err != nil {
				return nil, err
			}
			var y any
			var ys string
			isStr := false
			if b.str != nil {
				ys, isStr, y, err = b.str(fr)
			} else {
				y, err = b.get(fr)
			}
			if err != nil {
				return nil, err
			}
			if !isStr {
				ys, isStr = y.(string)
			}
			cy := cost1(y)
			if isStr {
				cy = 1 + len(ys)/64
			}
			if err := fr.rt.charge(ptr, cost1(x)+cy); err != nil {
				return nil, err
			}
			if xs, ok := x.(string); ok && isStr {
				if suffix {
					return strings.HasSuffix(xs, ys), nil
				}
				return strings.HasPrefix(xs, ys), nil
			}
			if isStr {
				y = ys
			}
			return slow(ptr, x, y)
		}}
		if a.constant && b.constant {
			return fold(n)
		}
		return n
	}
}

// buildLength builds length: unary(opLength), and for the length of a filter the filter's count
// without the list (the same charges: the filter's, then 1 + the length, as length charges a
// list it reads).
func buildLength(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
	args := c.compileArgs(raw, ptr, sc, depth)
	a := args[0]
	n := &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		v, err := a.get(fr)
		if err != nil {
			return nil, err
		}
		if err := fr.rt.charge(ptr, cost1(v)); err != nil {
			return nil, err
		}
		return opLength(ptr, v)
	}}
	if a.constant {
		return fold(n)
	}
	if c.unit.on(Fuse) && a.count != nil {
		n.eval = func(fr *frame) (any, error) {
			k, null, err := a.count(fr)
			if err != nil {
				return nil, err
			}
			if null {
				if err := fr.rt.charge(ptr, 1); err != nil {
					return nil, err
				}
				return nil, nil
			}
			if err := fr.rt.charge(ptr, 1+k); err != nil {
				return nil, err
			}
			return value.Number(float64(k)), nil
		}
	}
	return n
}

// short2 is buildShort of two arguments (and, or): the same evaluation without the loop.
//
//go:noinline
func short2(name, ptr string, a, b *node, stop bool) *node {
	// one pointer for the node to keep across the first operand's evaluation
	k := &struct {
		b         *node
		name, ptr string
		stop      bool
	}{b, name, ptr, stop}
	return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		v, err := a.eval(fr)
		if err != nil {
			return nil, err
		}
		t, ok := v.(bool)
		if !ok {
			if t, err = truth(k.ptr, k.name, 0, v); err != nil {
				return nil, err
			}
		}
		if t == k.stop {
			return t, nil
		}
		if v, err = k.b.eval(fr); err != nil {
			return nil, err
		}
		if t, ok = v.(bool); !ok {
			if t, err = truth(k.ptr, k.name, 1, v); err != nil {
				return nil, err
			}
		}
		return t, nil
	}}
}
