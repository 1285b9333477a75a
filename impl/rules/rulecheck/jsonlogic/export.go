package jsonlogic

import (
	"encoding/json"
	"fmt"
	"strings"
)

// binding is what an sdods name stands for in JSON Logic: a path into the JSON Logic data
// (the data itself, or the element inside a map body) or, for a parameter of an inlined
// function, the exported argument.
type binding struct {
	path   bool
	prefix string // JSON Logic var prefix when path
	annot  string // annotation key of the value ("data.items.*"); "?" for none
	jl     any    // the argument, when not a path
	t      Type
}

type xscope struct {
	dataOK bool // the environment roots are readable (not inside a JSON Logic body)
	binds  map[string]binding
}

type exporter struct {
	opt   Options
	fns   map[string]any
	diags []Diagnostic
	depth int
}

// Export converts an sdods expression (decoded with json.Decoder.UseNumber) into JSON Logic
// that json-logic-js evaluates to the same result, given the data as the environment root
// opt.Root. functions holds the definitions calls refer to ({name: {params, body}}); calls are
// inlined (sdods functions are never recursive).
func Export(expr any, functions map[string]any, opt Options) *Converted {
	if ds := engineDiagnostics(expr, functions, CodeInvalid); len(ds) > 0 {
		sortDiags(ds)
		return &Converted{Diagnostics: ds}
	}
	x := &exporter{opt: opt, fns: functions}
	e, _, ok := x.exp(expr, "", xscope{dataOK: true})
	out := &Converted{Diagnostics: x.diags}
	if ok && !out.Refused() {
		out.Expression = e
	}
	if out.Diagnostics == nil {
		out.Diagnostics = []Diagnostic{}
	}
	sortDiags(out.Diagnostics)
	return out
}

func (x *exporter) refuse(ptr, code, format string, args ...any) (any, Type, bool) {
	x.diags = append(x.diags, Diagnostic{Code: code, Pointer: ptr, Message: fmt.Sprintf(format, args...), Severity: SeverityError})
	return nil, 0, false
}

func (x *exporter) annotation(key string) Type {
	if key == "?" || strings.HasPrefix(key, "?.") {
		return Any
	}
	if t, ok := x.opt.Types[key]; ok {
		return t
	}
	if key == x.opt.root() {
		return Object
	}
	return Any
}

// literalJSON checks that a value inside literal comes out of json-logic-js unchanged: an object
// with exactly one member would be read as an operation.
func literalJSON(v any) bool {
	switch n := v.(type) {
	case []any:
		for _, el := range n {
			if !literalJSON(el) {
				return false
			}
		}
	case map[string]any:
		if len(n) == 1 {
			return false
		}
		// Members of an object that is not logic are returned as they are, unevaluated.
	}
	return true
}

func jlop(name string, args ...any) map[string]any {
	if args == nil {
		args = []any{}
	}
	return map[string]any{name: args}
}

func (x *exporter) exp(node any, ptr string, sc xscope) (any, Type, bool) {
	switch n := node.(type) {
	case nil, bool, string, json.Number:
		return n, literalType(n), true
	case []any:
		out := make([]any, len(n))
		ok := true
		for i, el := range n {
			e, _, eok := x.exp(el, index(ptr, i), sc)
			out[i], ok = e, ok && eok
		}
		return out, Array, ok
	case map[string]any:
		if p, ok := n["var"].(string); ok && len(n) == 1 {
			return x.variable(p, pointer(ptr, "var"), sc)
		}
		args, _ := n["args"].([]any)
		if name, ok := n["fn"].(string); ok && len(n) == 2 {
			return x.call(name, args, ptr, sc)
		}
		if name, ok := n["op"].(string); ok && len(n) == 2 {
			return x.operation(name, args, ptr, sc)
		}
	}
	return x.refuse(ptr, CodeInvalid, "not an sdods expression")
}

