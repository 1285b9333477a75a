package pattern_test

import (
	"encoding/json"
	"flag"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/pattern"
)

var diffPatterns = flag.Int("diff.patterns", 3000, "random patterns tried by TestDifferentialRandom")

// gen writes a random pattern of the portable subset, or a random subject, from a byte
// string; past the end of its input it reads zeros, which choose the shortest alternatives, so
// every input gives a finite pattern and the fuzzer can steer every choice.
type gen struct {
	data []byte
	i    int
	b    strings.Builder
}

func (g *gen) next(n int) int {
	if g.i >= len(g.data) {
		return 0
	}
	v := int(g.data[g.i]) % n
	g.i++
	return v
}

func (g *gen) pick(s []string) { g.b.WriteString(s[g.next(len(s))]) }

// Pieces of patterns, chosen so that random subjects over subjectAlphabet often match.
var (
	genLiterals = []string{"a", "b", "c", "a", "b", "x", "0", "_", "-", "@", " ", "\n", "é", "😀", "\uFFFD", "ü", "/", "A", "\x00", "~", "&", "#", ","}
	genEscapes  = []string{`\d`, `\D`, `\w`, `\W`, `\n`, `\t`, `\r`, `\f`, `\x41`, `\x61`, `\xe9`, `\xFF`, `\x00`, `\.`, `\*`, `\$`, `\^`, `\/`, `\\`, `\(`, `\)`, `\[`, `\]`, `\{`, `\}`, `\|`, `\?`, `\+`}
	genClassAt  = []string{"a", "b", "c", "x", "0", "9", "_", "@", ".", "é", "ü", "😀", "\uFFFD", "$", "^", "*", "(", "|", "&", "~", "\n", " ", `\-`, `\]`, `\[`, `\\`, `\n`, `\x41`, `\xe9`, `\^`}
	genRanges   = []string{"a-c", "a-z", "0-9", "A-Z", "à-ÿ", "\x00-\x7f", "é-😀", `\x00-\x40`, `\--\/`, "b-b", " -~", "\uFFFD-\U0010FFFF"}
	genCEscapes = []string{`\d`, `\D`, `\w`, `\W`}
	genQuants   = []string{"*", "+", "?", "{0}", "{1}", "{2}", "{3}", "{0,}", "{1,}", "{2,}", "{0,1}", "{0,2}", "{1,3}", "{2,5}", "{3,19}", "{0,30}"}

	subjectAlphabet = []string{"a", "b", "c", "a", "b", "x", "0", "9", "_", "-", "@", ".", " ", "\n", "\r", "\t", "é", "ü", "😀", "\uFFFD", "A", "Z", "/", "$", "^", "\x00", "~", "&",
		"\xff", "\xed\xa0\x80", "\xc3", "\xf0\x9f", "\x80"}
)

func (g *gen) alternation(depth int) {
	g.branch(depth)
	for g.next(5) == 4 {
		g.b.WriteByte('|')
		g.branch(depth)
	}
}

func (g *gen) branch(depth int) {
	for n := 1 + g.next(4); n > 0; n-- {
		g.piece(depth)
	}
}

func (g *gen) piece(depth int) {
	switch g.next(16) {
	case 14:
		g.b.WriteByte('^')
		return
	case 15:
		g.b.WriteByte('$')
		return
	}
	g.atom(depth)
	if g.next(3) == 2 {
		g.pick(genQuants)
		if g.next(4) == 3 {
			g.b.WriteByte('?')
		}
	}
}

func (g *gen) atom(depth int) {
	switch g.next(8) {
	case 0, 1, 2:
		g.pick(genLiterals)
	case 3:
		g.b.WriteByte('.')
	case 4:
		g.pick(genEscapes)
	case 5:
		g.class()
	default:
		if depth == 0 {
			g.pick(genLiterals)
			return
		}
		if g.next(2) == 0 {
			g.b.WriteString("(?:")
		} else {
			g.b.WriteByte('(')
		}
		g.alternation(depth - 1)
		g.b.WriteByte(')')
	}
}

func (g *gen) class() {
	g.b.WriteByte('[')
	if g.next(3) == 0 {
		g.b.WriteByte('^')
	}
	if g.next(6) == 0 {
		g.b.WriteByte('-')
	}
	for n := 1 + g.next(3); n > 0; n-- {
		switch g.next(4) {
		case 0, 1:
			g.pick(genClassAt)
		case 2:
			g.pick(genRanges)
		default:
			g.pick(genCEscapes)
		}
	}
	if g.next(6) == 0 {
		g.b.WriteByte('-')
	}
	g.b.WriteByte(']')
}

// genPattern returns the pattern that data chooses.
func genPattern(data []byte) string {
	g := &gen{data: data}
	g.alternation(3)
	return g.b.String()
}

// genSubject returns the subject that data chooses, over subjectAlphabet.
func genSubject(data []byte) string {
	g := &gen{data: data}
	for g.i < len(g.data) {
		g.pick(subjectAlphabet)
	}
	return g.b.String()
}

