package machine

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/sdods/sdods/engine/internal/date"
	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/num"
	"github.com/sdods/sdods/engine/internal/syntax"
	"github.com/sdods/sdods/engine/internal/value"
)

func typeErr(ptr, op string, i int, want string, got any) error {
	return diag.TypeMismatch(ptr, op, i, want, value.TypeOf(got))
}

func numberOut(ptr string, f float64, ok bool) (any, error) {
	if !ok {
		return nil, diag.ResultOutOfRange(ptr)
	}
	return value.Number(f), nil
}

// --- comparison ---

// likeArgument is what order says it wants of an operand that does not match argument i (0 to
// 2): the texts made once, as rules that fail closed on a mistyped field fail on every evaluation.
var likeArgument = [2][3]string{
	{"a number like argument 1", "a number like argument 2", "a number like argument 3"},
	{"a string like argument 1", "a string like argument 2", "a string like argument 3"},
}

// order compares two non-null operands: both numbers or both strings (code point order).
func order(ptr, op string, a, b any, ia, ib int) (int, error) {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return 0, typeErr(ptr, op, ib, likeArgument[0][ia], b)
		}
		switch {
		case x < y:
			return -1, nil
		case x > y:
			return 1, nil
		}
		return 0, nil
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, typeErr(ptr, op, ib, likeArgument[1][ia], b)
		}
		return strings.Compare(x, y), nil // UTF-8 byte order is code point order
	}
	return 0, typeErr(ptr, op, ia, "a number or a string", a)
}

func cmpOp(test func(int) bool) func(ptr string, a, b any) (any, error) {
	return func(ptr string, a, b any) (any, error) {
		if a == nil || b == nil {
			return false, nil
		}
		c, err := order(ptr, "comparison", a, b, 0, 1)
		if err != nil {
			return nil, err
		}
		return test(c), nil
	}
}

func opBetween(ptr string, args []any) (any, error) {
	x, lo, hi := args[0], args[1], args[2]
	if x == nil || lo == nil || hi == nil {
		return false, nil
	}
	c1, err := order(ptr, "between", lo, x, 1, 0)
	if err != nil {
		return nil, err
	}
	c2, err := order(ptr, "between", x, hi, 0, 2)
	if err != nil {
		return nil, err
	}
	return c1 <= 0 && c2 <= 0, nil
}

// --- logic ---

// truth reads a condition: true, false, or null (which counts as false).
func truth(ptr, op string, i int, v any) (bool, error) {
	switch t := v.(type) {
	case bool:
		return t, nil
	case nil:
		return false, nil
	}
	return false, typeErr(ptr, op, i, "a boolean or null", v)
}

func opNot(ptr string, a any) (any, error) {
	t, err := truth(ptr, "not", 0, a)
	if err != nil {
		return nil, err
	}
	return !t, nil
}

func buildAnd(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
	return buildShort(c, name, ptr, raw, sc, depth, false)
}

func buildOr(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
	return buildShort(c, name, ptr, raw, sc, depth, true)
}

// buildShort builds and (stop == false) and or (stop == true): arguments are evaluated left to
// right until one reads as stop.
func buildShort(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int, stop bool) *node {
	args := c.compileArgs(raw, ptr, sc, depth)
	if c.unit.on(ShortPair) && len(args) == 2 && !allConstant(args) {
		n := short2(name, ptr, args[0], args[1], stop)
		return c.withCond(n, short2Cond(name, ptr, args[0], args[1], stop))
	}
	n := &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		for i, a := range args {
			v, err := a.eval(fr)
			if err != nil {
				return nil, err
			}
			t, ok := v.(bool)
			if !ok {
				if t, err = truth(ptr, name, i, v); err != nil {
					return nil, err
				}
			}
			if t == stop {
				return stop, nil
			}
		}
		return !stop, nil
	}}
	if allConstant(args) {
		return fold(n)
	}
	return n
}

