package derive

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sdods/sdods/engine"
)

// A pattern in an OpenAPI document is written in the ECMA-262 dialect; kin-openapi validates it
// with Go's regexp after rewriting \uHHHH escapes. TranslatePattern reads the pattern in the
// syntax both understand the same way and writes it in the portable subset
// (spec/v1/patterns.md): every character-matching atom becomes a set of code points, written as
// a literal, a class or ".". Where the two dialects give an atom different sets (".", \s, \S),
// the translation takes their intersection, so that the rule never passes a string either
// reading forbids, and says so in Notes. Anything else that the dialects read differently, that
// Go's regexp cannot compile, or whose translation the portable subset refuses, is an error
// that says why.

// PatternTranslation is a translated pattern.
type PatternTranslation struct {
	Portable string
	// Notes name the atoms that ECMA-262 and Go's regexp read differently, where the rule takes
	// the stricter reading.
	Notes []string
}

// kinUnicodeEscape is kin-openapi's rewrite of \uHHHH into Go's \x{HHHH} (upper-case digits only).
var kinUnicodeEscape = regexp.MustCompile(`\\u([0-9A-F]{4})`)

// KinGoPattern is the text kin-openapi hands to Go's regexp for an OpenAPI pattern.
func KinGoPattern(p string) string { return kinUnicodeEscape.ReplaceAllString(p, `\x{$1}`) }

// rng is an inclusive range of code points; a set is a sorted list of disjoint ranges.
type rng struct{ lo, hi rune }
type set []rng

const maxRune = utf8.MaxRune

