package pattern

import (
	"strings"
	"unicode/utf8"
)

// Refusal messages live here so that their wording stays consistent; only Code and Offset are
// normative, messages are not.
const (
	msgInvalidUTF8     = "pattern is not valid UTF-8"
	msgTooLong         = "pattern longer than 1000 code points"
	msgEmptyAlt        = "empty alternative or group; write x? for an optional x"
	msgUnmatchedClose  = "unmatched ')'; write \\) for a literal parenthesis"
	msgMissingClose    = "missing ')'"
	msgGroupSyntax     = "only (...) and (?:...) groups are portable; lookaround, named groups, atomic groups, comments and inline flags are not"
	msgNothingToRepeat = "quantifier without something to repeat (anchors cannot be quantified)"
	msgDoubleQuant     = "quantifier after a quantifier; possessive (*+) and doubled quantifiers are not portable"
	msgBraceLiteral    = "malformed count; a count is {n}, {n,} or {n,m} with decimal numbers without leading zeros; write \\{ and \\} for literal braces"
	msgCountTooLarge   = "count larger than 1000"
	msgCountOrder      = "count {n,m} with n greater than m"
	msgNestedUnbounded = "a repeating group must not contain an unbounded quantifier (*, + or {n,})"
	msgProduct         = "nested counts multiplied exceed 1000"
	msgSize            = "expanded size (every count applied to what it repeats) exceeds 1000"
	msgBracketLiteral  = "']' outside a class must be written \\]"
	msgEscape          = "escape not in the portable subset (only \\d \\D \\w \\W \\n \\r \\t \\f \\xHH and escaped ^ $ \\ . * + ? ( ) [ ] { } | /)"
	msgClassEscape     = "escape not in the portable subset inside a class (only \\d \\D \\w \\W \\n \\r \\t \\f \\xHH and escaped ^ $ \\ . * + ? ( ) [ ] { } | / -)"
	msgTrailingBSlash  = "pattern ends with a lone backslash"
	msgHex             = "\\x must be followed by exactly two hexadecimal digits"
	msgMissingBracket  = "missing ']'"
	msgEmptyClass      = "empty class"
	msgClassBracket    = "'[' inside a class must be written \\["
	msgClassDash       = "'-' inside a class must be first, last or written \\-"
	msgClassRangeEnd   = "a class escape (\\d \\D \\w \\W) cannot bound a range"
	msgClassRange      = "range out of order"
	msgClassDouble     = "doubled '&&', '||' or '~~' in a class is a set operation in some engines"
)

// bailout carries a refusal from deep inside the parser to translate, which recovers it.
type bailout struct{ err *Error }

// info summarises a parsed subexpression for the repetition rules.
type info struct {
	unbounded bool // contains *, + or {n,}
	product   int  // largest product of nested counts on any path; 1 when there is none
	size      int  // expanded size, capped at MaxCount+1
}

type parser struct {
	src   []rune
	pos   int
	depth int // open groups
	out   strings.Builder
}

// translate validates src and returns the equivalent Go regexp source. It returns an *Error
// for a pattern outside the portable subset.
func translate(src string) (goSrc string, err error) {
	runes, e := decode(src)
	if e != nil {
		return "", e
	}
	p := &parser{src: runes}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			goSrc, err = "", b.err
		}
	}()
	p.out.WriteString("(?s:")
	if len(runes) > 0 {
		inf := p.alternation()
		if p.pos < len(p.src) { // only ')' stops an alternation early
			p.fail(p.pos, msgUnmatchedClose)
		}
		if inf.size > MaxCount {
			p.fail(0, msgSize)
		}
	}
	p.out.WriteString(")")
	return p.out.String(), nil
}

// decode splits src into code points, refusing invalid UTF-8 (which includes encoded
// surrogates) and patterns longer than MaxPatternCodePoints, whichever comes first.
func decode(src string) ([]rune, *Error) {
	runes := make([]rune, 0, len(src))
	for i := 0; i < len(src); {
		if len(runes) == MaxPatternCodePoints {
			return nil, &Error{Code: CodeNotPortable, Offset: MaxPatternCodePoints, Message: msgTooLong}
		}
		r, size := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && size <= 1 {
			return nil, &Error{Code: CodeNotPortable, Offset: len(runes), Message: msgInvalidUTF8}
		}
		runes = append(runes, r)
		i += size
	}
	return runes, nil
}

