package derive_test

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"os/exec"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/impl/rules/rulecheck/derive"
)

// handPatterns are OpenAPI patterns as people write them, and the dialect pitfalls.
var handPatterns = []string{
	`^[a-z0-9][a-z0-9-]{0,62}$`, `^.+$`, `^.*$`, `.`, `^.{1,3}$`, `a.c`, `\d{3}-\w+\s?`, `^[^\s]+$`, `^\S+$`, `\s`, `^\s*$`,
	`a|`, `|a`, `(|a)*b`, `(a|)b`, `()a`, `^[A-Za-z_][A-Za-z0-9_.-]*$`, `x{01,3}\{,2}`, `a{,2}`, `a{ 1}`, `a{1, 2}`, `{`, `}`, `]`, `a]`,
	`x{01,3}`, `[\s\S]`, `[\d\s]+`, `[^\d\s]`, `[&&a]`, `[a||b]`, `[~~]`, `\u00E9\-\#`, `[\u00C0-\u00FF]+`, `(?<n>ab){2}`, `(?:ab)+c`,
	`^\d+$`, `^\D+$`, `^\w+$`, `^\W$`, `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`, `^[A-Z]{3}-[0-9]{4}$`, `^\+?[0-9 ]{6,20}$`, `^#[0-9a-fA-F]{6}$`,
	`^[^@]+@[^@]+\.[a-z]{2,}$`, `^https?://`, `\.`, `\/`, `[.]`, `[$^]`, `a$|^b`, `(^a|b$)`, `^$`, `$`, `^`, `(^)*a`, `a*?b`, `a+?`, `a??`,
	`[a-]`, `[-a]`, `[a\-z]`, `[\-]`, `\x41\x0a`, `\n\r\t\f\v`, `\0`, `[\0]`, `é+`, `😀`, `^.😀.$`, `[😀-😂]`, `[^a-z]`, `[^\w]`,
	`x{1,3}\{,2}`, `a{2}`, `a{2,}`, `a{0}`, `(a{10}){100}`, `\$\^\.\*\+\?\(\)\[\]\{\}\|\\`, `[\]\[\\]`, `[\w-]`, `[-\w]`, `\,\:\;\@\=\!\<\>\&\%\~\'\"\ `,
	// Refused: no faithful portable form, or not read alike by ECMA-262 and Go's regexp.
	`\bfoo\b`, `(?=a)`, `(?i)a`, `(?P<n>a)`, `(a+)+`, `[]a]`, `[^]`, `a{2}{3}`, `\\u0041`, `\u00e9`, `\p{L}`, `\pL`, `\A`, `\z`,
	`\Qa\E`, `[[:alpha:]]`, `\1`, `(a)\1`, `\cA`, `\k<a>`, `[\b]`, `[\d-z]`, `[a-\d]`, `[z-a]`, `^*`, `$+`, `a**`, `\é`, `\a`, `\x4`, `\x{41}`,
	`\01`, `(`, `)`, `[a`, `\`, `a{1001}`, `(a{10}){200}`, `a{600}b{600}`, `\uD83D\uDE00`,
}

// randomPattern writes a pattern from the constructs both dialects share and some they do not.
func randomPattern(r *rand.Rand, depth int) string {
	atoms := []string{"a", "b", "0", "-", " ", "é", "😀", ".", `\d`, `\D`, `\w`, `\W`, `\s`, `\S`, `\.`, `\-`, `\/`, `\n`, `\r`, `\t`,
		`\x41`, `\u00E9`, `\v`, "[a-c]", "[^a]", `[\s\d]`, `[^\S]`, "[a-]", `[.\-]`, "[^\n]", `[\w.]`, "[é😀]", "{", "}", "]", "^", "$"}
	quants := []string{"", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,}", "{0,10}", "*?", "{0}", "{,2}", "+", "{3,}"}
	if r.Intn(20) == 0 {
		quants = append(quants, "{02}") // a leading zero: refused
	}
	var b strings.Builder
	n := 1 + r.Intn(4)
	for i := 0; i < n; i++ {
		switch k := r.Intn(10); {
		case k < 7 || depth > 2:
			a := atoms[r.Intn(len(atoms))]
			b.WriteString(a)
			if (a == "^" || a == "$") && r.Intn(8) > 0 {
				continue // a quantified anchor is refused: keep it rare
			}
		case k < 9:
			open := []string{"(", "(?:", "(?<g" + strconv.Itoa(r.Intn(1e6)) + ">"}[r.Intn(3)]
			b.WriteString(open + randomPattern(r, depth+1) + ")")
		default:
			b.WriteString("(?:" + randomPattern(r, depth+1) + "|" + randomPattern(r, depth+1))
			if r.Intn(4) == 0 {
				b.WriteString("|")
			}
			b.WriteString(")")
		}
		b.WriteString(quants[r.Intn(len(quants))])
	}
	return b.String()
}

// specials tell the dialects apart: line terminators, white space Go's \s lacks, astral code
// points, word characters outside ASCII.
var specials = []string{"", "\n", "\r", "\r\n", "\u2028", "\u2029", "\v", "\u00a0", "\ufeff", "\u3000", "\t", " ", "\f", "😀", "é",
	"\u0661", "K", "\u212a", "_", "-", "a", "b", "0", "9", "A", "\x00", "\\", "{", "}", "]", ".", "a\n", "\na", "ab", "aa"}

// disputed are the code points the dialects' ., \s and \S disagree on.
const disputed = "\r\v\u2028\u2029\u00a0\u1680\u2000\u200a\u202f\u205f\u3000\ufeff"

// sample writes a random string the Go regexp re matches (when the generator gets it right).
func sample(r *rand.Rand, re *syntax.Regexp, b *strings.Builder) {
	pick := func(ranges []rune) rune {
		if len(ranges) == 0 {
			return 'x'
		}
		i := r.Intn(len(ranges)/2) * 2
		lo, hi := ranges[i], ranges[i+1]
		switch r.Intn(3) {
		case 0:
			return lo
		case 1:
			return hi
		}
		if hi-lo > 1000 {
			hi = lo + 1000
		}
		return lo + rune(r.Intn(int(hi-lo)+1))
	}
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		b.WriteRune(pick(re.Rune))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteRune([]rune("a\r\u2028😀é.\v")[r.Intn(7)])
	case syntax.OpCapture:
		sample(r, re.Sub[0], b)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 3
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + 3
			}
		}
		for i, n := 0, lo+r.Intn(hi-lo+1); i < n; i++ {
			sample(r, re.Sub[0], b)
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			sample(r, s, b)
		}
	case syntax.OpAlternate:
		sample(r, re.Sub[r.Intn(len(re.Sub))], b)
	}
}

// subjects are strings the pattern matches, the same mutated, and the specials.
func subjects(r *rand.Rand, goPattern string) []string {
	out := append([]string(nil), specials...)
	re, err := syntax.Parse(goPattern, syntax.Perl)
	if err != nil {
		return out
	}
	for i := 0; i < 12; i++ {
		var b strings.Builder
		sample(r, re, &b)
		s := b.String()
		out = append(out, s)
		rs := []rune(s)
		sp := []rune(specials[1+r.Intn(len(specials)-1)])
		switch k := r.Intn(4); {
		case k == 0 && len(rs) > 0: // replace one code point
			j := r.Intn(len(rs))
			rs = append(append(append([]rune(nil), rs[:j]...), sp...), rs[j+1:]...)
		case k == 1 && len(rs) > 0: // delete one
			j := r.Intn(len(rs))
			rs = append(append([]rune(nil), rs[:j]...), rs[j+1:]...)
		case k == 2: // append
			rs = append(rs, sp...)
		default: // prepend
			rs = append(sp, rs...)
		}
		out = append(out, string(rs))
	}
	return out
}

// ecmaResults evaluates each pattern on its subjects with Node's RegExp: flag u where the
// pattern is valid in u mode, else no flag (then only for subjects without astral code points,
// which that mode reads as two UTF-16 units). nil: the pattern does not compile.
func ecmaResults(t *testing.T, cases []ecmaCase) [][]*bool {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is required for the ECMA-262 side of the pattern differential test: %v", err)
	}
	const script = `let d="";process.stdin.on("data",c=>d+=c).on("end",()=>{const out=JSON.parse(d).map(c=>{let re,u=true;
try{re=new RegExp(c.p,"u")}catch(e){u=false;if(/[\u{10000}-\u{10FFFF}]/u.test(c.p))return null;try{re=new RegExp(c.p)}catch(e2){return null}}
return c.s.map(s=>(!u&&/[\u{10000}-\u{10FFFF}]/u.test(s))?null:re.test(s))});process.stdout.write(JSON.stringify(out))})`
	in, _ := json.Marshal(cases)
	cmd := exec.Command("node", "-e", script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v: %s", err, stderr.String())
	}
	var out [][]*bool
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

type ecmaCase struct {
	P string   `json:"p"`
	S []string `json:"s"`
}

// TestPatternTranslation is the differential test of TranslatePattern: for every translated
// pattern, on strings matching it, near misses and strings that tell the dialects apart, the
// sdods engine's matches on the translation gives Go's regexp's answer on the original (as
// kin-openapi compiles it), and ECMA-262's (Node.js); where the dialects read an atom
// differently (the translation's notes), it never matches what either reading rejects, and
// agrees with Go on every string without the disputed code points.
func TestPatternTranslation(t *testing.T) {
	r := rand.New(rand.NewSource(30))
	patterns := append([]string(nil), handPatterns...)
	for _, file := range []string{"../../../../openapi/server.yaml", "../../../../openapi/rules.yaml"} {
		doc, err := openapi3.NewLoader().LoadFromFile(file)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, s := range doc.Components.Schemas {
			_ = openapi3.NewSchemaRef("", s.Value).WalkSubtree(func(_ string, ref *openapi3.SchemaRef) error {
				if ref.Value != nil && ref.Value.Pattern != "" && !seen[ref.Value.Pattern] {
					seen[ref.Value.Pattern] = true
					patterns = append(patterns, ref.Value.Pattern)
				}
				return nil
			})
		}
	}
	for i := 0; i < 1500; i++ {
		patterns = append(patterns, randomPattern(r, 0))
	}
	type tc struct {
		p, portable string
		notes       bool
		subjects    []string
		sdods, gos  []bool
	}
	var cases []tc
	var ecma []ecmaCase
	refused := 0
	reasons := map[string]int{}
	for _, p := range patterns {
		tr, err := derive.TranslatePattern(p)
		if err != nil {
			if err.Error() == "" {
				t.Errorf("%q: refused without a reason", p)
			}
			refused++
			reason := err.Error()
			if _, rest, ok := strings.Cut(reason, ": "); ok && strings.HasPrefix(reason, "at offset") {
				reason = rest
			}
			if len(reason) > 50 {
				reason = reason[:50]
			}
			reasons[reason]++
			continue
		}
		goRe := regexp.MustCompile(derive.KinGoPattern(p))
		c := tc{p: p, portable: tr.Portable, notes: len(tr.Notes) > 0, subjects: subjects(r, derive.KinGoPattern(p))}
		for _, s := range c.subjects {
			c.gos = append(c.gos, goRe.MatchString(s))
			c.sdods = append(c.sdods, sdodsMatches(t, s, tr.Portable))
		}
		cases = append(cases, c)
		ecma = append(ecma, ecmaCase{P: p, S: c.subjects})
	}
	js := ecmaResults(t, ecma)
	compared, ecmaCompared := 0, 0
	for i, c := range cases {
		for j, s := range c.subjects {
			compared++
			sd, g := c.sdods[j], c.gos[j]
			if sd && !g {
				t.Errorf("%q → %q on %q: sdods matches, Go's regexp does not (the rule passes what kin-openapi rejects)", c.p, c.portable, s)
			}
			if sd != g && (!c.notes || !strings.ContainsAny(s, disputed)) {
				t.Errorf("%q → %q on %q: sdods %v, Go's regexp %v", c.p, c.portable, s, sd, g)
			}
			if js[i] == nil || js[i][j] == nil {
				continue
			}
			ecmaCompared++
			e := *js[i][j]
			if sd && !e {
				t.Errorf("%q → %q on %q: sdods matches, ECMA-262 does not", c.p, c.portable, s)
			}
			if sd != e && !c.notes {
				t.Errorf("%q → %q on %q: sdods %v, ECMA-262 %v", c.p, c.portable, s, sd, e)
			}
		}
	}
	t.Logf("refusal reasons: %v", reasons)
	t.Logf("%d patterns: %d translated, %d refused; %d comparisons with Go's regexp, %d with ECMA-262", len(patterns), len(cases), refused, compared, ecmaCompared)
	if len(cases) < 700 || compared < 30000 || ecmaCompared < 20000 {
		t.Errorf("too few patterns or comparisons")
	}
}

func sdodsMatches(t *testing.T, s, p string) bool {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("invalid subject %q", s)
	}
	raw, _ := json.Marshal(map[string]any{"op": "matches", "args": []any{s, p}})
	e, err := engine.CompileExpression(raw)
	if err != nil {
		t.Fatalf("%q: %v", p, err)
	}
	got, err := e.Evaluate(map[string]any{})
	if err != nil {
		t.Fatalf("%q on %q: %v", p, s, err)
	}
	return got == true
}

// TestPatternRefusals pins the reason of refused patterns and the translation of some.
func TestPatternRefusals(t *testing.T) {
	for _, tc := range []struct{ p, want string }{
		{`^[a-z0-9][a-z0-9-]{0,62}$`, `^[0-9a-z][\x2d0-9a-z]{0,62}$`},
		{`^.+$`, "^[^\\x0a\\x0d\u2028\u2029]+$"},
		{`\d{3}\w`, `[0-9]{3}[0-9A-Z_a-z]`},
		{`a|`, `(?:a)?`},
		{`x{1,3}\{,2}`, `x{1,3}\{,2\}`},
		{`x{01,3}`, `error: leading zero`},
		{`[\s\S]`, `.`},
		{`\u00E9\-\#`, `\xe9-#`},
		{`(?<n>ab){2}`, `(?:ab){2}`},
		{`\bfoo`, `error: word boundary`},
		{`(?=a)`, `error: cannot compile`},
		{`(a+)+`, `error: outside the portable subset`},
		{`[]a]`, `error: empty class`},
		{`\\u0041`, `error: escaped backslash`},
		{`\u00e9`, `error: cannot compile`},
		{`\p{L}`, `error: not read alike`},
		{`[[:alpha:]]`, `error: POSIX class`},
		{`^*`, `error: quantified anchor`},
		{`[\d-z]`, `error: class escape as an end`},
		{`\01`, `error: octal`},
	} {
		tr, err := derive.TranslatePattern(tc.p)
		switch {
		case strings.HasPrefix(tc.want, "error: "):
			if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tc.want, "error: ")) {
				t.Errorf("%q: error %v, want one saying %q", tc.p, err, strings.TrimPrefix(tc.want, "error: "))
			}
		case err != nil:
			t.Errorf("%q: %v", tc.p, err)
		case tr.Portable != tc.want:
			t.Errorf("%q: %q, want %q", tc.p, tr.Portable, tc.want)
		}
	}
}
