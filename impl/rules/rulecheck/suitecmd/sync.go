package suitecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/engine/testops"
	"github.com/sdods/sdods/impl/rules/harness"
	"github.com/sdods/sdods/impl/rules/rulecheck"
	"github.com/sdods/sdods/impl/rules/yamlrules"
)

// CorpusSeed is the seed of the evaluation corpus; changing it changes every corpus case.
const CorpusSeed = 0x5d0d5_2025

// corpusPerFixture is how many corpus cases each of the five fixtures gets (5 × 200 = 1000).
const corpusPerFixture = 200

// ExampleManifest is the example client manifest sync writes (the signup fixture's).
const ExampleManifest = "conformance/examples/signup.client.manifest.json"

func (m *Main) sync(_ context.Context, args []string) int {
	fs := flag.NewFlagSet("sync", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	check := fs.Bool("check", false, "write nothing; list the generated files that drifted and exit 1 if any")
	root := fs.String("root", ".", "repository root")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	want, err := Generate(*root)
	if err != nil {
		fmt.Fprintf(m.Stderr, "rulecheck sync: %v\n", err)
		return 1
	}
	drift, err := Drift(*root, want)
	if err != nil {
		fmt.Fprintf(m.Stderr, "rulecheck sync: %v\n", err)
		return 1
	}
	versions, err := CheckVersions(*root)
	if err != nil {
		fmt.Fprintf(m.Stderr, "rulecheck sync: %v\n", err)
		return 1
	}
	for _, v := range versions {
		fmt.Fprintln(m.Stdout, v)
	}
	if *check {
		for _, d := range drift {
			fmt.Fprintln(m.Stdout, d)
		}
		if err := checkSuite(*root); err != nil {
			fmt.Fprintf(m.Stdout, "%v\n", err)
			return 1
		}
		if len(drift) > 0 {
			fmt.Fprintf(m.Stderr, "rulecheck sync: %d generated files drifted; run rulecheck sync and commit\n", len(drift))
			return 1
		}
		if len(versions) > 0 {
			fmt.Fprintf(m.Stderr, "rulecheck sync: the places that declare the version disagree\n")
			return 1
		}
		fmt.Fprintf(m.Stderr, "rulecheck sync: %d generated files up to date\n", len(want))
		return 0
	}
	names := sortedKeys(want)
	for _, name := range names {
		p := filepath.Join(*root, filepath.FromSlash(name))
		old, err := os.ReadFile(p)
		if err == nil && bytes.Equal(old, want[name]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintf(m.Stderr, "rulecheck sync: %v\n", err)
			return 1
		}
		if err := rulecheck.WriteAtomic(p, want[name]); err != nil {
			fmt.Fprintf(m.Stderr, "rulecheck sync: %v\n", err)
			return 1
		}
		fmt.Fprintf(m.Stdout, "wrote %s\n", name)
	}
	for _, d := range drift {
		if strings.HasPrefix(d, "stale ") {
			name := strings.TrimPrefix(d, "stale ")
			if err := os.Remove(filepath.Join(*root, filepath.FromSlash(name))); err != nil {
				fmt.Fprintf(m.Stderr, "rulecheck sync: %v\n", err)
				return 1
			}
			fmt.Fprintf(m.Stdout, "removed %s\n", name)
		}
	}
	if err := checkSuite(*root); err != nil {
		fmt.Fprintf(m.Stderr, "rulecheck sync: %v\n", err)
		return 1
	}
	if len(versions) > 0 {
		return 1
	}
	return 0
}

func checkSuite(root string) error {
	files, err := harness.Load(os.DirFS(filepath.Join(root, "conformance")))
	if err != nil {
		return err
	}
	return harness.CheckCounts(files)
}

// generatedDirs are the folders whose every file sync writes: a file there that sync does not
// generate is stale.
var generatedDirs = []string{"conformance/golden", "conformance/corpus", "conformance/compiler", "conformance/schemas", "conformance/examples"}

// Drift compares the generated files with the repository: "changed NAME", "missing NAME" and
// "stale NAME" (a file in a generated folder that sync no longer writes).
func Drift(root string, want map[string][]byte) ([]string, error) {
	var out []string
	for _, name := range sortedKeys(want) {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, "missing "+name)
		case err != nil:
			return nil, err
		case !bytes.Equal(got, want[name]):
			out = append(out, "changed "+name)
		}
	}
	for _, dir := range generatedDirs {
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			name := dir + "/" + e.Name()
			if _, ok := want[name]; !ok && !e.IsDir() {
				out = append(out, "stale "+name)
			}
		}
	}
	return out, nil
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// goldenFile is conformance/fixtures/NAME/evaluations.json.
type goldenFile struct {
	Fixture   string   `json:"fixture"`
	Bundle    string   `json:"bundle"`
	Source    string   `json:"source"`
	Operators []string `json:"operators"`
	Tests     []struct {
		ID          string          `json:"id"`
		Description string          `json:"description"`
		Channel     string          `json:"channel,omitempty"`
		Request     json.RawMessage `json:"request"`
		Expected    json.RawMessage `json:"expected,omitempty"`
	} `json:"tests"`
}

