package machine

import (
	"math"
	"sort"
	"sync/atomic"
	"unicode/utf8"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/num"
	"github.com/sdods/sdods/engine/internal/syntax"
	"github.com/sdods/sdods/engine/internal/value"
)

// builder compiles one operator application whose arity has been checked.
type builder func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node

// coreOperators are the builders of the core profile: exactly 45 operators, those of
// syntax.CoreOperators (their arity, checked by the analysis). spec/v1/operators.md documents
// each. It is filled by init only because the builders reach back into the compiler, which reads
// the table (a package-level initializer would be an initialization cycle).
var coreOperators map[string]builder

func init() {
	coreOperators = coreTable()
	for name := range syntax.CoreOperators {
		if coreOperators[name] == nil {
			panic("machine: no builder for the core operator " + name)
		}
	}
	if len(coreOperators) != len(syntax.CoreOperators) {
		panic("machine: a builder for an operator syntax.CoreOperators does not name")
	}
}

func coreTable() map[string]builder {
	return map[string]builder{
		// comparison
		"==":      buildEquality(false),
		"!=":      buildEquality(true),
		"<":       compare(cmpLT),
		"<=":      compare(cmpLE),
		">":       compare(cmpGT),
		">=":      compare(cmpGE),
		"between": strictDirect(callBetween),
		// logic and conditionals (lazy)
		"and":      buildAnd,
		"or":       buildOr,
		"not":      unaryStep(stepNot, opNot),
		"if":       buildIf,
		"coalesce": buildCoalesce,
		// arithmetic
		"+":     arith(arAdd, opAdd),
		"-":     arith(arSub, opSub),
		"*":     arith(arMul, opMul),
		"/":     buildDivide(false),
		"mod":   buildDivide(true),
		"abs":   buildNumeric(opAbs, absNum),
		"min":   buildExtreme(false),
		"max":   buildExtreme(true),
		"round": buildRound,
		"sum":   buildSum,
		// strings
		"upper":      unary(opUpper),
		"lower":      unary(opLower),
		"trim":       unaryStep(stepTrim, opTrim),
		"concat":     buildConcat,
		"substring":  strictDirect(callSubstring),
		"text":       unaryStep(stepText, opText),
		"startsWith": buildAffix(false),
		"endsWith":   buildAffix(true),
		"matches":    buildMatches,
		// strings and lists
		"length":   buildLength,
		"contains": buildContains(false),
		"in":       buildContains(true),
		// lists (the body sees each element bound to a name, "it" by default)
		"map":    iterate(iterMap),
		"filter": iterate(iterFilter),
		"some":   iterate(iterSome),
		"all":    iterate(iterAll),
		// types and null
		"typeOf":  unary(func(_ string, a any) (any, error) { return value.TypeOf(a), nil }),
		"isEmpty": unaryStep(stepIsEmpty, opIsEmpty),
		"literal": buildLiteral,
		// dates
		"isDate":       buildIsDate,
		"yearsBetween": buildDateDiff,
		"daysBetween":  buildDateDiff,
		"dateAdd":      buildDateAdd,
	}
}

// CoreOperators returns the names of the core operators, sorted.
func CoreOperators() []string {
	out := make([]string, 0, len(coreOperators))
	for name := range coreOperators {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func itoa(i int) string { return diag.Index("", i)[1:] }

// compileOp compiles {op, args}.
func (c *compiler) compileOp(name string, raw []*syntax.Expr, ptr string, sc *scope, depth int) *node {
	if len(name) > 2 && name[:2] == "x-" {
		return c.compileCustom(name, raw, ptr, sc, depth)
	}
	build := coreOperators[name]
	if b := c.unit.builders[name]; b != nil {
		build = b
	}
	if build == nil || !syntax.CoreOperators[name].Accepts(name, len(raw)) {
		unchecked(ptr, "operator "+name+" unknown or given the wrong number of arguments")
	}
	return build(c, name, ptr, raw, sc, depth)
}

// fold evaluates a node whose arguments are all constant once, at load, and turns it into a
// constant when that succeeds; a failure is left to happen (and be reported) at evaluation.
func fold(n *node) *node {
	rt := &runtime{limit: DefaultBudget}
	v, err := safeEval(n, &frame{rt: rt})
	if err != nil {
		return n
	}
	return constNode(v, n.ptr)
}

func safeEval(n *node, fr *frame) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, diag.Panic(n.ptr, r)
		}
	}()
	return n.eval(fr)
}

func allConstant(args []*node) bool {
	for _, a := range args {
		if !a.constant {
			return false
		}
	}
	return true
}

// strict builds an operator that evaluates every argument, left to right, then applies fn.
//
//go:noinline
func strict(fn func(ptr string, args []any) (any, error)) builder {
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		args := c.compileArgs(raw, ptr, sc, depth)
		n := &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			vals := make([]any, len(args))
			for i, a := range args {
				v, err := a.get(fr)
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
			if err := fr.rt.charge(ptr, argCost(vals...)); err != nil {
				return nil, err
			}
			return fn(ptr, vals)
		}}
		if allConstant(args) {
			return fold(n)
		}
		return n
	}
}

