package steplib

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Expression is a compiled Cucumber Expression: literal text, the parameter types {string} {int}
// {float} {word} and {}, optional text "(s)", and alternatives "a/b".
type Expression struct {
	source string
	re     *regexp.Regexp
	types  []string
	// prefix is the literal text every match starts with: a step is matched against every
	// definition, and most differ from it in their first words.
	prefix string
}

// Arg is one parameter value matched by an expression.
type Arg struct {
	// Type is the parameter type's name: "string", "int", "float", "word" or "" for {}.
	Type string
	// Raw is the matched text (with the quotes for {string}).
	Raw string
	// Value is the transformed value: string for string, word and {}, int64 for int, float64 for float.
	// A number that does not fit keeps its Raw text as a string.
	Value any
}

// ExpressionError reports an invalid Cucumber Expression; Offset is the rune offset of the culprit.
type ExpressionError struct {
	Expression string
	Offset     int
	Message    string
}

func (e *ExpressionError) Error() string {
	return fmt.Sprintf("cucumber expression %q, offset %d: %s", e.Expression, e.Offset, e.Message)
}

// parameterTypes maps each built-in parameter type to its regular expression (no capturing groups).
var parameterTypes = map[string]string{
	"int":    `-?\d+`,
	"float":  `[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?`,
	"word":   `[^\s]+`,
	"string": `"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`,
	"":       `.*`,
}

// CompileExpression compiles a Cucumber Expression; it refuses unknown parameter types, parameters
// inside optionals or alternatives, empty optionals or alternatives, and bad escapes.
func CompileExpression(source string) (*Expression, error) {
	p := &exprParser{src: []rune(source), source: source}
	nodes, err := p.parse()
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("^")
	var types []string
	for _, n := range nodes {
		if err := p.emit(&b, n, &types); err != nil {
			return nil, err
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, &ExpressionError{Expression: source, Message: "compiles to an invalid regular expression: " + err.Error()}
	}
	prefix, _ := re.LiteralPrefix()
	return &Expression{source: source, re: re, types: types, prefix: prefix}, nil
}

// MustCompileExpression is CompileExpression that panics on an invalid expression; for built-in tables.
func MustCompileExpression(source string) *Expression {
	e, err := CompileExpression(source)
	if err != nil {
		panic(err)
	}
	return e
}

// String returns the expression's source.
func (e *Expression) String() string { return e.source }

// Regexp returns the anchored regular expression the expression compiles to.
func (e *Expression) Regexp() string { return e.re.String() }

// ParameterTypes returns the expression's parameter type names in order.
func (e *Expression) ParameterTypes() []string { return append([]string(nil), e.types...) }

// Match returns the arguments when text matches the whole expression, and false otherwise.
func (e *Expression) Match(text string) ([]Arg, bool) {
	if !strings.HasPrefix(text, e.prefix) {
		return nil, false
	}
	m := e.re.FindStringSubmatch(text)
	if m == nil {
		return nil, false
	}
	args := make([]Arg, len(e.types))
	for i, t := range e.types {
		raw := m[i+1]
		args[i] = Arg{Type: t, Raw: raw, Value: transform(t, raw)}
	}
	return args, true
}

func transform(typ, raw string) any {
	switch typ {
	case "int":
		if v, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return v
		}
		return raw
	case "float":
		if v, err := strconv.ParseFloat(raw, 64); err == nil {
			return v
		}
		return raw
	case "string":
		inner := raw[1 : len(raw)-1]
		if raw[0] == '"' {
			return strings.ReplaceAll(inner, `\"`, `"`)
		}
		return strings.ReplaceAll(inner, `\'`, `'`)
	default:
		return raw
	}
}

type nodeKind int

const (
	nText nodeKind = iota
	nSpace
	nOptional
	nParam
	nAlternation
)

type exprNode struct {
	kind   nodeKind
	text   string       // nText, nSpace, nParam (the type name)
	offset int          // rune offset in the source
	kids   []exprNode   // nOptional: its text
	alts   [][]exprNode // nAlternation: each alternative's nodes
}

type exprParser struct {
	source string
	src    []rune
	pos    int
}

func (p *exprParser) fail(offset int, format string, args ...any) error {
	return &ExpressionError{Expression: p.source, Offset: offset, Message: fmt.Sprintf(format, args...)}
}

// item is a lexical piece before alternations are grouped.
type item struct {
	node  exprNode
	slash bool // an unescaped '/'
}

// parse reads the source into items, then groups whitespace-bounded runs containing '/' into alternations.
func (p *exprParser) parse() ([]exprNode, error) {
	var items []item
	var text strings.Builder
	textStart := 0
	flush := func() {
		if text.Len() > 0 {
			items = append(items, item{node: exprNode{kind: nText, text: text.String(), offset: textStart}})
			text.Reset()
		}
	}
	for p.pos < len(p.src) {
		r := p.src[p.pos]
		switch {
		case r == '\\':
			c, err := p.escape()
			if err != nil {
				return nil, err
			}
			if text.Len() == 0 {
				textStart = p.pos - 2
			}
			text.WriteRune(c)
		case unicode.IsSpace(r):
			flush()
			start := p.pos
			for p.pos < len(p.src) && unicode.IsSpace(p.src[p.pos]) {
				p.pos++
			}
			items = append(items, item{node: exprNode{kind: nSpace, text: string(p.src[start:p.pos]), offset: start}})
		case r == '(':
			flush()
			n, err := p.optional()
			if err != nil {
				return nil, err
			}
			items = append(items, item{node: n})
		case r == '{':
			flush()
			n, err := p.parameter()
			if err != nil {
				return nil, err
			}
			items = append(items, item{node: n})
		case r == '/':
			flush()
			items = append(items, item{slash: true, node: exprNode{offset: p.pos}})
			p.pos++
		default:
			if text.Len() == 0 {
				textStart = p.pos
			}
			text.WriteRune(r)
			p.pos++
		}
	}
	flush()
	return p.group(items)
}