// buildIf builds if(c1, v1, c2, v2, ..., else): only the chosen branch is evaluated.
func buildIf(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
	args := c.compileArgs(raw, ptr, sc, depth)
	n := &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		i := 0
		for ; i+1 < len(args); i += 2 {
			v, err := args[i].eval(fr)
			if err != nil {
				return nil, err
			}
			t, err := truth(ptr, "if", i, v)
			if err != nil {
				return nil, err
			}
			if t {
				return args[i+1].eval(fr)
			}
		}
		return args[i].eval(fr)
	}}
	if len(args) == 3 {
		// the common if(condition, then, else), without the loop
		cond, yes, no := args[0], args[1], args[2]
		// one pointer for the node to keep across the evaluation of the condition
		k := &struct {
			yes, no    *node
			ynum, nnum numFn
			ptr        string
		}{yes, no, numberOf(yes), numberOf(no), ptr}
		n.eval = func(fr *frame) (any, error) {
			v, err := cond.eval(fr)
			if err != nil {
				return nil, err
			}
			t, ok := v.(bool)
			if !ok {
				if t, err = truth(k.ptr, "if", 0, v); err != nil {
					return nil, err
				}
			}
			if t {
				return k.yes.eval(fr)
			}
			return k.no.eval(fr)
		}
		if c.unit.on(Unbox) {
			n.num = func(fr *frame) (float64, bool, any, error) {
				v, err := cond.eval(fr)
				if err != nil {
					return 0, false, nil, err
				}
				t, ok := v.(bool)
				if !ok {
					if t, err = truth(k.ptr, "if", 0, v); err != nil {
						return 0, false, nil, err
					}
				}
				if t {
					return k.ynum(fr)
				}
				return k.nnum(fr)
			}
		}
	}
	if allConstant(args) {
		return fold(n)
	}
	return n
}

// buildCoalesce returns the first argument that is not null, evaluating no further.
func buildCoalesce(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
	args := c.compileArgs(raw, ptr, sc, depth)
	n := &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		for _, a := range args {
			v, err := a.eval(fr)
			if err != nil {
				return nil, err
			}
			if v != nil {
				return v, nil
			}
		}
		return nil, nil
	}}
	if allConstant(args) {
		return fold(n)
	}
	if len(args) > 1 && allConstant(args[1:]) {
		// a value with constant fallbacks: a step of a chain, for an operator applied to it
		st := step{kind: stepCoalesce, ptr: ptr}
		for _, a := range args[1:] {
			if a.value != nil {
				st.fallback = a.value
				break
			}
		}
		n.chain = c.extend(args[0], st)
		if c.unit.on(Fuse) { // off, the loop, which TestChainsMatchTheirParts compares this with
			// the fallback is known: no loop over the arguments
			x, fallback := args[0], st.fallback
			n.eval = func(fr *frame) (any, error) {
				v, err := x.eval(fr)
				if err != nil {
					return nil, err
				}
				if v != nil {
					return v, nil
				}
				return fallback, nil
			}
			if c.unit.on(Unbox) {
				ff, fok := fallback.(float64)
				xnum := numberOf(x)
				n.num = func(fr *frame) (float64, bool, any, error) {
					f, ok, v, err := xnum(fr)
					if err != nil || ok || v != nil {
						return f, ok, v, err
					}
					return ff, fok, fallback, nil
				}
			}
		}
	}
	return n
}

// --- arithmetic ---

// numbers reads number operands into buf (grown when short, so a caller's small array saves
// the allocation); null (ok false) when any operand is null, whatever the types of the others
// (operators.md, "Null arguments"); else the type error of the first that is not a number.
func numbers(buf []float64, ptr, op string, args []any) ([]float64, bool, error) {
	out := buf[:0]
	if cap(out) < len(args) {
		out = make([]float64, 0, len(args))
	}
	out = out[:len(args)]
	bad := -1
	for i, a := range args {
		switch t := a.(type) {
		case float64:
			out[i] = t
		case nil:
			return nil, false, nil
		default:
			if bad < 0 {
				bad = i
			}
		}
	}
	if bad >= 0 {
		return nil, false, typeErr(ptr, op, bad, "a number", args[bad])
	}
	return out, true, nil
}

func opAdd(ptr string, args []any) (any, error) {
	var buf [16]float64
	xs, ok, err := numbers(buf[:0], ptr, "+", args)
	if err != nil || !ok {
		return nil, err
	}
	return numberOutF(ptr)(num.Add(xs...))
}

func opSub(ptr string, args []any) (any, error) {
	var buf [16]float64
	xs, ok, err := numbers(buf[:0], ptr, "-", args)
	if err != nil || !ok {
		return nil, err
	}
	if len(xs) == 1 {
		return numberOutF(ptr)(num.Sub(0, xs[0]))
	}
	return numberOutF(ptr)(num.Sub(xs[0], xs[1]))
}

