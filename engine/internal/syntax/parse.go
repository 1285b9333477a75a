package syntax

import (
	"sort"
	"strconv"
	"strings"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/jsonv"
	"github.com/sdods/sdods/engine/internal/num"
)

// Parse parses the expression n located at ptr (nesting depth 1). It never fails: see Bad.
func Parse(n *jsonv.Node, ptr string) *Expr { return parse(n, ptr, 1) }

func bad(ptr string, d *diag.Diagnostic) *Expr {
	return &Expr{Kind: Bad, Ptr: ptr, Errs: diag.List{d}}
}

func parse(n *jsonv.Node, ptr string, depth int) *Expr {
	e := parseNode(n, ptr, depth)
	switch e.Kind {
	case List, Op, Call:
		e.nodes = 1
		if e.Kind != List {
			e.nodes = 3 // the object, the name and the array of arguments
		}
		for _, a := range e.Args {
			e.nodes += a.nodes
		}
	case Var:
		e.nodes = 2
	case Null, Bool, Number, String:
		e.nodes = 1
	default:
		e.nodes = jsonSize(n)
	}
	return e
}

// jsonSize counts the values of a JSON tree.
func jsonSize(n *jsonv.Node) int {
	k := 1
	for _, it := range n.Items {
		k += jsonSize(it)
	}
	for _, m := range n.Members {
		k += jsonSize(m.Value)
	}
	return k
}

func parseNode(n *jsonv.Node, ptr string, depth int) *Expr {
	if depth > MaxDepth {
		return bad(ptr, diag.TooDeep(ptr, MaxDepth))
	}
	switch n.Kind {
	case jsonv.Null:
		return &Expr{Kind: Null, Ptr: ptr}
	case jsonv.Bool:
		return &Expr{Kind: Bool, Ptr: ptr, Bool: n.Bool}
	case jsonv.String:
		return &Expr{Kind: String, Ptr: ptr, Text: n.Text}
	case jsonv.Number:
		f, ok := num.Parse(n.Text)
		if !ok {
			return bad(ptr, diag.LiteralOutOfRange(ptr, n.Text))
		}
		return &Expr{Kind: Number, Ptr: ptr, Text: n.Text, Num: f}
	case jsonv.Array:
		e := &Expr{Kind: List, Ptr: ptr, Args: make([]*Expr, len(n.Items))}
		for i, it := range n.Items {
			e.Args[i] = parse(it, diag.Index(ptr, i), depth+1)
		}
		return e
	}
	// object: exactly one of the three forms
	keys := make([]string, len(n.Members))
	seen := map[string]bool{}
	for i, m := range n.Members {
		keys[i] = m.Key
		if seen[m.Key] {
			return bad(ptr, diag.DuplicateMember(ptr, m.Key))
		}
		seen[m.Key] = true
	}
	switch {
	case len(keys) == 1 && seen["var"]:
		return parseVar(n.Get("var"), ptr)
	case len(keys) == 2 && seen["args"] && (seen["op"] || seen["fn"]):
		form, kind := "op", Op
		if seen["fn"] {
			form, kind = "fn", Call
		}
		name, args := n.Get(form), n.Get("args")
		if name.Kind != jsonv.String {
			return bad(ptr, diag.MemberType(ptr+"/"+form, form, "a string"))
		}
		if args.Kind != jsonv.Array {
			return bad(ptr, diag.MemberType(ptr+"/args", "args", "an array"))
		}
		e := &Expr{Kind: kind, Ptr: ptr, Text: name.Text, Args: make([]*Expr, len(args.Items))}
		if kind == Op && name.Text == "literal" && len(args.Items) == 1 {
			e.Args[0] = parseData(args.Items[0], ptr+"/args/0", depth+1)
			e.Args[0].nodes = jsonSize(args.Items[0])
			return e
		}
		for i, a := range args.Items {
			e.Args[i] = parse(a, diag.Index(ptr+"/args", i), depth+1)
		}
		return e
	}
	sort.Strings(keys)
	return bad(ptr, diag.NotAnExpression(ptr, keys))
}

// parseVar parses the path of {var: path}.
func parseVar(p *jsonv.Node, ptr string) *Expr {
	if p.Kind != jsonv.String {
		return bad(ptr, diag.MemberType(ptr+"/var", "var", "a string path"))
	}
	parts := strings.Split(p.Text, ".")
	for _, s := range parts {
		if s == "" {
			return bad(ptr, diag.BadVariable(ptr+"/var", p.Text, "a path is one or more non-empty segments separated by '.'"))
		}
	}
	return &Expr{Kind: Var, Ptr: ptr, Text: p.Text, Root: parts[0], Segs: parts[1:]}
}

// parseData reads the argument of literal as data.
func parseData(n *jsonv.Node, ptr string, depth int) *Expr {
	e := &Expr{Kind: Data, Ptr: ptr}
	e.Value, _ = data(n, ptr, depth, &e.Errs)
	var b strings.Builder
	jsonKey(&b, n)
	e.Text = b.String()
	return e
}

func data(n *jsonv.Node, ptr string, depth int, errs *diag.List) (any, bool) {
	if depth > MaxDepth {
		*errs = append(*errs, diag.TooDeep(ptr, MaxDepth))
		return nil, false
	}
	switch n.Kind {
	case jsonv.Null:
		return nil, true
	case jsonv.Bool:
		return n.Bool, true
	case jsonv.String:
		return n.Text, true
	case jsonv.Number:
		f, ok := num.Parse(n.Text)
		if !ok {
			*errs = append(*errs, diag.LiteralOutOfRange(ptr, n.Text))
		}
		return f, ok
	case jsonv.Array:
		out := make([]any, len(n.Items))
		ok := true
		for i, it := range n.Items {
			v, good := data(it, diag.Index(ptr, i), depth+1, errs)
			out[i] = v
			ok = ok && good
		}
		return out, ok
	}
	out := make(map[string]any, len(n.Members))
	ok := true
	for _, m := range n.Members {
		if _, dup := out[m.Key]; dup {
			*errs = append(*errs, diag.DuplicateMember(ptr, m.Key))
			ok = false
			continue
		}
		v, good := data(m.Value, diag.Pointer(ptr, m.Key), depth+1, errs)
		out[m.Key] = v
		ok = ok && good
	}
	return out, ok
}

// jsonKey writes a key of the JSON tree n: equal keys for equal trees, members in document
// order.
func jsonKey(b *strings.Builder, n *jsonv.Node) {
	switch n.Kind {
	case jsonv.Null:
		b.WriteByte('n')
	case jsonv.Bool:
		if n.Bool {
			b.WriteByte('t')
		} else {
			b.WriteByte('f')
		}
	case jsonv.Number:
		b.WriteByte('#')
		b.WriteString(strconv.Quote(n.Text))
	case jsonv.String:
		b.WriteString(strconv.Quote(n.Text))
	case jsonv.Array:
		b.WriteByte('[')
		for _, it := range n.Items {
			jsonKey(b, it)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case jsonv.Object:
		b.WriteByte('{')
		for _, m := range n.Members {
			b.WriteString(strconv.Quote(m.Key))
			b.WriteByte(':')
			jsonKey(b, m.Value)
			b.WriteByte(',')
		}
		b.WriteByte('}')
	}
}
