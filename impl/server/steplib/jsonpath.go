package steplib

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/theory/jsonpath"
	"github.com/theory/jsonpath/spec"
)

// JSONPath is RFC 9535 (github.com/theory/jsonpath): names, indexes, slices ([1:3], [::-1]),
// wildcards, filters ([?@.id==2], also written [?(@.id==2)]), recursive descent ($..id) and the
// functions length, count, match, search and value. Two older forms stay accepted: a path
// without the leading $ is relative to the root ("items[0]" is "$.items[0]"), and a dotted name
// may hold characters RFC 9535 only allows in brackets ("$.user-id" is "$['user-id']").

var pathParser = jsonpath.NewParser()

// pathCacheMax bounds the paths compiledPaths keeps (when it is full it starts afresh), and
// pathCacheMaxLen the length of a path it keeps.
const (
	pathCacheMax    = 4096
	pathCacheMaxLen = 1024
)

// compiledPaths keeps what CompileJSONPath gave for each path text: a run asserts the same paths in
// every scenario, and each JSON step read its path twice (to check it, then to select). A parsed
// path is only read afterwards (Select, Query), so one serves every caller.
var compiledPaths = struct {
	sync.RWMutex
	m map[string]compiledPath
}{m: map[string]compiledPath{}}

type compiledPath struct {
	path *jsonpath.Path
	err  error
}

// CompileJSONPath parses a JSONPath as the steps read it.
func CompileJSONPath(path string) (*jsonpath.Path, error) {
	compiledPaths.RLock()
	c, ok := compiledPaths.m[path]
	compiledPaths.RUnlock()
	if ok {
		return c.path, c.err
	}
	jp, err := compileJSONPath(path)
	if len(path) > pathCacheMaxLen {
		return jp, err
	}
	compiledPaths.Lock()
	if len(compiledPaths.m) >= pathCacheMax {
		clear(compiledPaths.m)
	}
	compiledPaths.m[path] = compiledPath{jp, err}
	compiledPaths.Unlock()
	return jp, err
}

func compileJSONPath(path string) (*jsonpath.Path, error) {
	p := strings.TrimSpace(path)
	if p == "" {
		return nil, fmt.Errorf("empty JSONPath")
	}
	q := p
	switch {
	case strings.HasPrefix(q, "$"):
	case strings.HasPrefix(q, "["):
		q = "$" + q
	default:
		q = "$." + q
	}
	jp, err := pathParser.Parse(q)
	if err == nil {
		return jp, nil
	}
	if legacy, ok := legacyPath(q); ok {
		if jp, lerr := pathParser.Parse(legacy); lerr == nil {
			return jp, nil
		}
	}
	msg := strings.TrimPrefix(err.Error(), "jsonpath: ")
	if q != p {
		return nil, fmt.Errorf("JSONPath %q (read as %q): %s", path, q, msg)
	}
	return nil, fmt.Errorf("JSONPath %q: %s", path, msg)
}

