package ruleserver_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/rules/ruleserver"
)

// trickyBodies are evaluation bodies on the edge of what the ruleset scan reads; fast says
// whether the scan should find the ruleset (the engine's direct decode is tried) or give up (the
// full parse answers).
var trickyBodies = []struct {
	name, body string
	fast       bool
}{
	{"plain", `{"ruleset":"signup","data":{"account":{"email":"x"}},"ctx":{"today":"2025-06-15"}}`, true},
	{"ruleset last", `{"data":{"account":{"email":"x"}},"ctx":{"today":"2025-06-15"},"ruleset":"signup"}`, true},
	{"whitespace everywhere", " \r\n\t{ \"data\" :\n{ \"account\" : { \"email\" : \"a@b.example\" } } ,\t\"ruleset\" : \"signup\" }\n ", true},
	{"nested ruleset members", `{"data":{"ruleset":"nope","account":{"ruleset":1}},"ruleset":"signup"}`, true},
	{"quotes and braces in values", `{"data":{"s":"a\",\"ruleset\":\"nope\"}]","t":["{",{"u":"\\"}]},"ruleset":"signup"}`, true},
	{"scalars of every kind", `{"data":{"a":1.5e3,"b":true,"c":false,"d":null,"e":-0,"f":[1,2,[]],"g":{}},"ruleset":"signup"}`, true},
	{"escaped member name", `{"rules\u0065t":"signup","data":{}}`, false},
	{"escaped member name before ruleset", `{"d\u0061ta":{},"ruleset":"signup"}`, false},
	{"escaped ruleset value", `{"ruleset":"sign\u0075p","data":{}}`, false},
	{"duplicate ruleset", `{"ruleset":"signup","ruleset":"signup","data":{}}`, false},
	{"duplicate ruleset, other first", `{"ruleset":"nope","data":{},"ruleset":"signup"}`, false},
	{"ruleset a number", `{"ruleset":1,"data":{}}`, false},
	{"ruleset null", `{"ruleset":null,"data":{}}`, false},
	{"ruleset an array", `{"ruleset":["signup"],"data":{}}`, false},
	{"ruleset an object", `{"ruleset":{"id":"signup"},"data":{}}`, false},
	{"ruleset empty", `{"ruleset":"","data":{}}`, false},
	{"ruleset missing", `{"data":{}}`, false},
	{"empty object", `{}`, false},
	{"unknown ruleset", `{"ruleset":"nope","data":{}}`, true},
	{"unknown ruleset, malformed after", `{"ruleset":"nope","data":{]}`, true},
	{"non-ASCII ruleset", `{"ruleset":"signüp","data":{}}`, false},
	{"invalid UTF-8 in the ruleset", "{\"ruleset\":\"sign\xffup\",\"data\":{}}", false},
	{"invalid UTF-8 in a value", "{\"ruleset\":\"signup\",\"data\":{\"s\":\"\xff\"}}", true},
	{"invalid UTF-8 in a member name", "{\"ruleset\":\"signup\",\"data\":{\"\xff\":1}}", true},
	{"control character in the ruleset", "{\"ruleset\":\"sign\tup\",\"data\":{}}", false},
	{"malformed after the ruleset", `{"ruleset":"signup","data":{]}`, true},
	{"truncated after the ruleset", `{"ruleset":"signup","data":{"a":1`, false},
	{"truncated in a string", `{"ruleset":"signup","data":{"a":"x`, false},
	{"trailing text", `{"ruleset":"signup","data":{}} x`, true},
	{"two objects", `{"ruleset":"signup","data":{}}{"ruleset":"signup"}`, true},
	{"trailing comma", `{"ruleset":"signup","data":{},}`, false},
	{"missing value", `{"data":,"ruleset":"signup"}`, true},
	{"missing colon", `{"data"{},"ruleset":"signup"}`, false},
	{"unbalanced brackets", `{"data":{"a":[1}},"ruleset":"signup"}`, true},
	{"bad literal", `{"data":{"a":tru},"ruleset":"signup"}`, true},
	{"unknown member", `{"ruleset":"signup","data":{},"x":1}`, true},
	{"data not an object", `{"ruleset":"signup","data":[1]}`, true},
	{"byte order mark", "\xef\xbb\xbf{\"ruleset\":\"signup\",\"data\":{}}", false},
	{"top-level array", `[{"ruleset":"signup"}]`, false},
	{"null", `null`, false},
	{"empty", ``, false},
	{"deep nesting in data", `{"ruleset":"signup","data":{"a":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}`, true},
	{"deep objects in data", `{"ruleset":"signup","data":` + strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat("}", 5000) + `}`, true},
	{"deep nesting before the ruleset", `{"x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `,"ruleset":"signup"}`, true},
	{"deep nesting, unbalanced", `{"ruleset":"signup","data":{"a":` + strings.Repeat("[", 1000) + `}}`, false},
}

// TestRulesetScanMatchesFullParse evaluates each tricky body by the scan and direct decode and by
// the full parse (engine.ParseRequest and EvaluateInto): the results, or the errors' code,
// message and hint, must be the same.
func TestRulesetScanMatchesFullParse(t *testing.T) {
	s := ruleserver.NewServer(rulesDir(t, "signup/signup.yaml"), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !s.Reload(context.Background()) {
		t.Fatal("the rules did not load")
	}
	for _, c := range trickyBodies {
		t.Run(c.name, func(t *testing.T) {
			if _, fast := ruleserver.RulesetMember([]byte(c.body)); fast != c.fast {
				t.Errorf("scan found the ruleset: %v, want %v", fast, c.fast)
			}
			got, gotErr := s.EvaluateBody([]byte(c.body))
			want, wantErr := s.EvaluateBodyParsed([]byte(c.body))
			if !bytes.Equal(got, want) {
				t.Fatalf("result\n got %s\nwant %s", got, want)
			}
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("error\n got %v\nwant %v", gotErr, wantErr)
			}
			if gotErr == nil {
				// a body the scan reads is answered by the direct decode, not by the fallback
				if direct, ok := s.EvaluateBodyDirect([]byte(c.body)); c.fast && (!ok || !bytes.Equal(direct, want)) {
					t.Fatalf("direct decode: %v %s", ok, direct)
				}
				return
			}
			var g, w *ruleserver.Error
			if !errors.As(gotErr, &g) || !errors.As(wantErr, &w) {
				t.Fatalf("errors not *Error: %T %T", gotErr, wantErr)
			}
			if g.Code != w.Code || g.Message != w.Message || g.Hint != w.Hint {
				t.Fatalf("error\n got %s | %s | %s\nwant %s | %s | %s", g.Code, g.Message, g.Hint, w.Code, w.Message, w.Hint)
			}
		})
	}
}

// TestRulesetScan checks what the scan reads on bodies it accepts.
func TestRulesetScan(t *testing.T) {
	for _, c := range []struct{ body, id string }{
		{`{"ruleset":"signup"}`, "signup"},
		{`{"a":"}","b":{"ruleset":"x"},"ruleset":"r-1.2"}`, "r-1.2"},
		{` { "ruleset" : "a b" } `, "a b"},
	} {
		if id, ok := ruleserver.RulesetMember([]byte(c.body)); !ok || id != c.id {
			t.Errorf("%s: %q %v, want %q", c.body, id, ok, c.id)
		}
	}
}

// BenchmarkEvaluateBody compares the two paths of POST /evaluations on the benchmark body, in
// process: the scan with the engine's direct decode, and the full parse.
func BenchmarkEvaluateBody(b *testing.B) {
	s := ruleserver.NewServer(rulesDir(b, "signup/signup.yaml"), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !s.Reload(context.Background()) {
		b.Fatal("the rules did not load")
	}
	for _, p := range []struct {
		name string
		eval func([]byte) ([]byte, error)
	}{{"direct", s.EvaluateBody}, {"parsed", s.EvaluateBodyParsed}} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := p.eval(benchBody); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzRulesetScanMatchesFullParse checks on any body that both paths answer alike.
func FuzzRulesetScanMatchesFullParse(f *testing.F) {
	for _, c := range trickyBodies {
		if len(c.body) < 1000 {
			f.Add([]byte(c.body))
		}
	}
	s := ruleserver.NewServer(rulesDir(f, "signup/signup.yaml"), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !s.Reload(context.Background()) {
		f.Fatal("the rules did not load")
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, gotErr := s.EvaluateBody(body)
		want, wantErr := s.EvaluateBodyParsed(body)
		if !bytes.Equal(got, want) || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%q\n got %s %v\nwant %s %v", body, got, gotErr, want, wantErr)
		}
		var g, w *ruleserver.Error
		if gotErr != nil && errors.As(gotErr, &g) && errors.As(wantErr, &w) &&
			(g.Code != w.Code || g.Message != w.Message || g.Hint != w.Hint) {
			t.Fatalf("%q\n got %v\nwant %v", body, gotErr, wantErr)
		}
	})
}
