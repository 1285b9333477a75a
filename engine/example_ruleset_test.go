package engine_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sdods/sdods/engine"
)

// A small signup ruleset: an e-mail type bound to account.email, a rule on the type, a rule on a
// field of a section, a state rule and two locale catalogs.
const signupRuleset = `{"ruleset": {
  "id": "signup", "version": "1.0.0", "defaultLocale": "en",
  "types": {"Email": {"base": "string"}},
  "entities": {"account": {"fieldTypes": {"email": "Email"}}},
  "operators": {"x-luhn": {"description": "Luhn checksum"}},
  "rules": [
    {"id": "email-format", "target": {"type": "Email"}, "code": "EMAIL_INVALID",
     "when": {"op": "not", "args": [{"op": "matches", "args": [{"var": "value"}, "^[^@]+@[^@]+$"]}]},
     "message": {"key": "email.invalid", "params": {"email": {"var": "value"}}}},
    {"id": "name-required", "target": {"page": "signup", "section": "name", "fields": ["account.name"]},
     "code": "NAME_REQUIRED", "when": {"op": "isEmpty", "args": [{"var": "value"}]}, "message": "required"},
    {"id": "card", "channels": ["server"], "target": {"page": "signup", "section": "payment", "fields": ["account.card"]},
     "code": "CARD_INVALID", "when": {"op": "not", "args": [{"op": "x-luhn", "args": [{"var": "value"}]}]}, "message": "card"}
  ],
  "stateRules": [
    {"id": "company", "when": {"op": "==", "args": [{"var": "data.account.kind"}, "business"]},
     "effects": [{"field": "account.company", "hidden": false, "required": true}]}
  ],
  "locales": {
    "en": {"email.invalid": "{email} is not an e-mail address.", "required": "{field} is required.", "card": "Check the card."},
    "fr": {"required": "{field} est obligatoire."}
  }
}}`

func luhn(args []any) (any, error) {
	s, ok := args[0].(string)
	if !ok {
		return nil, errors.New("x-luhn expects a string")
	}
	sum, double := 0, false
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum, double = sum+d, !double
	}
	return len(s) > 1 && sum%10 == 0, nil
}

func printResult(res *engine.Result) {
	for _, f := range res.Findings {
		fmt.Printf("%s %s %s: %s\n", f.Severity, f.Code, f.Field, f.Message)
	}
	for _, st := range res.States {
		fmt.Print("state ", st.Field)
		for _, p := range st.Props {
			fmt.Printf(" %s=%v", p.Name, p.Value)
		}
		fmt.Println()
	}
}

// Compile a source ruleset and write its bundle: the checksum covers the resolved ruleset.
func ExampleCompile() {
	rs, err := engine.Compile([]byte(signupRuleset), engine.WithOperators(map[string]engine.Operator{"x-luhn": luhn}))
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := rs.Bundle()
	fmt.Println(rs.ID(), rs.Version(), strings.HasPrefix(rs.Checksum(), "sha256:"), rs.Channels())
	fmt.Println(strings.Contains(string(b), `"formatVersion": 1`))
	// Output:
	// signup 1.0.0 true [client server]
	// true
}

// Every load problem is reported, each with its code and JSON pointer.
func ExampleCompile_diagnostics() {
	_, err := engine.Compile([]byte(`{"ruleset": {"id": "x", "version": "1", "defaultLocale": "en",
	  "entities": {"a": {"fieldTypes": {"f": "Nope"}}},
	  "rules": [{"id": "r", "scope": "galaxy", "code": "C", "when": {"op": "x-undeclared", "args": []}, "message": "m"}],
	  "locales": {"en": {"m": "message"}}}}`))
	var ds engine.Diagnostics
	if errors.As(err, &ds) {
		for _, d := range ds {
			fmt.Println(d.Code, d.Pointer)
		}
	}
	// Output:
	// TYPE_UNKNOWN /ruleset/entities/a/fieldTypes/f
	// SCOPE_INVALID /ruleset/rules/0/scope
	// OPERATOR_UNDECLARED /ruleset/rules/0/when/op
}

