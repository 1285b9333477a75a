package syntax

import (
	"errors"
	"sort"
	"sync"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/pattern"
)

// MaxCallDepth bounds the functions in the longest chain of nested calls.
const MaxCallDepth = 32

// Def is a function definition as the analysis sees it, in document order.
type Def struct {
	Name   string
	Params []string
	// ParamAt holds, when set, the index in the written params array of each of Params (a
	// reader drops parameters that are not strings, so later ones are reported where written).
	ParamAt []int
	Body    *Expr // nil when missing
	Ptr     string
	// Malformed is set by the reader of a definition it reported FUNCTION_INVALID; Analyze sets
	// it too for parameters that are not distinct names and a missing body. The name is still
	// defined, but a call to it is checked against nothing and is an edge of the call graph
	// whatever its arguments (expressions.md §5).
	Malformed bool
}

// Info is what an expression or a function body uses, and its problems.
type Info struct {
	// Calls are the functions it calls itself, in the order written, each once: the edges of
	// the call graph. A call is an edge when it names a defined function and passes as many
	// arguments as it has parameters (any number for a malformed definition); the body of an
	// iteration whose name is refused is not looked at.
	Calls []string
	// Custom are the custom operators (x-...) it applies, itself or through the functions it
	// calls, sorted.
	Custom []string
	// Roots are the variable roots it reads (a var whose root no parameter or iteration binds
	// where it is read), itself or through the functions it calls, sorted.
	Roots []string
	// Diags are its own problems (not those of the functions it calls), in the order the tree
	// is walked (see check), not sorted.
	Diags diag.List
}

// Reads reports whether Roots holds root.
func (i Info) Reads(root string) bool {
	k := sort.SearchStrings(i.Roots, root)
	return k < len(i.Roots) && i.Roots[k] == root
}

// Analysis is the analysis of the function definitions of a unit and the custom operators it
// declares: the problems of the definitions and bodies, the call graph, its cycles and depth, and
// what each body uses through the functions it calls. Expr analyses an expression against it.
// An Analysis is safe for concurrent use once Analyze returns.
type Analysis struct {
	declared map[string]bool
	defs     map[string]*Def // the first definition of each name
	order    []*Def
	info     map[string]*Info // closed over the calls
	patterns sync.Map         // pattern source -> *pattern.Pattern: the patterns written as literals
	// Cyclic is set when some function reaches itself.
	Cyclic bool
	// Diags are every problem of the definitions, in the order the compiler reported them before
	// the checks moved here (the order of problems at one pointer): for each definition,
	// FUNCTION_REDEFINED or an empty name, then its parameters and a missing body; then the
	// problems inside each body, definition after definition; then FUNCTION_RECURSIVE for every
	// function on a cycle, or, when there is none, EXPRESSION_TOO_DEEP for every function whose
	// longest chain of nested calls (itself included) is longer than MaxCallDepth. Not sorted.
	Diags diag.List
}

// Analyze analyses the function definitions defs, given the custom operators the unit declares.
// A name defined twice, or empty, is reported and counts by its first definition.
func Analyze(defs []Def, declared []string) *Analysis {
	a := &Analysis{declared: map[string]bool{}, defs: map[string]*Def{}, info: map[string]*Info{}}
	for _, name := range declared {
		a.declared[name] = true
	}
	for i := range defs {
		d := defs[i] // a copy: Malformed may be set
		switch _, dup := a.defs[d.Name]; {
		case dup:
			a.Diags = append(a.Diags, diag.Redefined(d.Ptr, d.Name))
			continue
		case d.Name == "":
			a.Diags = append(a.Diags, diag.BadFunction(d.Ptr, d.Name, "the name is empty"))
			continue
		}
		seen := map[string]bool{}
		for i, p := range d.Params {
			if d.ParamAt != nil {
				i = d.ParamAt[i]
			}
			if !ValidName(p) {
				a.Diags = append(a.Diags, diag.BadFunction(diag.Index(d.Ptr+"/params", i), d.Name, "a parameter name must be a non-empty name without '.'"))
				d.Malformed = true
			}
			if seen[p] {
				a.Diags = append(a.Diags, diag.BadFunction(diag.Index(d.Ptr+"/params", i), d.Name, "parameter "+p+" appears twice"))
				d.Malformed = true
			}
			seen[p] = true
		}
		if d.Body == nil {
			a.Diags = append(a.Diags, diag.BadFunction(d.Ptr, d.Name, "the body is missing"))
			d.Malformed = true
		}
		a.defs[d.Name] = &d
		a.order = append(a.order, &d)
	}
	direct := map[string]*Info{}
	for _, d := range a.order {
		in := &Info{}
		if d.Body != nil {
			w := walker{a: a, in: in, calls: map[string]bool{}, custom: map[string]bool{}}
			w.visit(d.Body, d.Params)
			a.Diags = append(a.Diags, in.Diags...)
		}
		direct[d.Name] = in
	}
	a.Cyclic = a.cycles(direct)
	if !a.Cyclic {
		a.callDepth(direct)
	}
	for _, d := range a.order {
		a.close(d.Name, direct, map[string]bool{})
	}
	return a
}