func (p *parser) fail(offset int, msg string) {
	panic(bailout{&Error{Code: CodeNotPortable, Offset: offset, Message: msg}})
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

// peek returns the current code point, or -1 at the end.
func (p *parser) peek() rune {
	if p.eof() {
		return -1
	}
	return p.src[p.pos]
}

func isQuantifierStart(r rune) bool {
	return r == '*' || r == '+' || r == '?' || r == '{'
}

// alternation parses branch { "|" branch } and stops at the end or before ')'.
func (p *parser) alternation() info {
	inf := p.branch()
	for p.peek() == '|' {
		p.pos++
		p.out.WriteByte('|')
		inf = merge(inf, p.branch())
	}
	return inf
}

// merge combines two subexpressions in sequence or in alternation.
func merge(a, b info) info {
	return info{
		unbounded: a.unbounded || b.unbounded,
		product:   max(a.product, b.product),
		size:      min(a.size+b.size, MaxCount+1),
	}
}

// branch parses piece { piece }; an empty branch is refused.
func (p *parser) branch() info {
	inf := info{product: 1}
	n := 0
	for !p.eof() && p.peek() != '|' && p.peek() != ')' {
		inf = merge(inf, p.piece())
		n++
	}
	if n == 0 {
		if p.depth == 0 && p.peek() == ')' {
			p.fail(p.pos, msgUnmatchedClose)
		}
		p.fail(p.pos, msgEmptyAlt)
	}
	return inf
}

// piece parses an anchor, or an atom with an optional quantifier.
func (p *parser) piece() info {
	c := p.peek()
	switch c {
	case '^', '$':
		p.pos++
		if c == '^' {
			p.out.WriteString(`\A`)
		} else {
			p.out.WriteString(`\z`)
		}
		if isQuantifierStart(p.peek()) {
			p.fail(p.pos, msgNothingToRepeat)
		}
		return info{product: 1, size: 0}
	case '*', '+', '?', '{':
		p.fail(p.pos, msgNothingToRepeat)
	}
	atom, isGroup := p.atom()
	if !isQuantifierStart(p.peek()) {
		return atom
	}
	return p.quantifier(atom, isGroup)
}

// atom parses one atom and reports whether it is a group.
func (p *parser) atom() (info, bool) {
	start := p.pos
	c := p.src[p.pos]
	switch c {
	case '(':
		p.pos++
		if p.peek() == '?' {
			if p.pos+1 < len(p.src) && p.src[p.pos+1] == ':' {
				p.pos += 2
			} else {
				p.fail(start, msgGroupSyntax)
			}
		}
		// Capturing groups are compiled as non-capturing: Match never reports captures.
		p.out.WriteString("(?:")
		p.depth++
		inf := p.alternation()
		p.depth--
		if p.eof() {
			p.fail(p.pos, msgMissingClose)
		}
		p.pos++ // ')'
		p.out.WriteByte(')')
		return inf, true
	case ')':
		p.fail(start, msgUnmatchedClose)
	case ']':
		p.fail(start, msgBracketLiteral)
	case '}':
		p.fail(start, msgBraceLiteral)
	case '[':
		p.class()
	case '\\':
		p.escape(false)
	default: // '.' and literal code points read the same in Go
		p.pos++
		p.out.WriteRune(c)
	}
	return info{product: 1, size: 1}, false
}

// quantifier parses a quantifier after atom and applies the repetition rules.
func (p *parser) quantifier(atom info, isGroup bool) info {
	qpos := p.pos
	var lo, hi int // hi < 0: unbounded
	switch p.src[p.pos] {
	case '*':
		lo, hi = 0, -1
		p.pos++
	case '+':
		lo, hi = 1, -1
		p.pos++
	case '?':
		lo, hi = 0, 1
		p.pos++
	case '{':
		lo, hi = p.count(qpos)
	}
	// The value of a quantifier: m for {n,m}, n for {n}, n but at least 1 for {n,}, 1 for
	// *, + and ?. This is also how Go's parser bounds nested repetition.
	factor := 1
	if p.src[qpos] == '{' {
		factor = hi
		if hi < 0 {
			factor = max(lo, 1)
		}
	}
	// Checked before what follows the quantifier, so that the leftmost refusal is reported.
	if isGroup && atom.unbounded && (hi < 0 || hi >= 2) {
		p.fail(qpos, msgNestedUnbounded)
	}
	product := atom.product * factor
	if product > MaxCount {
		p.fail(qpos, msgProduct)
	}
	p.out.WriteString(string(p.src[qpos:p.pos]))
	if p.peek() == '?' { // lazy: the same yes/no answer as greedy
		p.pos++
		p.out.WriteByte('?')
	}
	if isQuantifierStart(p.peek()) {
		p.fail(p.pos, msgDoubleQuant)
	}
	return info{
		unbounded: atom.unbounded || hi < 0,
		product:   max(product, 1),
		size:      min(atom.size*factor, MaxCount+1),
	}
}

// count parses {n}, {n,} or {n,m} at qpos; every refusal is reported at the '{'.
func (p *parser) count(qpos int) (lo, hi int) {
	p.pos++ // '{'
	lo, ok := p.number()
	if !ok {
		p.fail(qpos, msgBraceLiteral)
	}
	hi = lo
	if p.peek() == ',' {
		p.pos++
		hi = -1
		if p.peek() != '}' {
			if hi, ok = p.number(); !ok {
				p.fail(qpos, msgBraceLiteral)
			}
		}
	}
	if p.peek() != '}' {
		p.fail(qpos, msgBraceLiteral)
	}
	p.pos++
	if lo > MaxCount || hi > MaxCount {
		p.fail(qpos, msgCountTooLarge)
	}
	if hi >= 0 && lo > hi {
		p.fail(qpos, msgCountOrder)
	}
	return lo, hi
}

// number parses "0" or a run of ASCII digits without a leading zero; values above MaxCount
// are returned as MaxCount+1 so that long runs cannot overflow.
func (p *parser) number() (int, bool) {
	start := p.pos
	n := 0
	for !p.eof() && p.peek() >= '0' && p.peek() <= '9' {
		if n <= MaxCount {
			n = n*10 + int(p.peek()-'0')
		}
		p.pos++
	}
	digits := p.pos - start
	if digits == 0 || (digits > 1 && p.src[start] == '0') {
		return 0, false
	}
	return min(n, MaxCount+1), true
}

// escape parses a backslash escape outside (inClass false) or inside a class and reports
// whether it is a class escape (\d \D \w \W). Outside a class '-' may not be escaped.
func (p *parser) escape(inClass bool) (cp rune, isClassEscape bool) {
	start := p.pos
	p.pos++ // '\'
	if p.eof() {
		p.fail(start, msgTrailingBSlash)
	}
	c := p.src[p.pos]
	p.pos++
	switch c {
	case 'd', 'D', 'w', 'W':
		p.out.WriteByte('\\')
		p.out.WriteRune(c)
		return 0, true
	case 'n':
		cp = '\n'
	case 'r':
		cp = '\r'
	case 't':
		cp = '\t'
	case 'f':
		cp = '\f'
	case 'x':
		if p.pos+2 > len(p.src) || !isHex(p.src[p.pos]) || !isHex(p.src[p.pos+1]) {
			p.fail(start, msgHex)
		}
		cp = hexVal(p.src[p.pos])<<4 | hexVal(p.src[p.pos+1])
		p.pos += 2
	case '^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '/':
		cp = c
	case '-':
		if !inClass {
			p.fail(start, msgEscape)
		}
		cp = c
	default:
		if inClass {
			p.fail(start, msgClassEscape)
		}
		p.fail(start, msgEscape)
	}
	// Go reads every accepted escape the same way; emit it unchanged.
	p.out.WriteString(string(p.src[start:p.pos]))
	return cp, false
}

func isHex(r rune) bool {
	return (r >= '0' && r <= '9') || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F')
}

func hexVal(r rune) rune {
	switch {
	case r >= '0' && r <= '9':
		return r - '0'
	case r >= 'a' && r <= 'f':
		return r - 'a' + 10
	default:
		return r - 'A' + 10
	}
}

// class parses "[" ["^"] body "]". An unescaped '-' is a literal only as the first item of
// the body (after any '^') or the last (just before ']'); two unescaped '-' are never adjacent.
func (p *parser) class() {
	p.pos++
	p.out.WriteByte('[')
	if p.peek() == '^' {
		p.pos++
		p.out.WriteByte('^')
	}
	first := p.pos
	for {
		if p.eof() {
			p.fail(p.pos, msgMissingBracket)
		}
		c := p.peek()
		next := rune(-1)
		if p.pos+1 < len(p.src) {
			next = p.src[p.pos+1]
		}
		if c == ']' {
			if p.pos == first {
				p.fail(p.pos, msgEmptyClass)
			}
			p.pos++
			p.out.WriteByte(']')
			return
		}
		if c == '-' {
			if next < 0 {
				p.fail(len(p.src), msgMissingBracket)
			}
			if next == '-' {
				p.fail(p.pos+1, msgClassDash)
			}
			if p.pos == first || next == ']' {
				p.pos++
				p.out.WriteString(`\-`)
				continue
			}
			p.fail(p.pos, msgClassDash)
		}
		lo, loEsc, loPos := p.classAtom()
		if p.peek() != '-' || p.pos+1 >= len(p.src) || p.src[p.pos+1] == ']' {
			continue
		}
		// A range lo-hi.
		if loEsc {
			p.fail(loPos, msgClassRangeEnd)
		}
		p.pos++
		p.out.WriteByte('-')
		if p.peek() == '-' {
			p.fail(p.pos, msgClassDash)
		}
		hi, hiEsc, hiPos := p.classAtom()
		if hiEsc {
			p.fail(hiPos, msgClassRangeEnd)
		}
		if lo > hi {
			p.fail(loPos, msgClassRange)
		}
	}
}

// classAtom parses one class character or escape and returns its code point, whether it is
// a class escape, and its offset.
func (p *parser) classAtom() (rune, bool, int) {
	start := p.pos
	c := p.src[p.pos]
	switch c {
	case '\\':
		cp, isEsc := p.escape(true)
		return cp, isEsc, start
	case '[':
		p.fail(start, msgClassBracket)
	case '&', '|', '~':
		if p.pos+1 < len(p.src) && p.src[p.pos+1] == c {
			p.fail(p.pos+1, msgClassDouble)
		}
	}
	p.pos++
	p.out.WriteRune(c)
	return c, false, start
}