// compare fails t when the bit-parallel matcher and Go's regexp disagree on subject; it
// reports whether the bit-parallel matcher answered.
func compare(t *testing.T, p *pattern.Pattern, subject string) bool {
	t.Helper()
	fast, ok, slow := pattern.MatchBoth(p, subject)
	if ok && fast != slow {
		t.Fatalf("Compile(%q): bit-parallel matcher says %v on %q, Go regexp %v", p.String(), fast, subject, slow)
	}
	if sim, hasDFA := pattern.MatchSim(p, subject); ok && hasDFA && sim != slow {
		t.Fatalf("Compile(%q): the simulation without its automaton says %v on %q, Go regexp %v", p.String(), sim, subject, slow)
	}
	got, err := p.Match(subject)
	if err == nil && got != slow {
		t.Fatalf("Compile(%q).Match(%q) = %v, Go regexp says %v", p.String(), subject, got, slow)
	}
	return ok
}

// TestDifferentialRandom compares the bit-parallel matcher with Go's regexp on random
// patterns of the subset and random subjects (ASCII, non-ASCII, invalid UTF-8, empty, line
// breaks).
func TestDifferentialRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	buf := make([]byte, 64)
	var patterns, fast, withDFA, refused, compared int
	for patterns < *diffPatterns {
		rng.Read(buf[:rng.Intn(len(buf))])
		src := genPattern(buf[:rng.Intn(len(buf))])
		p, err := pattern.Compile(src)
		if err != nil {
			refused++ // a repeating group with an unbounded quantifier, and the like
			if refused > 10**diffPatterns {
				t.Fatalf("the generator writes too many refused patterns, last %q: %v", src, err)
			}
			continue
		}
		patterns++
		subjects := []string{"", "\n"}
		for i := 0; i < 24; i++ {
			rng.Read(buf[:rng.Intn(len(buf))])
			subjects = append(subjects, genSubject(buf[:rng.Intn(1+rng.Intn(len(buf)))]))
		}
		rng.Read(buf)
		subjects = append(subjects, string(buf[:rng.Intn(len(buf))]))
		for _, s := range subjects {
			compared++
			if !compare(t, p, s) {
				break
			}
		}
		if _, ok, _ := pattern.MatchBoth(p, ""); ok {
			fast++
		}
		if _, hasDFA := pattern.MatchSim(p, ""); hasDFA {
			withDFA++
		}
	}
	t.Logf("%d patterns (%d on the bit-parallel matcher, %d of them with an automaton, %d generated patterns refused), %d subjects compared", patterns, fast, withDFA, refused, compared)
	if withDFA < fast/2 {
		t.Errorf("only %d of %d patterns on the bit-parallel matcher have an automaton", withDFA, fast)
	}
	if fast < patterns*9/10 {
		t.Errorf("only %d of %d random patterns use the bit-parallel matcher", fast, patterns)
	}
}

// FuzzDifferential is TestDifferentialRandom steered by the fuzzer: the first input chooses a
// pattern of the subset, the second a subject, which is also tried as raw bytes.
func FuzzDifferential(f *testing.F) {
	f.Add([]byte{}, []byte{})
	f.Add([]byte("\x05\x02\x0e\x01\x02"), []byte("abc"))
	f.Add([]byte("\x07\x01\x06\x00\x02\x01\x02\x03\x04\x02\x02\x0f"), []byte("\x01\x02\x0d\x07"))
	f.Fuzz(func(t *testing.T, pat, subj []byte) {
		p, err := pattern.Compile(genPattern(pat))
		if err != nil {
			return
		}
		if _, ok, _ := pattern.MatchBoth(p, ""); !ok {
			return // Go's regexp compared with itself
		}
		if len(subj) > 1000 { // long subjects only slow the fuzzer down
			subj = subj[:1000]
		}
		for _, s := range []string{genSubject(subj), string(subj), ""} {
			compare(t, p, s)
		}
	})
}

// TestDifferentialConformance compares the bit-parallel matcher with Go's regexp on every
// pattern of a matches expression in the conformance suite and of testdata/cases.json, each
// against every string subject of those expressions and cases.
func TestDifferentialConformance(t *testing.T) {
	patterns := map[string]bool{}
	subjects := map[string]bool{}
	var exprs int
	err := filepath.WalkDir("../../conformance", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var v any
		if json.Unmarshal(b, &v) == nil {
			exprs += collectMatches(v, patterns, subjects)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if exprs < 40 {
		t.Fatalf("found only %d matches expressions in the conformance suite", exprs)
	}
	for _, c := range mustCases(t).Accept {
		patterns[c.Pattern] = true
		for _, s := range append(append([]string{}, c.Match...), c.NoMatch...) {
			subjects[s] = true
		}
	}
	var accepted, fast, compared int
	for src := range patterns {
		p, err := pattern.Compile(src)
		if err != nil {
			continue
		}
		accepted++
		if _, ok, _ := pattern.MatchBoth(p, ""); !ok {
			continue
		}
		fast++
		for s := range subjects {
			compare(t, p, s)
			compared++
		}
	}
	t.Logf("%d matches expressions; %d patterns accepted, %d on the bit-parallel matcher, each against %d subjects: %d comparisons",
		exprs, accepted, fast, len(subjects), compared)
}

// collectMatches adds the string arguments of every {"op": "matches", "args": [s, p]} in v
// to patterns and subjects and returns how many such expressions it found.
func collectMatches(v any, patterns, subjects map[string]bool) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		if args, ok := v["args"].([]any); ok && v["op"] == "matches" && len(args) == 2 {
			n++
			if s, ok := args[0].(string); ok {
				subjects[s] = true
			}
			if p, ok := args[1].(string); ok {
				patterns[p] = true
			}
		}
		for _, x := range v {
			n += collectMatches(x, patterns, subjects)
		}
	case []any:
		for _, x := range v {
			n += collectMatches(x, patterns, subjects)
		}
	}
	return n
}