type fixture struct {
	name   string
	golden goldenFile
	source []byte // the source as JSON
	bundle []byte
	rs     *engine.RuleSet
}

// Generate computes every generated file, by slash path from the repository root.
func Generate(root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	schemas, err := filepath.Glob(filepath.Join(root, "spec", "v1", "*.schema.json"))
	if err != nil {
		return nil, err
	}
	for _, s := range schemas {
		b, err := os.ReadFile(s)
		if err != nil {
			return nil, err
		}
		out["conformance/schemas/"+filepath.Base(s)] = b
	}
	dirs, err := filepath.Glob(filepath.Join(root, "conformance", "fixtures", "*", "evaluations.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(dirs)
	var fixtures []*fixture
	for _, p := range dirs {
		f, err := readFixture(filepath.Dir(p))
		if err != nil {
			return nil, err
		}
		fixtures = append(fixtures, f)
		out["conformance/fixtures/"+f.name+"/"+f.golden.Bundle] = f.bundle
	}
	if len(fixtures) != 5 {
		return nil, fmt.Errorf("%d fixtures, want 5", len(fixtures))
	}
	rng := rand.New(rand.NewPCG(CorpusSeed, 0x51f))
	for _, f := range fixtures {
		b, err := goldenCases(f)
		if err != nil {
			return nil, err
		}
		out["conformance/golden/"+f.name+".json"] = b
		b, err = corpusCases(f, rng)
		if err != nil {
			return nil, err
		}
		out["conformance/corpus/"+f.name+".json"] = b
		b, err = compilerCases(f)
		if err != nil {
			return nil, err
		}
		out["conformance/compiler/"+f.name+".json"] = b
		if f.name == "signup" {
			m, err := f.rs.Manifest(engine.ChannelClient)
			if err != nil {
				return nil, err
			}
			out[ExampleManifest] = m
		}
	}
	return out, nil
}

func readFixture(dir string) (*fixture, error) {
	f := &fixture{name: filepath.Base(dir)}
	b, err := os.ReadFile(filepath.Join(dir, "evaluations.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &f.golden); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	src, err := os.ReadFile(filepath.Join(dir, f.golden.Source))
	if err != nil {
		return nil, err
	}
	doc, problems := yamlrules.ReadYAML(src)
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s: %v", f.golden.Source, problems[0])
	}
	f.source = doc.JSON
	rs, problems, _ := rulecheck.Compile(src, false, true) // the fixtures are portable
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s: %s", f.golden.Source, rulecheck.Format(f.golden.Source, problems[0]))
	}
	f.bundle, err = rs.Bundle()
	if err != nil {
		return nil, err
	}
	ops := map[string]engine.Operator{}
	for _, n := range f.golden.Operators {
		ops[n] = testops.Operators()[n]
	}
	f.rs, err = engine.FromBundle(f.bundle, engine.WithOperators(ops))
	if err != nil {
		return nil, err
	}
	return f, nil
}

// caseFile is the shape of a case file (impl/rules/harness.File), written in a fixed layout.
type caseFile struct {
	Category    string            `json:"category"`
	Description string            `json:"description,omitempty"`
	Setup       []json.RawMessage `json:"setup,omitempty"`
	Cases       []genCase         `json:"cases"`
}

type genCase struct {
	ID          string          `json:"id"`
	Level       string          `json:"level"`
	Description string          `json:"description,omitempty"`
	Input       json.RawMessage `json:"input"`
	Expected    json.RawMessage `json:"expected"`
}

func encodeFile(cf caseFile) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(cf); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func (f *fixture) loadRequest() json.RawMessage {
	req := map[string]any{"cmd": "load", "bundle": map[string]string{"$file": "fixtures/" + f.name + "/" + f.golden.Bundle}}
	req["registered"] = append([]string{}, f.golden.Operators...)
	return mustJSON(req)
}

func evaluateInput(id, channel string, request json.RawMessage) json.RawMessage {
	in := map[string]any{"cmd": "evaluate", "ruleset": id, "request": request}
	if channel != "" {
		in["channel"] = channel
	}
	return mustJSON(in)
}

func goldenCases(f *fixture) ([]byte, error) {
	cf := caseFile{Category: "golden", Description: "The golden evaluations of the " + f.name +
		" fixture (conformance/fixtures/" + f.name + "/evaluations.json), against its bundle.",
		Setup: []json.RawMessage{f.loadRequest()}}
	ref := mustJSON(f.rs.Ref())
	for _, t := range f.golden.Tests {
		var exp map[string]json.RawMessage
		if err := json.Unmarshal(t.Expected, &exp); err != nil {
			return nil, fmt.Errorf("%s: %s: expected: %w", f.name, t.ID, err)
		}
		exp["ruleset"] = ref
		cf.Cases = append(cf.Cases, genCase{ID: "golden/" + t.ID, Level: harness.LevelEvaluator, Description: t.Description,
			Input: evaluateInput(f.rs.ID(), t.Channel, t.Request), Expected: mustJSON(map[string]any{"result": exp})})
	}
	return encodeFile(cf)
}

// corpusCases derives requests from the golden requests by seeded random mutations and records
// what the reference engine answers.
func corpusCases(f *fixture, rng *rand.Rand) ([]byte, error) {
	cf := caseFile{Category: "corpus", Description: fmt.Sprintf("Evaluation corpus of the %s fixture: %d requests derived "+
		"from its golden requests by seeded mutations (seed %#x); expectations from the reference engine.", f.name, corpusPerFixture, CorpusSeed),
		Setup: []json.RawMessage{f.loadRequest()}}
	var bases []map[string]any
	for _, t := range f.golden.Tests {
		v, err := decodeOrdered(t.Request)
		if err != nil {
			return nil, err
		}
		bases = append(bases, v.(map[string]any))
	}
	pool := collectLeaves(bases)
	for i := 0; i < corpusPerFixture; i++ {
		base := bases[rng.IntN(len(bases))]
		req := deepCopy(base).(map[string]any)
		n := 1 + rng.IntN(4)
		var what []string
		for j := 0; j < n; j++ {
			what = append(what, mutate(req, pool, rng))
		}
		switch rng.IntN(6) {
		case 0:
			req["locale"] = []any{"en", "fr", "fr-CA", "de-CH", "es", nil}[rng.IntN(6)]
			what = append(what, "locale")
		case 1:
			delete(req, "view")
			what = append(what, "no view")
		}
		channel := ""
		if rng.IntN(5) == 0 {
			channel = f.rs.Channels()[rng.IntN(len(f.rs.Channels()))]
		}
		raw := mustJSON(req)
		parsed, err := engine.ParseRequest(raw)
		var expected json.RawMessage
		if err != nil {
			var d *engine.Diagnostic
			if !errors.As(err, &d) {
				return nil, err
			}
			expected = mustJSON(map[string]any{"error": map[string]any{"code": d.Code, "pointer": d.Pointer}})
		} else {
			var res *engine.Result
			if channel != "" {
				res, err = f.rs.EvaluateChannel(channel, parsed)
			} else {
				res, err = f.rs.Evaluate(parsed)
			}
			if err != nil {
				return nil, err
			}
			b, err := res.MarshalJSON()
			if err != nil {
				return nil, err
			}
			expected = mustJSON(map[string]any{"result": json.RawMessage(b)})
		}
		cf.Cases = append(cf.Cases, genCase{ID: fmt.Sprintf("corpus/%s/%03d", f.name, i+1), Level: harness.LevelEvaluator,
			Description: strings.Join(what, "; "), Input: evaluateInput(f.rs.ID(), channel, raw), Expected: expected})
	}
	return encodeFile(cf)
}

func decodeOrdered(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}

// leaf is a place in a request: the path of keys and indexes, and the value there.
type leaf struct {
	path []string
	val  any
}

func walk(prefix []string, v any, out *[]leaf) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walk(append(append([]string{}, prefix...), k), t[k], out)
		}
	case []any:
		for i, x := range t {
			walk(append(append([]string{}, prefix...), strconv.Itoa(i)), x, out)
		}
	default:
		*out = append(*out, leaf{append([]string{}, prefix...), v})
	}
}