// Defs returns the definitions that define a name (the first of each, named), in document
// order, Malformed as decided by Analyze.
func (a *Analysis) Defs() []Def {
	out := make([]Def, len(a.order))
	for i, d := range a.order {
		out[i] = *d
	}
	return out
}

// Function returns the analysis of the body of the function name (what it uses through the
// functions it calls included); ok is false when no such function is defined.
func (a *Analysis) Function(name string) (Info, bool) {
	in, ok := a.info[name]
	if !ok {
		return Info{}, false
	}
	return *in, true
}

// Expr returns what the expression e uses, itself or through the functions it calls, and its
// problems. A call of an unknown function adds nothing to what it uses.
func (a *Analysis) Expr(e *Expr) Info {
	in := &Info{}
	w := walker{a: a, in: in, calls: map[string]bool{}, custom: map[string]bool{}}
	w.visit(e, nil)
	custom, roots := set(in.Custom), set(in.Roots)
	for _, name := range in.Calls {
		if f := a.info[name]; f != nil {
			add(custom, f.Custom)
			add(roots, f.Roots)
		}
	}
	in.Custom, in.Roots = sorted(custom), sorted(roots)
	return *in
}

// Pattern returns the compiled pattern of a matches whose pattern is written as the literal
// src, which Expr or Analyze found portable; nil for any other.
func (a *Analysis) Pattern(src string) *pattern.Pattern {
	p, _ := a.patterns.Load(src)
	pat, _ := p.(*pattern.Pattern)
	return pat
}

// walker is one walk of an expression or a body: what it uses and its problems go to in; the
// seen sets keep Calls and Custom without repeats. Roots are kept unsorted, with repeats.
type walker struct {
	a             *Analysis
	in            *Info
	calls, custom map[string]bool
}

func (w *walker) report(ds ...*diag.Diagnostic) { w.in.Diags = append(w.in.Diags, ds...) }

// visit walks e, bound being the names bound where e is (parameters, then iterations,
// innermost last). It checks what depends on names and on the operator table, in the order the
// compiler binds names (the order of the problems at one pointer): a node that did not parse
// reports its problems; an unknown operator, or one given the wrong number of arguments, is
// reported before its arguments are walked, a custom operator that is not declared and a call
// of an unknown function or with the wrong number of arguments after; an iteration walks its
// list, then checks its name, then walks its body with the name bound (not when the name is
// refused); a matches whose pattern is a string literal checks the pattern after its arguments.
func (w *walker) visit(e *Expr, bound []string) {
	switch e.Kind {
	case Var:
		for i := len(bound) - 1; i >= 0; i-- {
			if bound[i] == e.Root {
				return
			}
		}
		w.in.Roots = append(w.in.Roots, e.Root)
	case Bad, Data:
		w.report(e.Errs...)
	case List:
		w.visitAll(e.Args, bound)
	case Op:
		w.op(e, bound)
	case Call:
		// the arguments first (the order of Calls is that of the paths FUNCTION_RECURSIVE
		// reports)
		w.visitAll(e.Args, bound)
		d := w.a.defs[e.Text]
		switch {
		case d == nil:
			w.report(diag.UnknownFunction(e.Ptr+"/fn", e.Text))
			return
		case !d.Malformed && len(e.Args) != len(d.Params):
			w.report(diag.FunctionArgs(e.Ptr+"/args", e.Text, len(e.Args), len(d.Params)))
			return
		}
		if !w.calls[e.Text] {
			w.calls[e.Text] = true
			w.in.Calls = append(w.in.Calls, e.Text)
		}
	}
}

func (w *walker) visitAll(es []*Expr, bound []string) {
	for _, a := range es {
		w.visit(a, bound)
	}
}