func opMul(ptr string, args []any) (any, error) {
	var buf [16]float64
	xs, ok, err := numbers(buf[:0], ptr, "*", args)
	if err != nil || !ok {
		return nil, err
	}
	return numberOutF(ptr)(num.Mul(xs...))
}

func opDiv(ptr string, a, b any) (any, error) {
	if x, ok := a.(float64); ok {
		if y, ok := b.(float64); ok { // two numbers, read without numbers
			if y == 0 {
				return nil, nil
			}
			f, ok := num.Div(x, y)
			return numberOut(ptr, f, ok)
		}
	}
	var buf [16]float64
	xs, ok, err := numbers(buf[:0], ptr, "/", []any{a, b})
	if err != nil || !ok || xs[1] == 0 {
		return nil, err
	}
	return numberOutF(ptr)(num.Div(xs[0], xs[1]))
}

func opMod(ptr string, a, b any) (any, error) {
	if x, ok := a.(float64); ok {
		if y, ok := b.(float64); ok { // two numbers, read without numbers
			if y == 0 {
				return nil, nil
			}
			f, ok := num.Mod(x, y)
			return numberOut(ptr, f, ok)
		}
	}
	var buf [16]float64
	xs, ok, err := numbers(buf[:0], ptr, "mod", []any{a, b})
	if err != nil || !ok || xs[1] == 0 {
		return nil, err
	}
	return numberOutF(ptr)(num.Mod(xs[0], xs[1]))
}

func opAbs(ptr string, a any) (any, error) {
	var buf [16]float64
	xs, ok, err := numbers(buf[:0], ptr, "abs", []any{a})
	if err != nil || !ok {
		return nil, err
	}
	return num.Abs(xs[0]), nil
}

// listOrArgs returns the elements of a single array argument, or the arguments themselves.
func listOrArgs(args []any) []any {
	if len(args) == 1 {
		if l, ok := args[0].([]any); ok {
			return l
		}
	}
	return args
}

func extreme(ptr, op string, args []any, better func(a, b float64) bool) (any, error) {
	items := listOrArgs(args)
	var buf [16]float64
	xs, ok, err := numbers(buf[:0], ptr, op, items)
	if err != nil || !ok || len(xs) == 0 {
		return nil, err
	}
	best := xs[0]
	for _, x := range xs[1:] {
		if better(x, best) {
			best = x
		}
	}
	return best, nil
}

func opMin(ptr string, args []any) (any, error) {
	return extreme(ptr, "min", args, func(a, b float64) bool { return a < b })
}

func opMax(ptr string, args []any) (any, error) {
	return extreme(ptr, "max", args, func(a, b float64) bool { return a > b })
}

// integer reads an integral number operand within [lo, hi].
func integer(ptr, op string, i int, v any, lo, hi float64) (int64, error) {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || f < lo || f > hi {
		if ok {
			return 0, diag.Eval(ptr, op, "argument "+itoa(i+1)+" must be an integer from "+fmtNum(lo)+" to "+fmtNum(hi))
		}
		return 0, typeErr(ptr, op, i, "an integer", v)
	}
	return int64(f), nil
}

func fmtNum(f float64) string { s, _ := num.Format(f); return s }

func opRound(ptr string, args []any) (any, error) {
	if args[0] == nil || (len(args) == 2 && args[1] == nil) {
		return nil, nil
	}
	x, ok := args[0].(float64)
	if !ok {
		return nil, typeErr(ptr, "round", 0, "a number", args[0])
	}
	places := int64(0)
	if len(args) == 2 {
		p, err := integer(ptr, "round", 1, args[1], -15, 15)
		if err != nil {
			return nil, err
		}
		places = p
	}
	return numberOutF(ptr)(num.Round(x, int(places)))
}

func opSum(ptr string, a any) (any, error) {
	f, ok, v, err := sumOf(ptr, a)
	return boxed(f, ok, v), err
}

// numberOut adapts a (float64, bool) result of package num.
func numberOutF(ptr string) func(float64, bool) (any, error) {
	return func(f float64, ok bool) (any, error) { return numberOut(ptr, f, ok) }
}

// --- strings ---

