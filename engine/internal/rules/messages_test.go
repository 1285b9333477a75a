package rules

import (
	"errors"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/jsonv"
	"github.com/sdods/sdods/engine/internal/machine"
	"github.com/sdods/sdods/engine/internal/ruleset"
)

// messagesRuleset has messages of every kind: text only, literal parameters (one too long for a
// small budget), the field, the value, parameters read from data, unknown placeholders and
// braces; rules on fields, on a type bound to a record and to a list longer than the element
// paths built at load, and on nothing; rules and state rules failing for every reason; catalogs
// with a RULE_FAILED template with and without {field}, and without one (the built-in text).
var messagesRuleset = `{"ruleset": {"id": "m", "version": "1", "defaultLocale": "en",
  "types": {"T": {"base": "string"}},
  "entities": {"one": {"fieldTypes": {"a": "T"}},
               "item": {"path": "items", "many": true, "fieldTypes": {"b.c": "T"}}},
  "operators": {"x-fail": {"description": "fails"}, "x-missing": {"description": "not supplied"}},
  "rules": [
    {"id": "lit", "target": {"fields": ["f.x", "f.y"]}, "code": "LIT", "when": {"op": "!=", "args": [{"var": "value"}, null]},
     "message": {"key": "lit", "params": {"n": 8, "s": "str", "b": true, "z": null, "d": 1.5, "e": 1e300, "long": "` + strings.Repeat("long ", 60) + `"}}},
    {"id": "typ", "target": {"type": "T"}, "code": "TYP", "when": {"op": "!=", "args": [{"var": "value"}, null]},
     "message": {"key": "typ", "params": {"k": 3}}},
    {"id": "val", "target": {"type": "T"}, "code": "VAL", "when": {"op": "==", "args": [{"var": "value"}, "v3"]},
     "message": "val"},
    {"id": "dat", "target": {"fields": ["f.x"]}, "code": "DAT", "when": true,
     "message": {"key": "dat", "params": {"c": {"var": "data.count"}, "n": 2}}},
    {"id": "none", "code": "NONE", "when": true, "message": {"key": "none", "params": {"n": 1}}},
    {"id": "plain", "target": {"fields": ["f.x"]}, "code": "PLAIN", "when": true, "message": "plain"},
    {"id": "err", "target": {"type": "T"}, "code": "ERR", "when": {"op": "<", "args": [{"var": "value"}, 1]}, "message": "plain"},
    {"id": "limit", "target": {"fields": ["f.x"]}, "code": "LIMIT",
     "when": {"op": "==", "args": [{"op": "length", "args": [{"op": "filter", "args": [{"var": "data.items"}, true]}]}, 0]}, "message": "plain"},
    {"id": "opfail", "code": "OPFAIL", "when": {"op": "x-fail", "args": []}, "message": "plain"},
    {"id": "missing", "target": {"fields": ["f.y"]}, "code": "MISSING", "when": {"op": "x-missing", "args": []}, "message": "plain"},
    {"id": "missing2", "target": {"fields": ["f.x", "f.y"]}, "code": "MISSING", "when": {"op": "x-missing", "args": []}, "message": "plain"},
    {"id": "missing0", "code": "MISSING", "when": true, "message": {"key": "lit", "params": {"n": {"op": "x-missing", "args": []}}}},
    {"id": "pfail", "target": {"fields": ["f.x"]}, "code": "PFAIL", "when": true,
     "message": {"key": "lit", "params": {"n": {"op": "<", "args": [1, "x"]}}}}
  ],
  "stateRules": [
    {"id": "s-when", "when": {"op": "<", "args": [1, "x"]}, "effects": [{"field": "s", "hidden": true}]},
    {"id": "s-prop", "when": true, "effects": [{"field": "s", "hidden": {"op": "<", "args": [1, "x"]}}]},
    {"id": "s-ok", "when": true, "effects": [{"field": "s", "required": true}]}
  ],
  "locales": {
    "en": {"lit": "{field}: {n} {s} {b} {z} {d} {e} {long} {nope} {{x}}", "typ": "{field} is {k}.",
           "val": "{value} at {field}", "dat": "{c}/{n} {field}", "none": "{field}<{n}>", "plain": "Plain."},
    "fr": {"typ": "{k}: {field}", "RULE_FAILED": "{rule} [{field}] {reason} {other}"},
    "fr-CA": {"RULE_FAILED": "Échec {rule}: {reason}."},
    "de": {"plain": "Schlicht."}
  }
}}`

