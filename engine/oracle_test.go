package engine_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/engine/testops"
)

// The oracle holds what the engine answered, at a reviewed commit, for a few thousand
// expressions and fixture requests: each result, and for expressions also the exact budget an
// evaluation needs and where a smaller budget runs out. Optimisations of the evaluator must keep
// every one of those answers; a test comparing a fast path with the general path cannot see a
// change both share. Regenerate (-update-oracle) only when a change of behaviour is intended and
// reviewed, and say so in the commit.
var updateOracle = flag.Bool("update-oracle", false, "rewrite testdata/oracle from the engine as it is")

const oracleDir = "testdata/oracle"

// oracleLine is one recorded answer.
type oracleLine struct {
	Name string `json:"name"`
	Hash string `json:"hash"`           // of the input, so that a changed generator is noticed
	Out  string `json:"out"`            // result (canonical JSON) or error (code pointer message)
	Cost int64  `json:"cost,omitempty"` // smallest budget with which the evaluation is not cut short
	Lim  string `json:"lim,omitempty"`  // outcome with budget cost-1
	Half string `json:"half,omitempty"` // outcome with budget cost/2
}

func TestOracleExpressions(t *testing.T) {
	var got []oracleLine
	for _, ex := range oracleExpressions(t) {
		got = append(got, ex.answer(t))
	}
	compareOracle(t, "expressions.jsonl", got)
}

func TestOracleFixtures(t *testing.T) {
	var got []oracleLine
	for _, f := range loadFixtures(t) {
		ops := map[string]engine.Operator{}
		for _, name := range f.golden.Operators {
			ops[name] = testops.Operators()[name]
		}
		budgets := []int64{0, 1, 2, 3, 4, 6, 9, 14, 20, 30}
		sets := make([]*engine.RuleSet, len(budgets))
		for i, b := range budgets {
			rs, err := engine.FromBundle(f.bundle, engine.WithOperators(ops), engine.WithBudget(b))
			if err != nil {
				t.Fatal(err)
			}
			sets[i] = rs
		}
		rng := rand.New(rand.NewSource(int64(len(f.golden.Fixture))))
		var reuse engine.Result
		for ti, tc := range f.golden.Tests {
			ch := tc.Channel
			if ch == "" {
				ch = engine.ChannelServer
			}
			bodies := [][]byte{tc.Request}
			for k := 0; k < 8; k++ {
				bodies = append(bodies, mutateRequest(t, rng, tc.Request))
			}
			for k, body := range bodies {
				req, err := engine.ParseRequest(body)
				if err != nil {
					t.Fatalf("%s: %v", body, err)
				}
				outs := make([]string, len(sets))
				for i, rs := range sets {
					res, err := rs.EvaluateChannel(ch, req)
					if err != nil {
						t.Fatal(err)
					}
					out, err := res.JSON()
					if err != nil {
						t.Fatal(err)
					}
					// a reused result must answer the same
					if err := rs.EvaluateInto(&reuse, ch, req); err != nil {
						t.Fatal(err)
					}
					if again, _ := reuse.JSON(); !bytes.Equal(again, out) {
						t.Fatalf("%s request %d.%d budget %d: EvaluateInto answered\n%s\nEvaluateChannel\n%s", f.golden.Fixture, ti, k, budgets[i], again, out)
					}
					// so must the request decoded straight into what the rules read
					if err := rs.EvaluateJSONInto(&reuse, ch, body); err != nil {
						t.Fatal(err)
					}
					if again, _ := reuse.JSON(); !bytes.Equal(again, out) {
						t.Fatalf("%s request %d.%d budget %d: EvaluateJSONInto answered\n%s\nEvaluateChannel\n%s", f.golden.Fixture, ti, k, budgets[i], again, out)
					}
					outs[i] = digest(string(out))[:8]
					if os.Getenv("ORACLE_SHOW") != "" {
						t.Logf("%s/%d budget %d %s\n%s", tc.ID, k, budgets[i], body, out)
					}
				}
				// one line per request: the digests of its results under each budget
				got = append(got, oracleLine{Name: fmt.Sprintf("%s/%d", tc.ID, k), Hash: digest(ch, string(body)),
					Out: strings.Join(outs, " ")})
			}
		}
	}
	compareOracle(t, "fixtures.jsonl", got)
}

