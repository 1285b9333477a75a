package ruleserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/rules/yamlrules"
)

// yamlReaderCases are sources that exercise spec/v1/ruleset.md §7 where YAML readers differ:
// the core schema's scalars, YAML 1.1 look-alikes (lint), tags, aliases, keys, documents.
var yamlReaderCases = map[string]string{
	"core.yaml":      "a: no\nb: on\nc: 2024-01-01\nd: yes\ne: 0x1F\nf: 0o17\ng: ~\nh: True\ni: '1'\nj: 1.50\nk: .5\nl: -007\nm: |\n  text\nn: >-\n  folded\n  text\no:\np: NULL\nq: +12\nr: 1.\ns: -.5e+3\n",
	"lint.yaml":      "a: no\nb: 'no'\nc: 2024-01-01\nd: 0755\ne: 1e3\nf: 1_000\ng: 0.1\nh: 0.30000000000000004\ni: 12345678901234567\nj: 1:20\non: 1\nk: 1e-400\nl: 1e400\nm: <<\nn: '='\no: 0b101\np: Off\nq: 2001-12-14t21:59:43.10-05:00\nr: 1.5e3\ns: 9007199254740993\n",
	"tags.yaml":      "a: !!str 12\nb: !!int '7'\nc: !!float 1\nd: !!null ''\ne: !!bool true\nf: !!seq [1]\ng: !!map {x: 1}\n",
	"tag-bad.yaml":   "a: !!int x\n",
	"tag-other.yaml": "a: !custom v\n",
	"binary.yaml":    "a: !!binary aGk=\n",
	"inf.yaml":       "a: .inf\n",
	"nan.yaml":       "rules:\n  - x: .NaN\n",
	"key-seq.yaml":   "? [a]\n: 1\n",
	"two-docs.yaml":  "a: 1\n---\nb: 2\n",
	"syntax.yaml":    "a: [\n",
	"empty.yaml":     "",
	"comment.yaml":   "# only a comment\n",
	"null-doc.yaml":  "---\n",
	"scalar.yaml":    "just text\n",
	"aliases.yaml":   "base: &b {x: 1, y: [a, b]}\nuse: *b\nlist: [*b, *b]\nk: &k key\n*k : v\n",
	"seq-props.yaml": "- &a x\n- !!str y\n- *a\n- &m {k: v}\n- !!map {k: v}\n- [&s [1], *s]\n",
	"dups.yaml":      "a: 1\nb: 2\na: 3\n",
	"escapes.yaml":   "a: \"tab\\tquote\\\" uni\\u00e9 \\U0001F600\"\nb: 'it''s'\n\"c/d~e\": 1\nf: \"<&>\"\n",
	"flow.yaml":      "rules: [{id: r, when: {==: [{var: value}, 1]}, message: m}]\nnested: {a: {b: [1, [2, {c: d}]]}}\n",
	"plain.yaml":     "a: plain\n  continued\nb: -x\nc: x:y\nd: '#' \ne: a # comment\n",
	"ruleset.yaml":   "ruleset:\n  id: broken\n  version: '1'\n  rules: [{id: r, target: {type: Nope}, code: X, when: true, message: m}]\n",
	"numbers.json":   "{\n  \"a\": [1,\n    2.000000000000000001],\n  \"b\": {\"c\": true, \"d\": 1e400, \"e\": -0.0, \"f\": 123456789012345678}\n}",
	"nested.json":    "{\"x\": {\"y/z\": [{\"~\": null}], \"\": 1}}",
}