// Operators that strictDirect builds; their functions keep none of their arguments.
const (
	callBetween = iota
	callRound
	callSubstring
)

// callStrict calls the function of operator op. The calls are direct so that the compiler sees
// the arguments stay in the caller's frame (a call through a function value would move them to
// the heap).
func callStrict(op int, ptr string, args []any) (any, error) {
	switch op {
	case callBetween:
		return opBetween(ptr, args)
	case callRound:
		return opRound(ptr, args)
	}
	return opSubstring(ptr, args)
}

// strictDirect is strict(fn) for the operator op of callStrict, with up to four argument values
// in an array on the stack rather than a new list.
//
//go:noinline
func strictDirect(op int) builder {
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		args := c.compileArgs(raw, ptr, sc, depth)
		n := &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			var buf [4]any
			vals := buf[:]
			if len(args) > len(buf) {
				vals = make([]any, len(args))
			}
			vals = vals[:len(args)]
			for i, a := range args {
				v, err := a.get(fr)
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
			if err := fr.rt.charge(ptr, argCost(vals...)); err != nil {
				return nil, err
			}
			return callStrict(op, ptr, vals)
		}}
		if allConstant(args) {
			return fold(n)
		}
		return n
	}
}

// unary builds an operator of one argument: it evaluates the argument, charges cost1 of its
// value and applies fn. The node is a chain (see chain.go): applied to a chain, it extends it.
func unary(fn func(ptr string, a any) (any, error)) builder { return unaryStep(stepCall, fn) }

// unaryStep is unary for an operator that has a direct path in a chain.
//
//go:noinline
func unaryStep(kind stepKind, fn func(ptr string, a any) (any, error)) builder {
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		args := c.compileArgs(raw, ptr, sc, depth)
		a := args[0]
		ch := c.extend(a, step{kind: kind, ptr: ptr, fn: fn})
		n := &node{ptr: ptr, chain: ch, eval: ch.evaluation()}
		switch {
		case len(ch.steps) > 1:
		case kind == stepNot:
			// one pointer for the node to keep across the argument's evaluation
			k := &struct {
				ptr string
				fn  func(ptr string, a any) (any, error)
			}{ptr, fn}
			n.eval = func(fr *frame) (any, error) {
				v, err := a.eval(fr)
				if err != nil {
					return nil, err
				}
				if b, ok := v.(bool); ok {
					// opNot without reading the condition through truth; cost1 of a boolean
					if !fr.rt.spend(1) {
						return nil, fr.rt.exhausted(k.ptr)
					}
					return !b, nil
				}
				if err := fr.rt.charge(k.ptr, cost1(v)); err != nil {
					return nil, err
				}
				return k.fn(k.ptr, v)
			}
		default:
			// the operator on its own
			k := &struct {
				ptr string
				fn  func(ptr string, a any) (any, error)
			}{ptr, fn}
			n.eval = func(fr *frame) (any, error) {
				v, err := a.eval(fr)
				if err != nil {
					return nil, err
				}
				if !fr.rt.spend(cost1(v)) {
					return nil, fr.rt.exhausted(k.ptr)
				}
				return k.fn(k.ptr, v)
			}
		}
		if a.constant {
			return fold(n)
		}
		return c.withCond(n, ch.condition())
	}
}

//go:noinline
func binary(fn func(ptr string, a, b any) (any, error)) builder {
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		args := c.compileArgs(raw, ptr, sc, depth)
		a, b := args[0], args[1]
		n := &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			x, err := a.get(fr)
			if err != nil {
				return nil, err
			}
			y, err := b.get(fr)
			if err != nil {
				return nil, err
			}
			if err := fr.rt.charge(ptr, cost1(x)+cost1(y)); err != nil {
				return nil, err
			}
			return fn(ptr, x, y)
		}}
		if a.constant && b.constant {
			return fold(n)
		}
		return n
	}
}

// deep builds an operator that compares values deeply (==, !=, contains, in): the whole of
// both operands is charged to the budget before the comparison reads them.
//
//go:noinline
func deep(fn func(ptr string, a, b any) (any, error)) builder {
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		args := c.compileArgs(raw, ptr, sc, depth)
		return deepNode(fn, ptr, args[0], args[1])
	}
}

