package runner

import (
	"fmt"
	"strings"
)

// TagExpr is a compiled Cucumber tag expression such as "@smoke and not (@slow or @wip)".
type TagExpr struct {
	source string
	eval   func(tags map[string]bool) bool
}

// ParseTagExpr compiles a tag expression: tags (@name), not, and, or and parentheses, with not
// binding tighter than and, and tighter than or. An empty expression matches every scenario.
// A backslash escapes a space or parenthesis inside a tag name.
func ParseTagExpr(src string) (*TagExpr, error) {
	toks, err := tagTokens(src)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return &TagExpr{source: src, eval: func(map[string]bool) bool { return true }}, nil
	}
	p := &tagParser{src: src, toks: toks}
	f, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, p.fail("unexpected %q", p.toks[p.pos].text)
	}
	return &TagExpr{source: src, eval: f}, nil
}

// String returns the source.
func (e *TagExpr) String() string { return e.source }

// Match reports whether a scenario with these tags is selected.
func (e *TagExpr) Match(tags []string) bool {
	set := make(map[string]bool, len(tags))
	for _, t := range tags {
		set[t] = true
	}
	return e.eval(set)
}

// TagExprError is a tag expression that does not compile: Column (1-based, in characters) is
// where the parser gave up.
type TagExprError struct {
	Source string
	Column int
	Msg    string
}

func (e *TagExprError) Error() string {
	return fmt.Sprintf("tag expression %q, column %d: %s", e.Source, e.Column, e.Msg)
}

// tagTok is a token of a tag expression and its 1-based column.
type tagTok struct {
	text string
	col  int
}

func tagTokens(src string) ([]tagTok, error) {
	var toks []tagTok
	var cur strings.Builder
	curCol := 0
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, tagTok{cur.String(), curCol})
			cur.Reset()
		}
	}
	rs := []rune(src)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if cur.Len() == 0 {
			curCol = i + 1
		}
		switch {
		case r == '\\':
			if i+1 >= len(rs) {
				return nil, &TagExprError{Source: src, Column: i + 1, Msg: "nothing to escape at the end"}
			}
			i++
			cur.WriteRune(rs[i])
		case r == '(' || r == ')':
			flush()
			toks = append(toks, tagTok{string(r), i + 1})
		case r == ' ' || r == '\t' || r == '\n':
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return toks, nil
}

type tagParser struct {
	src  string
	toks []tagTok
	pos  int
}

func (p *tagParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos].text
	}
	return ""
}

// fail returns the error at the current token (or just past the end).
func (p *tagParser) fail(format string, args ...any) error {
	col := len([]rune(p.src)) + 1
	if p.pos < len(p.toks) {
		col = p.toks[p.pos].col
	}
	return &TagExprError{Source: p.src, Column: col, Msg: fmt.Sprintf(format, args...)}
}
func (p *tagParser) or() (func(map[string]bool) bool, error) {
	left, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek() == "or" {
		p.pos++
		right, err := p.and()
		if err != nil {
			return nil, err
		}
		l := left
		left = func(t map[string]bool) bool { return l(t) || right(t) }
	}
	return left, nil
}

func (p *tagParser) and() (func(map[string]bool) bool, error) {
	left, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.peek() == "and" {
		p.pos++
		right, err := p.not()
		if err != nil {
			return nil, err
		}
		l := left
		left = func(t map[string]bool) bool { return l(t) && right(t) }
	}
	return left, nil
}

func (p *tagParser) not() (func(map[string]bool) bool, error) {
	if p.peek() == "not" {
		p.pos++
		inner, err := p.not()
		if err != nil {
			return nil, err
		}
		return func(t map[string]bool) bool { return !inner(t) }, nil
	}
	return p.primary()
}

func (p *tagParser) primary() (func(map[string]bool) bool, error) {
	tok := p.peek()
	switch {
	case tok == "":
		return nil, p.fail("unexpected end, expected a tag")
	case tok == "(":
		p.pos++
		inner, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, p.fail("missing ')'")
		}
		p.pos++
		return inner, nil
	case strings.HasPrefix(tok, "@") && len(tok) > 1:
		p.pos++
		return func(t map[string]bool) bool { return t[tok] }, nil
	default:
		return nil, p.fail("expected a tag starting with @, 'not' or '(', found %q", tok)
	}
}