// legacyPath rewrites the dotted names of a path of names, indexes and wildcards into bracket
// notation, the form the steps accepted before RFC 9535 ("$.user-id" → "$['user-id']"). It
// reports false for anything else, which then stays an RFC 9535 syntax error.
func legacyPath(p string) (string, bool) {
	if !strings.HasPrefix(p, "$") {
		return "", false
	}
	var b strings.Builder
	b.WriteString("$")
	for i := 1; i < len(p); {
		switch p[i] {
		case '.':
			i++
			start := i
			for i < len(p) && p[i] != '.' && p[i] != '[' {
				i++
			}
			name := p[start:i]
			switch {
			case name == "":
				return "", false
			case name == "*":
				b.WriteString("[*]")
			default:
				b.WriteString("['" + strings.ReplaceAll(strings.ReplaceAll(name, `\`, `\\`), "'", `\'`) + "']")
			}
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return "", false
			}
			inner := strings.TrimSpace(p[i+1 : i+end])
			if inner != "*" {
				if _, err := strconv.Atoi(inner); err != nil {
					return "", false // quoted names, filters, slices: RFC syntax or nothing
				}
			}
			b.WriteString("[" + inner + "]")
			i += end + 1
		default:
			return "", false
		}
	}
	return b.String(), true
}

// plainQuery reports whether a query uses only names, indexes and slices, whose results come in a
// fixed order; wildcards, filters and descendants also walk objects, whose members have none.
func plainQuery(q *spec.PathQuery) bool {
	for _, seg := range q.Segments() {
		if seg.IsDescendant() {
			return false
		}
		for _, sel := range seg.Selectors() {
			switch sel.(type) {
			case spec.Name, spec.Index, spec.SliceSelector:
			default:
				return false
			}
		}
	}
	return true
}

// SelectJSONPath returns the values the path selects in a decoded JSON document (as produced by
// DecodeJSON) and whether the path is singular (names and indexes only: one value at most).
// Values come in document order, an object's members by name. A singular path that selects
// nothing is an error naming the point where the lookup stopped.
func SelectJSONPath(doc any, path string) ([]any, bool, error) {
	jp, err := CompileJSONPath(path)
	if err != nil {
		return nil, false, err
	}
	q := jp.Query()
	if q.Singular() != nil {
		v, err := singularLookup(doc, q)
		if err != nil {
			return nil, true, err
		}
		return []any{v}, true, nil
	}
	var out []any
	if plainQuery(q) {
		out = jp.Select(doc)
	} else {
		located := jp.SelectLocated(doc)
		// The library walks objects in Go's map order; sort by the parent's location, then the
		// last step, which keeps arrays in document order and a parent's matches before its
		// descendants' ($.m..z gives $.m.z before $.m.w.z).
		slices.SortStableFunc(located, func(a, b *spec.LocatedNode) int {
			pa, pb := a.Path, b.Path
			if len(pa) == 0 || len(pb) == 0 {
				return cmp.Compare(len(pa), len(pb))
			}
			if c := pa[:len(pa)-1].Compare(pb[:len(pb)-1]); c != 0 {
				return c
			}
			return pa[len(pa)-1:].Compare(pb[len(pb)-1:])
		})
		out = make([]any, 0, len(located))
		for v := range located.Nodes() {
			out = append(out, v)
		}
	}
	if out == nil {
		out = []any{}
	}
	return out, false, nil
}

// EvalJSONPath returns the value a singular path selects, or the list of values (possibly empty)
// any other path selects.
func EvalJSONPath(doc any, path string) (any, error) {
	vals, singular, err := SelectJSONPath(doc, path)
	if err != nil {
		return nil, err
	}
	if singular {
		return vals[0], nil
	}
	return vals, nil
}

// singularLookup follows a singular query's names and indexes, saying where it stopped.
func singularLookup(doc any, q *spec.PathQuery) (any, error) {
	at := "$"
	v := doc
	for _, seg := range q.Segments() {
		for _, sel := range seg.Selectors() {
			switch s := sel.(type) {
			case spec.Name:
				obj, ok := v.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%s is %s, not an object", at, jsonKind(v))
				}
				m, ok := obj[string(s)]
				if !ok {
					return nil, fmt.Errorf("%s has no member %q (members: %s)", at, string(s), memberNames(obj))
				}
				v = m
				at += pathStep(string(s))
			case spec.Index:
				arr, ok := v.([]any)
				if !ok {
					return nil, fmt.Errorf("%s is %s, not an array", at, jsonKind(v))
				}
				i := int(s)
				if i < 0 {
					i += len(arr)
				}
				if i < 0 || i >= len(arr) {
					return nil, fmt.Errorf("%s has %d element(s); index %d is out of range", at, len(arr), int(s))
				}
				v = arr[i]
				at += fmt.Sprintf("[%d]", int(s))
			default:
				return nil, fmt.Errorf("unexpected selector %s in a singular path", sel)
			}
		}
	}
	return v, nil
}

// pathStep renders one member name of a location: .name when RFC 9535 allows it, else ['name'].
func pathStep(name string) string {
	if isPlainName(name) {
		return "." + name
	}
	return "['" + strings.ReplaceAll(strings.ReplaceAll(name, `\`, `\\`), "'", `\'`) + "']"
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
