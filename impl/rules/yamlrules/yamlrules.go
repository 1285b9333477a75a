// Package yamlrules reads source rulesets written in YAML (or JSON) into the JSON document the
// engine compiles, keeping the line and column of every JSON pointer so diagnostics can name
// file:line:column. YAML is read by the YAML 1.2 core schema at the node level (gopkg.in/yaml.v3
// nodes, never its own typing): unquoted no, on, yes, off and date-like values are strings.
// Lint reports scalars that YAML 1.1 and 1.2 read differently (YAML_NOT_PORTABLE) and number
// literals that do not travel between runtimes (NUMBER_NOT_PORTABLE).
package yamlrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Codes reported by this package.
const (
	CodeYAMLInvalid       = "YAML_INVALID"        // text that is not YAML, or YAML that is not JSON data
	CodeYAMLNotPortable   = "YAML_NOT_PORTABLE"   // an unquoted scalar YAML 1.1 and 1.2 read differently
	CodeNumberNotPortable = "NUMBER_NOT_PORTABLE" // a number a double cannot hold exactly, or with more than 15 significant digits
)

// MaxNodes bounds the nodes a document may expand to (aliases included).
const MaxNodes = 1_000_000

// Position is a 1-based line and column in the source.
type Position struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Problem is one problem of a source: a code, the JSON pointer and position it concerns, and a
// message.
type Problem struct {
	Code    string `json:"code"`
	Pointer string `json:"pointer"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// Error returns "line:column: CODE at POINTER: message".
func (p Problem) Error() string {
	return fmt.Sprintf("%d:%d: %s at %q: %s", p.Line, p.Column, p.Code, p.Pointer, p.Message)
}

// Document is a source read into JSON.
type Document struct {
	// JSON is the document as JSON text (object members in source order, duplicates kept).
	JSON      []byte
	positions map[string]Position
	numbers   []number
	portable  []Problem // YAML_NOT_PORTABLE findings, reported by Lint
}

type number struct {
	ptr, text string
	pos       Position
}

// Position returns the position of the node at ptr, or of its nearest ancestor that has one.
func (d *Document) Position(ptr string) Position {
	for {
		if p, ok := d.positions[ptr]; ok {
			return p
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			return Position{Line: 1, Column: 1}
		}
		ptr = ptr[:i]
	}
}

// Lint returns the portability problems of the source, in document order: YAML_NOT_PORTABLE for
// unquoted scalars YAML 1.1 reads differently, NUMBER_NOT_PORTABLE for number literals.
func (d *Document) Lint() []Problem {
	out := append([]Problem(nil), d.portable...)
	for _, n := range d.numbers {
		if why := NumberProblem(n.text); why != "" {
			out = append(out, Problem{Code: CodeNumberNotPortable, Pointer: n.ptr, Line: n.pos.Line, Column: n.pos.Column,
				Message: fmt.Sprintf("number %s %s; write it as a string or with fewer digits", clip(n.text), why)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Column < out[j].Column
	})
	return out
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// ReadYAML reads a YAML source by the YAML 1.2 core schema. Problems are YAML_INVALID: a syntax
// error, more than one document, a tag outside the core schema, .inf or .nan, a key that is not
// a scalar, or a document expanding to more than MaxNodes nodes.
func ReadYAML(src []byte) (*Document, []Problem) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, []Problem{{Code: CodeYAMLInvalid, Line: 1, Column: 1, Message: "the document is empty"}}
		}
		line := 1
		var te *yaml.TypeError
		msg := err.Error()
		if !errors.As(err, &te) {
			if m := lineRe.FindStringSubmatch(msg); m != nil {
				line, _ = strconv.Atoi(m[1])
			}
		}
		return nil, []Problem{{Code: CodeYAMLInvalid, Line: line, Column: 1, Message: msg}}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, []Problem{{Code: CodeYAMLInvalid, Line: extra.Line, Column: extra.Column, Message: "a ruleset file holds one YAML document"}}
	}
	r := &yreader{doc: &Document{positions: map[string]Position{}}}
	var b []byte
	if len(root.Content) == 0 {
		b = []byte("null")
	} else {
		b = r.node(nil, root.Content[0], "", Position{Line: root.Content[0].Line, Column: root.Content[0].Column}, 0)
	}
	if len(r.problems) > 0 {
		return nil, r.problems
	}
	r.doc.JSON = b
	return r.doc, nil
}

var lineRe = regexp.MustCompile(`line (\d+)`)

type yreader struct {
	doc      *Document
	problems []Problem
	nodes    int
}

func (r *yreader) fail(ptr string, pos Position, format string, args ...any) {
	r.problems = append(r.problems, Problem{Code: CodeYAMLInvalid, Pointer: ptr, Line: pos.Line, Column: pos.Column, Message: fmt.Sprintf(format, args...)})
}

func pos(n *yaml.Node) Position { return Position{Line: n.Line, Column: n.Column} }

func (r *yreader) node(b []byte, n *yaml.Node, ptr string, at Position, depth int) []byte {
	r.nodes++
	if r.nodes > MaxNodes || depth > 10000 {
		if r.nodes == MaxNodes+1 || depth == 10001 {
			r.fail(ptr, at, "the document expands to too many nodes")
		}
		return append(b, "null"...)
	}
	if _, ok := r.doc.positions[ptr]; !ok {
		r.doc.positions[ptr] = at
	}
	switch n.Kind {
	case yaml.AliasNode:
		return r.node(b, n.Alias, ptr, at, depth+1)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return append(b, "null"...)
		}
		return r.node(b, n.Content[0], ptr, at, depth+1)
	case yaml.SequenceNode:
		if n.Style&yaml.TaggedStyle != 0 && n.Tag != "!!seq" {
			r.fail(ptr, pos(n), "tag %s is not in the YAML 1.2 core schema", n.Tag)
		}
		b = append(b, '[')
		for i, c := range n.Content {
			if i > 0 {
				b = append(b, ',')
			}
			b = r.node(b, c, ptr+"/"+strconv.Itoa(i), pos(c), depth+1)
		}
		return append(b, ']')
	case yaml.MappingNode:
		if n.Style&yaml.TaggedStyle != 0 && n.Tag != "!!map" {
			r.fail(ptr, pos(n), "tag %s is not in the YAML 1.2 core schema", n.Tag)
		}
		b = append(b, '{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				r.fail(ptr, pos(k), "a mapping key must be a scalar")
				continue
			}
			if i > 0 {
				b = append(b, ',')
			}
			mp := ptr + "/" + escape(k.Value)
			r.scalarLint(k, mp)
			b = appendString(b, k.Value)
			b = append(b, ':')
			b = r.node(b, v, mp, pos(k), depth+1)
		}
		return append(b, '}')
	case yaml.ScalarNode:
		return r.scalar(b, n, ptr)
	}
	r.fail(ptr, at, "unsupported YAML node")
	return append(b, "null"...)
}

func escape(tok string) string {
	tok = strings.ReplaceAll(tok, "~", "~0")
	return strings.ReplaceAll(tok, "/", "~1")
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

const plainStyles = yaml.Style(0) | yaml.FlowStyle

func (r *yreader) scalar(b []byte, n *yaml.Node, ptr string) []byte {
	if n.Style&yaml.TaggedStyle != 0 {
		switch n.Tag {
		case "!!str":
			return appendString(b, n.Value)
		case "!!null":
			return append(b, "null"...)
		case "!!bool", "!!int", "!!float":
			kind, text := resolve(n.Value)
			want := strings.TrimPrefix(n.Tag, "!!")
			if kind != want && !(want == "float" && kind == "int") {
				r.fail(ptr, pos(n), "%q is not a %s", n.Value, want)
				return append(b, "null"...)
			}
			return r.typed(b, n, ptr, kind, text)
		default:
			r.fail(ptr, pos(n), "tag %s is not in the YAML 1.2 core schema", n.Tag)
			return append(b, "null"...)
		}
	}
	if n.Style&^plainStyles != 0 {
		return appendString(b, n.Value) // quoted, literal or folded: always a string
	}
	r.scalarLint(n, ptr)
	kind, text := resolve(n.Value)
	return r.typed(b, n, ptr, kind, text)
}

func (r *yreader) typed(b []byte, n *yaml.Node, ptr, kind, text string) []byte {
	switch kind {
	case "null":
		return append(b, "null"...)
	case "bool":
		return append(b, text...)
	case "int", "float":
		if text == "" {
			r.fail(ptr, pos(n), "%s is not a JSON number (infinities and NaN have no JSON form)", n.Value)
			return append(b, "null"...)
		}
		r.doc.numbers = append(r.doc.numbers, number{ptr: ptr, text: n.Value, pos: pos(n)})
		return append(b, text...)
	}
	return appendString(b, n.Value)
}

var (
	coreInt   = regexp.MustCompile(`^[-+]?[0-9]+$`)
	coreOct   = regexp.MustCompile(`^0o[0-7]+$`)
	coreHex   = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	coreFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	coreInf   = regexp.MustCompile(`^([-+]?\.(inf|Inf|INF)|\.nan|\.NaN|\.NAN)$`)
)

// resolve types a plain scalar by the YAML 1.2 core schema; for numbers it returns the JSON text
// ("" for infinities and NaN).
func resolve(s string) (kind, text string) {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return "null", "null"
	case "true", "True", "TRUE":
		return "bool", "true"
	case "false", "False", "FALSE":
		return "bool", "false"
	}
	switch {
	case coreInt.MatchString(s):
		return "int", jsonInt(s)
	case coreOct.MatchString(s):
		v, _ := new(big.Int).SetString(s[2:], 8)
		return "int", v.String()
	case coreHex.MatchString(s):
		v, _ := new(big.Int).SetString(s[2:], 16)
		return "int", v.String()
	case coreFloat.MatchString(s):
		return "float", jsonFloat(s)
	case coreInf.MatchString(s):
		return "float", ""
	}
	return "str", s
}

func jsonInt(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return "0"
	}
	if neg {
		return "-" + s
	}
	return s
}

func jsonFloat(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	ip, fp, _ := strings.Cut(mant, ".")
	ip = strings.TrimLeft(ip, "0")
	if ip == "" {
		ip = "0"
	}
	out := ip
	if fp != "" {
		out += "." + fp
	}
	if exp != "" {
		out += "e" + exp
	}
	if neg {
		out = "-" + out
	}
	return out
}

var (
	y11Bool      = regexp.MustCompile(`^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$`)
	y11Int       = regexp.MustCompile(`^([-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+)$`)
	y11Float     = regexp.MustCompile(`^([-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$`)
	y11Timestamp = regexp.MustCompile(`^([0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]*)?(([ \t]*)Z|[-+][0-9]{1,2}(:[0-9]{2})?)?)$`)
)

// Portability returns why YAML 1.1 reads the plain scalar s differently from the YAML 1.2 core
// schema, or "" when both read it alike.
func Portability(s string) string {
	kind12, text12 := resolve(s)
	switch {
	case s == "<<":
		return "YAML 1.1 reads it as a merge key, YAML 1.2 as the string \"<<\""
	case s == "=":
		return "YAML 1.1 reads it as a value key, YAML 1.2 as a string"
	case y11Bool.MatchString(s):
		return "YAML 1.1 reads it as a boolean, YAML 1.2 as a string"
	case y11Timestamp.MatchString(s):
		return "YAML 1.1 reads it as a timestamp, YAML 1.2 as a string"
	case y11Int.MatchString(s):
		if kind12 != "int" {
			return "YAML 1.1 reads it as an integer, YAML 1.2 as a " + kindName(kind12)
		}
		if v11 := int11(s); v11 != text12 {
			return "YAML 1.1 reads it as the integer " + v11 + ", YAML 1.2 as " + text12
		}
	case y11Float.MatchString(s):
		if kind12 != "float" {
			if kind12 == "int" {
				return ""
			}
			return "YAML 1.1 reads it as a number, YAML 1.2 as a " + kindName(kind12)
		}
	default:
		if kind12 == "int" || kind12 == "float" {
			return "YAML 1.2 reads it as a number, YAML 1.1 as a string"
		}
	}
	return ""
}

func kindName(k string) string {
	if k == "str" {
		return "string"
	}
	return k
}

// int11 returns the decimal value YAML 1.1 gives an integer scalar.
func int11(s string) string {
	t := strings.ReplaceAll(s, "_", "")
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimLeft(t, "+-")
	v := new(big.Int)
	switch {
	case strings.HasPrefix(t, "0b"):
		v.SetString(t[2:], 2)
	case strings.HasPrefix(t, "0x"):
		v.SetString(t[2:], 16)
	case strings.Contains(t, ":"):
		for _, part := range strings.Split(t, ":") {
			p, _ := strconv.Atoi(part)
			v.Mul(v, big.NewInt(60))
			v.Add(v, big.NewInt(int64(p)))
		}
	case len(t) > 1 && t[0] == '0':
		v.SetString(t[1:], 8)
	default:
		v.SetString(t, 10)
	}
	if neg {
		v.Neg(v)
	}
	return v.String()
}

func (r *yreader) scalarLint(n *yaml.Node, ptr string) {
	if n.Style&^plainStyles != 0 {
		return
	}
	if why := Portability(n.Value); why != "" {
		r.doc.portable = append(r.doc.portable, Problem{Code: CodeYAMLNotPortable, Pointer: ptr, Line: n.Line, Column: n.Column,
			Message: fmt.Sprintf("unquoted %q: %s; quote it", n.Value, why)})
	}
}

// NumberProblem returns why a number literal does not travel between runtimes, or "": more than
// 15 significant digits, beyond the range of a double, or a value the nearest double does not
// hold exactly (its shortest round-trip form is a different decimal).
func NumberProblem(text string) string {
	t := strings.TrimLeft(text, "+-")
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0o") {
		return ""
	}
	t = strings.ReplaceAll(t, "_", "")
	mant := t
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		mant = t[:i]
	}
	digits := strings.Replace(mant, ".", "", 1)
	digits = strings.TrimLeft(digits, "0")
	digits = strings.TrimRight(digits, "0")
	if len(digits) > 15 {
		return fmt.Sprintf("has %d significant digits (at most 15 are portable)", len(digits))
	}
	jt := jsonFloat(t)
	f, err := strconv.ParseFloat(jt, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && f != 0 {
			return "is beyond the range of a double"
		}
	}
	want, ok := new(big.Rat).SetString(jt)
	if !ok {
		return ""
	}
	got, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if got == nil || want.Cmp(got) != 0 {
		return "is not held exactly by a double (it reads as " + strconv.FormatFloat(f, 'g', -1, 64) + ")"
	}
	return ""
}