func (p *exprParser) escape() (rune, error) {
	at := p.pos
	p.pos++
	if p.pos >= len(p.src) {
		return 0, p.fail(at, "the end of the expression can not be escaped")
	}
	c := p.src[p.pos]
	if !strings.ContainsRune(`(){}/\`, c) && !unicode.IsSpace(c) {
		return 0, p.fail(at, `only the characters '{', '}', '(', ')', '\', '/' and whitespace can be escaped; '\%c' can not`, c)
	}
	p.pos++
	return c, nil
}

func (p *exprParser) optional() (exprNode, error) {
	open := p.pos
	p.pos++
	var text strings.Builder
	for p.pos < len(p.src) {
		r := p.src[p.pos]
		switch r {
		case ')':
			p.pos++
			if text.Len() == 0 {
				return exprNode{}, p.fail(open, "an optional must contain some text")
			}
			return exprNode{kind: nOptional, offset: open, kids: []exprNode{{kind: nText, text: text.String(), offset: open + 1}}}, nil
		case '(':
			return exprNode{}, p.fail(p.pos, "an optional may not contain another optional")
		case '{':
			return exprNode{}, p.fail(p.pos, "an optional may not contain a parameter type")
		case '\\':
			c, err := p.escape()
			if err != nil {
				return exprNode{}, err
			}
			text.WriteRune(c)
		default:
			text.WriteRune(r)
			p.pos++
		}
	}
	return exprNode{}, p.fail(open, "the '(' does not have a matching ')'")
}

func (p *exprParser) parameter() (exprNode, error) {
	open := p.pos
	p.pos++
	var name strings.Builder
	for p.pos < len(p.src) {
		r := p.src[p.pos]
		switch r {
		case '}':
			p.pos++
			n := name.String()
			if _, ok := parameterTypes[n]; !ok {
				return exprNode{}, p.fail(open, "undefined parameter type {%s}; use {string}, {int}, {float}, {word} or {}", n)
			}
			return exprNode{kind: nParam, text: n, offset: open}, nil
		case '{', '(', ')', '/', '\\':
			return exprNode{}, p.fail(p.pos, "a parameter type name may not contain %q", r)
		default:
			name.WriteRune(r)
			p.pos++
		}
	}
	return exprNode{}, p.fail(open, "the '{' does not have a matching '}'")
}

// group turns every run of items bounded by whitespace or parameters that contains a '/' into one
// alternation; parameters therefore never belong to an alternative.
func (p *exprParser) group(items []item) ([]exprNode, error) {
	var out []exprNode
	i := 0
	for i < len(items) {
		it := items[i]
		if !it.slash && (it.node.kind == nSpace || it.node.kind == nParam) {
			out = append(out, it.node)
			i++
			continue
		}
		j := i
		hasSlash := false
		for j < len(items) && (items[j].slash || (items[j].node.kind != nSpace && items[j].node.kind != nParam)) {
			hasSlash = hasSlash || items[j].slash
			j++
		}
		run := items[i:j]
		if !hasSlash {
			for _, r := range run {
				out = append(out, r.node)
			}
			i = j
			continue
		}
		alt := exprNode{kind: nAlternation, offset: run[0].node.offset}
		var cur []exprNode
		curStart := run[0].node.offset
		closeAlt := func(end int) error {
			if len(cur) == 0 {
				return p.fail(curStart, "an alternative may not be empty")
			}
			onlyOptionals := true
			for _, n := range cur {
				if n.kind != nOptional {
					onlyOptionals = false
				}
			}
			if onlyOptionals {
				return p.fail(curStart, "an alternative may not exclusively contain optionals")
			}
			alt.alts = append(alt.alts, cur)
			cur = nil
			curStart = end + 1
			return nil
		}
		for _, r := range run {
			if r.slash {
				if err := closeAlt(r.node.offset); err != nil {
					return nil, err
				}
				continue
			}
			cur = append(cur, r.node)
		}
		if err := closeAlt(0); err != nil {
			return nil, err
		}
		out = append(out, alt)
		i = j
	}
	return out, nil
}

func (p *exprParser) emit(b *strings.Builder, n exprNode, types *[]string) error {
	switch n.kind {
	case nText, nSpace:
		b.WriteString(regexp.QuoteMeta(n.text))
	case nOptional:
		b.WriteString("(?:")
		for _, k := range n.kids {
			b.WriteString(regexp.QuoteMeta(k.text))
		}
		b.WriteString(")?")
	case nParam:
		b.WriteString("(")
		b.WriteString(parameterTypes[n.text])
		b.WriteString(")")
		*types = append(*types, n.text)
	case nAlternation:
		b.WriteString("(?:")
		for i, alt := range n.alts {
			if i > 0 {
				b.WriteString("|")
			}
			for _, k := range alt {
				if err := p.emit(b, k, types); err != nil {
					return err
				}
			}
		}
		b.WriteString(")")
	}
	return nil
}
