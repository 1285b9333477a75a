package engine_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine"
)

// doc builds a source ruleset around the given members of the ruleset object.
func doc(members string) []byte {
	base := `"id":"t","version":"1","defaultLocale":"en","locales":{"en":{"m":"msg"}}`
	if members != "" {
		base += "," + members
	}
	return []byte(`{"ruleset":{` + base + `}}`)
}

const okRule = `{"id":"r","code":"C","when":true,"message":"m"}`

func diagnostics(t *testing.T, err error) engine.Diagnostics {
	t.Helper()
	var ds engine.Diagnostics
	if !errors.As(err, &ds) {
		t.Fatalf("want Diagnostics, got %v", err)
	}
	return ds
}

func has(ds engine.Diagnostics, code, ptr string) bool {
	for _, d := range ds {
		if d.Code == code && d.Pointer == ptr {
			return true
		}
	}
	return false
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name, code, ptr string
		src             []byte
	}{
		{"type unknown in fieldTypes", "TYPE_UNKNOWN", "/ruleset/entities/e/fieldTypes/f",
			doc(`"entities":{"e":{"fieldTypes":{"f":"Nope"}}}`)},
		{"type unknown in target", "TYPE_UNKNOWN", "/ruleset/rules/0/target/type",
			doc(`"rules":[{"id":"r","code":"C","target":{"type":"Nope"},"when":true,"message":"m"}]`)},
		{"type base unknown", "TYPE_UNKNOWN", "/ruleset/types/T/base", doc(`"types":{"T":{"base":"money"}}`)},
		{"scope not a level", "SCOPE_INVALID", "/ruleset/rules/0/scope",
			doc(`"rules":[{"id":"r","scope":"galaxy","code":"C","when":true,"message":"m"}]`)},
		{"scope level not in target", "SCOPE_INVALID", "/ruleset/stateRules/0/scope",
			doc(`"stateRules":[{"id":"s","scope":"section","target":{"page":"p"},"effects":[{"field":"a","hidden":true}]}]`)},
		{"function unknown", "FUNCTION_UNKNOWN", "/ruleset/rules/0/when/fn",
			doc(`"rules":[{"id":"r","code":"C","when":{"fn":"nope","args":[]},"message":"m"}]`)},
		{"function arity", "FUNCTION_ARITY", "/ruleset/rules/0/when/args",
			doc(`"functions":{"f":{"params":["a"],"body":true}},"rules":[{"id":"r","code":"C","when":{"fn":"f","args":[]},"message":"m"}]`)},
		{"function recursive", "FUNCTION_RECURSIVE", "/ruleset/functions/f",
			doc(`"functions":{"f":{"params":[],"body":{"fn":"g","args":[]}},"g":{"params":[],"body":{"fn":"f","args":[]}}}`)},
		{"function redefined", "FUNCTION_REDEFINED", "/ruleset/functions/f",
			doc(`"functions":{"f":{"params":[],"body":true},"f":{"params":[],"body":false}}`)},
		{"operator undeclared", "OPERATOR_UNDECLARED", "/ruleset/rules/0/when/op",
			doc(`"rules":[{"id":"r","code":"C","when":{"op":"x-luhn","args":["1"]},"message":"m"}]`)},
		{"field type rebound in one entity", "FIELD_TYPE_REBOUND", "/ruleset/entities/e/fieldTypes/f",
			doc(`"types":{"A":{},"B":{}},"entities":{"e":{"fieldTypes":{"f":"A","f":"B"}}}`)},
		{"field type rebound through two entities", "FIELD_TYPE_REBOUND", "/ruleset/entities/f/fieldTypes/x",
			doc(`"types":{"A":{}},"entities":{"e":{"path":"rec","fieldTypes":{"x":"A"}},"f":{"path":"rec","fieldTypes":{"x":"A"}}}`)},
		{"expression too deep", "EXPRESSION_TOO_DEEP", "/ruleset/rules/0/when" + strings.Repeat("/args/0", 128),
			doc(`"rules":[{"id":"r","code":"C","when":` + strings.Repeat(`{"op":"not","args":[`, 129) + "true" + strings.Repeat("]}", 129) + `,"message":"m"}]`)},
		{"function body too deep", "EXPRESSION_TOO_DEEP", "/ruleset/functions/f/body" + strings.Repeat("/args/0", 128),
			doc(`"functions":{"f":{"params":[],"body":` + strings.Repeat(`{"op":"not","args":[`, 129) + "true" + strings.Repeat("]}", 129) + `}}`)},
		{"pattern not portable", "PATTERN_NOT_PORTABLE", "/ruleset/rules/0/when/args/1",
			doc(`"rules":[{"id":"r","code":"C","when":{"op":"matches","args":["a","(a+)+"]},"message":"m"}]`)},
		{"pattern in a message parameter", "PATTERN_NOT_PORTABLE", "/ruleset/rules/0/message/params/p/args/1",
			doc(`"rules":[{"id":"r","code":"C","when":true,"message":{"key":"m","params":{"p":{"op":"matches","args":["a","\\s"]}}}}]`)},
		{"missing member", "RULESET_INVALID", "/ruleset/rules/0", doc(`"rules":[{"id":"r","code":"C","message":"m"}]`)},
		{"unknown message key", "RULESET_INVALID", "/ruleset/rules/0/message", doc(`"rules":[{"id":"r","code":"C","when":true,"message":"nope"}]`)},
		{"duplicate rule id", "RULESET_INVALID", "/ruleset/rules/1/id", doc(`"rules":[` + okRule + `,` + okRule + `]`)},
		{"reserved code", "RULESET_INVALID", "/ruleset/rules/0/code", doc(`"rules":[{"id":"r","code":"RULE_FAILED","when":true,"message":"m"}]`)},
		{"bad template", "RULESET_INVALID", "/ruleset/locales/en/x", []byte(`{"ruleset":{"id":"t","version":"1","defaultLocale":"en","locales":{"en":{"x":"a {b"}}}}`)},
		{"not a ruleset document", "RULESET_INVALID", "", []byte(`{"rules":[]}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := engine.Compile(tc.src)
			ds := diagnostics(t, err)
			if !has(ds, tc.code, tc.ptr) {
				t.Errorf("want %s at %s, got:\n%v", tc.code, tc.ptr, ds)
			}
		})
	}
}

// TestLoadReportsEveryProblem: one load, problems in several members, all reported, sorted.
func TestRulesetLoadReportsEveryProblem(t *testing.T) {
	src := doc(`"entities":{"e":{"fieldTypes":{"f":"Nope"}}},
		"rules":[{"id":"r","scope":"galaxy","code":"C","when":{"fn":"nope","args":[]},"message":"m"},
		         {"id":"s","code":"C","when":{"op":"x-luhn","args":["1"]},"message":"m"}]`)
	_, err := engine.Compile(src)
	ds := diagnostics(t, err)
	want := []string{"TYPE_UNKNOWN /ruleset/entities/e/fieldTypes/f", "SCOPE_INVALID /ruleset/rules/0/scope",
		"FUNCTION_UNKNOWN /ruleset/rules/0/when/fn", "OPERATOR_UNDECLARED /ruleset/rules/1/when/op"}
	var got []string
	for _, d := range ds {
		got = append(got, d.Code+" "+d.Pointer)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestBundleErrors(t *testing.T) {
	rs, err := engine.Compile(doc(`"rules":[` + okRule + `]`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := rs.Bundle()
	m, _ := rs.Manifest(engine.ChannelClient)
	cases := []struct {
		name, code, ptr string
		src             string
		manifest        bool
	}{
		{"unsupported format", "BUNDLE_UNSUPPORTED", "/formatVersion", edit(t, b, func(m map[string]any) { m["formatVersion"] = 2 }), false},
		{"manifest unsupported format", "BUNDLE_UNSUPPORTED", "/formatVersion", strings.Replace(string(m), `"formatVersion": 1`, `"formatVersion": 9`, 1), true},
		{"malformed JSON", "BUNDLE_INVALID", "", `{"formatVersion":`, false},
		{"not a bundle", "BUNDLE_INVALID", "", `[]`, false},
		{"format version not an integer", "BUNDLE_INVALID", "/formatVersion", `{"formatVersion":"1"}`, false},
		{"missing manifest", "BUNDLE_INVALID", "", strings.Replace(string(b), `"client":`, `"other":`, 1), false},
		{"bad checksum", "BUNDLE_INVALID", "/ruleset/checksum", edit(t, b, func(m map[string]any) { m["ruleset"].(map[string]any)["checksum"] = "md5:0" }), false},
		{"manifest of another ruleset", "BUNDLE_INVALID", "/client/ruleset", edit(t, b, func(m map[string]any) {
			m["client"].(map[string]any)["ruleset"].(map[string]any)["version"] = "2"
		}), false},
		{"manifest channel", "BUNDLE_INVALID", "/channel", strings.Replace(string(m), `"channel": "client"`, `"channel": "desktop"`, 1), true},
		{"manifest member missing", "BUNDLE_INVALID", "", strings.Replace(string(m), `"stateRules"`, `"stateRulez"`, 1), true},
		{"expression in a manifest", "OPERATOR_UNDECLARED", "/rules/0/when/op", strings.Replace(string(m), `"when": true`, `"when": {"op": "x-a", "args": []}`, 1), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.manifest {
				_, err = engine.FromManifest([]byte(tc.src))
			} else {
				_, err = engine.FromBundle([]byte(tc.src))
			}
			ds := diagnostics(t, err)
			if !has(ds, tc.code, tc.ptr) {
				t.Errorf("want %s at %q, got:\n%v", tc.code, tc.ptr, ds)
			}
		})
	}
}

func edit(t *testing.T, b []byte, f func(map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	out, _ := json.Marshal(m)
	return string(out)
}

func TestChannelUnavailable(t *testing.T) {
	rs, err := engine.Compile(doc(`"rules":[` + okRule + `]`))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := rs.Manifest(engine.ChannelClient)
	ms, err := engine.FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []func() error{
		func() error { _, err := ms.Manifest(engine.ChannelServer); return err },
		func() error { _, err := ms.EvaluateChannel(engine.ChannelServer, &engine.Request{}); return err },
		func() error { _, err := ms.Bundle(); return err },
		func() error { _, err := rs.Manifest("desktop"); return err },
	} {
		var d *engine.Diagnostic
		if err := f(); !errors.As(err, &d) || d.Code != "CHANNEL_UNAVAILABLE" {
			t.Errorf("want CHANNEL_UNAVAILABLE, got %v", err)
		}
	}
}

func TestChecksum(t *testing.T) {
	a, err := engine.Compile(doc(`"rules":[` + okRule + `]`))
	if err != nil {
		t.Fatal(err)
	}
	// The same ruleset written differently (member order, number spelling, defaults written out)
	// has the same checksum.
	b, err := engine.Compile([]byte(`{"ruleset":{"locales":{"en":{"m":"msg"}},"rules":[{"message":{"key":"m","params":{}},"when":true,"code":"C","id":"r","severity":"error","scope":"project","channels":["client","server"]}],"types":{},"defaultLocale":"en","version":"1","id":"t"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Checksum() != b.Checksum() {
		t.Errorf("equivalent rulesets: %s != %s", a.Checksum(), b.Checksum())
	}
	for _, members := range []string{
		`"types":{"T":{}}`, `"functions":{"f":{"params":[],"body":1}}`, `"operators":{"x-a":{}}`,
	} {
		c, err := engine.Compile(doc(`"rules":[` + okRule + `],` + members))
		if err != nil {
			t.Fatal(err)
		}
		if c.Checksum() == a.Checksum() {
			t.Errorf("%s does not change the checksum", members)
		}
	}
	x, _ := a.Bundle()
	y, _ := b.Bundle()
	if string(x) != string(y) {
		t.Error("bundles of equivalent rulesets differ")
	}
}