func (x *exporter) variable(path, ptr string, sc xscope) (any, Type, bool) {
	segs := strings.Split(path, ".")
	b, bound := sc.binds[segs[0]]
	switch {
	case bound && !b.path:
		if len(segs) > 1 {
			return x.refuse(ptr, CodeNotFaithful, "JSON Logic's var cannot read into a computed value (%q reads into a function argument); pass a variable", path)
		}
		return b.jl, b.t, true
	case bound:
	case segs[0] == x.opt.root() && sc.dataOK:
		b = binding{path: true, annot: x.opt.root()}
	case segs[0] == x.opt.root():
		return x.refuse(ptr, CodeNotFaithful, "inside a JSON Logic map, filter, some or all body only the element is readable; %q reads outside it", path)
	default:
		return x.refuse(ptr, CodeNotFaithful, "JSON Logic has one data object (the root %q); %q reads another root", x.opt.root(), path)
	}
	annot := b.annot
	for _, seg := range segs[1:] {
		if why := segmentProblem(seg, x.annotation(annot)); why != "" {
			return x.refuse(ptr, CodeNotFaithful, "%s", why)
		}
		annot += "." + seg
	}
	jp := strings.Join(append([]string{b.prefix}, segs[1:]...), ".")
	jp = strings.TrimPrefix(jp, ".")
	return map[string]any{"var": jp}, x.annotation(annot), true
}

// annotOf is the annotation key of an sdods variable expression read in sc ("?" for none).
func (x *exporter) annotOf(expr any, sc xscope) string {
	m, _ := expr.(map[string]any)
	p, ok := m["var"].(string)
	if !ok {
		return "?"
	}
	segs := strings.Split(p, ".")
	if b, bound := sc.binds[segs[0]]; bound {
		if !b.path {
			return "?"
		}
		return strings.Join(append([]string{b.annot}, segs[1:]...), ".")
	}
	if segs[0] == x.opt.root() && sc.dataOK {
		return p
	}
	return "?"
}

func (x *exporter) call(name string, args []any, ptr string, sc xscope) (any, Type, bool) {
	def, ok := x.fns[name].(map[string]any)
	if !ok {
		return x.refuse(pointer(ptr, "fn"), CodeInvalid, "function %q is not defined", name)
	}
	params, _ := def["params"].([]any)
	if len(params) != len(args) {
		return x.refuse(pointer(ptr, "args"), CodeInvalid, "function %q takes %d arguments", name, len(params))
	}
	if x.depth >= 32 {
		return x.refuse(ptr, CodeNotFaithful, "function %q is recursive or nested too deep to inline", name)
	}
	inner := xscope{dataOK: sc.dataOK, binds: map[string]binding{}}
	for i, a := range args {
		e, t, ok := x.exp(a, index(pointer(ptr, "args"), i), sc)
		if !ok {
			return nil, 0, false
		}
		p, _ := params[i].(string)
		inner.binds[p] = binding{jl: e, t: t}
		em, _ := e.(map[string]any)
		if v, isVar := em["var"].(string); isVar {
			// A variable argument stays a path, so the body may read into it.
			inner.binds[p] = binding{path: true, prefix: v, annot: x.annotOf(a, sc), t: t}
		}
	}
	x.depth++
	defer func() { x.depth-- }()
	return x.exp(def["body"], "/functions/"+name+"/body", inner)
}

