// Package testops holds the custom operators the conformance suite registers: x-test-reverse,
// x-test-sum and x-luhn. They are ordinary host operators, written against engine.Operator.
package testops

import (
	"errors"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/engine/internal/num"
)

// Operators returns the three suite operators by name, ready for engine.WithOperators.
func Operators() map[string]engine.Operator {
	return map[string]engine.Operator{
		"x-test-reverse": Reverse,
		"x-test-sum":     Sum,
		"x-luhn":         Luhn,
	}
}

// Reverse implements x-test-reverse(v): a string reversed by code points, an array reversed,
// null for null; anything else, or a count other than one argument, is an error.
func Reverse(args []any) (any, error) {
	if len(args) != 1 {
		return nil, errors.New("x-test-reverse takes 1 argument")
	}
	switch t := args[0].(type) {
	case nil:
		return nil, nil
	case string:
		r := []rune(t)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r), nil
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[len(t)-1-i] = x
		}
		return out, nil
	}
	return nil, errors.New("x-test-reverse expects a string or an array")
}

// Sum implements x-test-sum(n...): the canonical sum of its number arguments (0 for none); any
// other argument is an error.
func Sum(args []any) (any, error) {
	xs := make([]float64, len(args))
	for i, a := range args {
		f, ok := a.(float64)
		if !ok {
			return nil, errors.New("x-test-sum expects numbers")
		}
		xs[i] = f
	}
	s, ok := num.Add(xs...)
	if !ok {
		return nil, errors.New("x-test-sum: result beyond the range of a double")
	}
	return s, nil
}

// Luhn implements x-luhn(s): true when s is two or more ASCII digits whose Luhn checksum is 0;
// false for null, for other strings; an error for a non-string or a count other than one.
func Luhn(args []any) (any, error) {
	if len(args) != 1 {
		return nil, errors.New("x-luhn takes 1 argument")
	}
	if args[0] == nil {
		return false, nil
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, errors.New("x-luhn expects a string")
	}
	if len(s) < 2 {
		return false, nil
	}
	sum := 0
	double := false
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c < '0' || c > '9' {
			return false, nil
		}
		d := int(c - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0, nil
}