// op walks an operator application.
func (w *walker) op(e *Expr, bound []string) {
	name, args := e.Text, e.Args
	if e.IsCustom() {
		if !w.custom[name] {
			w.custom[name] = true
			w.in.Custom = append(w.in.Custom, name)
		}
		w.visitAll(args, bound)
		if !w.a.declared[name] {
			w.report(diag.Undeclared(e.Ptr+"/op", name))
		}
		return
	}
	ar, ok := CoreOperators[name]
	switch {
	case !ok:
		w.report(diag.UnknownOperator(e.Ptr+"/op", name))
		w.visitAll(args, bound)
		return
	case !ar.Accepts(name, len(args)):
		w.report(diag.Arity(e.Ptr+"/args", name, len(args), ar.Text(name)))
		w.visitAll(args, bound)
		return
	}
	switch {
	case Iterators[name]:
		w.visit(args[0], bound)
		bind, body, ok := e.Binding()
		if !ok {
			w.report(diag.LiteralRequired(e.Ptr+"/args/1", name, 1, "a variable name (a non-empty string without '.')"))
			return
		}
		w.visit(args[body], append(bound[:len(bound):len(bound)], bind))
	case name == "matches":
		w.visitAll(args, bound)
		if pat := args[1]; pat.StringLiteral() {
			w.checkPattern(pat)
		}
	default:
		// literal's one argument is a Data node: its problems, nothing read
		w.visitAll(args, bound)
	}
}

// checkPattern checks a pattern written as a string literal (PATTERN_NOT_PORTABLE at load) and
// keeps it compiled for the compiler.
func (w *walker) checkPattern(e *Expr) {
	src := e.Text
	if e.Kind != String {
		src = e.Args[0].Value.(string)
	}
	if w.a.Pattern(src) != nil {
		return
	}
	p, err := pattern.Compile(src)
	if err != nil {
		off, msg := 0, err.Error()
		var pe *pattern.Error
		if errors.As(err, &pe) {
			off, msg = pe.Offset, pe.Message
		}
		w.report(diag.PatternRefused(e.Ptr, off, msg))
		return
	}
	w.a.patterns.Store(src, p)
}

// close returns the closed Info of the function name (its callees' uses added).
func (a *Analysis) close(name string, direct map[string]*Info, onPath map[string]bool) *Info {
	if in := a.info[name]; in != nil {
		return in
	}
	d := direct[name]
	if d == nil || onPath[name] {
		return nil // unknown, or on a cycle (refused at load anyway)
	}
	onPath[name] = true
	custom, roots := set(d.Custom), set(d.Roots)
	for _, g := range d.Calls {
		if gi := a.close(g, direct, onPath); gi != nil {
			add(custom, gi.Custom)
			add(roots, gi.Roots)
		}
	}
	delete(onPath, name)
	in := &Info{Calls: d.Calls, Custom: sorted(custom), Roots: sorted(roots)}
	a.info[name] = in
	return in
}

// cycles reports FUNCTION_RECURSIVE for every function that reaches itself; it returns whether
// there was any.
func (a *Analysis) cycles(direct map[string]*Info) bool {
	found := false
	for _, d := range a.order {
		if path := reach(direct, d.Name, d.Name, map[string]bool{}); path != nil {
			a.Diags = append(a.Diags, diag.Recursive(d.Ptr, append([]string{d.Name}, path...)))
			found = true
		}
	}
	return found
}

// reach returns a call path from 'from' to target (excluding from), or nil.
func reach(direct map[string]*Info, from, target string, seen map[string]bool) []string {
	f := direct[from]
	if f == nil {
		return nil
	}
	for _, g := range f.Calls {
		if g == target {
			return []string{g}
		}
		if seen[g] {
			continue
		}
		seen[g] = true
		if p := reach(direct, g, target, seen); p != nil {
			return append([]string{g}, p...)
		}
	}
	return nil
}

// callDepth reports EXPRESSION_TOO_DEEP for a function whose longest chain of nested calls
// (itself included) is longer than MaxCallDepth. The call graph has no cycles here.
func (a *Analysis) callDepth(direct map[string]*Info) {
	memo := map[string]int{}
	var chain func(name string) int
	chain = func(name string) int {
		if d, ok := memo[name]; ok {
			return d
		}
		best := 0
		if f := direct[name]; f != nil {
			for _, g := range f.Calls {
				if d := chain(g); d > best {
					best = d
				}
			}
		}
		memo[name] = best + 1
		return best + 1
	}
	for _, d := range a.order {
		if chain(d.Name) > MaxCallDepth {
			a.Diags = append(a.Diags, diag.CallsTooDeep(d.Ptr, MaxCallDepth))
		}
	}
}

func set(list []string) map[string]bool {
	out := make(map[string]bool, len(list))
	for _, s := range list {
		out[s] = true
	}
	return out
}

func add(s map[string]bool, list []string) {
	for _, x := range list {
		s[x] = true
	}
}

func sorted(s map[string]bool) []string {
	out := make([]string, 0, len(s))
	for x := range s {
		out = append(out, x)
	}
	sort.Strings(out)
	return out
}