func collectLeaves(bases []map[string]any) []leaf {
	var out []leaf
	for _, b := range bases {
		for _, root := range []string{"data", "ctx", "actor", "original"} {
			if v, ok := b[root]; ok {
				walk([]string{root}, v, &out)
			}
		}
	}
	return out
}

// mutate changes one leaf of req under data, ctx, actor or original and says what it did.
func mutate(req map[string]any, pool []leaf, rng *rand.Rand) string {
	var leaves []leaf
	for _, root := range []string{"data", "ctx", "actor", "original"} {
		if v, ok := req[root]; ok {
			walk([]string{root}, v, &leaves)
		}
	}
	if len(leaves) == 0 {
		return "unchanged"
	}
	l := leaves[rng.IntN(len(leaves))]
	parent, key := locate(req, l.path)
	if parent == nil {
		return "unchanged"
	}
	where := strings.Join(l.path, ".")
	var nv any
	var what string
	switch rng.IntN(8) {
	case 0:
		nv, what = nil, "null"
	case 1:
		if m, ok := parent.(map[string]any); ok {
			delete(m, key)
			return "removed " + where
		}
		nv, what = nil, "null"
	case 2:
		nv, what = "", "empty"
	case 3:
		// a value seen at the same path in another request
		var same []any
		for _, p := range pool {
			if strings.Join(p.path, ".") == where {
				same = append(same, p.val)
			}
		}
		if len(same) == 0 {
			nv, what = nil, "null"
		} else {
			nv, what = same[rng.IntN(len(same))], "other value"
		}
	case 4:
		p := pool[rng.IntN(len(pool))]
		nv, what = p.val, "value from "+strings.Join(p.path, ".")
	case 5:
		switch t := l.val.(type) {
		case json.Number:
			f, _ := t.Float64()
			nv, what = json.Number(strconv.FormatFloat(f*float64(rng.IntN(5)-1)+float64(rng.IntN(3)), 'g', -1, 64)), "number changed"
		case bool:
			nv, what = !t, "negated"
		case string:
			nv, what = t+t, "doubled"
		default:
			nv, what = "x", "string"
		}
	case 6:
		nv, what = json.Number(strconv.Itoa(rng.IntN(200000)-1000)), "number"
	default:
		nv, what = []string{"a", " ", "ünïcødé", "2024-02-29", "0001-01-01", "9999-12-31", "not-a-date", "x@y", "12345678903"}[rng.IntN(9)], "string"
	}
	switch p := parent.(type) {
	case map[string]any:
		p[key] = nv
	case []any:
		i, _ := strconv.Atoi(key)
		p[i] = nv
	}
	return what + " at " + where
}