func str(ptr, op string, i int, v any) (string, bool, error) {
	switch t := v.(type) {
	case string:
		return t, true, nil
	case nil:
		return "", false, nil
	}
	return "", false, typeErr(ptr, op, i, "a string", v)
}

func asciiMap(s string, from, to byte) string {
	i := 0
	for i < len(s) && (s[i] < from || s[i] > to) {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if b[i] >= from && b[i] <= to {
			b[i] ^= 0x20
		}
	}
	return string(b)
}

func opUpper(ptr string, a any) (any, error) {
	s, ok, err := str(ptr, "upper", 0, a)
	if err != nil || !ok {
		return nil, err
	}
	return asciiMap(s, 'a', 'z'), nil
}

func opLower(ptr string, a any) (any, error) {
	s, ok, err := str(ptr, "lower", 0, a)
	if err != nil || !ok {
		return nil, err
	}
	return asciiMap(s, 'A', 'Z'), nil
}

// isSpace reports whether trim removes c: tab, line feed, vertical tab, form feed, carriage
// return (U+0009 to U+000D) or space.
func isSpace(c byte) bool { return c == ' ' || c-'\t' <= '\r'-'\t' }

// trimSpace removes what trim removes from both ends of s. A byte of a multi-byte UTF-8
// sequence is never ASCII, so reading bytes cuts no code point.
func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

func opTrim(ptr string, a any) (any, error) {
	s, ok, err := str(ptr, "trim", 0, a)
	if err != nil || !ok {
		return nil, err
	}
	if t := trimSpace(s); len(t) != len(s) {
		return t, nil
	}
	return a, nil // unchanged: the argument's own box, no new one
}