// TestYAMLReadersAgree reads the same files with the Go reader (impl/rules/yamlrules, the Go rule
// server's) and the TypeScript rule server's (runtimes/ts/packages/rule-server/src/source.ts):
// the same JSON (members in order, duplicates kept, numbers as written by §7), the same problems
// (code, pointer, line), the same lint (code, pointer, line, column) and the same position of
// every pointer. The corpus: the cases above and every YAML file of the repository (the
// conformance fixtures, the OpenAPI documents, the deployment manifests, …).
func TestYAMLReadersAgree(t *testing.T) {
	if !typeScriptServer() {
		t.Skip("SDODS_RULESERVER=typescript compares with the TypeScript reader (make test-typescript)")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "runtimes", "ts", "packages", "rule-server", "dist", "read-source.js"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var files []string
	for name, src := range yamlReaderCases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	root := filepath.Join("..", "..", "..")
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "bin" || d.Name() == "target") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			abs, _ := filepath.Abs(p)
			files = append(files, abs)
		}
		return nil
	})
	if len(files) < len(yamlReaderCases)+10 {
		t.Fatalf("only %d files found", len(files))
	}
	cmd := exec.Command("node", append([]string{script}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node read-source.js (make build-typescript first): %v\n%s", err, stderr.String())
	}
	type tsProblem struct {
		Code, Pointer, Message string
		Line, Column           int
	}
	type tsLine struct {
		File      string                                `json:"file"`
		JSON      *string                               `json:"json"`
		Problems  []tsProblem                           `json:"problems"`
		Lint      []tsProblem                           `json:"lint"`
		Positions map[string]struct{ Line, Column int } `json:"positions"`
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	compared := 0
	for sc.Scan() {
		var ts tsLine
		if err := json.Unmarshal(sc.Bytes(), &ts); err != nil {
			t.Fatal(err)
		}
		name := ts.File
		if rel, err := filepath.Rel(dir, ts.File); err == nil && !strings.HasPrefix(rel, "..") {
			name = rel
		}
		src, err := os.ReadFile(ts.File)
		if err != nil {
			t.Fatal(err)
		}
		var doc *yamlrules.Document
		var problems []yamlrules.Problem
		if strings.HasSuffix(ts.File, ".json") {
			doc, problems = yamlrules.ReadJSON(src)
		} else {
			doc, problems = yamlrules.ReadYAML(src)
		}
		compared++
		if len(problems) > 0 || len(ts.Problems) > 0 {
			// A syntax error (pointer "") is compared by its code: the parsers word it and
			// place an unexpected end of the text differently.
			var gp, tp [][3]any
			for _, p := range problems {
				gp = append(gp, [3]any{p.Code, p.Pointer, lineAt(p.Pointer, p.Line)})
			}
			for _, p := range ts.Problems {
				tp = append(tp, [3]any{p.Code, p.Pointer, lineAt(p.Pointer, p.Line)})
			}
			if !reflect.DeepEqual(gp, tp) {
				t.Errorf("%s: problems differ\n go: %v\n ts: %v (%+v)", name, problems, tp, ts.Problems)
			}
			continue
		}
		if ts.JSON == nil {
			t.Errorf("%s: the TypeScript reader gave no JSON", name)
			continue
		}
		if g, s := tokens(t, doc.JSON), tokens(t, []byte(*ts.JSON)); !reflect.DeepEqual(g, s) {
			t.Errorf("%s: the JSON differs\n go: %.300s\n ts: %.300s", name, doc.JSON, *ts.JSON)
		}
		var gl, tl [][4]any
		for _, p := range doc.Lint() {
			gl = append(gl, [4]any{p.Code, p.Pointer, p.Line, p.Column})
		}
		for _, p := range ts.Lint {
			tl = append(tl, [4]any{p.Code, p.Pointer, p.Line, p.Column})
		}
		if !reflect.DeepEqual(gl, tl) {
			t.Errorf("%s: lint differs\n go: %v\n ts: %v", name, gl, tl)
		}
		bad := 0
		for ptr, at := range ts.Positions {
			if *ts.JSON == "null" {
				break // an empty document has no node to place
			}
			if g := doc.Position(ptr); g.Line != at.Line || g.Column != at.Column {
				if bad++; bad <= 3 {
					t.Errorf("%s: position of %q: go %d:%d, ts %d:%d", name, ptr, g.Line, g.Column, at.Line, at.Column)
				}
			}
		}
	}
	if compared != len(files) {
		t.Fatalf("compared %d of %d files", compared, len(files))
	}
	t.Logf("%d files read alike by both readers", compared)
}

// tokens is the token stream of a JSON text: members in order, duplicates kept, numbers as text.
func tokens(t *testing.T, b []byte) []any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out []any
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%.200s: %v", b, err)
		}
		out = append(out, tok)
	}
}

// lineAt is the line of a problem at ptr, or 0 for a syntax error (at the document, "").
func lineAt(ptr string, line int) int {
	if ptr == "" {
		return 0
	}
	return line
}
