package jsonlogic

import (
	"encoding/json"
	"errors"
	"regexp"

	"github.com/sdods/sdods/engine"
)

// engineDiagnostics loads expr (with functions) in the engine and returns its load problems as
// diagnostics with the given code: an export refuses an sdods expression the engine would not
// load, and an import checks that what it wrote loads.
func engineDiagnostics(expr any, functions map[string]any, code string) []Diagnostic {
	raw, err := json.Marshal(expr)
	if err != nil {
		return []Diagnostic{{Code: code, Message: err.Error(), Severity: SeverityError}}
	}
	// Custom operators are declared: whether one converts is the converter's question.
	opts := []engine.Option{engine.WithDeclaredOperators(customOperators(expr, functions)...)}
	if len(functions) > 0 {
		fr, err := json.Marshal(functions)
		if err != nil {
			return []Diagnostic{{Code: code, Message: err.Error(), Severity: SeverityError}}
		}
		opts = append(opts, engine.WithFunctionsJSON("/functions", fr))
	}
	_, err = engine.CompileExpression(raw, opts...)
	if err == nil {
		return nil
	}
	var ds engine.Diagnostics
	if !errors.As(err, &ds) {
		return []Diagnostic{{Code: code, Message: err.Error(), Severity: SeverityError}}
	}
	var out []Diagnostic
	for _, d := range ds {
		out = append(out, Diagnostic{Code: code, Pointer: d.Pointer, Message: d.Code + ": " + d.Message, Severity: SeverityError})
	}
	return out
}

// loneSurrogate finds a \uD800-\uDFFF escape that is not half of a pair.
var loneSurrogate = regexp.MustCompile(`(?i)\\u(d[89ab][0-9a-f]{2})(\\u(d[c-f][0-9a-f]{2}))?|\\u(d[c-f][0-9a-f]{2})`)

// LoneSurrogates returns the byte offsets of lone surrogate escapes in JSON text: JavaScript
// keeps such a string as it is, Go and sdods read U+FFFD instead, so no conversion of it can be
// faithful.
func LoneSurrogates(src []byte) []int {
	var out []int
	for _, m := range loneSurrogate.FindAllSubmatchIndex(src, -1) {
		paired := m[4] >= 0
		if !paired {
			// A backslash before the match escapes it ("\\ud800" is text, not an escape).
			bs := 0
			for i := m[0] - 1; i >= 0 && src[i] == '\\'; i-- {
				bs++
			}
			if bs%2 == 0 {
				out = append(out, m[0])
			}
		}
	}
	return out
}

func customOperators(vs ...any) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch n := v.(type) {
		case []any:
			for _, el := range n {
				walk(el)
			}
		case map[string]any:
			if name, ok := n["op"].(string); ok && len(name) > 2 && name[:2] == "x-" {
				out = append(out, name)
			}
			for _, el := range n {
				walk(el)
			}
		}
	}
	for _, v := range vs {
		walk(v)
	}
	return out
}