func opConcat(ptr string, args []any) (any, error) {
	for _, a := range args {
		if a == nil {
			return nil, nil
		}
	}
	switch args[0].(type) {
	case string:
		var b strings.Builder
		for i, a := range args {
			s, ok := a.(string)
			if !ok {
				return nil, typeErr(ptr, "concat", i, "a string like argument 1", a)
			}
			b.WriteString(s)
		}
		return b.String(), nil
	case []any:
		var out []any
		for i, a := range args {
			l, ok := a.([]any)
			if !ok {
				return nil, typeErr(ptr, "concat", i, "an array like argument 1", a)
			}
			out = append(out, l...)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	return nil, typeErr(ptr, "concat", 0, "a string or an array", args[0])
}

func opSubstring(ptr string, args []any) (any, error) {
	for _, a := range args {
		if a == nil {
			return nil, nil
		}
	}
	s, _, err := str(ptr, "substring", 0, args[0])
	if err != nil {
		return nil, err
	}
	n := int64(utf8.RuneCountInString(s))
	start, err := integer(ptr, "substring", 1, args[1], -1e15, 1e15)
	if err != nil {
		return nil, err
	}
	if start < 0 {
		start += n
		if start < 0 {
			start = 0
		}
	}
	if start > n {
		start = n
	}
	end := n
	if len(args) == 3 {
		l, err := integer(ptr, "substring", 2, args[2], 0, 1e15)
		if err != nil {
			return nil, err
		}
		if start+l < end {
			end = start + l
		}
	}
	return runeSlice(s, start, end), nil
}

// runeSlice returns the code points [start, end) of s.
func runeSlice(s string, start, end int64) string {
	i, b, e := int64(0), len(s), len(s)
	for off := range s {
		if i == start {
			b = off
		}
		if i == end {
			e = off
			break
		}
		i++
	}
	if b > e {
		return ""
	}
	return s[b:e]
}

func opText(ptr string, a any) (any, error) {
	switch t := a.(type) {
	case nil:
		return nil, nil
	case string:
		return a, nil // the argument's own box, no new one
	case bool:
		if t {
			return "true", nil
		}
		return "false", nil
	case float64:
		s, ok := num.Format(t)
		if !ok {
			return nil, diag.ResultOutOfRange(ptr)
		}
		return s, nil
	}
	return nil, typeErr(ptr, "text", 0, "a string, number or boolean", a)
}

// twoStrings reads two string operands; ok is false when either is null, whatever the type of
// the other (operators.md, "Null arguments").
func twoStrings(ptr, op string, a, b any) (string, string, bool, error) {
	if a == nil || b == nil {
		return "", "", false, nil
	}
	x, ok1, err := str(ptr, op, 0, a)
	if err != nil {
		return "", "", false, err
	}
	y, ok2, err := str(ptr, op, 1, b)
	if err != nil {
		return "", "", false, err
	}
	return x, y, ok1 && ok2, nil
}

func opStartsWith(ptr string, a, b any) (any, error) {
	x, y, ok, err := twoStrings(ptr, "startsWith", a, b)
	if err != nil || !ok {
		return false, err
	}
	return strings.HasPrefix(x, y), nil
}

func opEndsWith(ptr string, a, b any) (any, error) {
	x, y, ok, err := twoStrings(ptr, "endsWith", a, b)
	if err != nil || !ok {
		return false, err
	}
	return strings.HasSuffix(x, y), nil
}

// --- strings and lists ---

func opLength(ptr string, a any) (any, error) {
	switch t := a.(type) {
	case nil:
		return nil, nil
	case string:
		return value.Number(float64(utf8.RuneCountInString(t))), nil
	case []any:
		return value.Number(float64(len(t))), nil
	case map[string]any:
		return value.Number(float64(len(t))), nil
	}
	return nil, typeErr(ptr, "length", 0, "a string, an array or an object", a)
}

func opContains(ptr string, a, b any) (any, error) { return containsOp(ptr, "contains", a, b, 0) }

// containsOp tests whether the container (argument ci of op) holds the item.
func containsOp(ptr, op string, container, item any, ci int) (any, error) {
	switch t := container.(type) {
	case nil:
		return false, nil
	case string:
		switch s := item.(type) {
		case nil:
			return false, nil
		case string:
			return strings.Contains(t, s), nil
		}
		return nil, typeErr(ptr, op, 1-ci, "a string (the container is a string)", item)
	case []any:
		for _, x := range t {
			if value.Equal(x, item) {
				return true, nil
			}
		}
		return false, nil
	}
	if item == nil {
		return false, nil // a null item decides before the container is checked
	}
	return nil, typeErr(ptr, op, ci, "a string or an array", container)
}

func opIsEmpty(_ string, a any) (any, error) {
	switch t := a.(type) {
	case nil:
		return true, nil
	case string:
		return t == "", nil
	case []any:
		return len(t) == 0, nil
	case map[string]any:
		return len(t) == 0, nil
	}
	return false, nil
}

// --- dates ---

func opIsDate(_ string, a any) (any, error) {
	s, ok := a.(string)
	if !ok {
		return false, nil
	}
	if len(s) == 10 {
		_, err := date.PlainDate(s)
		return err == nil, nil
	}
	_, err := date.Parse(s)
	return err == nil, nil
}

// twoPlainDates reads two arguments that are both dates (not date-times), the common case of
// yearsBetween and daysBetween, without building date.Values; ok is false for anything else,
// which twoDates reads.
func twoPlainDates(a, b any) (x, y date.Plain, ok bool) {
	as, ok1 := a.(string)
	bs, ok2 := b.(string)
	if !ok1 || !ok2 || len(as) != 10 || len(bs) != 10 {
		return 0, 0, false
	}
	x, e1 := date.PlainDate(as)
	y, e2 := date.PlainDate(bs)
	return x, y, e1 == nil && e2 == nil
}

func dateArg(ptr, op string, i int, v any) (date.Value, bool, error) {
	s, ok, err := str(ptr, op, i, v)
	if err != nil || !ok {
		return date.Value{}, false, err
	}
	d, perr := date.Parse(s)
	if perr != nil {
		return date.Value{}, false, diag.ArgumentInvalid(ptr, op, i, perr.Error())
	}
	return d, true, nil
}

// twoDates reads two date operands; ok is false when either is null, whatever the other is
// (operators.md, "Null arguments").
func twoDates(ptr, op string, a, b any) (date.Value, date.Value, bool, error) {
	if a == nil || b == nil {
		return date.Value{}, date.Value{}, false, nil
	}
	x, ok1, err := dateArg(ptr, op, 0, a)
	if err != nil {
		return x, x, false, err
	}
	y, ok2, err := dateArg(ptr, op, 1, b)
	if err != nil {
		return x, y, false, err
	}
	return x, y, ok1 && ok2, nil
}

func opYearsBetween(ptr string, a, b any) (any, error) {
	if x, y, ok := twoPlainDates(a, b); ok {
		return value.Number(float64(date.YearsBetweenPlain(x, y))), nil
	}
	x, y, ok, err := twoDates(ptr, "yearsBetween", a, b)
	if err != nil || !ok {
		return nil, err
	}
	return value.Number(float64(date.YearsBetween(x, y))), nil
}

func opDaysBetween(ptr string, a, b any) (any, error) {
	if x, y, ok := twoPlainDates(a, b); ok {
		// dates are midnights: the difference of their day numbers
		return value.Number(float64(y.Days() - x.Days())), nil
	}
	x, y, ok, err := twoDates(ptr, "daysBetween", a, b)
	if err != nil || !ok {
		return nil, err
	}
	return value.Number(float64(date.DaysBetween(x, y))), nil
}

func opDateAdd(ptr string, args []any) (any, error) {
	for _, a := range args {
		if a == nil {
			return nil, nil
		}
	}
	d, _, err := dateArg(ptr, "dateAdd", 0, args[0])
	if err != nil {
		return nil, err
	}
	return addDate(ptr, d, args[1], args[2])
}

// addDate is dateAdd of the date d (its first argument, read) and its other arguments, not null.
func addDate(ptr string, d date.Value, count, unitName any) (any, error) {
	n, err := integer(ptr, "dateAdd", 1, count, -1e7, 1e7)
	if err != nil {
		return nil, err
	}
	us, _, err := str(ptr, "dateAdd", 2, unitName)
	if err != nil {
		return nil, err
	}
	unit, ok := date.ParseUnit(us)
	if !ok {
		return nil, diag.Eval(ptr, "dateAdd", `argument 3 must be "days", "months" or "years"`)
	}
	r, aerr := date.Add(d, n, unit)
	if aerr != nil {
		return nil, diag.Eval(ptr, "dateAdd", aerr.Error())
	}
	return r.String(), nil
}

// buildIsDate builds isDate: unary(opIsDate), reading the date of a path or of a varying root
// once per evaluation (see runtime.knownDate).
func buildIsDate(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
	src := c.dateSource(raw[0], sc)
	if !src.path && !src.varying {
		return unary(opIsDate)(c, name, ptr, raw, sc, depth)
	}
	a := c.compileArgs(raw, ptr, sc, depth)[0] // a variable read: not a constant
	return isDateNode(ptr, a, c.reader(raw[0], sc), src, c.unit.on(Conds))
}

// isDateNode is buildIsDate's node of the argument a, whose date comes from src.
//
//go:noinline
func isDateNode(ptr string, a *node, r *reader, src dateSource, on bool) *node {
	// one pointer for the node to keep across the argument's evaluation
	k := &struct {
		a   *node
		r   *reader
		src dateSource
		ptr string
	}{a, r, src, ptr}
	// the test, which the eval boxes: reading a date outweighs the call
	cond := func(fr *frame) (bool, error) {
		v, ok := fr.rt.quick(k.r)
		if !ok {
			var err error
			if v, err = k.a.eval(fr); err != nil {
				return false, err
			}
		}
		s, ok := v.(string)
		if !ok {
			if err := fr.rt.charge(k.ptr, cost1(v)); err != nil {
				return false, err
			}
			return false, nil
		}
		if !fr.rt.spend(1 + len(s)/64) {
			return false, fr.rt.exhausted(k.ptr)
		}
		if len(s) == 10 {
			p := fr.rt.knownDate(k.src, s)
			if p == 0 {
				p = fr.rt.readDate(k.src, v, s)
			}
			return p > 0, nil
		}
		_, err := date.Parse(s) // opIsDate of a string of another length
		return err == nil, nil
	}
	n := &node{ptr: ptr, eval: boxCond(cond)}
	if on {
		n.cond = cond
	}
	return n
}

// buildDateDiff builds yearsBetween and daysBetween: binary(opYearsBetween) and
// binary(opDaysBetween), reading the dates of paths, of a varying root and of literals once (see
// runtime.knownDate), and offering the result unboxed; anything but two dates "YYYY-MM-DD" goes
// to the operator function.
func buildDateDiff(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
	years := name == "yearsBetween"
	slow := opDaysBetween
	if years {
		slow = opYearsBetween
	}
	sa, sb := c.dateSource(raw[0], sc), c.dateSource(raw[1], sc)
	if !sa.known() && !sb.known() {
		return binary(slow)(c, name, ptr, raw, sc, depth)
	}
	args := c.compileArgs(raw, ptr, sc, depth)
	n := dateDiffNode(c.unit.on(Unbox), &dateDiff{a: args[0], b: args[1], ra: c.reader(raw[0], sc), rb: c.reader(raw[1], sc), sa: sa, sb: sb,
		years: years, ptr: ptr, slow: slow})
	if args[0].constant && args[1].constant {
		return fold(n)
	}
	return n
}

// dateDiff is what dateDiffNode's node needs: one pointer for the node to keep across the
// evaluation of its arguments.
type dateDiff struct {
	a, b   *node
	ra, rb *reader
	sa, sb dateSource
	years  bool
	ptr    string
	slow   func(ptr string, a, b any) (any, error)
}

// dateDiffNode is buildDateDiff's node.
//
//go:noinline
func dateDiffNode(unbox bool, k *dateDiff) *node {
	calc := func(fr *frame) (float64, bool, any, error) {
		x, ok := fr.rt.quick(k.ra)
		if !ok {
			var err error
			if x, err = k.a.get(fr); err != nil {
				return 0, false, nil, err
			}
		}
		y, ok := fr.rt.quick(k.rb)
		if !ok {
			var err error
			if y, err = k.b.get(fr); err != nil {
				return 0, false, nil, err
			}
		}
		xs, ok1 := x.(string)
		ys, ok2 := y.(string)
		if !ok1 || !ok2 || len(xs) != 10 || len(ys) != 10 {
			return k.other(fr, x, y) // a date-time, or no date
		}
		if !fr.rt.spend(2) { // cost1 of two strings of 10 bytes
			return 0, false, nil, fr.rt.exhausted(k.ptr)
		}
		px, py := fr.rt.knownDate(k.sa, xs), fr.rt.knownDate(k.sb, ys)
		if px == 0 {
			px = fr.rt.readDate(k.sa, x, xs)
		}
		if py == 0 {
			py = fr.rt.readDate(k.sb, y, ys)
		}
		switch {
		case px < 0 || py < 0:
			v, err := k.slow(k.ptr, x, y) // an error, from the operator
			f, ok := v.(float64)
			return f, ok, v, err
		case k.years:
			return float64(date.YearsBetweenPlain(px, py)), true, nil, nil
		}
		return float64(py.Days() - px.Days()), true, nil, nil // dates are midnights
	}
	n := &node{ptr: k.ptr, eval: evalNum(calc)}
	if unbox {
		n.num = calc
	}
	return n
}

// other is dateDiffNode's node when its arguments x and y are not two strings of 10 bytes.
func (k *dateDiff) other(fr *frame, x, y any) (float64, bool, any, error) {
	if err := fr.rt.charge(k.ptr, cost1(x)+cost1(y)); err != nil {
		return 0, false, nil, err
	}
	v, err := k.slow(k.ptr, x, y)
	f, ok := v.(float64)
	return f, ok, v, err
}

// buildDateAdd is strict(opDateAdd) with its three arguments read into an array rather than a
// new list (opDateAdd keeps none of them), and the date of a path or a varying root read once
// per evaluation (see runtime.knownDate).
func buildDateAdd(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
	src := c.dateSource(raw[0], sc)
	args := c.compileArgs(raw, ptr, sc, depth)
	n := dateAddNode(ptr, args, src)
	if allConstant(args) {
		return fold(n)
	}
	return n
}

// dateAddNode is buildDateAdd's node of the arguments args, the date of the first coming from
// src.
//
//go:noinline
func dateAddNode(ptr string, args []*node, src dateSource) *node {
	// one pointer for the node to keep across the evaluation of its arguments
	k := &struct {
		args []*node
		src  dateSource
		ptr  string
	}{args, src, ptr}
	return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		var vals [3]any
		for i, a := range k.args {
			v, err := a.get(fr)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		if err := fr.rt.charge(k.ptr, argCost(vals[:]...)); err != nil {
			return nil, err
		}
		if s, ok := vals[0].(string); ok && len(s) == 10 && k.src.known() && vals[1] != nil && vals[2] != nil {
			p := fr.rt.knownDate(k.src, s)
			if p == 0 {
				p = fr.rt.readDate(k.src, vals[0], s)
			}
			if p > 0 {
				return addDate(k.ptr, p.Value(), vals[1], vals[2])
			}
		}
		return opDateAdd(k.ptr, vals[:])
	}}
}
