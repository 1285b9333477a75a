package syntax

import (
	"sort"

	"github.com/sdods/sdods/engine/internal/diag"
)

// MaxCallDepth bounds the functions in the longest chain of nested calls.
const MaxCallDepth = 32

// Def is a function definition as the analysis sees it.
type Def struct {
	Name      string
	Params    []string
	Body      *Expr // nil when missing
	Ptr       string
	Malformed bool // reported FUNCTION_INVALID: a call to it is an edge whatever its arguments
}

// Info is what an expression or a function body uses.
type Info struct {
	// Calls are the functions it calls itself, in the order written, each once: the edges of
	// the call graph. A call is an edge when it names a defined function and passes as many
	// arguments as it has parameters (any number for a malformed definition), as the compiler
	// binds it; the body of an iteration whose name is refused is not looked at (the compiler
	// does not compile it).
	Calls []string
	// Custom are the custom operators (x-...) it applies, itself or through the functions it
	// calls, sorted.
	Custom []string
	// Roots are the variable roots it reads (a var whose root no parameter or iteration binds
	// where it is read), itself or through the functions it calls, sorted.
	Roots []string
}

// Reads reports whether Roots holds root.
func (i Info) Reads(root string) bool {
	k := sort.SearchStrings(i.Roots, root)
	return k < len(i.Roots) && i.Roots[k] == root
}

// Analysis is the analysis of the function definitions of a unit: their call graph, its cycles
// and depth, and what each body uses through the functions it calls.
type Analysis struct {
	defs  map[string]*Def // the first definition of each name
	order []*Def
	info  map[string]*Info // closed over the calls
	// Cyclic is set when some function reaches itself.
	Cyclic bool
	// Diags are FUNCTION_RECURSIVE for every function on a cycle, in definition order, or, when
	// there is no cycle, EXPRESSION_TOO_DEEP for every function whose longest chain of nested
	// calls (itself included) is longer than MaxCallDepth.
	Diags diag.List
}

// Analyze analyses function definitions; a name defined twice, or empty, counts by its first
// definition (the compiler reports the others).
func Analyze(defs []Def) *Analysis {
	a := &Analysis{defs: map[string]*Def{}, info: map[string]*Info{}}
	for i := range defs {
		d := &defs[i]
		if _, dup := a.defs[d.Name]; dup || d.Name == "" {
			continue
		}
		a.defs[d.Name] = d
		a.order = append(a.order, d)
	}
	direct := map[string]*Info{}
	for _, d := range a.order {
		in := &Info{}
		if d.Body != nil {
			a.visit(d.Body, d.Params, in, map[string]bool{}, map[string]bool{})
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

// Function returns the analysis of the body of the function name (what it uses through the
// functions it calls included); ok is false when no such function is defined.
func (a *Analysis) Function(name string) (Info, bool) {
	in, ok := a.info[name]
	if !ok {
		return Info{}, false
	}
	return *in, true
}

// Expr returns what the expression e uses, itself or through the functions it calls. A call of
// an unknown function adds nothing (the compiler refuses it).
func (a *Analysis) Expr(e *Expr) Info {
	in := &Info{}
	a.visit(e, nil, in, map[string]bool{}, map[string]bool{})
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

// visit adds to in what e uses itself, bound being the names bound where e is; the seen sets
// keep Calls and Custom without repeats. Roots are kept unsorted, with repeats.
func (a *Analysis) visit(e *Expr, bound []string, in *Info, calls, custom map[string]bool) {
	switch e.Kind {
	case Var:
		for i := len(bound) - 1; i >= 0; i-- {
			if bound[i] == e.Root {
				return
			}
		}
		in.Roots = append(in.Roots, e.Root)
		return
	case Op:
		if e.IsLiteral() {
			return
		}
		if e.IsCustom() && !custom[e.Text] {
			custom[e.Text] = true
			in.Custom = append(in.Custom, e.Text)
		}
		if Iterators[e.Text] && (len(e.Args) == 2 || len(e.Args) == 3) {
			a.visit(e.Args[0], bound, in, calls, custom)
			name, body, ok := e.Binding()
			if ok {
				a.visit(e.Args[body], append(bound[:len(bound):len(bound)], name), in, calls, custom)
			}
			return
		}
	case Call:
		// the arguments first, as the compiler binds them (the order of Calls is that of the
		// paths FUNCTION_RECURSIVE reports)
		for _, arg := range e.Args {
			a.visit(arg, bound, in, calls, custom)
		}
		if d := a.defs[e.Text]; d != nil && (d.Malformed || len(e.Args) == len(d.Params)) && !calls[e.Text] {
			calls[e.Text] = true
			in.Calls = append(in.Calls, e.Text)
		}
		return
	case Data, Bad:
		return
	}
	for _, arg := range e.Args {
		a.visit(arg, bound, in, calls, custom)
	}
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
