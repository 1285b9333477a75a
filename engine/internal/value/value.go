// Package value defines the engine's runtime values — nil, bool, float64, string, []any and
// map[string]any — and the checks at the engine's edges: CheckDepth and Normalize on the way in,
// Canonical on the way out.
package value

import (
	"encoding/json"
	"math"
	"unicode/utf8"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/num"
)

// MaxEnvDepth is the deepest nesting accepted for each environment root.
const MaxEnvDepth = 64

// TypeOf returns the JSON type name of v: null, boolean, number, string, array or object.
func TypeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

// Equal reports deep equality: same JSON type and equal value; numbers by numeric value; objects
// by member names and values regardless of order. There is no coercion between types.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// Depth returns the nesting depth of v, counting each array or object as one level (a scalar
// is 0, [] and {} are 1, [[1]] is 2), but stops counting once limit is exceeded, so it is cheap
// and safe on hostile or cyclic input.
func Depth(v any, limit int) int {
	return depth(v, 0, limit)
}

func depth(v any, d, limit int) int {
	if d > limit {
		return d
	}
	best := d
	switch t := v.(type) {
	case []any:
		best = d + 1
		for _, x := range t {
			if e := depth(x, d+1, limit); e > best {
				best = e
				if best > limit {
					return best
				}
			}
		}
	case map[string]any:
		best = d + 1
		for _, x := range t {
			if e := depth(x, d+1, limit); e > best {
				best = e
				if best > limit {
					return best
				}
			}
		}
	}
	return best
}

// CheckDepth refuses (BAD_REQUEST) the first root, in name order, nested more than 64 deep.
func CheckDepth(env map[string]any) *diag.Diagnostic {
	deep := false
	for _, v := range env {
		if Depth(v, MaxEnvDepth) > MaxEnvDepth {
			deep = true
			break
		}
	}
	if !deep {
		return nil
	}
	for _, name := range sortedKeys(env) {
		if Depth(env[name], MaxEnvDepth) > MaxEnvDepth {
			return diag.EnvTooDeep(name, MaxEnvDepth)
		}
	}
	return nil
}

// Normalize returns v as engine values: json.Number, integers and float32 become float64,
// []T of those kinds are accepted as []any. It refuses (BAD_REQUEST) numbers beyond double range,
// NaN, infinities, strings that are not UTF-8 and any other Go type. v is not modified; it is
// returned as is when it is already normalized. Call CheckDepth first: Normalize recurses.
func Normalize(v any, ptr string) (any, *diag.Diagnostic) {
	// the quick passes build no pointers and sort nothing; on a refusal the passes that name
	// the first refused value (in member name order) run again to report it
	normal, refused := quickNormal(v)
	if refused {
		_, d := isNormal(v, ptr)
		return nil, d
	}
	if normal {
		return v, nil
	}
	if out, ok := quickConvert(v); ok {
		return out, nil
	}
	return convert(v, ptr)
}

// quickNormal is isNormal without pointers: whether v needs no conversion, and whether some
// value in it is refused.
func quickNormal(v any) (normal, refused bool) {
	switch t := v.(type) {
	case nil, bool:
		return true, false
	case string:
		return utf8.ValidString(t), !utf8.ValidString(t)
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return false, true
		}
		return !math.Signbit(t) || t != 0, false
	case []any:
		ok := true
		for _, x := range t {
			n, r := quickNormal(x)
			if r {
				return false, true
			}
			ok = ok && n
		}
		return ok, false
	case map[string]any:
		ok := true
		for _, x := range t {
			n, r := quickNormal(x)
			if r {
				return false, true
			}
			ok = ok && n
		}
		return ok, false
	}
	return false, false
}

// quickConvert is convert without pointers and without sorting, and with numbers boxed by
// Number: ok is false where convert refuses, and then convert runs to say why.
func quickConvert(v any) (any, bool) {
	switch t := v.(type) {
	case nil, bool, string:
		return t, true
	case float64:
		return Number(t + 0), true
	case float32:
		f := float64(t)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, false
		}
		return Number(f + 0), true
	case int:
		return Number(float64(t)), true
	case int8:
		return Number(float64(t)), true
	case int16:
		return Number(float64(t)), true
	case int32:
		return Number(float64(t)), true
	case int64:
		return Number(float64(t)), true
	case uint:
		return Number(float64(t)), true
	case uint8:
		return Number(float64(t)), true
	case uint16:
		return Number(float64(t)), true
	case uint32:
		return Number(float64(t)), true
	case uint64:
		return Number(float64(t)), true
	case json.Number:
		return num.Parse(string(t))
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			c, ok := quickConvert(x)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	case []string:
		out := make([]any, len(t))
		for i, x := range t {
			if !utf8.ValidString(x) {
				return nil, false
			}
			out[i] = x
		}
		return out, true
	case []float64:
		out := make([]any, len(t))
		for i, x := range t {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, false
			}
			out[i] = Number(x + 0)
		}
		return out, true
	case []int:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = Number(float64(x))
		}
		return out, true
	case []map[string]any:
		out := make([]any, len(t))
		for i, x := range t {
			c, ok := quickConvert(x)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			c, ok := quickConvert(x)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	}
	return nil, false
}