// compareOracle checks got against the recorded file, or rewrites it with -update-oracle.
func compareOracle(t *testing.T, name string, got []oracleLine) {
	t.Helper()
	path := filepath.Join(oracleDir, name)
	if *updateOracle {
		var b bytes.Buffer
		for _, l := range got {
			line, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.MkdirAll(oracleDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []oracleLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l oracleLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		want = append(want, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d answers, the oracle has %d", name, len(got), len(want))
	}
	bad := 0
	for i := range got {
		if got[i] != want[i] {
			bad++
			if bad <= 10 {
				t.Errorf("%s line %d:\ngot  %+v\nwant %+v", name, i+1, got[i], want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d answers differ from the oracle", name, bad, len(got))
	}
}

func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// oracleExpr is one expression with what it is evaluated with.
type oracleExpr struct {
	name string
	expr json.RawMessage
	env  string
	opts []engine.Option
}

// answer evaluates ex with the default budget, finds the smallest budget that does not cut it
// short and records where the budget runs out below it.
func (ex oracleExpr) answer(t *testing.T) oracleLine {
	t.Helper()
	env, envErr := engine.ParseEnv([]byte(ex.env))
	run := func(budget int64) (string, bool) {
		if envErr != nil {
			return "env: " + describeErr(envErr), false
		}
		c, err := engine.NewCompiler(append(ex.opts, engine.WithBudget(budget))...)
		if err != nil {
			return "compiler: " + describeErr(err), false
		}
		e, err := c.Compile(ex.expr, "/e")
		if err != nil {
			return "compile: " + describeErr(err), false
		}
		v, err := e.Evaluate(env)
		if err != nil {
			var d *engine.Diagnostic
			limited := errors.As(err, &d) && d.Code == "EVALUATION_LIMIT"
			return describeErr(err), limited
		}
		b, err := engine.MarshalValue(v)
		if err != nil {
			return "marshal: " + err.Error(), false
		}
		return string(b), false
	}
	l := oracleLine{Name: ex.name, Hash: digest(string(ex.expr), ex.env)}
	out, _ := run(0)
	l.Out = short(out)
	if strings.HasPrefix(out, "compile") || strings.HasPrefix(out, "env") {
		return l
	}
	// the smallest budget that does not cut the evaluation short: doubling, then bisection
	const most = 1 << 16
	hi := int64(1)
	for ; hi <= most; hi *= 2 {
		if _, limited := run(hi); !limited {
			break
		}
	}
	if hi > most {
		return l
	}
	lo := hi / 2 // cut short, or 0
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if _, limited := run(mid); limited {
			lo = mid
		} else {
			hi = mid
		}
	}
	l.Cost = hi
	if hi > 1 {
		lim, _ := run(hi - 1)
		l.Lim = short(lim)
	}
	if hi/2 > 0 && hi/2 != hi-1 {
		half, _ := run(hi / 2)
		l.Half = short(half)
	}
	return l
}

// short keeps an outcome as it is up to 80 bytes and a digest of a longer one.
func short(s string) string {
	if len(s) <= 80 {
		return s
	}
	return s[:40] + "... sha256:" + digest(s)
}

func describeErr(err error) string {
	var d *engine.Diagnostic
	if errors.As(err, &d) {
		if d.Code == "EVALUATION_LIMIT" {
			return d.Code + " " + d.Pointer
		}
		return d.Code + " " + d.Pointer + " " + d.Message
	}
	return err.Error()
}

// oracleExpressions returns the expression cases of testdata/expressions and random
// expressions over every core operator, functions and custom operators.
func oracleExpressions(t *testing.T) []oracleExpr {
	var out []oracleExpr
	cases := loadCases(t)
	files := make([]string, 0, len(cases))
	for f := range cases {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		for i, c := range cases[f] {
			env := string(c.Env)
			if env == "" || env == "null" {
				env = oracleEnv
			}
			out = append(out, oracleExpr{name: fmt.Sprintf("%s/%d", f, i), expr: c.Expr, env: env, opts: c.options()})
		}
	}
	opts := []engine.Option{
		engine.WithFunctionsJSON("/functions", json.RawMessage(oracleFunctions)),
		engine.WithOperators(testops.Operators()),
		engine.WithDeclaredOperators("x-absent"),
	}
	rng := rand.New(rand.NewSource(4))
	for i := 0; i < 2000; i++ {
		out = append(out, oracleExpr{name: fmt.Sprintf("random/%d", i), expr: json.RawMessage(randomExpr(rng, 0, false)), env: oracleEnv, opts: opts})
	}
	return out
}

const oracleEnv = `{"data":{"a":1,"n":-2.5,"big":123456789012345678,"s":"héllo","sp":"  x y ","e":"","l":[1,2.5,"x",null,[3]],"nums":[3,1,2],"strs":["b","a","c"],"o":{"k":"v","n":2},"d":"2024-02-29","t":true,"f":false,"z":null,"mail":"ana@example.com"},"ctx":{"today":"2025-06-15","p":"^h"},"actor":{"roles":["adjuster"]},"original":{"s":"hello"}}`

const oracleFunctions = `{
 "blank":{"params":["v"],"body":{"op":"isEmpty","args":[{"op":"trim","args":[{"op":"text","args":[{"op":"coalesce","args":[{"var":"v"},""]}]}]}]}},
 "twice":{"params":["x"],"body":{"op":"*","args":[{"var":"x"},2]}},
 "sumTwice":{"params":["xs"],"body":{"op":"sum","args":[{"op":"map","args":[{"var":"xs"},{"fn":"twice","args":[{"var":"it"}]}]}]}},
 "pick":{"params":["a","b"],"body":{"op":"if","args":[{"fn":"blank","args":[{"var":"a"}]},{"var":"b"},{"var":"a"}]}},
 "bad":{"params":["x"],"body":{"op":"+","args":[{"var":"x"},"s"]}}
}`

// oracleOps are the core operators with their smallest and largest argument counts (-1: any).
var oracleOps = []struct {
	name     string
	min, max int
}{
	{"==", 2, 2}, {"!=", 2, 2}, {"<", 2, 2}, {"<=", 2, 2}, {">", 2, 2}, {">=", 2, 2}, {"between", 3, 3},
	{"and", 1, 3}, {"or", 1, 3}, {"not", 1, 1}, {"if", 3, 5}, {"coalesce", 1, 3},
	{"+", 2, 3}, {"-", 1, 2}, {"*", 2, 3}, {"/", 2, 2}, {"mod", 2, 2}, {"abs", 1, 1}, {"min", 1, 3}, {"max", 1, 3},
	{"round", 1, 2}, {"sum", 1, 1},
	{"upper", 1, 1}, {"lower", 1, 1}, {"trim", 1, 1}, {"concat", 1, 3}, {"substring", 2, 3}, {"text", 1, 1},
	{"startsWith", 2, 2}, {"endsWith", 2, 2}, {"matches", 2, 2},
	{"length", 1, 1}, {"contains", 2, 2}, {"in", 2, 2},
	{"map", 2, 2}, {"filter", 2, 2}, {"some", 2, 2}, {"all", 2, 2},
	{"typeOf", 1, 1}, {"isEmpty", 1, 1}, {"literal", 1, 1},
	{"isDate", 1, 1}, {"yearsBetween", 2, 2}, {"daysBetween", 2, 2}, {"dateAdd", 3, 3},
}

var oracleAtoms = []string{
	`0`, `1`, `-1`, `2.5`, `8`, `1e300`, `0.1`, `""`, `" "`, `"a"`, `"x y"`, `"2024-01-31"`, `"2025-06-15T10:00:00+02:00"`,
	`"days"`, `"months"`, `"years"`, `"^[a-z]+$"`, `"(a|b)*c"`, `null`, `true`, `false`, `[]`, `[1,2,3]`, `["a",null,"b"]`,
	`{"var":"data.a"}`, `{"var":"data.n"}`, `{"var":"data.big"}`, `{"var":"data.s"}`, `{"var":"data.sp"}`, `{"var":"data.e"}`,
	`{"var":"data.l"}`, `{"var":"data.nums"}`, `{"var":"data.strs"}`, `{"var":"data.o"}`, `{"var":"data.o.n"}`,
	`{"var":"data.d"}`, `{"var":"data.t"}`, `{"var":"data.f"}`, `{"var":"data.z"}`, `{"var":"data.mail"}`,
	`{"var":"data.l.1"}`, `{"var":"data.l.9"}`, `{"var":"ctx.today"}`, `{"var":"ctx.p"}`, `{"var":"actor.roles"}`,
	`{"var":"original.s"}`, `{"var":"missing.x"}`, `{"var":"data"}`,
}

// randomExpr writes a random expression; inLambda allows it and its index.
func randomExpr(rng *rand.Rand, depth int, inLambda bool) string {
	if depth > 3 || rng.Intn(3) == 0 {
		if inLambda && rng.Intn(3) == 0 {
			return `{"var":"it"}`
		}
		return oracleAtoms[rng.Intn(len(oracleAtoms))]
	}
	switch rng.Intn(12) {
	case 0:
		fns := []string{"blank", "twice", "sumTwice", "bad"}
		return `{"fn":"` + fns[rng.Intn(len(fns))] + `","args":[` + randomExpr(rng, depth+1, inLambda) + `]}`
	case 1:
		return `{"fn":"pick","args":[` + randomExpr(rng, depth+1, inLambda) + `,` + randomExpr(rng, depth+1, inLambda) + `]}`
	case 2:
		ops := []string{"x-test-reverse", "x-test-sum", "x-luhn", "x-absent"}
		return `{"op":"` + ops[rng.Intn(len(ops))] + `","args":[` + randomExpr(rng, depth+1, inLambda) + `]}`
	}
	op := oracleOps[rng.Intn(len(oracleOps))]
	n := op.min
	if op.max > op.min {
		n += rng.Intn(op.max - op.min + 1)
	}
	args := make([]string, n)
	for i := range args {
		lambda := inLambda || (i == 1 && (op.name == "map" || op.name == "filter" || op.name == "some" || op.name == "all"))
		args[i] = randomExpr(rng, depth+1, lambda)
	}
	return `{"op":"` + op.name + `","args":[` + strings.Join(args, ",") + `]}`
}

// mutateRequest replaces one to three values of a request (a member of data, original, actor
// or ctx, or an element of a list there) with a random JSON value.
func mutateRequest(t *testing.T, rng *rand.Rand, body []byte) []byte {
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	values := []any{nil, "", " ", "x", "  padded  ", 0.0, -1.0, 1e6, 12.5, true, false, "2024-02-29", "2030-01-01",
		"1999-12-31", "not-a-date", "abc@def.gh", "theft", "closed", "business", "CH", "4111111111111111",
		strings.Repeat("long ", 20), []any{}, []any{"a", 1.0}, map[string]any{}, map[string]any{"k": "v"}}
	for n := 1 + rng.Intn(3); n > 0; n-- {
		roots := []string{"data", "data", "data", "original", "actor", "ctx"}
		root := roots[rng.Intn(len(roots))]
		v := req[root]
		parent, key := any(req), root
	walk:
		for steps := 0; steps < 4; steps++ {
			switch c := v.(type) {
			case map[string]any:
				if len(c) == 0 {
					break walk
				}
				keys := make([]string, 0, len(c))
				for k := range c {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				parent, key = c, keys[rng.Intn(len(keys))]
				v = c[key]
				continue
			case []any:
				if len(c) == 0 {
					break walk
				}
				i := rng.Intn(len(c))
				parent, key = c, fmt.Sprint(i)
				v = c[i]
				continue
			}
			break
		}
		nv := values[rng.Intn(len(values))]
		// a fresh copy: one list or object placed twice would make the request a graph
		switch c := nv.(type) {
		case []any:
			nv = append([]any{}, c...)
		case map[string]any:
			m := make(map[string]any, len(c))
			for k, v := range c {
				m[k] = v
			}
			nv = m
		}
		switch p := parent.(type) {
		case map[string]any:
			if p2, ok := p[key].(map[string]any); ok && key == root && rng.Intn(2) == 0 {
				// a new member of a root object
				p2["extra"] = nv
				continue
			}
			if key == root {
				if _, isObj := nv.(map[string]any); !isObj && nv != nil {
					continue // roots are objects or null
				}
			}
			p[key] = nv
		case []any:
			var i int
			fmt.Sscan(key, &i)
			p[i] = nv
		}
	}
	out, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
