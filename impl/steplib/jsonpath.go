package steplib

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// The JSONPath subset: $ (the root), .name, ['name'] or ["name"], [index] (negative from the end),
// [*] and .* (every element or member value). A path without a leading $ is taken as relative to
// the root ("items[0]" is "$.items[0]"). A path with a wildcard selects a list of values.

type pathSeg struct {
	name     string
	index    int
	isIndex  bool
	wildcard bool
}

func parseJSONPath(path string) ([]pathSeg, error) {
	p := strings.TrimSpace(path)
	if p == "" {
		return nil, fmt.Errorf("empty JSONPath")
	}
	switch {
	case p == "$":
		return nil, nil
	case strings.HasPrefix(p, "$.") || strings.HasPrefix(p, "$["):
		p = p[1:]
	case strings.HasPrefix(p, "$"):
		return nil, fmt.Errorf("JSONPath %q: expected '.' or '[' after '$'", path)
	case strings.HasPrefix(p, "["):
	default:
		p = "." + p
	}
	var segs []pathSeg
	for i := 0; i < len(p); {
		switch p[i] {
		case '.':
			i++
			start := i
			for i < len(p) && p[i] != '.' && p[i] != '[' {
				i++
			}
			name := p[start:i]
			if name == "" {
				return nil, fmt.Errorf("JSONPath %q: empty member name at offset %d (recursive descent '..' is not supported)", path, start)
			}
			if name == "*" {
				segs = append(segs, pathSeg{wildcard: true})
			} else {
				segs = append(segs, pathSeg{name: name})
			}
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("JSONPath %q: '[' at offset %d is not closed", path, i)
			}
			inner := strings.TrimSpace(p[i+1 : i+end])
			if q := inner; len(q) >= 2 && (q[0] == '\'' || q[0] == '"') {
				// A quoted name may contain ']', so find the closing quote first.
				closeQ := strings.IndexByte(p[i+2:], q[0])
				if closeQ < 0 {
					return nil, fmt.Errorf("JSONPath %q: unclosed quoted name at offset %d", path, i)
				}
				name := p[i+2 : i+2+closeQ]
				rest := strings.TrimSpace(p[i+2+closeQ+1:])
				if !strings.HasPrefix(rest, "]") {
					return nil, fmt.Errorf("JSONPath %q: expected ']' after the quoted name %q", path, name)
				}
				segs = append(segs, pathSeg{name: name})
				i = len(p) - len(rest) + 1
				continue
			}
			switch {
			case inner == "*":
				segs = append(segs, pathSeg{wildcard: true})
			default:
				n, err := strconv.Atoi(inner)
				if err != nil {
					return nil, fmt.Errorf("JSONPath %q: %q is neither an index, a quoted name nor '*' (filters and slices are not supported)", path, inner)
				}
				segs = append(segs, pathSeg{index: n, isIndex: true})
			}
			i += end + 1
		default:
			return nil, fmt.Errorf("JSONPath %q: unexpected %q at offset %d", path, p[i], i)
		}
	}
	return segs, nil
}

// EvalJSONPath returns the value the path selects in a decoded JSON document (as produced by
// DecodeJSON). A path with a wildcard returns a []any of the values found. It refuses a path that
// selects nothing, naming the point where the lookup stopped.
func EvalJSONPath(doc any, path string) (any, error) {
	segs, err := parseJSONPath(path)
	if err != nil {
		return nil, err
	}
	wild := false
	for _, s := range segs {
		wild = wild || s.wildcard
	}
	current := []any{doc}
	at := "$"
	for _, s := range segs {
		var next []any
		for _, v := range current {
			switch {
			case s.wildcard:
				switch x := v.(type) {
				case []any:
					next = append(next, x...)
				case map[string]any:
					keys := make([]string, 0, len(x))
					for k := range x {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					for _, k := range keys {
						next = append(next, x[k])
					}
				default:
					if !wild {
						return nil, fmt.Errorf("%s is %s, not an array or object", at, jsonKind(v))
					}
				}
			case s.isIndex:
				arr, ok := v.([]any)
				if !ok {
					if wild {
						continue
					}
					return nil, fmt.Errorf("%s is %s, not an array", at, jsonKind(v))
				}
				i := s.index
				if i < 0 {
					i += len(arr)
				}
				if i < 0 || i >= len(arr) {
					if wild {
						continue
					}
					return nil, fmt.Errorf("%s has %d element(s); index %d is out of range", at, len(arr), s.index)
				}
				next = append(next, arr[i])
			default:
				obj, ok := v.(map[string]any)
				if !ok {
					if wild {
						continue
					}
					return nil, fmt.Errorf("%s is %s, not an object", at, jsonKind(v))
				}
				m, ok := obj[s.name]
				if !ok {
					if wild {
						continue
					}
					return nil, fmt.Errorf("%s has no member %q (members: %s)", at, s.name, memberNames(obj))
				}
				next = append(next, m)
			}
		}
		current = next
		switch {
		case s.wildcard:
			at += "[*]"
		case s.isIndex:
			at += fmt.Sprintf("[%d]", s.index)
		default:
			at += "." + s.name
		}
	}
	if wild {
		if current == nil {
			current = []any{}
		}
		return current, nil
	}
	return current[0], nil
}

func memberNames(obj map[string]any) string {
	if len(obj) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > 15 {
		keys = append(keys[:15], "…")
	}
	return strings.Join(keys, ", ")
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

// DecodeJSON decodes one JSON document keeping numbers exact (as json.Number).
func DecodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// JSONText renders a decoded value compactly: strings as is, everything else as JSON.
func JSONText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func numberRat(v any) (*big.Rat, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(x) == nil {
			return nil, false
		}
		return r, true
	case int64:
		return new(big.Rat).SetInt64(x), true
	case int:
		return new(big.Rat).SetInt64(int64(x)), true
	default:
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// JSONEqual reports whether two decoded JSON values are equal; numbers compare by value (1 == 1.0).
func JSONEqual(a, b any) bool {
	if ra, ok := numberRat(a); ok {
		rb, ok := numberRat(b)
		return ok && ra.Cmp(rb) == 0
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !JSONEqual(x[i], y[i]) {
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
			if !ok || !JSONEqual(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// JSONContains reports whether actual contains expected: objects when every expected member is
// contained in actual's, arrays element by element with the same length, other values when equal.
// It returns the path of the first difference.
func JSONContains(actual, expected any, at string) (bool, string) {
	switch e := expected.(type) {
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok {
			return false, fmt.Sprintf("%s is %s, expected an object", at, jsonKind(actual))
		}
		keys := make([]string, 0, len(e))
		for k := range e {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			av, ok := a[k]
			if !ok {
				return false, fmt.Sprintf("%s has no member %q", at, k)
			}
			if ok, why := JSONContains(av, e[k], at+"."+k); !ok {
				return false, why
			}
		}
		return true, ""
	case []any:
		a, ok := actual.([]any)
		if !ok {
			return false, fmt.Sprintf("%s is %s, expected an array", at, jsonKind(actual))
		}
		if len(a) != len(e) {
			return false, fmt.Sprintf("%s has %d element(s), expected %d", at, len(a), len(e))
		}
		for i := range e {
			if ok, why := JSONContains(a[i], e[i], fmt.Sprintf("%s[%d]", at, i)); !ok {
				return false, why
			}
		}
		return true, ""
	}
	if !JSONEqual(actual, expected) {
		return false, fmt.Sprintf("%s is %s, expected %s", at, showJSON(actual), showJSON(expected))
	}
	return true, ""
}

// showJSON renders a value as JSON, strings quoted, for messages.
func showJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
