// Package syntax is the front of the expression compiler: it parses an expression written as JSON
// (a jsonv tree, spec/v1/expressions.md) once into a typed tree whose nodes carry their JSON
// pointers, and analyses the function definitions of a unit and its expressions in one pass
// (Analyze, Analysis.Expr): every load diagnostic of an expression (names, arity, scopes, custom
// operators, literal patterns, the definitions, the call graph and its cycles, call depth), and
// what each uses (calls, roots read, custom operators). Package machine compiles a checked tree
// into closures; package rules reads the analysis. Nothing after this package looks at the JSON
// form of an expression again.
//
// Parsing never fails: a node that does not parse is a Bad node holding its diagnostics, which
// the analysis reports when (and only when) its walk reaches the node: an argument the walk does
// not look at, such as the body of an iteration whose name is refused, reports nothing.
package syntax

import (
	"strconv"
	"strings"

	"github.com/sdods/sdods/engine/internal/diag"
)

// MaxDepth bounds the nesting of an expression or function body (the argument of literal
// included).
const MaxDepth = 128

// Kind is the kind of a node.
type Kind uint8

// The node kinds.
const (
	// Null, Bool, Number and String are JSON scalars, constant expressions.
	Null Kind = iota
	Bool
	Number
	String
	// List is a JSON array: a list of expressions (Args), evaluated in order.
	List
	// Var is {"var": "root.a.0"}: Text is the path, Root its first segment, Segs the others.
	Var
	// Op is {"op": Text, "args": Args}: a core or custom (x-) operator application. The one
	// argument of literal is a Data node.
	Op
	// Call is {"fn": Text, "args": Args}: a call of a function of the ruleset.
	Call
	// Data is the argument of literal: a JSON value taken as data, not as an expression. Value
	// holds it (nil, bool, float64, string, []any, map[string]any), Errs its problems (a
	// number out of range, a member named twice, nesting too deep), Text a key of the JSON
	// as written (see Key).
	Data
	// Bad is a node that does not parse; Errs says why.
	Bad
)

// Expr is one node of an expression.
type Expr struct {
	Kind Kind
	Ptr  string // JSON pointer of the node in its document
	Bool bool   // Bool
	Num  float64
	// Text: the number as written (Number), the string (String), the path (Var), the operator
	// (Op) or function name (Call)
	Text  string
	Root  string   // Var
	Segs  []string // Var: the segments after the root
	Args  []*Expr  // List items, Op and Call arguments
	Value any      // Data
	Errs  diag.List
	nodes int // JSON values the node is written with (see Size)
}

// IsCustom reports whether an Op node applies a custom operator (x-...).
func (e *Expr) IsCustom() bool {
	return e.Kind == Op && len(e.Text) > 2 && e.Text[:2] == "x-"
}

// IsLiteral reports whether an Op node is literal(data): its argument is data.
func (e *Expr) IsLiteral() bool {
	return e.Kind == Op && e.Text == "literal" && len(e.Args) == 1 && e.Args[0].Kind == Data
}

// StringLiteral reports whether e is written as a string literal: a JSON string, or
// {"op": "literal", "args": [string]}.
func (e *Expr) StringLiteral() bool {
	if e == nil {
		return false
	}
	if e.Kind == String {
		return true
	}
	if !e.IsLiteral() {
		return false
	}
	_, ok := e.Args[0].Value.(string)
	return ok && len(e.Args[0].Errs) == 0
}

// Iterators are the operators that bind a name for their body: (list, body) or
// (list, "name", body).
var Iterators = map[string]bool{"map": true, "filter": true, "some": true, "all": true}

// DefaultIterName is the name an iteration binds when none is written.
const DefaultIterName = "it"

// ValidName reports whether s may be bound: a parameter or an iteration name is a non-empty
// name without '.'.
func ValidName(s string) bool { return s != "" && !strings.Contains(s, ".") }

// Binding returns, for an iteration (an Op of Iterators with 2 or 3 arguments), the name its
// body sees and the index of the body; ok is false when the name is written but is not a valid
// name (the analysis reports it and does not look at the body).
func (e *Expr) Binding() (name string, body int, ok bool) { return IterBinding(e.Args) }

// IterBinding is Binding of an iteration whose arguments are args.
func IterBinding(args []*Expr) (name string, body int, ok bool) {
	if len(args) == 2 {
		return DefaultIterName, 1, true
	}
	if a := args[1]; a.Kind == String && ValidName(a.Text) {
		return a.Text, 2, true
	}
	return "", 2, false
}

// Size counts the JSON values the expression is written with ({"op": "+", "args": [1, 2]} is
// five: the object, the name, the array and the two numbers); the compiler decides on it whether
// to inline a function body.
func Size(e *Expr) int { return e.nodes }

// Key writes a key of the tree e to b: equal keys for equal trees, whatever their pointers.
func Key(b *strings.Builder, e *Expr) {
	switch e.Kind {
	case Null:
		b.WriteByte('n')
	case Bool:
		if e.Bool {
			b.WriteByte('t')
		} else {
			b.WriteByte('f')
		}
	case Number:
		b.WriteByte('#')
		b.WriteString(strconv.Quote(e.Text))
	case String:
		b.WriteString(strconv.Quote(e.Text))
	case Var:
		b.WriteString("v")
		b.WriteString(strconv.Quote(e.Text))
	case Data:
		b.WriteString("d")
		b.WriteString(e.Text)
	case Bad:
		b.WriteString("!")
		b.WriteString(strconv.Quote(e.Ptr)) // never equal to another
	case List, Op, Call:
		switch e.Kind {
		case Op:
			b.WriteString("o")
			b.WriteString(strconv.Quote(e.Text))
		case Call:
			b.WriteString("c")
			b.WriteString(strconv.Quote(e.Text))
		}
		b.WriteByte('[')
		for _, a := range e.Args {
			Key(b, a)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	}
}