// deepNode is deep's node of the operands x and y.
//
//go:noinline
func deepNode(fn func(ptr string, a, b any) (any, error), ptr string, x, y *node) *node {
	n := &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		a, err := x.get(fr)
		if err != nil {
			return nil, err
		}
		b, err := y.get(fr)
		if err != nil {
			return nil, err
		}
		if err := fr.rt.chargeWeight(ptr, a); err != nil {
			return nil, err
		}
		if err := fr.rt.chargeWeight(ptr, b); err != nil {
			return nil, err
		}
		return fn(ptr, a, b)
	}}
	if x.constant && y.constant {
		return fold(n)
	}
	// one constant operand (in(x, [...]), contains(x, "s")): its weight is computed once and
	// charged with the other's, at once, which fails exactly when charging them one after the
	// other would (constants have no effects, so evaluating one first does not matter)
	if x.constant || y.constant {
		k, other, first := y, x, false
		if x.constant {
			k, other, first = x, y, true
		}
		w, kv := value.Weight(k.value, math.MaxInt64), k.value
		n.eval = func(fr *frame) (any, error) {
			v, err := other.eval(fr)
			if err != nil {
				return nil, err
			}
			if err := fr.rt.chargeWeightPlus(ptr, v, w); err != nil {
				return nil, err
			}
			if first {
				return fn(ptr, kv, v)
			}
			return fn(ptr, v, kv)
		}
	}
	return n
}

// compileCustom compiles an x- operator: declared in the unit, supplied by the host at evaluation.
func (c *compiler) compileCustom(name string, raw []*syntax.Expr, ptr string, sc *scope, depth int) *node {
	args := c.compileArgs(raw, ptr, sc, depth)
	if !c.unit.declared[name] {
		unchecked(ptr, "undeclared custom operator "+name)
	}
	c.custom[name] = true
	site := &customSite{ptr: ptr, name: name}
	// all arguments constant scalars: their weights are charged with the call's unit, at once,
	// which fails exactly when charging them one after the other would
	if w, ok := constScalarWeight(args); ok {
		return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			op := fr.rt.custom[name]
			if op == nil {
				return nil, site.unavailable(fr.rt)
			}
			if err := fr.rt.charge(ptr, w); err != nil {
				return nil, err
			}
			vals := fr.rt.argList(len(args))
			for i, a := range args {
				vals[i] = a.value
			}
			return site.call(fr.rt, op, vals)
		}}
	}
	return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		op := fr.rt.custom[name]
		if op == nil {
			return nil, site.unavailable(fr.rt)
		}
		if err := fr.rt.charge(ptr, 1); err != nil {
			return nil, err
		}
		vals := fr.rt.argList(len(args))
		for i, a := range args {
			v, err := a.get(fr)
			if err != nil {
				return nil, err
			}
			vals[i] = v
			if err := fr.rt.chargeWeight(ptr, v); err != nil {
				return nil, err
			}
		}
		return site.call(fr.rt, op, vals)
	}}
}

// customSite is one application of a custom operator. Its failures under a machine that reads
// only codes (see Machine.CodesOnly) share one diagnostic each, made on first use, so that a
// failing host operator costs no formatting (nor a call of its error's Error method).
type customSite struct {
	ptr, name          string
	failed, unsupplied atomic.Pointer[diag.Diagnostic]
}

// unavailable is the error of an operator the host did not supply.
func (s *customSite) unavailable(rt *runtime) error {
	if !rt.codes {
		return diag.Unavailable(s.ptr, s.name)
	}
	d := s.unsupplied.Load()
	if d == nil {
		d = diag.Unavailable(s.ptr, s.name)
		s.unsupplied.Store(d)
	}
	return d
}

// failure is the error of an operator that failed because of why (an error, a panic value or a
// reason of the engine's).
func (s *customSite) failure(rt *runtime, why any) error {
	if !rt.codes {
		return diag.Failed(s.ptr, s.name, why)
	}
	d := s.failed.Load()
	if d == nil {
		d = diag.FailedAt(s.ptr, s.name)
		s.failed.Store(d)
	}
	return d
}

// call runs a host operator, turning a panic or an error into OPERATOR_FAILED and checking that
// what it returned is a JSON value.
func (s *customSite) call(rt *runtime, op Operator, args []any) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, s.failure(rt, r)
		}
	}()
	v, err = op(args)
	if err != nil {
		return nil, s.failure(rt, err)
	}
	// a scalar that needs no conversion is returned as is, as Normalize would
	switch t := v.(type) {
	case nil, bool:
		return v, nil
	case string:
		if utf8.ValidString(t) {
			return v, nil
		}
	case float64:
		if num.Finite(t) && (t != 0 || !math.Signbit(t)) {
			return v, nil
		}
	}
	if value.Depth(v, value.MaxEnvDepth) > value.MaxEnvDepth {
		return nil, s.failure(rt, "result nested too deep")
	}
	nv, d := value.Normalize(v, s.ptr)
	if d != nil {
		return nil, s.failure(rt, d.Message)
	}
	return nv, nil
}

// constScalarWeight returns 1 plus the weights of args when every one is a constant scalar.
func constScalarWeight(args []*node) (int, bool) {
	w := 1
	for _, a := range args {
		if !a.constant {
			return 0, false
		}
		sw := scalarWeight(a.value)
		if sw == 0 {
			return 0, false
		}
		w += int(sw)
	}
	return w, true
}