// Evaluate a request: findings in rule order, messages from the catalogs (fr-CA falls back to
// fr, then to the default locale), states from state rules.
func ExampleRuleSet_Evaluate() {
	rs, _ := engine.Compile([]byte(signupRuleset), engine.WithOperators(map[string]engine.Operator{"x-luhn": luhn}))
	res, err := rs.EvaluateJSON([]byte(`{"data": {"account": {"email": "ana", "kind": "business", "card": "4111111111111112"}}, "locale": "fr-CA"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	printResult(res)
	// Output:
	// error EMAIL_INVALID account.email: ana is not an e-mail address.
	// error NAME_REQUIRED account.name: account.name est obligatoire.
	// error CARD_INVALID account.card: Check the card.
	// state account.company hidden=false required=true
}

// A view narrows evaluation to one place; a malformed request is refused before evaluation.
// Evaluate request after request into one Result: its storage is reused, so a server that keeps
// results in a sync.Pool allocates almost nothing per evaluation. Nothing of the previous result
// may be kept.
func ExampleRuleSet_EvaluateInto() {
	rs, _ := engine.Compile([]byte(signupRuleset), engine.WithOperators(map[string]engine.Operator{"x-luhn": luhn}))
	var res engine.Result
	for _, body := range []string{
		`{"data": {"account": {"email": "ana", "name": "Ana", "card": "4111111111111111"}}}`,
		`{"data": {"account": {"email": "ana@example.com", "name": "Ana", "card": "4111111111111111"}}}`,
	} {
		req, err := engine.ParseRequest([]byte(body))
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := rs.EvaluateInto(&res, engine.ChannelServer, req); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(len(res.Findings), "finding(s)")
		printResult(&res)
	}
	// Output:
	// 1 finding(s)
	// error EMAIL_INVALID account.email: ana is not an e-mail address.
	// 0 finding(s)
}

func ExampleRuleSet_Evaluate_view() {
	rs, _ := engine.Compile([]byte(signupRuleset), engine.WithOperators(map[string]engine.Operator{"x-luhn": luhn}))
	res, _ := rs.Evaluate(&engine.Request{
		Data: map[string]any{"account": map[string]any{"email": "ana", "card": "1"}},
		View: &engine.View{Page: "signup", Section: "payment"},
	})
	printResult(res)
	_, err := rs.EvaluateJSON([]byte(`{"data": [], "view": {"tab": "x"}}`))
	fmt.Println(err)
	// Output:
	// error EMAIL_INVALID account.email: ana is not an e-mail address.
	// error CARD_INVALID account.card: Check the card.
	// BAD_REQUEST at /data: data must be a JSON object or null
}

// Load a bundle compiled elsewhere; it evaluates exactly like the ruleset it came from.
func ExampleFromBundle() {
	src, _ := engine.Compile([]byte(signupRuleset))
	b, _ := src.Bundle()
	rs, err := engine.FromBundle(b, engine.WithOperators(map[string]engine.Operator{"x-luhn": luhn}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rs.Checksum() == src.Checksum(), rs.Channels())
	_, err = engine.FromBundle([]byte(`{"formatVersion": 7}`))
	fmt.Println(err)
	// Output:
	// true [client server]
	// BUNDLE_UNSUPPORTED at /formatVersion: formatVersion 7 is not supported (this engine reads 1)
}

// A native front end receives one channel's manifest and loads it on its own; the client
// manifest lacks the server-only rules, and other channels are unavailable.
func ExampleFromManifest() {
	src, _ := engine.Compile([]byte(signupRuleset))
	m, _ := src.Manifest(engine.ChannelClient)
	rs, err := engine.FromManifest(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := rs.Evaluate(&engine.Request{Data: map[string]any{"account": map[string]any{"name": "Ana", "card": "1"}}})
	fmt.Println(rs.Channels(), len(res.Findings))
	_, err = rs.Manifest(engine.ChannelServer)
	fmt.Println(err)
	// Output:
	// [client] 1
	// CHANNEL_UNAVAILABLE: channel "server" is not available (the ruleset has [client])
}

// The custom operators a ruleset requires, those the host has not registered, and what a rule
// that needs a missing one produces: a RULE_FAILED finding (the rule fails closed).
func ExampleRuleSet_MissingOperators() {
	rs, _ := engine.Compile([]byte(signupRuleset))
	fmt.Println(rs.RequiredOperators(), rs.MissingOperators())
	res, _ := rs.Evaluate(&engine.Request{Data: map[string]any{"account": map[string]any{"email": "a@b", "name": "Ana", "card": "42"}}})
	printResult(res)
	// Output:
	// [x-luhn] [x-luhn]
	// error RULE_FAILED account.card: rule card failed closed: OPERATOR_UNAVAILABLE
}

// Register a custom operator: a Go function over JSON values. An error it returns makes the rule
// using it fail closed with reason OPERATOR_FAILED.
func ExampleWithOperators() {
	rs, _ := engine.Compile([]byte(signupRuleset), engine.WithOperators(map[string]engine.Operator{"x-luhn": luhn}))
	fmt.Println(rs.MissingOperators())
	res, _ := rs.Evaluate(&engine.Request{Data: map[string]any{"account": map[string]any{"email": "a@b", "name": "Ana", "card": 42.0}}})
	printResult(res)
	// Output:
	// []
	// error RULE_FAILED account.card: rule card failed closed: OPERATOR_FAILED
}

// Evaluate one expression against an environment, outside any ruleset.
func ExampleExpression_Evaluate() {
	e, err := engine.CompileExpression([]byte(`{"op": "concat", "args": [{"op": "upper", "args": [{"var": "data.name"}]}, "!"]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	v, _ := e.Evaluate(map[string]any{"data": map[string]any{"name": "ana"}})
	fmt.Println(v)
	// Output: ANA!
}