// isNormal reports whether v needs no conversion; it returns a diagnostic for refused values.
func isNormal(v any, ptr string) (bool, *diag.Diagnostic) {
	switch t := v.(type) {
	case nil, bool:
		return true, nil
	case string:
		if !utf8.ValidString(t) {
			return false, diag.EnvValue(ptr, "a string is not valid UTF-8")
		}
		return true, nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return false, diag.EnvValue(ptr, "a number is not finite")
		}
		return !math.Signbit(t) || t != 0, nil
	case []any:
		ok := true
		for i, x := range t {
			n, d := isNormal(x, diag.Index(ptr, i))
			if d != nil {
				return false, d
			}
			ok = ok && n
		}
		return ok, nil
	case map[string]any:
		ok := true
		for _, k := range sortedKeys(t) {
			n, d := isNormal(t[k], diag.Pointer(ptr, k))
			if d != nil {
				return false, d
			}
			ok = ok && n
		}
		return ok, nil
	}
	return false, nil
}

func convert(v any, ptr string) (any, *diag.Diagnostic) {
	switch t := v.(type) {
	case nil, bool, string:
		return t, nil
	case float64:
		return t + 0, nil // -0 becomes 0
	case float32:
		return Normalize(float64(t), ptr)
	case int:
		return float64(t), nil
	case int8:
		return float64(t), nil
	case int16:
		return float64(t), nil
	case int32:
		return float64(t), nil
	case int64:
		return float64(t), nil
	case uint:
		return float64(t), nil
	case uint8:
		return float64(t), nil
	case uint16:
		return float64(t), nil
	case uint32:
		return float64(t), nil
	case uint64:
		return float64(t), nil
	case json.Number:
		f, ok := num.Parse(string(t))
		if !ok {
			return nil, diag.EnvValue(ptr, "number "+clip(string(t))+" is not a JSON number within the range of a double")
		}
		return f, nil
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			c, d := convert(x, diag.Index(ptr, i))
			if d != nil {
				return nil, d
			}
			out[i] = c
		}
		return out, nil
	case []string:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = x
		}
		// typed slices are checked like any other list: each string must be valid UTF-8
		if _, d := isNormal(out, ptr); d != nil {
			return nil, d
		}
		return convert(out, ptr)
	case []float64:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = x
		}
		// and each number finite
		if _, d := isNormal(out, ptr); d != nil {
			return nil, d
		}
		return convert(out, ptr)
	case []int:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = float64(x)
		}
		return out, nil
	case []map[string]any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = x
		}
		return convert(out, ptr)
	case map[string]any:
		out := make(map[string]any, len(t))
		for _, k := range sortedKeys(t) {
			c, d := convert(t[k], diag.Pointer(ptr, k))
			if d != nil {
				return nil, d
			}
			out[k] = c
		}
		return out, nil
	}
	return nil, diag.EnvValue(ptr, "a value of Go type "+goType(v)+" is not a JSON value")
}

// Canonical returns v with every number rounded to 15 significant digits (see package num).
// It fails when a number is beyond double range after rounding. v is returned as is when every
// number in it is already canonical.
func Canonical(v any) (any, bool) {
	if isCanonical(v) {
		return v, true
	}
	return canon(v)
}

func isCanonical(v any) bool {
	switch t := v.(type) {
	case float64:
		if t == math.Trunc(t) && t > -1e15 && t < 1e15 {
			return t != 0 || !math.Signbit(t) // an integer of at most 15 digits, not -0
		}
		c, ok := num.Canonical(t)
		return ok && c == t
	case []any:
		for _, x := range t {
			if !isCanonical(x) {
				return false
			}
		}
	case map[string]any:
		for _, x := range t {
			if !isCanonical(x) {
				return false
			}
		}
	}
	return true
}

func canon(v any) (any, bool) {
	switch t := v.(type) {
	case float64:
		return num.Canonical(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			c, ok := canon(x)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			c, ok := canon(x)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	}
	return v, true
}

// Weight returns the number of values in v counted as a tree (each array, object, member and
// element is one, strings count one per 64 bytes), stopping once the count exceeds limit. Values
// built by an evaluation may share parts, so the tree can be much larger than memory; Weight is
// how traversals are charged to the evaluation budget.
func Weight(v any, limit int64) int64 {
	var n int64
	weigh(v, &n, limit)
	return n
}

func weigh(v any, n *int64, limit int64) {
	*n++
	if *n > limit {
		return
	}
	switch t := v.(type) {
	case string:
		*n += int64(len(t) / 64)
	case []any:
		for _, x := range t {
			// scalars inline, counted exactly as weigh counts them
			switch s := x.(type) {
			case nil, bool, float64:
				*n++
			case string:
				if *n++; *n <= limit {
					*n += int64(len(s) / 64)
				}
			default:
				weigh(x, n, limit)
			}
			if *n > limit {
				return
			}
		}
	case map[string]any:
		for _, x := range t {
			weigh(x, n, limit)
			if *n > limit {
				return
			}
		}
	}
}

// smallInts holds the integers -smallIntMin..smallIntMax already boxed as numbers, so the
// arithmetic results that are most common in rules (counts, ages, indexes, small amounts) become
// values without an allocation, as the Go runtime does for small integers.
const smallIntMin, smallIntMax = 1024, 1024

var smallInts = func() (out [smallIntMin + smallIntMax + 1]any) {
	for i := range out {
		out[i] = float64(i - smallIntMin)
	}
	return out
}()

// Number returns f as a value. An integer in -1024..1024 is returned from a table of boxed
// numbers (negative zero becomes 0, as everywhere in the engine); any other f is boxed.
func Number(f float64) any {
	if f >= -smallIntMin && f <= smallIntMax {
		if i := int(f); float64(i) == f {
			return smallInts[i+smallIntMin]
		}
	}
	return f
}