func compileMessages(t *testing.T, budget int64) *Program {
	t.Helper()
	n, err := jsonv.Decode([]byte(messagesRuleset))
	if err != nil {
		t.Fatal(err)
	}
	rs, ds := ruleset.Parse(n)
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	ops := map[string]machine.Operator{"x-fail": func([]any) (any, error) { return nil, errors.New("no") }}
	p, ds := Compile(rs, Ref{}, ops, budget)
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	return p
}

// general makes p build every message at evaluation, as before messages were resolved at
// load: every parameter is run and no message is kept.
func general(p *Program) {
	cats := make([]*catalog, 0, len(p.catalogs))
	for _, c := range p.catalogs {
		cats = append(cats, c)
	}
	sort.Slice(cats, func(i, j int) bool { return cats[i].index < cats[j].index })
	for _, ru := range p.rules {
		ru.messages = messages(cats, ru, make([]constParam, len(ru.params)))
		for i := range ru.messages {
			ru.messages[i].byField.n = 0
		}
		ru.fails = make([]texts, len(ru.fails))
	}
	for _, st := range p.states {
		st.fails = make([]texts, len(st.fails))
	}
}

func messagesData() map[string]any {
	items := make([]any, listPaths+8)
	for i := range items {
		items[i] = map[string]any{"b": map[string]any{"c": "v" + itoa(i%5)}}
	}
	return map[string]any{"f": map[string]any{"x": "a", "y": 2.0}, "one": map[string]any{"a": "s"},
		"items": items, "count": 7.0}
}

var messageLocales = []string{"", "en", "EN", "fr", "FR", "fr-CA", "fr-ca-x-y", "FR-CA-x", "de", "de-AT", "it",
	"fŕ", "fr-Ç", strings.Repeat("fr-", 30) + "x", "fr-" + strings.Repeat("a", 70)}

// TestMessagesGeneral: messages resolved at load and kept after their first use are those the
// general path builds at every evaluation, under every locale and budgets that make different
// rules fail, on the first evaluation and on later ones.
func TestMessagesGeneral(t *testing.T) {
	reasonsSeen := map[string]bool{}
	for _, budget := range []int64{0, 5, 40, 200} {
		fast, slow := compileMessages(t, budget), compileMessages(t, budget)
		general(slow)
		req := &Request{Data: messagesData()}
		for round := 0; round < 2; round++ {
			for _, tag := range messageLocales {
				req.Locale = tag
				want, got := slow.Evaluate(req), fast.Evaluate(req)
				into := &Result{Findings: make([]Finding, 0, 1)}
				fast.EvaluateInto(req, into)
				if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(into.Findings, want.Findings) {
					t.Fatalf("budget %d locale %q:\n got %+v\nwant %+v", budget, tag, got.Findings, want.Findings)
				}
				for _, f := range got.Findings {
					if f.Code == diag.RuleFailed {
						reasonsSeen[f.Message[strings.LastIndexAny(f.Message, " :[")+1:]] = true
					}
				}
			}
		}
	}
	for _, r := range reasons[:4] {
		if !reasonsSeen[r] && !reasonsSeen[r+"."] {
			t.Errorf("no rule failed with %s (seen %v)", r, reasonsSeen)
		}
	}
}

// TestMessagesConcurrent: evaluations running at the same time on a fresh program, which fill
// the kept messages together, give the general path's messages (run with -race).
func TestMessagesConcurrent(t *testing.T) {
	fast, slow := compileMessages(t, 40), compileMessages(t, 40)
	general(slow)
	want := map[string]*Result{}
	for _, tag := range messageLocales {
		want[tag] = slow.Evaluate(&Request{Data: messagesData(), Locale: tag})
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, tag := range messageLocales {
				if got := fast.Evaluate(&Request{Data: messagesData(), Locale: tag}); !reflect.DeepEqual(got, want[tag]) {
					t.Errorf("locale %q: %+v, want %+v", tag, got.Findings, want[tag].Findings)
				}
			}
		}()
	}
	wg.Wait()
}

// TestMessagesNoAllocation: findings whose messages depend on the ruleset only (literal
// parameters, static fields, RULE_FAILED) allocate nothing once the messages are kept.
func TestMessagesNoAllocation(t *testing.T) {
	if lossyPool() {
		t.Skip("sync.Pool drops items (race detector): evaluations allocate runs")
	}
	p := compileMessages(t, 0)
	data := messagesData()
	delete(data, "items")
	rules := p.rules[:0:0]
	for _, ru := range p.rules {
		switch ru.id {
		case "val", "dat": // their messages show the value, data
		case "err", "limit", "opfail", "pfail": // their errors allocate
		default:
			rules = append(rules, ru)
		}
	}
	p.rules, p.states = rules, nil
	for _, tag := range []string{"", "fr", "fr-CA", "FR-ca-x", "it"} {
		req := &Request{Data: data, Locale: tag}
		res := &Result{}
		p.EvaluateInto(req, res)
		if len(res.Findings) < 5 {
			t.Fatalf("locale %q: only %d findings", tag, len(res.Findings))
		}
		if n := testing.AllocsPerRun(20, func() { p.EvaluateInto(req, res) }); n != 0 {
			t.Errorf("locale %q: %v allocations per evaluation", tag, n)
		}
	}
}