func (x *exporter) operation(name string, raw []any, ptr string, sc xscope) (any, Type, bool) {
	argPtr := func(i int) string { return index(pointer(ptr, "args"), i) }
	all := func() ([]any, []Type, bool) {
		es, ts := make([]any, len(raw)), make([]Type, len(raw))
		ok := true
		for i, v := range raw {
			e, t, eok := x.exp(v, argPtr(i), sc)
			es[i], ts[i], ok = e, t, ok && eok
		}
		return es, ts, ok
	}
	need := func(ts []Type, allowed Type, what string) bool {
		for i, t := range ts {
			if t&^allowed != 0 {
				x.refuse(argPtr(i), CodeNotFaithful, "%s: a value of type %s %s (annotate its type with --type)", name, t, what)
				return false
			}
		}
		return true
	}
	switch name {
	case "literal":
		if len(raw) != 1 || !literalJSON(raw[0]) {
			return x.refuse(ptr, CodeNotFaithful, "JSON Logic reads an object with exactly one member as an operation; this literal cannot be written")
		}
		return raw[0], literalType(raw[0]), true
	case "map", "filter", "some", "all":
		return x.iteration(name, raw, ptr, sc)
	}
	es, ts, ok := all()
	if !ok {
		return nil, 0, false
	}
	switch name {
	case "==", "!=":
		if ts[0]&container != 0 && ts[1]&container != 0 {
			return x.refuse(ptr, CodeNotFaithful, "%s compares arrays and objects by value in sdods and by reference in JavaScript; one side must be known not to be an array or object", name)
		}
		return jlop(map[string]string{"==": "===", "!=": "!=="}[name], es...), Bool, true
	case "<", "<=", ">", ">=":
		if !need(ts, Number, "is compared with JavaScript's coercions (null is 0) where sdods answers false or fails; operands must be numbers") {
			return nil, 0, false
		}
		return jlop(name, es...), Bool, true
	case "between":
		if !need(ts, Number, "is compared with JavaScript's coercions; operands must be numbers") {
			return nil, 0, false
		}
		return jlop("<=", es[1], es[0], es[2]), Bool, true
	case "and", "or":
		if !need(ts, Bool|Null, "is a condition error in sdods and a truthy value in JSON Logic") {
			return nil, 0, false
		}
		for i := range es {
			if ts[i] != Bool {
				es[i] = jlop("!!", es[i])
			}
		}
		if len(es) == 1 {
			return es[0], Bool, true
		}
		return jlop(name, es...), Bool, true
	case "not":
		if !need(ts, Bool|Null, "is a condition error in sdods") {
			return nil, 0, false
		}
		return jlop("!", es[0]), Bool, true
	case "if":
		var t Type
		for i := 0; i+1 < len(es); i += 2 {
			if !need(ts[i:i+1], Bool|Null, "is a condition error in sdods") {
				return nil, 0, false
			}
			t |= ts[i+1]
		}
		return jlop("if", es...), t | ts[len(ts)-1], true
	case "coalesce":
		e, t := es[len(es)-1], ts[len(ts)-1]
		for i := len(es) - 2; i >= 0; i-- {
			e = jlop("if", jlop("!==", es[i], nil), es[i], e)
			t |= ts[i] &^ Null
		}
		return e, t, true
	case "min", "max":
		if len(es) == 1 && ts[0] != Number {
			return x.refuse(argPtr(0), CodeNotFaithful, "%s of one argument reads an array's elements in sdods; the argument must be a number", name)
		}
		if !need(ts, Number, "is converted with Number() in JavaScript (null is 0) where sdods answers null or fails") {
			return nil, 0, false
		}
		return jlop(name, es...), Number, true
	case "concat":
		switch {
		case allType(ts, String):
			return jlop("cat", es...), String, true
		case allType(ts, Array):
			return jlop("merge", es...), Array, true
		}
		return x.refuse(ptr, CodeNotFaithful, "concat is exported when every argument is known to be a string (cat) or every one an array (merge); null gives null in sdods and \"\" or [null] in JSON Logic")
	case "contains", "in":
		item, cont := es[0], es[1]
		it, ct := ts[0], ts[1]
		if name == "contains" {
			item, cont, it, ct = es[1], es[0], ts[1], ts[0]
		}
		switch {
		case ct&^(String|Null) == 0 && it == String:
			// json-logic-js answers false for the empty container, sdods finds "" in "".
			return jlop("if", jlop("===", cont, ""), jlop("===", item, ""), jlop("in", item, cont)), Bool, true
		case ct&^(Array|Null) == 0 && it&container == 0:
			return jlop("in", item, cont), Bool, true
		}
		return x.refuse(ptr, CodeNotFaithful, "%s is exported for a string item in a string, or a scalar item in an array (JavaScript finds arrays and objects by reference and converts the item to a string)", name)
	case "+", "-", "*", "/", "mod", "round", "sum", "abs":
		return x.refuse(ptr, CodeNotFaithful, "%s computes in decimal rounded to 15 significant digits in sdods and in binary floating point in JavaScript (0.1 + 0.2 is 0.3 in sdods, 0.30000000000000004 in JavaScript)", name)
	case "length", "substring":
		return x.refuse(ptr, CodeNotFaithful, "%s counts code points in sdods and UTF-16 code units in JavaScript", name)
	case "matches":
		return x.refuse(ptr, CodeUnknown, "JSON Logic has no patterns; sdods's portable patterns cannot be written in it")
	case "isDate", "yearsBetween", "daysBetween", "dateAdd":
		return x.refuse(ptr, CodeUnknown, "JSON Logic has no dates (%s)", name)
	case "upper", "lower", "trim", "text", "startsWith", "endsWith", "typeOf", "isEmpty":
		return x.refuse(ptr, CodeUnknown, "JSON Logic has no %s", name)
	}
	if strings.HasPrefix(name, "x-") {
		return x.refuse(pointer(ptr, "op"), CodeUnknown, "custom operator %q has no JSON Logic counterpart", name)
	}
	return x.refuse(pointer(ptr, "op"), CodeUnknown, "%q is not an sdods core operator", name)
}

