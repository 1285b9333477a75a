package jsonlogic

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Options configure a conversion.
type Options struct {
	// JSCompat (import only) reproduces JavaScript semantics with functions where strict mode
	// refuses, and accepts the documented divergences listed as costs.
	JSCompat bool
	// Root is the sdods environment root that holds the JSON Logic data ("data" by default).
	Root  string
	Types Types
}

func (o Options) root() string {
	if o.Root == "" {
		return "data"
	}
	return o.Root
}

// Converted is a conversion's outcome: Expression (nil when refused), the functions it calls
// (js-compat only) and the diagnostics (errors refuse; costs are what --js-compat accepted).
type Converted struct {
	Expression  any            `json:"expression,omitempty"`
	Functions   map[string]any `json:"functions,omitempty"`
	Diagnostics []Diagnostic   `json:"diagnostics"`
}

// Refused reports whether any diagnostic is an error.
func (c *Converted) Refused() bool {
	for _, d := range c.Diagnostics {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

type importer struct {
	opt   Options
	diags []Diagnostic
	fns   map[string]bool
}

// scope is where a JSON Logic var reads: the data at the top, the element inside the body of
// map, filter, all, none and some (json-logic-js evaluates the body with the element as data).
type scope struct {
	root  string // sdods variable holding this scope's data
	annot string // annotation prefix ("" for the data, "items.*" for its elements); "?" for none
}

// Import converts a JSON Logic expression (decoded with json.Decoder.UseNumber) into an sdods
// expression.
func Import(logic any, opt Options) *Converted {
	im := &importer{opt: opt, fns: map[string]bool{}}
	e, _, ok := im.conv(logic, "", scope{root: opt.root()})
	out := &Converted{Diagnostics: im.diags}
	if ok && !out.Refused() {
		out.Expression = e
		if len(im.fns) > 0 {
			out.Functions = map[string]any{}
			for name := range im.fns {
				out.Functions[name] = jsFunctions[name]
			}
		}
	}
	if out.Expression != nil {
		// What the importer writes must load; a failure here is a bug in the importer.
		if ds := engineDiagnostics(out.Expression, out.Functions, "INTERNAL"); len(ds) > 0 {
			out.Expression, out.Functions = nil, nil
			out.Diagnostics = append(out.Diagnostics, ds...)
		}
	}
	if out.Diagnostics == nil {
		out.Diagnostics = []Diagnostic{}
	}
	sortDiags(out.Diagnostics)
	return out
}

func (im *importer) refuse(ptr, code, format string, args ...any) (any, Type, bool) {
	im.diags = append(im.diags, Diagnostic{Code: code, Pointer: ptr, Message: fmt.Sprintf(format, args...), Severity: SeverityError})
	return nil, 0, false
}

// cost records a divergence --js-compat accepts; in strict mode it refuses instead.
func (im *importer) cost(ptr, format string, args ...any) bool {
	msg := fmt.Sprintf(format, args...)
	if !im.opt.JSCompat {
		im.diags = append(im.diags, Diagnostic{Code: CodeNotFaithful, Pointer: ptr, Message: msg + " (--js-compat accepts this)", Severity: SeverityError})
		return false
	}
	im.diags = append(im.diags, Diagnostic{Code: CodeCost, Pointer: ptr, Message: msg, Severity: SeverityCost})
	return true
}

func op(name string, args ...any) map[string]any {
	if args == nil {
		args = []any{}
	}
	return map[string]any{"op": name, "args": args}
}

func vr(path string) map[string]any { return map[string]any{"var": path} }

func list(items ...any) []any {
	if items == nil {
		return []any{}
	}
	return items
}

func typeIs(e any, name string) any { return op("==", op("typeOf", e), name) }

func (im *importer) typeAt(sc scope, rel string) Type {
	if sc.annot == "?" {
		return Any
	}
	key := sc.annot
	if rel != "" {
		if key != "" {
			key += "."
		}
		key += rel
	}
	if key == "" {
		key = "$"
	}
	if t, ok := im.opt.Types[key]; ok {
		return t
	}
	if key == "$" {
		return Object
	}
	return Any
}

func literalType(v any) Type {
	switch v.(type) {
	case nil:
		return Null
	case bool:
		return Bool
	case json.Number, float64:
		return Number
	case string:
		return String
	case []any:
		return Array
	}
	return Object
}

func numberOf(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil && !math.IsInf(f, 0)
	case float64:
		return n, true
	}
	return 0, false
}

// conv converts node (at ptr) evaluated in sc.
func (im *importer) conv(node any, ptr string, sc scope) (any, Type, bool) {
	switch n := node.(type) {
	case nil, bool, string:
		return n, literalType(n), true
	case json.Number:
		if _, ok := numberOf(n); !ok {
			return im.refuse(ptr, CodeNotFaithful, "number %s is beyond the range of a double: JavaScript reads Infinity, sdods refuses it", n)
		}
		return n, Number, true
	case []any:
		out := make([]any, len(n))
		ok := true
		for i, el := range n {
			e, _, eok := im.conv(el, index(ptr, i), sc)
			out[i], ok = e, ok && eok
		}
		return out, Array, ok
	case map[string]any:
		if len(n) != 1 {
			// Not logic: json-logic-js returns the object as it is.
			return op("literal", n), Object, true
		}
		for name, args := range n {
			return im.operation(name, args, pointer(ptr, name), sc)
		}
	}
	return im.refuse(ptr, CodeInvalid, "not a JSON value")
}

func (im *importer) operation(name string, raw any, ptr string, sc scope) (any, Type, bool) {
	vals, isArray := raw.([]any)
	if !isArray {
		vals = []any{raw}
	}
	argPtr := func(i int) string {
		if isArray {
			return index(ptr, i)
		}
		return ptr
	}
	// conv each argument in the current scope
	all := func() ([]any, []Type, bool) {
		es, ts := make([]any, len(vals)), make([]Type, len(vals))
		ok := true
		for i, v := range vals {
			e, t, eok := im.conv(v, argPtr(i), sc)
			es[i], ts[i], ok = e, t, ok && eok
		}
		return es, ts, ok
	}
	switch name {
	case "var":
		return im.variable(vals, ptr, argPtr, sc)
	case "missing":
		return im.missing(vals, ptr, argPtr, sc)
	case "missing_some":
		if len(vals) != 2 {
			return im.refuse(ptr, CodeNotFaithful, "missing_some takes a count and a list of keys")
		}
		need, ok := numberOf(vals[0])
		keys, kok := vals[1].([]any)
		if !ok || !kok || need != math.Trunc(need) {
			return im.refuse(ptr, CodeNotFaithful, "missing_some is imported with a literal integer count and a literal list of keys")
		}
		m, _, ok := im.missing([]any{keys}, ptr, func(int) string { return argPtr(1) }, sc)
		if !ok {
			return nil, 0, false
		}
		k := float64(len(keys)) - need
		return op("if", op("<=", op("length", m), json.Number(strconv.FormatFloat(k, 'g', -1, 64))), list(), m), Array, true
	case "if", "?:":
		return im.ifOp(vals, argPtr, sc)
	case "and", "or":
		return im.andOr(name, vals, ptr, argPtr, sc)
	case "!", "!!":
		es, ts, ok := all()
		if !ok {
			return nil, 0, false
		}
		if len(es) == 0 {
			return im.refuse(ptr, CodeNotFaithful, "%s without an argument tests undefined, which sdods does not have", name)
		}
		c := im.truthy(es[0], ts[0])
		if name == "!" {
			c = op("not", c)
		} else if ts[0] != Bool && ts[0]&^(Bool|Null) == 0 {
			c = op("==", c, true) // null is a false condition but must come out as false
		}
		return c, Bool, true
	case "==", "!=", "===", "!==":
		es, ts, ok := all()
		if !ok {
			return nil, 0, false
		}
		if len(es) != 2 {
			return im.refuse(ptr, CodeNotFaithful, "%s is imported with exactly two arguments", name)
		}
		return im.equality(name, es, ts, ptr)
	case "<", "<=", ">", ">=":
		es, ts, ok := all()
		if !ok {
			return nil, 0, false
		}
		if len(es) != 2 && !(len(es) == 3 && (name == "<" || name == "<=")) {
			return im.refuse(ptr, CodeNotFaithful, "%s with %d arguments compares with undefined or ignores an argument", name, len(es))
		}
		// A null, boolean or string literal compared with a number is converted to a number by
		// JavaScript (null is 0, "2" is 2, "x" is NaN): convert it now.
		for i := range es {
			if ts[i] == Number || ts[i]&^(Null|Bool|String) != 0 {
				continue
			}
			numeric := true
			for _, j := range []int{i - 1, i + 1} {
				// Two strings compare as strings, and an array or object becomes a string.
				if j >= 0 && j < len(es) && ts[j]&^(Null|Bool|Number) != 0 {
					numeric = false
				}
			}
			f, nan, lit := jsToNumber(es[i])
			if !numeric || !lit {
				continue
			}
			if nan {
				return false, Bool, true // every comparison with NaN is false
			}
			if math.IsInf(f, 0) {
				if len(es) != 2 {
					return im.refuse(argPtr(i), CodeNotFaithful, "%s with Infinity among three operands", name)
				}
				// Every finite number compares with an infinity the same way: take 0.
				a, b := 0.0, 0.0
				if i == 0 {
					a = f
				} else {
					b = f
				}
				return map[string]bool{"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[name], Bool, true
			}
			es[i], ts[i] = numberLiteral(f), Number
		}
		for i, t := range ts {
			if t == Number {
				continue
			}
			if t == String && ts[0]|ts[1]|ts[len(ts)-1] == String {
				if !im.cost(argPtr(i), "%s compares strings by UTF-16 code units in JavaScript and by code points in sdods (they differ when a string holds characters beyond U+FFFF)", name) {
					return nil, 0, false
				}
				continue
			}
			return im.refuse(argPtr(i), CodeNotFaithful, "%s on a value of type %s coerces it in JavaScript (null is 0, \"2\" is 2, mixed types compare as numbers) where sdods returns false or fails; the operands must be numbers (annotate with --type)", name, t)
		}
		if len(es) == 3 {
			return op("and", op(name, es[0], es[1]), op(name, es[1], es[2])), Bool, true
		}
		return op(name, es...), Bool, true
	case "in":
		es, ts, ok := all()
		if !ok {
			return nil, 0, false
		}
		if len(es) != 2 {
			return im.refuse(ptr, CodeNotFaithful, "in is imported with exactly two arguments")
		}
		return im.in(es, ts, argPtr)
	case "cat":
		es, ts, ok := all()
		if !ok {
			return nil, 0, false
		}
		parts := []any{}
		for i, e := range es {
			t := ts[i]
			switch {
			case t == Null:
			case t == String:
				parts = append(parts, e)
			case t&^(String|Bool|Null) == 0:
				parts = append(parts, op("coalesce", op("text", e), ""))
			case t == Number:
				if f, lit := numberOf(e); lit {
					parts = append(parts, jsString(f)) // computed now, as JavaScript writes it
					continue
				}
				if !im.cost(argPtr(i), "cat writes a number as JavaScript's shortest round-trip text; sdods's text writes 15 significant digits") {
					return nil, 0, false
				}
				parts = append(parts, op("text", e))
			default:
				return im.refuse(argPtr(i), CodeNotFaithful, "cat of a value of type %s writes it with JavaScript's String() (arrays joined by commas, objects as [object Object]); the arguments must be strings, booleans or null", t)
			}
		}
		if len(parts) == 0 {
			return "", String, true
		}
		return op("concat", parts...), String, true
	case "substr":
		es, ts, ok := all()
		if !ok {
			return nil, 0, false
		}
		if len(es) < 2 || len(es) > 3 || ts[0] != String {
			return im.refuse(ptr, CodeNotFaithful, "substr is imported for a string and one or two literal integers")
		}
		start, sok := numberOf(es[1])
		if !sok || start != math.Trunc(start) {
			return im.refuse(argPtr(1), CodeNotFaithful, "substr's start must be a literal integer")
		}
		if lit, isLit := es[0].(string); isLit && strings.ContainsFunc(lit, func(r rune) bool { return r > 0xFFFF }) {
			return im.refuse(argPtr(0), CodeNotFaithful, "substr of a string with characters beyond U+FFFF counts UTF-16 code units in JavaScript and may split a character")
		}
		if !im.cost(ptr, "substr counts UTF-16 code units in JavaScript and code points in sdods (they differ when the string holds characters beyond U+FFFF)") {
			return nil, 0, false
		}
		if len(es) == 2 {
			return op("substring", es[0], es[1]), String, true
		}
		n, nok := numberOf(es[2])
		if !nok || n != math.Trunc(n) || n < 0 {
			return im.refuse(argPtr(2), CodeNotFaithful, "substr's length must be a literal non-negative integer")
		}
		return op("substring", es...), String, true
	case "+", "-", "*", "/", "%":
		es, ts, ok := all()
		if !ok {
			return nil, 0, false
		}
		return im.arithmetic(name, es, ts, ptr, argPtr)
	case "min", "max":
		es, ts, ok := all()
		if !ok {
			return nil, 0, false
		}
		if len(es) == 0 {
			return im.refuse(ptr, CodeNotFaithful, "%s of nothing is Infinity in JavaScript", name)
		}
		for i, t := range ts {
			if t != Number {
				return im.refuse(argPtr(i), CodeNotFaithful, "%s converts a value of type %s with Number() in JavaScript (null is 0); the arguments must be numbers", name, t)
			}
		}
		if len(es) == 1 {
			return es[0], Number, true
		}
		return op(name, es...), Number, true
	case "merge":
		es, ts, ok := all()
		if !ok {
			return nil, 0, false
		}
		if len(es) == 0 {
			return list(), Array, true
		}
		parts := make([]any, len(es))
		for i, e := range es {
			switch {
			case ts[i] == Array:
				parts[i] = e
			case ts[i]&Array == 0:
				parts[i] = list(e)
			default:
				parts[i] = op("if", typeIs(e, "array"), e, list(e))
			}
		}
		return op("concat", parts...), Array, true
	case "map", "filter", "all", "none", "some":
		return im.iteration(name, vals, ptr, argPtr, sc)
	case "reduce":
		return im.reduce(vals, ptr, argPtr, sc)
	case "log":
		es, ts, ok := all()
		if !ok {
			return nil, 0, false
		}
		if len(es) == 0 {
			return im.refuse(ptr, CodeNotFaithful, "log without an argument returns undefined")
		}
		return es[0], ts[0], true // sdods has no side effects: the value passes through
	case "method":
		return im.refuse(ptr, CodeUnknown, "method calls a JavaScript method; sdods has none")
	}
	return im.refuse(ptr, CodeUnknown, "%q is not an operation of json-logic-js", name)
}

func (im *importer) variable(vals []any, ptr string, argPtr func(int) string, sc scope) (any, Type, bool) {
	if len(vals) == 0 {
		return vr(sc.root), im.typeAt(sc, ""), true
	}
	var path string
	switch p := vals[0].(type) {
	case nil:
	case string:
		path = p
	case json.Number:
		f, ok := numberOf(p)
		if !ok || f != math.Trunc(f) || f < 0 || f > 1e15 {
			return im.refuse(argPtr(0), CodeNotFaithful, "a numeric var path is imported when it is a non-negative integer")
		}
		path = strconv.FormatFloat(f, 'f', -1, 64)
	default:
		return im.refuse(argPtr(0), CodeNotFaithful, "var is imported with a literal path (a string or an integer); sdods paths are static")
	}
	var e any
	var t Type
	if path == "" {
		e, t = vr(sc.root), im.typeAt(sc, "")
	} else {
		segs := strings.Split(path, ".")
		for i, seg := range segs {
			parent := im.typeAt(sc, strings.Join(segs[:i], "."))
			if why := segmentProblem(seg, parent); why != "" {
				return im.refuse(argPtr(0), CodeNotFaithful, "var %q: %s", path, why)
			}
		}
		e, t = vr(sc.root+"."+path), im.typeAt(sc, path)
	}
	if len(vals) > 1 {
		_, dt, ok := im.conv(vals[1], argPtr(1), sc)
		if !ok {
			return nil, 0, false
		}
		if dt == Null {
			return e, t, true
		}
		if t&Null != 0 {
			return im.refuse(argPtr(1), CodeNotFaithful, "var %q with a default: json-logic-js returns the default when the value is missing but null when it is present and null; sdods cannot tell the two apart (annotate the path's type without null if it is never absent)", path)
		}
		// The value is never absent: the default is never used.
		return e, t, true
	}
	return e, t, true
}

func (im *importer) missing(vals []any, ptr string, argPtr func(int) string, sc scope) (any, Type, bool) {
	keys := vals
	keyPtr := argPtr
	if len(vals) > 0 {
		if arr, ok := vals[0].([]any); ok {
			keys = arr
			keyPtr = func(i int) string { return index(argPtr(0), i) }
		}
	}
	parts := []any{}
	for i, k := range keys {
		if _, ok := k.(string); !ok {
			return im.refuse(keyPtr(i), CodeNotFaithful, "missing is imported with literal string keys")
		}
		e, _, ok := im.variable([]any{k}, ptr, func(int) string { return keyPtr(i) }, sc)
		if !ok {
			return nil, 0, false
		}
		parts = append(parts, op("if", op("or", op("==", e, nil), op("==", e, "")), list(k), list()))
	}
	if len(parts) == 0 {
		return list(), Array, true
	}
	return op("concat", parts...), Array, true
}

// truthy is json-logic-js's truthiness of e as an sdods condition: [] is false, "0" is true, 0
// and "" and null are false, every object is true.
func (im *importer) truthy(e any, t Type) any {
	switch {
	case t&^(Bool|Null) == 0:
		return e
	case t == Number:
		return op("!=", e, json.Number("0"))
	case t == String:
		return op("!=", e, "")
	case t == Array:
		return op("!=", op("length", e), json.Number("0"))
	case t == Object:
		return true
	}
	if im.opt.JSCompat {
		im.fns[jsTruthyFunction] = true
		return map[string]any{"fn": jsTruthyFunction, "args": list(e)}
	}
	return truthyInline(e)
}

func truthyInline(e any) any {
	return op("if", typeIs(e, "boolean"), e, typeIs(e, "number"), op("!=", e, json.Number("0")), typeIs(e, "object"), true, op("not", op("isEmpty", e)))
}

// jsFunctions are the functions --js-compat calls, in the ruleset's functions form.
var jsFunctions = map[string]any{
	jsTruthyFunction: map[string]any{"params": []any{"x"}, "body": truthyInline(vr("x"))},
	jsNumberFunc:     map[string]any{"params": []any{"x"}, "body": op("if", typeIs(vr("x"), "boolean"), op("if", vr("x"), json.Number("1"), json.Number("0")), vr("x"))},
	jsLooseEqFunc: map[string]any{"params": []any{"a", "b"}, "body": op("if",
		op("or", op("==", vr("a"), nil), op("==", vr("b"), nil)), op("==", vr("a"), vr("b")),
		op("==", map[string]any{"fn": jsNumberFunc, "args": list(vr("a"))}, map[string]any{"fn": jsNumberFunc, "args": list(vr("b"))}))},
}

func (im *importer) ifOp(vals []any, argPtr func(int) string, sc scope) (any, Type, bool) {
	if len(vals) == 0 {
		return nil, Null, true
	}
	es, ts := make([]any, len(vals)), make([]Type, len(vals))
	ok := true
	for i, v := range vals {
		e, t, eok := im.conv(v, argPtr(i), sc)
		es[i], ts[i], ok = e, t, ok && eok
	}
	if !ok {
		return nil, 0, false
	}
	if len(es) == 1 {
		return es[0], ts[0], true
	}
	var args []any
	var t Type
	i := 0
	for ; i+1 < len(es); i += 2 {
		args = append(args, im.truthy(es[i], ts[i]), es[i+1])
		t |= ts[i+1]
	}
	if i < len(es) {
		args = append(args, es[i])
		t |= ts[i]
	} else {
		args = append(args, nil)
		t |= Null
	}
	return op("if", args...), t, true
}

func (im *importer) andOr(name string, vals []any, ptr string, argPtr func(int) string, sc scope) (any, Type, bool) {
	if len(vals) == 0 {
		return im.refuse(ptr, CodeNotFaithful, "%s without arguments returns undefined", name)
	}
	es, ts := make([]any, len(vals)), make([]Type, len(vals))
	ok, allBool := true, true
	for i, v := range vals {
		e, t, eok := im.conv(v, argPtr(i), sc)
		es[i], ts[i], ok = e, t, ok && eok
		allBool = allBool && t == Bool
	}
	if !ok {
		return nil, 0, false
	}
	if allBool {
		return op(name, es...), Bool, true
	}
	// json-logic-js returns the deciding value, not a boolean: and returns the first falsy
	// value or the last, or the first truthy value or the last.
	e, t := es[len(es)-1], ts[len(ts)-1]
	for i := len(es) - 2; i >= 0; i-- {
		if name == "and" {
			e = op("if", im.truthy(es[i], ts[i]), e, es[i])
		} else {
			e = op("if", im.truthy(es[i], ts[i]), es[i], e)
		}
		t |= ts[i]
	}
	return e, t, true
}

func (im *importer) equality(name string, es []any, ts []Type, ptr string) (any, Type, bool) {
	a, b := ts[0]&^Null, ts[1]&^Null
	sdName := "=="
	if name == "!=" || name == "!==" {
		sdName = "!="
	}
	if name == "===" || name == "!==" {
		if ts[0]&container == 0 || ts[1]&container == 0 {
			return op(sdName, es...), Bool, true
		}
		return im.refuse(ptr, CodeNotFaithful, "%s compares arrays and objects by reference in JavaScript ([1] === [1] is false) and by value in sdods; one side must not be an array or object", name)
	}
	single := a|b == Bool || a|b == Number || a|b == String
	if a == 0 || b == 0 || single {
		return op(sdName, es...), Bool, true
	}
	// A literal compared with a number or a boolean: JavaScript converts both to numbers, and
	// the literal's number is known now.
	for i := 0; i < 2; i++ {
		other, otherT := es[1-i], ts[1-i]&^Null
		f, nan, lit := jsToNumber(es[i])
		if !lit || ts[i] == Null || (otherT != Number && otherT != Bool) {
			continue
		}
		var e any
		switch {
		case nan, math.IsInf(f, 0):
			e = false // no number (nor a boolean's 0 or 1) equals NaN or an infinity
		case otherT == Number:
			e = op("==", other, numberLiteral(f))
		case f == 1:
			e = op("==", other, true)
		case f == 0:
			e = op("==", other, false)
		default:
			e = false
		}
		if sdName == "!=" {
			e = op("not", e)
		}
		return e, Bool, true
	}
	if im.opt.JSCompat && (a|b)&^(Bool|Number) == 0 {
		im.fns[jsLooseEqFunc], im.fns[jsNumberFunc] = true, true
		e := any(map[string]any{"fn": jsLooseEqFunc, "args": list(es...)})
		if sdName == "!=" {
			e = op("not", e)
		}
		return e, Bool, true
	}
	return im.refuse(ptr, CodeNotFaithful, "%s between values of different types uses JavaScript's loose equality (\"1\" == 1, [] == \"\", [1] == [1] is false) where sdods compares type and value; both sides must have one type (%s and %s), or one side be null", name, ts[0], ts[1])
}

func (im *importer) in(es []any, ts []Type, argPtr func(int) string) (any, Type, bool) {
	item, cont := ts[0], ts[1]
	if cont&String != 0 && item != String {
		return im.refuse(argPtr(0), CodeNotFaithful, "in converts the item to a string when the container is a string (null in \"nullable\" is true); the item must be a string")
	}
	if cont&Array != 0 && item&container != 0 && !scalarList(es[1]) {
		return im.refuse(argPtr(0), CodeNotFaithful, "in finds arrays and objects by reference in JavaScript and by value in sdods; the item must not be an array or object")
	}
	inExpr := op("in", es[0], es[1])
	if cont&String != 0 {
		// json-logic-js answers false for the empty string (it is falsy), sdods finds "" in "".
		inExpr = op("and", op("!=", es[1], ""), inExpr)
	}
	switch {
	case cont&^(Null|String|Array) == 0:
		if cont&String != 0 && cont != String {
			return op("if", typeIs(es[1], "string"), inExpr, op("in", es[0], es[1])), Bool, true
		}
		return inExpr, Bool, true
	}
	// Numbers, booleans and objects have no indexOf: json-logic-js answers false.
	var branches []any
	if cont&String != 0 {
		branches = append(branches, typeIs(es[1], "string"), inExpr)
	}
	if cont&Array != 0 {
		branches = append(branches, typeIs(es[1], "array"), op("in", es[0], es[1]))
	}
	if branches == nil {
		return false, Bool, true
	}
	return op("if", append(branches, false)...), Bool, true
}

// scalarList reports whether e is a list of scalar literals: JavaScript finds no array or object
// in it (indexOf compares by reference) and neither does sdods (no scalar equals them).
func scalarList(e any) bool {
	l, ok := e.([]any)
	if !ok {
		return false
	}
	for _, el := range l {
		if literalType(el)&container != 0 {
			return false
		}
		if _, isOp := el.(map[string]any); isOp {
			return false
		}
	}
	return true
}

func (im *importer) arithmetic(name string, es []any, ts []Type, ptr string, argPtr func(int) string) (any, Type, bool) {
	// Literal operands: compute as JavaScript does (binary doubles) and emit the result.
	var fs []float64
	for _, e := range es {
		f, ok := numberOf(e)
		if !ok {
			break
		}
		fs = append(fs, f)
	}
	if len(fs) == len(es) && len(es) > 0 && !(name == "*" && len(es) == 1) {
		r := fs[0]
		switch {
		case name == "+":
			r = 0
			for _, f := range fs {
				r += f
			}
		case name == "-" && len(fs) == 1:
			r = -fs[0]
		case len(fs) == 2 && name == "-":
			r = fs[0] - fs[1]
		case len(fs) == 2 && name == "/":
			r = fs[0] / fs[1]
		case len(fs) == 2 && name == "%":
			r = math.Mod(fs[0], fs[1])
		case name == "*":
			for _, f := range fs[1:] {
				r *= f
			}
		default:
			return im.refuse(ptr, CodeNotFaithful, "%s with %d arguments", name, len(fs))
		}
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return im.refuse(ptr, CodeNotFaithful, "%s gives %v in JavaScript, which sdods has no value for", name, r)
		}
		if r == 0 {
			r = 0 // sdods has no negative zero; neither has JSON output
		}
		return json.Number(strconv.FormatFloat(r, 'g', -1, 64)), Number, true
	}
	for i, t := range ts {
		if t != Number {
			return im.refuse(argPtr(i), CodeNotFaithful, "%s converts a value of type %s in JavaScript (parseFloat(\"1.5x\") is 1.5, null is NaN or 0); the operands must be numbers", name, t)
		}
	}
	switch {
	case name == "+" && len(es) == 0:
		return json.Number("0"), Number, true
	case (name == "+" || name == "*") && len(es) == 1:
		return es[0], Number, true
	case name == "-" && len(es) > 2, (name == "/" || name == "%") && len(es) != 2:
		return im.refuse(ptr, CodeNotFaithful, "%s with %d arguments", name, len(es))
	}
	if !im.cost(ptr, "%s computes in binary floating point in JavaScript (0.1 + 0.2 is 0.30000000000000004) and in decimal rounded to 15 significant digits in sdods; results agree when written with 15 digits unless digits beyond the 15th matter (cancellation, comparisons of computed values), and division by zero is Infinity, not null", name) {
		return nil, 0, false
	}
	sd := name
	if name == "%" {
		sd = "mod"
	}
	return op(sd, es...), Number, true
}

func (im *importer) iteration(name string, vals []any, ptr string, argPtr func(int) string, sc scope) (any, Type, bool) {
	if len(vals) != 2 {
		return im.refuse(ptr, CodeNotFaithful, "%s is imported with an array and a body", name)
	}
	a, ta, ok := im.conv(vals[0], argPtr(0), sc)
	inner := scope{root: "it", annot: "?"}
	if v, isVar := a.(map[string]any); isVar && sc.annot != "?" {
		if p, ok := v["var"].(string); ok {
			rel := strings.TrimPrefix(strings.TrimPrefix(p, sc.root), ".")
			if rel == "" {
				inner.annot = "$.*"
				if sc.annot != "" {
					inner.annot = sc.annot + ".*"
				}
			} else if sc.annot == "" {
				inner.annot = rel + ".*"
			} else {
				inner.annot = sc.annot + "." + rel + ".*"
			}
		}
	}
	body, tb, bok := im.conv(vals[1], argPtr(1), inner)
	if !ok || !bok {
		return nil, 0, false
	}
	isArr := typeIs(a, "array")
	guard := func(e, otherwise any) any {
		if ta == Array {
			return e
		}
		if ta&Array == 0 {
			return otherwise
		}
		return op("if", isArr, e, otherwise)
	}
	switch name {
	case "map":
		return guard(op("map", a, body), list()), Array, true
	case "filter":
		return guard(op("filter", a, im.truthy(body, tb)), list()), Array, true
	case "some":
		return guard(op("some", a, im.truthy(body, tb)), false), Bool, true
	case "none":
		return guard(op("not", op("some", a, im.truthy(body, tb))), true), Bool, true
	}
	// all: json-logic-js answers false for an empty array, sdods true.
	e := op("and", op("!=", op("length", a), json.Number("0")), op("all", a, im.truthy(body, tb)))
	return guard(e, false), Bool, true
}

// jsString is JavaScript's String(x) for a finite number.
func jsString(f float64) string {
	if f == 0 {
		return "0"
	}
	abs := math.Abs(f)
	if abs >= 1e21 || abs < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		if exp[0] == '+' {
			exp = exp[1:]
		}
		exp = strings.TrimLeft(strings.TrimPrefix(exp, "-"), "0")
		sign := "+"
		if strings.Contains(s, "e-") {
			sign = "-"
		}
		return mant + "e" + sign + exp
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func numberLiteral(f float64) json.Number {
	if f == 0 {
		f = 0
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

var (
	jsDecimal = regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)
	jsRadix   = regexp.MustCompile(`^0([xXoObB])([0-9a-fA-F]+)$`)
)

// jsToNumber is JavaScript's ToNumber of a scalar literal (null, a boolean, a number, a string);
// lit is false for anything else. nan reports NaN; f may be an infinity ("Infinity", "-1e400").
func jsToNumber(e any) (f float64, nan, lit bool) {
	switch v := e.(type) {
	case nil:
		return 0, false, true
	case bool:
		if v {
			return 1, false, true
		}
		return 0, false, true
	case json.Number:
		f, ok := numberOf(v)
		return f, !ok, true
	case string:
		s := strings.TrimFunc(v, jsSpace)
		switch {
		case s == "":
			return 0, false, true
		case s == "Infinity" || s == "+Infinity":
			return math.Inf(1), false, true
		case s == "-Infinity":
			return math.Inf(-1), false, true
		case jsDecimal.MatchString(s):
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !math.IsInf(f, 0) {
				return 0, true, true
			}
			return f, false, true // beyond range: an infinity, as in JavaScript
		}
		if m := jsRadix.FindStringSubmatch(s); m != nil {
			base := map[byte]int{'x': 16, 'X': 16, 'o': 8, 'O': 8, 'b': 2, 'B': 2}[m[1][0]]
			n, ok := new(big.Int).SetString(m[2], base)
			if !ok {
				return 0, true, true
			}
			f, _ := new(big.Float).SetInt(n).Float64()
			return f, false, true
		}
		return 0, true, true
	}
	return 0, false, false
}

// jsSpace is ECMAScript's StrWhiteSpaceChar: white space and line terminators.
func jsSpace(r rune) bool {
	switch r {
	case '\t', '\v', '\f', ' ', 0xA0, 0xFEFF, '\n', '\r', 0x2028, 0x2029:
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

// reduce imports the folds sdods has an operator for: the maximum or minimum of numbers
// ({"max": [current, accumulator]}), exactly, and their sum, with --js-compat's arithmetic cost.
// Any other fold is refused: sdods has no general fold.
func (im *importer) reduce(vals []any, ptr string, argPtr func(int) string, sc scope) (any, Type, bool) {
	refuse := func() (any, Type, bool) {
		return im.refuse(ptr, CodeUnknown, "sdods has no fold: reduce is imported only as the maximum, minimum or sum of numbers ({\"max\"|\"min\"|\"+\": [{\"var\": \"current\"}, {\"var\": \"accumulator\"}]} with a number as the initial value)")
	}
	if len(vals) != 3 {
		return refuse()
	}
	body, _ := vals[1].(map[string]any)
	var name string
	if len(body) == 1 {
		for k, v := range body {
			args, _ := v.([]any)
			if len(args) == 2 && (k == "max" || k == "min" || k == "+") && isVarOf(args, "current", "accumulator") {
				name = k
			}
		}
	}
	if name == "" {
		return refuse()
	}
	a, ta, ok := im.conv(vals[0], argPtr(0), sc)
	init, ti, iok := im.conv(vals[2], argPtr(2), sc)
	if !ok || !iok {
		return nil, 0, false
	}
	if ti != Number {
		return im.refuse(argPtr(2), CodeNotFaithful, "reduce's initial value must be a number (Math.%s and + convert null and strings)", name)
	}
	elem := Any
	if v, isVar := a.(map[string]any); isVar && sc.annot != "?" {
		if p, ok := v["var"].(string); ok {
			rel := strings.TrimPrefix(strings.TrimPrefix(p, sc.root), ".")
			elem = im.typeAt(sc, strings.TrimPrefix(rel+".*", "."))
		}
	}
	if elem != Number {
		return im.refuse(argPtr(0), CodeNotFaithful, "reduce's elements must be numbers (annotate PATH.*=number): Math.%s and + convert null and strings", name)
	}
	var folded any
	switch name {
	case "+":
		if !im.cost(ptr, "a sum over numbers computes in binary floating point in JavaScript and in decimal rounded to 15 significant digits in sdods") {
			return nil, 0, false
		}
		folded = op("+", init, op("sum", a))
	default:
		folded = op("if", op("==", op("length", a), json.Number("0")), init, op(name, init, op(name, a)))
	}
	if ta == Array {
		return folded, Number, true
	}
	// A value that is not an array: json-logic-js returns the initial value.
	return op("if", typeIs(a, "array"), folded, init), Number, true
}

func isVarOf(args []any, names ...string) bool {
	seen := map[string]bool{}
	for _, a := range args {
		m, _ := a.(map[string]any)
		p, ok := m["var"].(string)
		if !ok || len(m) != 1 {
			return false
		}
		seen[p] = true
	}
	for _, n := range names {
		if !seen[n] {
			return false
		}
	}
	return true
}
