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
		return nil, fmt.Errorf("tag expression %q: unexpected %q", src, p.toks[p.pos])
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

func tagTokens(src string) ([]string, error) {
	var toks []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	rs := []rune(src)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\\':
			if i+1 >= len(rs) {
				return nil, fmt.Errorf("tag expression %q: nothing to escape at the end", src)
			}
			i++
			cur.WriteRune(rs[i])
		case r == '(' || r == ')':
			flush()
			toks = append(toks, string(r))
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
	toks []string
	pos  int
}

func (p *tagParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
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
		return nil, fmt.Errorf("tag expression %q: unexpected end, expected a tag", p.src)
	case tok == "(":
		p.pos++
		inner, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, fmt.Errorf("tag expression %q: missing ')'", p.src)
		}
		p.pos++
		return inner, nil
	case strings.HasPrefix(tok, "@") && len(tok) > 1:
		p.pos++
		return func(t map[string]bool) bool { return t[tok] }, nil
	default:
		return nil, fmt.Errorf("tag expression %q: expected a tag starting with @, 'not' or '(', found %q", p.src, tok)
	}
}
