// Package jsonlogic converts expressions between JSON Logic (as json-logic-js evaluates it) and
// the sdods expression language (spec/v1/expressions.md), faithfully or not at all: Import and
// Export return either an expression that gives the same result for every input or diagnostics,
// each with a JSON pointer into the input and the reason.
//
// "The same result" is judged on what leaves each engine: sdods writes every number with 15
// significant digits (spec/v1/numbers.md §4), so a JavaScript number is compared after the same
// rounding. The differential test in this package drives json-logic-js and the engine on the same
// expressions and data and is the judge of every rule written here.
package jsonlogic

import (
	"fmt"
	"sort"
	"strings"
)

// Type is a set of JSON types: what a value may be.
type Type uint8

// The JSON types.
const (
	Null Type = 1 << iota
	Bool
	Number
	String
	Array
	Object

	Any       = Null | Bool | Number | String | Array | Object
	container = Array | Object
)

var typeNames = []struct {
	t    Type
	name string
}{{Null, "null"}, {Bool, "boolean"}, {Number, "number"}, {String, "string"}, {Array, "array"}, {Object, "object"}}

// ParseType reads "number", "string|null", "any".
func ParseType(s string) (Type, error) {
	var t Type
	for _, part := range strings.Split(s, "|") {
		part = strings.TrimSpace(part)
		if part == "any" {
			t |= Any
			continue
		}
		found := false
		for _, n := range typeNames {
			if n.name == part {
				t |= n.t
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown type %q (null, boolean, number, string, array, object, any, joined by |)", part)
		}
	}
	return t, nil
}

func (t Type) String() string {
	if t == Any {
		return "any"
	}
	var parts []string
	for _, n := range typeNames {
		if t&n.t != 0 {
			parts = append(parts, n.name)
		}
	}
	return strings.Join(parts, "|")
}

// Types annotates paths with the types of their values. For Import the keys are JSON Logic
// paths ("age", "items.*" for every element of items, "$" for the data itself, which is an
// object unless annotated); for Export they are sdods variable paths ("data.age", "data.items.*").
// A path without annotation may hold anything. An annotation is a promise about every input:
// a value that may be absent must include null.
type Types map[string]Type

// ParseTypes reads PATH=TYPE pairs.
func ParseTypes(pairs []string) (Types, error) {
	ts := Types{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("type annotation %q is not PATH=TYPE", p)
		}
		t, err := ParseType(v)
		if err != nil {
			return nil, err
		}
		ts[k] = t
	}
	return ts, nil
}

// Diagnostic is one refusal (or, with Severity "cost", one documented divergence accepted by
// --js-compat).
type Diagnostic struct {
	Code     string `json:"code"`
	Pointer  string `json:"pointer"`
	Message  string `json:"message"`
	Severity string `json:"severity"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
}

// Diagnostic codes.
const (
	CodeNotFaithful  = "NOT_FAITHFUL"      // converting would change the result for some input
	CodeUnknown      = "OPERATION_UNKNOWN" // an operation the other language does not have
	CodeInvalid      = "INPUT_INVALID"     // input that is not an expression of its language
	CodeCost         = "JS_COMPAT_COST"    // --js-compat accepted a documented divergence
	SeverityError    = "error"
	SeverityCost     = "cost"
	jsTruthyFunction = "jsTruthy"
	jsLooseEqFunc    = "jsLooseEq"
	jsNumberFunc     = "jsNumber"
)

func sortDiags(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Pointer < ds[j].Pointer })
}

// Pointer escapes a member name for a JSON pointer.
func pointer(base, key string) string {
	key = strings.ReplaceAll(key, "~", "~0")
	return base + "/" + strings.ReplaceAll(key, "/", "~1")
}

func index(base string, i int) string { return fmt.Sprintf("%s/%d", base, i) }

// protoNames are the property names JavaScript finds on a value that does not own them, by the
// value's type: json-logic-js's var reads data[segment], so {"var":"s.length"} is a string's
// length and {"var":"a.constructor"} a function. Object's names apply to every type.
var protoNames = map[Type][]string{
	Object: {"__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__", "__proto__", "constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "toLocaleString", "toString", "valueOf"},
	Array:  {"at", "concat", "copyWithin", "entries", "every", "fill", "filter", "find", "findIndex", "findLast", "findLastIndex", "flat", "flatMap", "forEach", "includes", "indexOf", "join", "keys", "lastIndexOf", "length", "map", "pop", "push", "reduce", "reduceRight", "reverse", "shift", "slice", "some", "sort", "splice", "toReversed", "toSorted", "toSpliced", "unshift", "values", "with", "group", "groupBy", "findLastIndex"},
	String: {"anchor", "at", "big", "blink", "bold", "charAt", "charCodeAt", "codePointAt", "concat", "endsWith", "fixed", "fontcolor", "fontsize", "includes", "indexOf", "isWellFormed", "italics", "lastIndexOf", "length", "link", "localeCompare", "match", "matchAll", "normalize", "padEnd", "padStart", "repeat", "replace", "replaceAll", "search", "slice", "small", "split", "startsWith", "strike", "sub", "substr", "substring", "sup", "toLocaleLowerCase", "toLocaleUpperCase", "toLowerCase", "toUpperCase", "toWellFormed", "trim", "trimEnd", "trimLeft", "trimRight", "trimStart"},
	Number: {"toExponential", "toFixed", "toPrecision"},
}

// segmentProblem says why reading segment seg of a value of type parent differs between
// json-logic-js (data[seg]) and sdods (spec/v1/expressions.md §3), or "" when it does not.
func segmentProblem(seg string, parent Type) string {
	if seg == "" {
		return "an empty path segment reads the member \"\" in JavaScript but is invalid in sdods"
	}
	for _, t := range []Type{Object, Array, String, Number} {
		if t != Object && parent&t == 0 {
			continue
		}
		for _, n := range protoNames[t] {
			if n == seg {
				return fmt.Sprintf("segment %q names a JavaScript built-in property (of %s values) that json-logic-js reads where sdods reads null", seg, Type(t))
			}
		}
	}
	digits := seg != ""
	for _, r := range seg {
		if r < '0' || r > '9' {
			digits = false
		}
	}
	if !digits {
		return ""
	}
	if parent&String != 0 {
		return fmt.Sprintf("segment %q indexes a string (a UTF-16 code unit) in JavaScript but reads null in sdods; annotate the parent's type to exclude string", seg)
	}
	if len(seg) > 1 && seg[0] == '0' && parent&Array != 0 {
		return fmt.Sprintf("segment %q has a leading zero: sdods reads it as an index, JavaScript as a member name", seg)
	}
	return ""
}