func norm(s set) set {
	sort.Slice(s, func(i, j int) bool { return s[i].lo < s[j].lo })
	var out set
	for _, r := range s {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			if r.hi > out[n-1].hi {
				out[n-1].hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func negate(s set) set {
	s = norm(append(set(nil), s...))
	var out set
	next := rune(0)
	for _, r := range s {
		if r.lo > next {
			out = append(out, rng{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= maxRune {
		out = append(out, rng{next, maxRune})
	}
	return out
}

func intersect(a, b set) set { return negate(append(negate(a), negate(b)...)) }

func equal(a, b set) bool {
	a, b = scalars(a), scalars(b)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// scalars drops the surrogates, which no subject holds and no portable pattern may write.
func scalars(s set) set {
	var out set
	for _, r := range norm(append(set(nil), s...)) {
		if r.lo <= 0xDFFF && r.hi >= 0xD800 {
			if r.lo < 0xD800 {
				out = append(out, rng{r.lo, 0xD7FF})
			}
			if r.hi > 0xDFFF {
				out = append(out, rng{0xE000, r.hi})
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

var (
	digitSet = set{{'0', '9'}}
	wordSet  = set{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	// Go's \s is ASCII; ECMA-262's is WhiteSpace and LineTerminator.
	goSpace   = set{{'\t', '\n'}, {'\f', '\r'}, {' ', ' '}}
	ecmaSpace = norm(set{{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}})
	// Go's . is any character but \n; ECMA-262's any but a LineTerminator.
	goDot   = negate(set{{'\n', '\n'}})
	ecmaDot = negate(set{{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}})
)

// atom is a pattern node: a character set (both readings), an anchor, a group or a repetition.
type node struct {
	kind     byte // 's' set, '^', '$', 'g' group, 'r' repeat
	goS, ecS set
	alts     [][]*node // group
	sub      *node     // repeat
	min, max int       // repeat; max -1 = unbounded
}

type parser struct {
	p     string
	i     int
	notes []string
	uEsc  int
}

func (ps *parser) fail(format string, args ...any) error {
	return fmt.Errorf("at offset %d: %s", ps.i, fmt.Sprintf(format, args...))
}

// TranslatePattern translates an OpenAPI (ECMA-262) pattern to the portable subset, or says
// why it cannot.
func TranslatePattern(p string) (*PatternTranslation, error) {
	if !utf8.ValidString(p) {
		return nil, fmt.Errorf("the pattern is not valid UTF-8")
	}
	if _, err := regexp.Compile(KinGoPattern(p)); err != nil {
		return nil, fmt.Errorf("kin-openapi validates with Go's regexp, which cannot compile it: %v", err)
	}
	ps := &parser{p: p}
	alts, err := ps.alternation()
	if err != nil {
		return nil, err
	}
	if ps.i < len(p) {
		return nil, ps.fail("unmatched )")
	}
	if ps.uEsc != len(kinUnicodeEscape.FindAllStringIndex(p, -1)) {
		return nil, fmt.Errorf(`kin-openapi rewrites a \uHHHH that is not an escape here (after an escaped backslash), so Go's regexp reads another pattern`)
	}
	out := emitAlts(alts, true)
	raw, _ := json.Marshal(map[string]any{"op": "matches", "args": []any{"", out}})
	if _, err := engine.CompileExpression(raw); err != nil {
		return nil, fmt.Errorf("its translation %q is outside the portable subset: %v", out, err)
	}
	var notes []string
	for _, n := range ps.notes {
		if len(notes) == 0 || !contains(notes, n) {
			notes = append(notes, n)
		}
	}
	return &PatternTranslation{Portable: out, Notes: notes}, nil
}

func (ps *parser) alternation() ([][]*node, error) {
	var alts [][]*node
	for {
		br, err := ps.branch()
		if err != nil {
			return nil, err
		}
		alts = append(alts, br)
		if ps.i < len(ps.p) && ps.p[ps.i] == '|' {
			ps.i++
			continue
		}
		return alts, nil
	}
}

func (ps *parser) branch() ([]*node, error) {
	var seq []*node
	for ps.i < len(ps.p) {
		c := ps.p[ps.i]
		switch c {
		case '|', ')':
			return seq, nil
		case '*', '+', '?':
			if len(seq) == 0 {
				return nil, ps.fail("%c has nothing to repeat", c)
			}
			ps.i++
			if err := ps.repeat(seq, map[byte][2]int{'*': {0, -1}, '+': {1, -1}, '?': {0, 1}}[c]); err != nil {
				return nil, err
			}
			continue
		case '{':
			if mn, mx, n, ok := count(ps.p[ps.i:]); ok {
				if len(seq) == 0 {
					return nil, ps.fail("{ has nothing to repeat")
				}
				if regexp.MustCompile(`[{,]0[0-9]`).MatchString(ps.p[ps.i : ps.i+n]) {
					return nil, ps.fail("a count with a leading zero is a count in ECMA-262 but literal text in Go's regexp")
				}
				if mx >= 0 && mn > mx {
					return nil, ps.fail("count {%d,%d} out of order", mn, mx)
				}
				if mn > 1000 || mx > 1000 {
					return nil, ps.fail("count above 1000")
				}
				ps.i += n
				if err := ps.repeat(seq, [2]int{mn, mx}); err != nil {
					return nil, err
				}
				continue
			}
		}
		n, err := ps.atom()
		if err != nil {
			return nil, err
		}
		seq = append(seq, n)
	}
	return seq, nil
}

// count reads {n}, {n,} or {n,m} at the start of s: the counts, the length read, and whether it
// is a count (both dialects read anything else, such as {,m} or { 1}, as literal text).
func count(s string) (int, int, int, bool) {
	m := regexp.MustCompile(`^\{([0-9]+)(,([0-9]*))?\}`).FindStringSubmatch(s)
	if m == nil {
		return 0, 0, 0, false
	}
	mn, err := strconv.Atoi(m[1])
	if err != nil || len(m[1]) > 6 {
		mn = 1 << 30
	}
	mx := mn
	if m[2] != "" {
		mx = -1
		if m[3] != "" {
			if mx, err = strconv.Atoi(m[3]); err != nil || len(m[3]) > 6 {
				mx = 1 << 30
			}
		}
	}
	return mn, mx, len(m[0]), true
}

func (ps *parser) repeat(seq []*node, mm [2]int) error {
	last := seq[len(seq)-1]
	if last.kind == '^' || last.kind == '$' {
		return ps.fail("a quantified anchor is an error in ECMA-262")
	}
	if last.kind == 'r' {
		return ps.fail("a quantifier after a quantifier is an error in both dialects")
	}
	if ps.i < len(ps.p) && ps.p[ps.i] == '?' {
		ps.i++ // lazy: matches answers only yes or no
	}
	seq[len(seq)-1] = &node{kind: 'r', sub: last, min: mm[0], max: mm[1]}
	if ps.i < len(ps.p) && strings.IndexByte("*+?", ps.p[ps.i]) >= 0 {
		return ps.fail("a quantifier after a quantifier is an error in both dialects")
	}
	if _, _, _, ok := count(ps.p[ps.i:]); ok {
		return ps.fail("a quantifier after a quantifier is an error in both dialects")
	}
	return nil
}

func both(s set) *node { return &node{kind: 's', goS: s, ecS: s} }

func (ps *parser) atom() (*node, error) {
	c, size := utf8.DecodeRuneInString(ps.p[ps.i:])
	switch c {
	case '^', '$':
		ps.i++
		return &node{kind: byte(c)}, nil
	case '.':
		ps.i++
		ps.notes = append(ps.notes, "`.` matches \\r, U+2028 and U+2029 in Go's regexp (kin-openapi) but not in ECMA-262: the rule reports them")
		return &node{kind: 's', goS: goDot, ecS: ecmaDot}, nil
	case '(':
		start := ps.i
		ps.i++
		rest := ps.p[ps.i:]
		switch {
		case strings.HasPrefix(rest, "?:"):
			ps.i += 2
		case strings.HasPrefix(rest, "?<") && !strings.HasPrefix(rest, "?<=") && !strings.HasPrefix(rest, "?<!"):
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return nil, ps.fail("unterminated group name")
			}
			ps.i += end + 1 // a named group: captures are not observable
		case strings.HasPrefix(rest, "?"):
			return nil, ps.fail("lookaround, inline flags and (?P groups are not read alike by ECMA-262 and Go's regexp, and have no portable form")
		}
		alts, err := ps.alternation()
		if err != nil {
			return nil, err
		}
		if ps.i >= len(ps.p) || ps.p[ps.i] != ')' {
			ps.i = start
			return nil, ps.fail("missing )")
		}
		ps.i++
		return &node{kind: 'g', alts: alts}, nil
	case '[':
		return ps.class()
	case '\\':
		gs, es, err := ps.escape(false)
		if err != nil {
			return nil, err
		}
		return &node{kind: 's', goS: gs, ecS: es}, nil
	}
	// Any other character, including ] and } and a { that starts no count, is itself.
	ps.i += size
	return both(set{{c, c}}), nil
}

// escape reads \X at ps.i and returns its sets in Go and ECMA-262.
func (ps *parser) escape(inClass bool) (set, set, error) {
	start := ps.i
	ps.i++
	if ps.i >= len(ps.p) {
		ps.i = start
		return nil, nil, ps.fail("a lone \\ at the end")
	}
	c, size := utf8.DecodeRuneInString(ps.p[ps.i:])
	ps.i += size
	one := func(r rune) (set, set, error) { return set{{r, r}}, set{{r, r}}, nil }
	switch c {
	case 'd':
		return digitSet, digitSet, nil
	case 'D':
		return negate(digitSet), negate(digitSet), nil
	case 'w':
		return wordSet, wordSet, nil
	case 'W':
		return negate(wordSet), negate(wordSet), nil
	case 's':
		ps.notes = append(ps.notes, "`\\s` is [\\t\\n\\f\\r ] in Go's regexp (kin-openapi) and also \\v and the Unicode spaces in ECMA-262: the rule takes the stricter reading")
		return goSpace, ecmaSpace, nil
	case 'S':
		ps.notes = append(ps.notes, "`\\S` matches \\v and the Unicode spaces in Go's regexp (kin-openapi) but not in ECMA-262: the rule reports them")
		return negate(goSpace), negate(ecmaSpace), nil
	case 'n':
		return one('\n')
	case 'r':
		return one('\r')
	case 't':
		return one('\t')
	case 'f':
		return one('\f')
	case 'v':
		return one('\v')
	case '0':
		if ps.i < len(ps.p) && ps.p[ps.i] >= '0' && ps.p[ps.i] <= '9' {
			ps.i = start
			return nil, nil, ps.fail("octal escapes are not read alike")
		}
		return one(0)
	case 'x':
		if ps.i+2 <= len(ps.p) && isHex(ps.p[ps.i]) && isHex(ps.p[ps.i+1]) {
			v, _ := strconv.ParseUint(ps.p[ps.i:ps.i+2], 16, 8)
			ps.i += 2
			return one(rune(v))
		}
	case 'u':
		if m := regexp.MustCompile(`^[0-9A-F]{4}`).FindString(ps.p[ps.i:]); m != "" {
			v, _ := strconv.ParseUint(m, 16, 32)
			ps.i += 4
			ps.uEsc++
			if v >= 0xD800 && v <= 0xDFFF {
				ps.i = start
				return nil, nil, ps.fail("a surrogate escape (write the character itself)")
			}
			return one(rune(v))
		}
	default:
		if c < utf8.RuneSelf && !isAlnum(byte(c)) {
			return one(c) // escaped punctuation is the character itself in both dialects
		}
	}
	ps.i = start
	what := "\\" + string(c)
	switch c {
	case 'b', 'B':
		return nil, nil, ps.fail("%s (a word boundary, or backspace in a class) has no portable form", what)
	case 'u':
		return nil, nil, ps.fail(`\u is read by kin-openapi only as \uHHHH with upper-case hex digits`)
	}
	return nil, nil, ps.fail("%s is not read alike by ECMA-262 and Go's regexp", what)
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isAlnum(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'
}

// class reads [...]: the union of its items, complemented after ^, in both readings.
func (ps *parser) class() (*node, error) {
	start := ps.i
	ps.i++
	neg := false
	if ps.i < len(ps.p) && ps.p[ps.i] == '^' {
		neg = true
		ps.i++
	}
	if ps.i < len(ps.p) && ps.p[ps.i] == ']' {
		return nil, ps.fail("[] and [^] are an empty class and any character in ECMA-262 but start a class holding ] in Go")
	}
	var gs, es set
	first, notes := true, len(ps.notes)
	for {
		if ps.i >= len(ps.p) {
			ps.i = start
			return nil, ps.fail("missing ]")
		}
		if ps.p[ps.i] == ']' {
			ps.i++
			break
		}
		if strings.HasPrefix(ps.p[ps.i:], "[:") || strings.HasPrefix(ps.p[ps.i:], "[=") || strings.HasPrefix(ps.p[ps.i:], "[.") {
			return nil, ps.fail("[: is a POSIX class in Go and literal text in ECMA-262")
		}
		ag, ae, single, err := ps.classAtom()
		if err != nil {
			return nil, err
		}
		if ps.i+1 < len(ps.p) && ps.p[ps.i] == '-' && ps.p[ps.i+1] != ']' {
			dash := ps.i
			ps.i++
			bg, _, single2, err := ps.classAtom()
			if err != nil {
				return nil, err
			}
			if !single || !single2 {
				ps.i = dash
				return nil, ps.fail("a range with a class escape as an end is not read alike")
			}
			if ag[0].lo > bg[0].lo {
				ps.i = dash
				return nil, ps.fail("range out of order")
			}
			r := set{{ag[0].lo, bg[0].lo}}
			gs, es = append(gs, r...), append(es, r...)
			if ps.i < len(ps.p) && ps.p[ps.i] == '-' && ps.i+1 < len(ps.p) && ps.p[ps.i+1] != ']' {
				return nil, ps.fail("a - after a range is not read alike")
			}
			first = false
			continue
		}
		_ = first
		gs, es = append(gs, ag...), append(es, ae...)
		first = false
	}
	if neg {
		gs, es = negate(gs), negate(es)
	}
	if equal(gs, es) {
		ps.notes = ps.notes[:notes] // e.g. [\s\S]: both readings give the same set
	}
	return &node{kind: 's', goS: norm(gs), ecS: norm(es)}, nil
}

// classAtom reads one class item: its sets, and whether it is a single code point.
func (ps *parser) classAtom() (set, set, bool, error) {
	c, size := utf8.DecodeRuneInString(ps.p[ps.i:])
	if c == '\\' {
		if ps.i+1 < len(ps.p) && ps.p[ps.i+1] == '-' {
			ps.i += 2
			return set{{'-', '-'}}, set{{'-', '-'}}, true, nil
		}
		gs, es, err := ps.escape(true)
		if err != nil {
			return nil, nil, false, err
		}
		single := len(gs) == 1 && gs[0].lo == gs[0].hi && equal(gs, es)
		return gs, es, single, nil
	}
	ps.i += size
	return set{{c, c}}, set{{c, c}}, true, nil
}

// emitAlts writes an alternation; empty branches (which the portable subset refuses) make the
// alternation optional.
func emitAlts(alts [][]*node, top bool) string {
	var parts []string
	empty := false
	for _, br := range alts {
		s := emitSeq(br)
		if s == "" {
			empty = true
			continue
		}
		parts = append(parts, s)
	}
	switch {
	case len(parts) == 0:
		return ""
	case !empty && top:
		return strings.Join(parts, "|")
	case !empty:
		return "(?:" + strings.Join(parts, "|") + ")"
	}
	return "(?:" + strings.Join(parts, "|") + ")?"
}

func emitSeq(seq []*node) string {
	var b strings.Builder
	for _, n := range seq {
		b.WriteString(emit(n))
	}
	return b.String()
}

func emit(n *node) string {
	switch n.kind {
	case '^', '$':
		return string(n.kind)
	case 'g':
		return emitAlts(n.alts, false)
	case 'r':
		sub := emit(n.sub)
		if sub == "" {
			return ""
		}
		if strings.HasSuffix(sub, ")?") && n.sub.kind == 'g' {
			sub = "(?:" + sub + ")"
		}
		switch {
		case n.min == 0 && n.max == -1:
			return sub + "*"
		case n.min == 1 && n.max == -1:
			return sub + "+"
		case n.min == 0 && n.max == 1:
			return sub + "?"
		case n.max == -1:
			return fmt.Sprintf("%s{%d,}", sub, n.min)
		case n.min == n.max:
			return fmt.Sprintf("%s{%d}", sub, n.min)
		}
		return fmt.Sprintf("%s{%d,%d}", sub, n.min, n.max)
	}
	return emitSet(scalars(intersect(n.goS, n.ecS)))
}

// emitSet writes a set of code points as one portable atom.
func emitSet(s set) string {
	if len(s) == 0 {
		return "[^\\x00-" + string(rune(maxRune)) + "]"
	}
	if equal(s, set{{0, maxRune}}) {
		return "."
	}
	if len(s) == 1 && s[0].lo == s[0].hi {
		return literal(s[0].lo)
	}
	neg := scalars(negate(s))
	var b strings.Builder
	b.WriteByte('[')
	body := s
	if len(neg) < len(s) {
		b.WriteByte('^')
		body = neg
	}
	for _, r := range body {
		b.WriteString(classChar(r.lo))
		if r.hi > r.lo {
			if r.hi > r.lo+1 {
				b.WriteByte('-')
			}
			b.WriteString(classChar(r.hi))
		}
	}
	b.WriteByte(']')
	return b.String()
}

func literal(r rune) string {
	switch {
	case r < utf8.RuneSelf && isAlnum(byte(r)):
		return string(r)
	case strings.ContainsRune(`\^$.|?*+()[]{}/`, r):
		return `\` + string(r)
	case r >= 0x20 && r < 0x7F:
		return string(r)
	case r < 0x100:
		return fmt.Sprintf(`\x%02x`, r)
	}
	return string(r)
}

func classChar(r rune) string {
	switch {
	case r < utf8.RuneSelf && isAlnum(byte(r)):
		return string(r)
	case r < 0x100:
		return fmt.Sprintf(`\x%02x`, r)
	}
	return string(r)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