func locate(root map[string]any, p []string) (any, string) {
	var cur any = root
	for _, k := range p[:len(p)-1] {
		switch t := cur.(type) {
		case map[string]any:
			cur = t[k]
		case []any:
			i, _ := strconv.Atoi(k)
			if i >= len(t) {
				return nil, ""
			}
			cur = t[i]
		default:
			return nil, ""
		}
	}
	return cur, p[len(p)-1]
}

// variant is one compiler case: a change to the fixture's source and whether it keeps the
// checksum.
type variant struct {
	name, description string
	change            func(doc map[string]any)
}

var variants = []variant{
	{"source", "the fixture's source as JSON", func(map[string]any) {}},
	{"defaults-written", "every rule's default severity written out: same checksum", func(doc map[string]any) {
		for _, r := range list(rs(doc)["rules"]) {
			if m, ok := r.(map[string]any); ok && m["severity"] == nil {
				m["severity"] = "error"
			}
		}
	}},
	{"number-spelling", "integers written with a fraction (1 as 1.0): same checksum", func(doc map[string]any) {
		respell(doc)
	}},
	{"description", "a description added to the ruleset: new checksum", func(doc map[string]any) {
		rs(doc)["description"] = "changed for the compiler suite"
	}},
	{"version", "another ruleset version: new checksum", func(doc map[string]any) { rs(doc)["version"] = "9.9.9" }},
	{"rule-removed", "the last rule removed", func(doc map[string]any) {
		r := list(rs(doc)["rules"])
		if len(r) > 0 {
			rs(doc)["rules"] = r[:len(r)-1]
		}
	}},
	{"server-only", "every rule on the server channel only: the client manifest has none", func(doc map[string]any) {
		for _, r := range list(rs(doc)["rules"]) {
			if m, ok := r.(map[string]any); ok {
				m["channels"] = []any{"server"}
			}
		}
	}},
	{"type-added", "a semantic type added: new checksum", func(doc map[string]any) {
		t, _ := rs(doc)["types"].(map[string]any)
		if t == nil {
			t = map[string]any{}
			rs(doc)["types"] = t
		}
		t["SuiteExtra"] = map[string]any{"base": "string", "description": "added by the compiler suite"}
	}},
	{"function-added", "an unused function added: new checksum", func(doc map[string]any) {
		f, _ := rs(doc)["functions"].(map[string]any)
		if f == nil {
			f = map[string]any{}
			rs(doc)["functions"] = f
		}
		f["suiteTwice"] = map[string]any{"params": []any{"n"}, "body": map[string]any{"op": "*", "args": []any{map[string]any{"var": "n"}, json.Number("2")}}}
	}},
	{"operator-added", "the custom operator x-test-reverse declared: new checksum, required operators change", func(doc map[string]any) {
		o, _ := rs(doc)["operators"].(map[string]any)
		if o == nil {
			o = map[string]any{}
			rs(doc)["operators"] = o
		}
		o["x-test-reverse"] = map[string]any{"description": "declared by the compiler suite"}
	}},
	{"locale-added", "a catalog added: new checksum", func(doc map[string]any) {
		l, _ := rs(doc)["locales"].(map[string]any)
		if l == nil {
			return
		}
		def, _ := rs(doc)["defaultLocale"].(string)
		if c, ok := l[def]; ok {
			l["zz-SUITE"] = deepCopy(c)
		}
	}},
}

