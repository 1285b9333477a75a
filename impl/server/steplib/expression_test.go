package steplib_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/steplib"
)

func TestExpressionMatch(t *testing.T) {
	tests := []struct {
		name, expr, text string
		want             []any // nil with ok=false: no match
		ok               bool
	}{
		{"literal", "I am here", "I am here", []any{}, true},
		{"literal mismatch", "I am here", "I am there", nil, false},
		{"anchored start", "am here", "I am here", nil, false},
		{"anchored end", "I am", "I am here", nil, false},
		{"regexp metacharacters are literal", "a.b*c? [x] ^$ |", "a.b*c? [x] ^$ |", []any{}, true},
		{"regexp metacharacters do not match others", "a.b", "axb", nil, false},
		{"int", "I have {int} cukes", "I have 42 cukes", []any{int64(42)}, true},
		{"negative int", "I have {int} cukes", "I have -7 cukes", []any{int64(-7)}, true},
		{"int refuses float", "I have {int} cukes", "I have 4.2 cukes", nil, false},
		{"int refuses word", "I have {int} cukes", "I have many cukes", nil, false},
		{"big int stays text", "n {int}", "n 99999999999999999999", []any{"99999999999999999999"}, true},
		{"float", "it costs {float}", "it costs 4.5", []any{4.5}, true},
		{"float integer", "it costs {float}", "it costs 4", []any{4.0}, true},
		{"float leading dot", "it costs {float}", "it costs .5", []any{0.5}, true},
		{"float signed exponent", "it costs {float}", "it costs -1.5e3", []any{-1500.0}, true},
		{"float refuses trailing dot", "it costs {float}", "it costs 4.", nil, false},
		{"word", "I am {word}", "I am Ada", []any{"Ada"}, true},
		{"word refuses spaces", "I am {word}", "I am Ada Lovelace", nil, false},
		{"string double quotes", "I say {string}", `I say "hello world"`, []any{"hello world"}, true},
		{"string single quotes", "I say {string}", `I say 'hello world'`, []any{"hello world"}, true},
		{"string empty", "I say {string}", `I say ""`, []any{""}, true},
		{"string escaped quote", "I say {string}", `I say "a \"b\" c"`, []any{`a "b" c`}, true},
		{"string single escaped", "I say {string}", `I say 'it\'s'`, []any{`it's`}, true},
		{"string other quote inside", "I say {string}", `I say "it's"`, []any{`it's`}, true},
		{"string unquoted", "I say {string}", `I say hello`, nil, false},
		{"two strings", "{string} and {string}", `"a" and "b"`, []any{"a", "b"}, true},
		{"string cannot swallow two", "I say {string}", `I say "a" and "b"`, nil, false},
		{"anonymous", "I see {}", "I see anything at all", []any{"anything at all"}, true},
		{"anonymous empty", "I see {}!", "I see !", []any{""}, true},
		{"optional present", "I have {int} cucumber(s)", "I have 2 cucumbers", []any{int64(2)}, true},
		{"optional absent", "I have {int} cucumber(s)", "I have 1 cucumber", []any{int64(1)}, true},
		{"optional with space", "the response status (code )is {int}", "the response status code is 200", []any{int64(200)}, true},
		{"optional with space absent", "the response status (code )is {int}", "the response status is 200", []any{int64(200)}, true},
		{"alternation first", "I open/visit {string}", `I open "/x"`, []any{"/x"}, true},
		{"alternation second", "I open/visit {string}", `I visit "/x"`, []any{"/x"}, true},
		{"alternation neither", "I open/visit {string}", `I see "/x"`, nil, false},
		{"alternation three", "a/b/c d", "c d", []any{}, true},
		{"alternation is word-bounded", "I select {string} in/from {string}", `I select "x" from "#y"`, []any{"x", "#y"}, true},
		{"alternation does not span words", "in/from the list", "from the list", []any{}, true},
		{"alternation with optional", "cucumber(s)/gherkin(s) here", "gherkins here", []any{}, true},
		{"alternation after parameter", "{int}st/nd/rd/th", "2nd", []any{int64(2)}, true},
		{"escaped parenthesis", `a \(b)`, "a (b)", []any{}, true},
		{"escaped brace", `a \{int}`, "a {int}", []any{}, true},
		{"escaped slash", `a\/b`, "a/b", []any{}, true},
		{"escaped slash no alternation", `a\/b`, "a", nil, false},
		{"escaped backslash", `a\\b`, `a\b`, []any{}, true},
		{"stray closing parenthesis", "a) b", "a) b", []any{}, true},
		{"int then x then int", "{int}x{int}", "1280x800", []any{int64(1280), int64(800)}, true},
		{"unicode", "ich möchte {string}", `ich möchte "Käse"`, []any{"Käse"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustCompile(t, tt.expr)
			args, ok := e.Match(tt.text)
			if ok != tt.ok {
				t.Fatalf("%q against %q (regexp %s): match %v, want %v", tt.text, tt.expr, e.Regexp(), ok, tt.ok)
			}
			if !ok {
				return
			}
			got := make([]any, len(args))
			for i, a := range args {
				got[i] = a.Value
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("args %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestExpressionErrors(t *testing.T) {
	tests := []struct {
		name, expr, want string
		offset           int
	}{
		{"unknown parameter type", "I have {color} cukes", "undefined parameter type {color}", 7},
		{"unclosed parameter", "I have {int cukes", "does not have a matching '}'", 7},
		{"parameter name with paren", "I have {in(t} cukes", "may not contain", 10},
		{"unclosed optional", "cucumber(s", "does not have a matching ')'", 8},
		{"empty optional", "cucumber()", "must contain some text", 8},
		{"parameter in optional", "a ({int})", "may not contain a parameter type", 3},
		{"nested optional", "a (b(c))", "may not contain another optional", 4},
		{"empty alternative", "a/ b", "may not be empty", 2},
		{"empty alternative first", "/a b", "may not be empty", 0},
		{"optional-only alternative", "(a)/b", "exclusively contain optionals", 0},
		{"bad escape", `a \x`, "can not", 2},
		{"escaped end", `a \`, "end of the expression can not be escaped", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := steplib.CompileExpression(tt.expr)
			var ee *steplib.ExpressionError
			if !errors.As(err, &ee) {
				t.Fatalf("CompileExpression(%q) = %v, want an *ExpressionError", tt.expr, err)
			}
			if !strings.Contains(ee.Message, tt.want) || ee.Offset != tt.offset {
				t.Fatalf("error %q at %d, want %q at %d", ee.Message, ee.Offset, tt.want, tt.offset)
			}
		})
	}
}

func TestExpressionParameterTypes(t *testing.T) {
	e := mustCompile(t, "I {word} {int} items of {string} for {float} in/into {}")
	if got, want := e.ParameterTypes(), []string{"word", "int", "string", "float", ""}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ParameterTypes() = %v, want %v", got, want)
	}
	if e.String() != "I {word} {int} items of {string} for {float} in/into {}" {
		t.Fatalf("String() = %q", e.String())
	}
}

func mustCompile(tb testing.TB, expr string) *steplib.Expression {
	tb.Helper()
	e, err := steplib.CompileExpression(expr)
	if err != nil {
		tb.Fatalf("CompileExpression(%q): %v", expr, err)
	}
	return e
}