// TestStatesGeneral compares the states of random state rules (constant and computed
// properties, some failing, several rules on one field and property, more computed properties
// than the stack keeps) with buildStates of the changes the rules make in document order, all
// or none per rule; in new results and in one reused result.
func TestStatesGeneral(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	fields := []string{"a", "b.c", "b", "a.b", "z", "é", "f1", "f10", "f2"}
	props := []string{"hidden", "required", "readOnly", "disabled", "value"}
	reused := &Result{}
	for round := 0; round < 300; round++ {
		type eff struct {
			field, prop string
			v           any
			fails       bool
		}
		var rules []string
		var effs [][]eff
		var when []bool
		for r := rng.Intn(6); r >= 0; r-- {
			var es []eff
			var parts []string
			for e := rng.Intn(7); e >= 0; e-- {
				ef := eff{field: fields[rng.Intn(len(fields))], prop: props[rng.Intn(len(props))]}
				var src string
				switch k := rng.Intn(10); {
				case k == 0:
					src, ef.fails = `{"op":"<","args":[1,"x"]}`, true
				case ef.prop == "value" && k < 5:
					ef.v = float64(rng.Intn(3))
					src = `{"var":"data.n` + itoa(int(ef.v.(float64))) + `"}`
				case ef.prop == "value":
					ef.v = "s" + itoa(k)
					src = `"s` + itoa(k) + `"`
				case k < 4:
					ef.v = k%2 == 0
					src = `{"op":"not","args":[{"var":"data.f` + itoa(k%2) + `"}]}`
				default:
					ef.v = k%2 == 0
					src = map[bool]string{true: "true", false: "false"}[k%2 == 0]
				}
				es = append(es, ef)
				parts = append(parts, `{"field":"`+ef.field+`","`+ef.prop+`":`+src+`}`)
			}
			w := rng.Intn(4) > 0
			when = append(when, w)
			effs = append(effs, es)
			rules = append(rules, `{"id":"s`+itoa(len(rules))+`","when":`+map[bool]string{true: "true", false: "false"}[w]+
				`,"effects":[`+strings.Join(parts, ",")+`]}`)
		}
		src := `{"ruleset":{"id":"t","version":"1","defaultLocale":"en","locales":{"en":{}},"stateRules":[` + strings.Join(rules, ",") + `]}}`
		n, err := jsonv.Decode([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		rs, ds := ruleset.Parse(n)
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		p, ds := Compile(rs, Ref{}, nil, 0)
		if len(ds) > 0 {
			t.Fatal(ds, src)
		}
		var changes []change
		var failed []string
		for i, es := range effs {
			if !when[i] {
				continue
			}
			ok := true
			for _, e := range es {
				ok = ok && !e.fails
			}
			if !ok {
				failed = append(failed, "s"+itoa(i))
				continue
			}
			for _, e := range es {
				changes = append(changes, change{e.field, e.prop, e.v})
			}
		}
		var want States
		if len(changes) > 0 {
			want = buildStates(changes)
		}
		req := &Request{Data: map[string]any{"n0": 0.0, "n1": 1.0, "n2": 2.0, "f0": false, "f1": true}}
		for _, res := range []*Result{p.Evaluate(req), func() *Result { p.EvaluateInto(req, reused); return reused }()} {
			if !reflect.DeepEqual(res.States, want) {
				t.Fatalf("%s:\n got %+v\nwant %+v", src, res.States, want)
			}
			var got []string
			for _, f := range res.Findings {
				got = append(got, f.Rule)
			}
			if strings.Join(got, " ") != strings.Join(failed, " ") {
				t.Fatalf("%s: failed %v, want %v", src, got, failed)
			}
			for _, st := range res.States {
				if len(st.Props) != cap(st.Props) {
					t.Fatalf("%s: properties of %s have room for more", src, st.Field)
				}
			}
		}
	}
}

// lossyPool reports whether a sync.Pool drops items put in it, as it does at random under the
// race detector.
func lossyPool() bool {
	var pool sync.Pool
	item := new(int)
	for i := 0; i < 100; i++ {
		pool.Put(item)
		if pool.Get() != item {
			return true
		}
	}
	return false
}