func rs(doc map[string]any) map[string]any {
	m, _ := doc["ruleset"].(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	return m
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func respell(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if n, ok := x.(json.Number); ok && !strings.ContainsAny(string(n), ".eE") {
				t[k] = json.Number(string(n) + ".0")
				continue
			}
			respell(x)
		}
	case []any:
		for i, x := range t {
			if n, ok := x.(json.Number); ok && !strings.ContainsAny(string(n), ".eE") {
				t[i] = json.Number(string(n) + ".0")
				continue
			}
			respell(x)
		}
	}
}

func compilerCases(f *fixture) ([]byte, error) {
	cf := caseFile{Category: "compiler", Description: "Compiler-level cases of the " + f.name + " fixture: a source ruleset " +
		"compiled to a bundle; the checksum and both manifests must be exactly the reference's."}
	for _, v := range variants {
		doc, err := decodeOrdered(f.source)
		if err != nil {
			return nil, err
		}
		m := doc.(map[string]any)
		v.change(m)
		src := mustJSON(m)
		rs, err := engine.Compile(src, engine.WithOperators(testops.Operators()))
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", f.name, v.name, err)
		}
		b, err := rs.Bundle()
		if err != nil {
			return nil, err
		}
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			return nil, err
		}
		exp := mustJSON(map[string]any{"result": map[string]any{"ruleset": rs.Ref(), "bundle": json.RawMessage(c.Bytes())}})
		cf.Cases = append(cf.Cases, genCase{ID: path.Join("compiler", f.name, v.name), Level: harness.LevelCompiler,
			Description: v.description, Input: mustJSON(map[string]any{"cmd": "compile", "source": json.RawMessage(src)}), Expected: exp})
	}
	return encodeFile(cf)
}
