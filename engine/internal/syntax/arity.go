package syntax

import "strconv"

// Arity is how many arguments a core operator takes: Min to Max, no upper bound when Max < 0.
type Arity struct{ Min, Max int }

// CoreOperators are the 45 operators of the core profile and their arity (spec/v1/operators.md
// documents each). The analysis checks every application against this table; package machine
// holds a builder for each name and checks at start that the two tables name the same operators.
var CoreOperators = map[string]Arity{
	// comparison
	"==": {2, 2}, "!=": {2, 2}, "<": {2, 2}, "<=": {2, 2}, ">": {2, 2}, ">=": {2, 2}, "between": {3, 3},
	// logic and conditionals; if also takes an odd count (see Accepts)
	"and": {1, -1}, "or": {1, -1}, "not": {1, 1}, "if": {3, -1}, "coalesce": {1, -1},
	// arithmetic
	"+": {2, -1}, "-": {1, 2}, "*": {2, -1}, "/": {2, 2}, "mod": {2, 2}, "abs": {1, 1}, "min": {1, -1},
	"max": {1, -1}, "round": {1, 2}, "sum": {1, 1},
	// strings
	"upper": {1, 1}, "lower": {1, 1}, "trim": {1, 1}, "concat": {1, -1}, "substring": {2, 3}, "text": {1, 1},
	"startsWith": {2, 2}, "endsWith": {2, 2}, "matches": {2, 2},
	// strings and lists
	"length": {1, 1}, "contains": {2, 2}, "in": {2, 2},
	// lists: the body sees each element bound to a name (see Iterators)
	"map": {2, 3}, "filter": {2, 3}, "some": {2, 3}, "all": {2, 3},
	// types and null
	"typeOf": {1, 1}, "isEmpty": {1, 1}, "literal": {1, 1},
	// dates
	"isDate": {1, 1}, "yearsBetween": {2, 2}, "daysBetween": {2, 2}, "dateAdd": {3, 3},
}

// Accepts reports whether the operator op of arity a takes n arguments.
func (a Arity) Accepts(op string, n int) bool {
	if n < a.Min || (a.Max >= 0 && n > a.Max) {
		return false
	}
	return op != "if" || n%2 == 1
}

// Text says what the operator op of arity a takes, as OPERATOR_ARITY words it.
func (a Arity) Text(op string) string {
	itoa := strconv.Itoa
	switch {
	case op == "if":
		return "an odd number of arguments, at least 3"
	case a.Max < 0:
		return itoa(a.Min) + " or more arguments"
	case a.Min == a.Max && a.Min == 1:
		return "1 argument"
	case a.Min == a.Max:
		return itoa(a.Min) + " arguments"
	}
	return itoa(a.Min) + " to " + itoa(a.Max) + " arguments"
}