func allType(ts []Type, t Type) bool {
	for _, u := range ts {
		if u != t {
			return false
		}
	}
	return true
}

func (x *exporter) iteration(name string, raw []any, ptr string, sc xscope) (any, Type, bool) {
	argPtr := func(i int) string { return index(pointer(ptr, "args"), i) }
	if len(raw) < 2 || len(raw) > 3 {
		return x.refuse(ptr, CodeInvalid, "%s takes an array and a body", name)
	}
	a, ta, ok := x.exp(raw[0], argPtr(0), sc)
	if !ok {
		return nil, 0, false
	}
	elem, bodyPtr, body := "it", argPtr(1), raw[1]
	if len(raw) == 3 {
		elem, _ = raw[1].(string)
		bodyPtr, body = argPtr(2), raw[2]
	}
	annot := x.annotOf(raw[0], sc) + ".*"

	inner := xscope{binds: map[string]binding{elem: {path: true, annot: annot}}}
	b, tb, ok := x.exp(body, bodyPtr, inner)
	if !ok {
		return nil, 0, false
	}
	if name != "map" && tb&^(Bool|Null) != 0 {
		return x.refuse(bodyPtr, CodeNotFaithful, "%s's body of type %s is a condition error in sdods and a truthy value in JSON Logic", name, tb)
	}
	switch name {
	case "map":
		if ta != Array {
			return x.refuse(argPtr(0), CodeNotFaithful, "map of null is null in sdods and [] in JSON Logic; the array must be known to be an array")
		}
		return jlop("map", a, b), Array, true
	case "filter":
		if ta != Array {
			return x.refuse(argPtr(0), CodeNotFaithful, "filter of null is null in sdods and [] in JSON Logic; the array must be known to be an array")
		}
		return jlop("filter", a, b), Array, true
	case "some":
		if ta&^(Array|Null) != 0 {
			return x.refuse(argPtr(0), CodeNotFaithful, "some over a %s fails in sdods", ta)
		}
		return jlop("some", a, b), Bool, true
	}
	if ta != Array {
		return x.refuse(argPtr(0), CodeNotFaithful, "all of null is false in sdods and true in JSON Logic; the array must be known to be an array")
	}
	// sdods: all of [] is true; json-logic-js: false.
	return jlop("or", jlop("!", a), jlop("all", a, b)), Bool, true
}
