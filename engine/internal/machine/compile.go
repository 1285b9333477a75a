package machine

import (
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/jsonv"
	"github.com/sdods/sdods/engine/internal/syntax"
	"github.com/sdods/sdods/engine/internal/value"
)

// FunctionDef is one function definition of a ruleset, in document order.
type FunctionDef struct {
	Name    string
	Params  []string
	Body    *jsonv.Node
	Pointer string // pointer of the definition; the body is at Pointer + "/body"
	// ParamAt holds, when set, the index in the written params array of each of Params (a reader
	// drops parameters that are not strings, so later ones are reported where they are written).
	ParamAt []int
	// Malformed is set by the reader of a definition it reported FUNCTION_INVALID (not an
	// object: give a null Body; params missing or not an array of strings; a member unknown or
	// named twice); the analysis (syntax.Analyze) sets it too for parameters that are not
	// distinct names and a missing body. The name is still defined, but calls to it are not
	// checked against it (expressions.md §5).
	Malformed bool
}

// Config declares what expressions may use.
type Config struct {
	Operators []string      // declared custom operators (x-...)
	Functions []FunctionDef // function definitions
	// Globals are variable roots given the global indexes 0, 1, ... in this order, so that a host
	// that evaluates with a Machine can set them by index. Other roots get the next indexes as
	// expressions using them are compiled.
	Globals []string
	// Varying are the roots a host changes between the runs of one evaluation (Machine.Begin to
	// End); paths under every other root are memoized within an evaluation.
	Varying []string
	// Skip names optimisation passes left out, for tests that compare a pass with the
	// compilation without it; by default every pass runs.
	Skip Passes
	// builders replace the builders of some core operators, for tests that compare a builder
	// with a reference one.
	builders map[string]builder
}

// Passes is a set of optimisation passes of the compiler. Each pass changes how expressions are
// compiled, never what they answer (results, errors, budgets): tests compile with and without
// each and compare.
type Passes uint16

const (
	// Inline compiles a call of a small function as its body, its parameters read where the
	// arguments are.
	Inline Passes = 1 << iota
	// Fuse compiles chains of operators (count of a filter, sum of a map, coalesce, ...) as one
	// loop or step.
	Fuse
	// Hoist reads a path under a binding outside an iteration once as the iteration starts.
	Hoist
	// Share evaluates a subexpression that appears more than once in an evaluation once.
	Share
	// ShortPair compiles and/or of two operands that are not both constant as one node.
	ShortPair
	// CompareConst compiles <, <=, > and >= with a constant number on the right as a direct
	// comparison of the left operand's number.
	CompareConst
	// Contain compiles in and contains with a constant list of scalars or a constant string item
	// as a direct comparison (a set lookup) instead of the deep one.
	Contain
	// Readers reads an argument that is a variable (a root, or a memoized path already read) without
	// calling its node.
	Readers
	// ElemPaths reads a path under the elements of a list variable as an element path, memoized
	// per element, instead of through the general read.
	ElemPaths
	// Unbox lets numeric operators hand numbers to each other unboxed (float64, not any).
	Unbox
	// Conds compiles nodes whose value is always a boolean with a test that returns it unboxed,
	// which and, or, not and Machine.Test call instead of the node's eval (see cond.go).
	Conds
	// Aliases lets CompileAliasUses read a varying root bound to a memoized path as that path.
	Aliases
)

// on reports whether the pass p runs.
func (u *Unit) on(p Passes) bool { return u.skip&p == 0 }

// function is a compiled function.
type function struct {
	name   string
	params []string
	ptr    string
	slots  int
	body   *node
	calls  []string // functions the body calls (see syntax.Info.Calls)
	roots  []int    // global indexes the body reads, itself or through the functions it calls
	def    *syntax.Expr
	size   int // JSON values of the body, for the inlining decision (see syntax.Size)
	// malformed: the definition was reported FUNCTION_INVALID; calls to it are neither
	// FUNCTION_UNKNOWN nor FUNCTION_ARITY (expressions.md §5)
	malformed bool
	// stability of the body's value given its parameters' (see Unit.stability)
	stability int
}

// Unit is a compiled set of functions and declarations, shared by every expression of a ruleset.
type Unit struct {
	declared map[string]bool
	funcs    map[string]*function

	mu      sync.Mutex // guards globals, paths, shared, nmemo, elems and nelem: expressions may be compiled concurrently
	globals map[string]int
	paths   map[string]*Path       // by root and segments
	shared  map[string]*sharedExpr // by canonical key
	nmemo   int                    // memo indexes given to paths and shared subexpressions
	varying map[string]bool
	elems   map[string]*Elem // by list path and segments
	nelem   int
	// roots some expression reads other than through a memoized path (see Unit.Reads): how
	// many reads
	whole    map[string]int
	skip     Passes             // optimisation passes left out (Config.Skip)
	builders map[string]builder // Config.builders
	// the analysis of the function definitions (call graph, what each body uses)
	analysis *syntax.Analysis
}

// global returns the index of the variable root name, assigning the next one to a new name.
func (u *Unit) global(name string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	i, ok := u.globals[name]
	if !ok {
		i = len(u.globals)
		u.globals[name] = i
	}
	return i
}

// NumGlobals returns how many variable roots have an index so far: a globals slice of this
// length serves every program compiled until now.
func (u *Unit) NumGlobals() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.globals)
}

// scope is the lexical scope of one frame: bindings visible at a point, innermost last. A name
// is bound to a slot of the frame, or to an alias that reads its value (see inline).
type scope struct {
	names   []string
	slots   []int
	aliases []*alias
	n       *int // slots allocated in the frame
	// iterations of this frame whose bodies the scope is in, outermost first (see loop)
	loops []*loop
	lists []*listVar // by binding: the iteration variables that are list variables
}

// alias is a name bound to a plain read (see node.read): the node, and the variable path it
// reads when that is a path from a root ("" when it reads a binding of the caller).
type alias struct {
	n    *node
	path string
}

func newScope() *scope { return &scope{n: new(int)} }

func (s *scope) lookup(name string) (slot int, a *alias, ok bool) {
	if i := s.index(name); i >= 0 {
		return s.slots[i], s.aliases[i], true
	}
	return 0, nil, false
}

// index returns the position of the innermost binding of name in names, -1 when unbound.
func (s *scope) index(name string) int {
	for i := len(s.names) - 1; i >= 0; i-- {
		if s.names[i] == name {
			return i
		}
	}
	return -1
}

// bind returns a scope with name bound to a fresh slot.
func (s *scope) bind(name string) (*scope, int) {
	slot := *s.n
	*s.n++
	return s.with(name, slot, nil), slot
}

// bindAlias returns a scope with name bound to the alias a.
func (s *scope) bindAlias(name string, a *alias) *scope { return s.with(name, -1, a) }

func (s *scope) with(name string, slot int, a *alias) *scope {
	return &scope{
		names:   append(append([]string(nil), s.names...), name),
		slots:   append(append([]int(nil), s.slots...), slot),
		aliases: append(append([]*alias(nil), s.aliases...), a),
		n:       s.n,
		loops:   s.loops,
		lists:   append(append([]*listVar(nil), s.lists...), nil),
	}
}

// compiler holds the state of one compilation. It compiles a tree the analysis checked (see
// syntax.Analysis): it reports nothing, and a problem it meets is a bug (see unchecked).
type compiler struct {
	unit    *Unit
	custom  map[string]bool // custom operators used
	cur     *function       // function being compiled, nil at top level
	roots   map[int]bool    // global indexes read by what is being compiled
	inlined int             // body nodes inlined into the expression so far
	// operators and calls that occur more than once in the expression (see share), and whether
	// any is remembered within a run
	repeated  map[*syntax.Expr]*sharedExpr
	runShared bool
}

// Inlining limits: a call is inlined when the body has at most inlineBody nodes and the
// expression has not yet received inlineTotal nodes of inlined bodies (nested calls inline
// too, so this bounds the growth).
const (
	inlineBody  = 48
	inlineTotal = 1024
)

// unchecked panics: the compiler met a problem the analysis reports, so it was given a tree the
// analysis did not check, or the two disagree.
func unchecked(ptr, what string) {
	panic("machine: compiling a tree with a problem the analysis did not report at " + ptr + ": " + what)
}

// NewUnit compiles the function definitions of cfg. The analysis (syntax.Analyze) reports every
// problem first: malformed definitions, FUNCTION_REDEFINED, problems inside bodies,
// FUNCTION_RECURSIVE for every function on a cycle; the bodies are compiled only when there is
// none.
func NewUnit(cfg Config) (*Unit, diag.List) {
	u := &Unit{declared: map[string]bool{}, funcs: map[string]*function{}, globals: map[string]int{},
		paths: map[string]*Path{}, shared: map[string]*sharedExpr{}, varying: map[string]bool{}, whole: map[string]int{},
		skip: cfg.Skip, builders: cfg.builders}
	for _, name := range cfg.Varying {
		u.varying[name] = true
	}
	for _, name := range cfg.Globals {
		u.global(name)
	}
	for _, name := range cfg.Operators {
		u.declared[name] = true
	}
	sdefs := make([]syntax.Def, len(cfg.Functions))
	for i, def := range cfg.Functions {
		sdefs[i] = syntax.Def{Name: def.Name, Params: def.Params, ParamAt: def.ParamAt, Ptr: def.Pointer, Malformed: def.Malformed}
		if def.Body != nil {
			sdefs[i].Body = syntax.Parse(def.Body, def.Pointer+"/body")
		}
	}
	u.analysis = syntax.Analyze(sdefs, cfg.Operators)
	if len(u.analysis.Diags) > 0 {
		return nil, u.analysis.Diags.Sort()
	}
	defs := u.analysis.Defs()
	order := make([]*function, len(defs))
	for i, d := range defs {
		f := &function{name: d.Name, params: d.Params, ptr: d.Ptr, malformed: d.Malformed, def: d.Body}
		if d.Body != nil {
			f.size = syntax.Size(d.Body)
		}
		u.funcs[d.Name] = f
		order[i] = f
	}
	c := &compiler{unit: u, custom: map[string]bool{}}
	for _, f := range order {
		if f.def == nil {
			continue
		}
		sc := newScope()
		for _, p := range f.params {
			sc, _ = sc.bind(p)
		}
		c.cur, c.roots = f, map[int]bool{}
		f.body = c.compile(f.def, f.ptr+"/body", sc, 1)
		f.slots = *sc.n
		c.cur, c.roots = nil, nil
	}
	for _, f := range order {
		in, _ := u.analysis.Function(f.name)
		f.calls = in.Calls
		f.roots = make([]int, 0, len(in.Roots))
		for _, r := range in.Roots {
			f.roots = append(f.roots, u.global(r))
		}
		sort.Ints(f.roots)
	}
	u.markStability(order)
	return u, nil
}

// NewStandInUnit returns a unit whose functions stand in for those of cfg: the same names (the
// first definition of each) and parameters, null bodies, and no parameters and unchecked calls
// for a malformed definition. A load whose functions failed (NewUnit reported problems) compiles
// its expressions against it, so it reports their problems too (errors.md: every diagnostic).
func NewStandInUnit(cfg Config) *Unit {
	stub := make([]FunctionDef, 0, len(cfg.Functions))
	seen := map[string]bool{}
	for _, d := range cfg.Functions {
		if seen[d.Name] || d.Name == "" {
			continue
		}
		seen[d.Name] = true
		s := FunctionDef{Name: d.Name, Params: d.Params, Body: &jsonv.Node{Kind: jsonv.Null}, Pointer: d.Pointer, Malformed: d.Malformed || d.Body == nil}
		names := map[string]bool{}
		for _, p := range d.Params {
			s.Malformed = s.Malformed || !validName(p) || names[p]
			names[p] = true
		}
		if s.Malformed {
			s.Params = nil
		}
		stub = append(stub, s)
	}
	cfg.Functions = stub
	u, _ := NewUnit(cfg)
	if u == nil { // not expected: stand-ins have nothing to report
		cfg.Functions = nil
		u, _ = NewUnit(cfg)
	}
	return u
}

func validName(s string) bool { return syntax.ValidName(s) }

// Compile parses and compiles one expression in the unit; ptr is the pointer of the expression
// in its document (used in every diagnostic and evaluation error).
func (u *Unit) Compile(n *jsonv.Node, ptr string) (*Program, diag.List) {
	return u.CompileExpr(syntax.Parse(n, ptr))
}

// CompileExpr checks one parsed expression in the unit (the unit's analysis reports its problems)
// and compiles it.
func (u *Unit) CompileExpr(e *syntax.Expr) (*Program, diag.List) {
	p, _, ds := u.CompileUses(e)
	return p, ds
}

// CompileUses is CompileExpr that also returns what e uses (custom operators and roots, itself or
// through the functions it calls), found by the same walk of the analysis that checks it.
func (u *Unit) CompileUses(e *syntax.Expr) (*Program, syntax.Info, diag.List) {
	in := u.analysis.Expr(e)
	if len(in.Diags) > 0 {
		return nil, in, in.Diags.Sort()
	}
	return u.compileChecked(e, nil), in, nil
}

// CompileAliasUses is CompileUses for a host that runs the expression with the varying root name
// bound to the value of the memoized path root.segs[0]... (a rule on one field binds value to
// the field's path in data): where the expression reads name, it reads that path instead, without
// the host's binding. Since the two hold the same value, it answers and charges as CompileUses'
// program would. aliased is false when it cannot (a function the expression calls reads name
// itself, the path is not memoized, or the host's test allow refuses what the expression uses):
// the program is then CompileUses', which reads the root.
func (u *Unit) CompileAliasUses(e *syntax.Expr, name, root string, segs []string, allow func(syntax.Info) bool) (p *Program, in syntax.Info, aliased bool, ds diag.List) {
	in = u.analysis.Expr(e)
	if len(in.Diags) > 0 {
		return nil, in, false, in.Diags.Sort()
	}
	aliased = u.on(Aliases) && allow(in) && u.Path(root, segs) != nil
	for _, f := range in.Calls {
		fi, _ := u.analysis.Function(f)
		aliased = aliased && !fi.Reads(name)
	}
	if !aliased {
		return u.compileChecked(e, nil), in, false, nil
	}
	return u.compileChecked(e, &rootAlias{name: name, path: root + "." + strings.Join(segs, ".")}), in, true, nil
}

// rootAlias is a root read as a memoized path (see CompileAliasUses).
type rootAlias struct{ name, path string }

// compileChecked compiles an expression the analysis checked, with the root alias al when not nil.
func (u *Unit) compileChecked(e *syntax.Expr, al *rootAlias) *Program {
	c := &compiler{unit: u, custom: map[string]bool{}, roots: map[int]bool{}}
	if u.on(Share) {
		c.repeated = u.repeats(e)
	}
	sc := newScope()
	if al != nil {
		n := c.compilePath(al.path, strings.Split(al.path, "."), e.Ptr, sc)
		sc = sc.bindAlias(al.name, &alias{n: n, path: al.path})
	}
	root := c.compile(e, e.Ptr, sc, 1)
	if c.runShared {
		root = newRun(root)
	}
	p := &Program{root: root, slots: *sc.n, cond: root.cond}
	for g := range c.roots {
		p.nglobals = max(p.nglobals, g+1)
	}
	for name := range c.custom {
		p.custom = append(p.custom, name)
	}
	sort.Strings(p.custom)
	return p
}

// Functions returns the function names of the unit, sorted.
func (u *Unit) Functions() []string {
	out := make([]string, 0, len(u.funcs))
	for n := range u.funcs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func constNode(v any, ptr string) *node {
	return &node{constant: true, value: v, ptr: ptr, eval: func(*frame) (any, error) { return v, nil }}
}

// errNode is the placeholder for a node that failed to compile; the load fails anyway.
func errNode(ptr string) *node { return constNode(nil, ptr) }

// compile compiles the expression n at ptr (n.Ptr), at nesting depth depth (the parser has
// checked the nesting: a node too deep is a Bad node).
func (c *compiler) compile(n *syntax.Expr, ptr string, sc *scope, depth int) *node {
	switch n.Kind {
	case syntax.Null:
		return constNode(nil, ptr)
	case syntax.Bool:
		return constNode(n.Bool, ptr)
	case syntax.String:
		return constNode(n.Text, ptr)
	case syntax.Number:
		return constNode(n.Num, ptr)
	case syntax.List:
		return c.compileList(n, ptr, sc, depth)
	case syntax.Var:
		return c.compileVar(n, ptr, sc)
	case syntax.Op:
		return c.share(n, c.compileOp(n.Text, n.Args, ptr, sc, depth), sc)
	case syntax.Call:
		return c.share(n, c.compileCall(n.Text, n.Args, ptr, sc, depth), sc)
	}
	// Bad, or Data outside literal (not produced by the parser)
	if n.Kind == syntax.Data && len(n.Errs) == 0 {
		return constNode(n.Value, ptr)
	}
	unchecked(ptr, "a node that does not parse")
	return nil
}

// compileArgs compiles the argument expressions of an op or fn form.
func (c *compiler) compileArgs(args []*syntax.Expr, ptr string, sc *scope, depth int) []*node {
	out := make([]*node, len(args))
	for i, a := range args {
		out[i] = c.compile(a, diag.Index(ptr+"/args", i), sc, depth+1)
	}
	return out
}

// compileList compiles an array: a list of expressions, evaluated in order.
func (c *compiler) compileList(n *syntax.Expr, ptr string, sc *scope, depth int) *node {
	items := make([]*node, len(n.Args))
	constant := true
	for i, it := range n.Args {
		items[i] = c.compile(it, diag.Index(ptr, i), sc, depth+1)
		constant = constant && items[i].constant
	}
	if constant {
		vals := make([]any, len(items))
		for i, it := range items {
			vals[i] = it.value
		}
		nd := &node{constant: true, value: vals, ptr: ptr}
		nd.eval = func(*frame) (any, error) { return vals, nil }
		return nd
	}
	return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		if err := fr.rt.charge(ptr, len(items)); err != nil {
			return nil, err
		}
		out := make([]any, len(items))
		for i, it := range items {
			v, err := it.eval(fr)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}}
}

// segment is one step of a variable path after the root.
type segment struct {
	key   string
	index int // -1 when the segment is not a run of ASCII digits or is too large
}

// inline compiles a call of a small function into the caller's frame: the arguments go to fresh
// slots of the caller, and the body is compiled again with its parameters bound to them (and
// nothing else of the caller in scope). It evaluates and charges exactly as a call does: one
// unit for the call, the arguments in order, then the body; the body's nodes keep the pointers
// of the definition. Only expressions compiled after the unit inline (every body is valid then).
//
// An argument that is a plain read (see node.read) is not stored: the body reads it where it
// reads the parameter. Such a read charges nothing, cannot fail and reads the same value until
// the call returns (the body writes only slots of its own), so the call is the same. A path
// under a parameter that reads a root's path is read as that path (memoized, see Path).
func (c *compiler) inline(f *function, args []*node, raw []*syntax.Expr, ptr string, caller *scope) *node {
	c.inlined += f.size
	body := &scope{n: caller.n}
	slots := make([]int, len(f.params))
	var stored []*node
	for i, p := range f.params {
		if args[i].read {
			body = body.bindAlias(p, &alias{n: args[i], path: c.rootPath(raw[i], caller)})
			continue
		}
		body, slots[len(stored)] = body.bind(p)
		stored = append(stored, args[i])
	}
	slots = slots[:len(stored)]
	// what the expression reports as used stays as for a call: the body's own operators are
	// the function's
	saved := c.custom
	c.custom = map[string]bool{}
	b := c.compile(f.def, f.ptr+"/body", body, 1)
	c.custom = saved
	if len(stored) == 0 && !b.constant && b.num == nil && b.chain != nil && !b.chain.pre && b.chain.base.read &&
		c.unit.on(Fuse) {
		// the body is a chain on a plain read: the call's charge becomes the chain's first, so
		// that an operator applied to the call extends the chain (not(blank(x)) is one loop)
		ch := &chain{base: b.chain.base, steps: b.chain.steps, pre: true, prePtr: ptr}
		return c.withCond(&node{ptr: ptr, chain: ch, eval: ch.evaluation()}, ch.condition())
	}
	if len(stored) == 0 && !b.constant {
		n := &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			if err := fr.rt.charge(ptr, 1); err != nil {
				return nil, err
			}
			return b.eval(fr)
		}}
		if c.unit.on(Unbox) && b.num != nil {
			n.num = func(fr *frame) (float64, bool, any, error) {
				if err := fr.rt.charge(ptr, 1); err != nil {
					return 0, false, nil, err
				}
				return b.num(fr)
			}
		}
		return n
	}
	unboxed := make([]bool, len(stored)) // arguments whose numbers are stored unboxed
	for i, a := range stored {
		unboxed[i] = c.unit.on(Unbox) && a.num != nil
	}
	store := func(fr *frame) error {
		if err := fr.rt.charge(ptr, 1); err != nil {
			return err
		}
		for i, a := range stored {
			if unboxed[i] {
				// a number is stored unboxed, and boxed only when the body reads it boxed
				f, ok, v, err := a.num(fr)
				if err != nil {
					return err
				}
				if k := slots[i]; ok && v == nil && k < len(fr.nums) {
					fr.locals[k], fr.nums[k] = unboxedNumber{}, f
				} else {
					fr.locals[k] = boxed(f, ok, v)
				}
				continue
			}
			v, err := a.get(fr)
			if err != nil {
				return err
			}
			fr.locals[slots[i]] = v
		}
		return nil
	}
	n := &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		if err := store(fr); err != nil {
			return nil, err
		}
		return b.get(fr)
	}}
	if c.unit.on(Unbox) && b.num != nil {
		n.num = func(fr *frame) (float64, bool, any, error) {
			if err := store(fr); err != nil {
				return 0, false, nil, err
			}
			return b.num(fr)
		}
	}
	return n
}

// compileVar compiles {var: "root.a.0.b"}.
func (c *compiler) compileVar(v *syntax.Expr, ptr string, sc *scope) *node {
	return c.compilePath(v.Text, append([]string{v.Root}, v.Segs...), ptr, sc)
}

// compilePath compiles the read of the variable path text, parts its segments (none empty).
func (c *compiler) compilePath(text string, parts []string, ptr string, sc *scope) *node {
	root := parts[0]
	segs := make([]segment, len(parts)-1)
	for i, s := range parts[1:] {
		segs[i] = segment{key: s, index: asIndex(s)}
	}
	slot, al, local := sc.lookup(root)
	if al != nil && al.path != "" {
		// a parameter of an inlined call that reads a root's path: this reads a longer one
		full := al.path
		if len(parts) > 1 {
			full += "." + strings.Join(parts[1:], ".")
		}
		return c.compilePath(full, strings.Split(full, "."), ptr, &scope{n: sc.n})
	}
	if i := sc.index(root); i >= 0 && len(segs) > 0 {
		lv := sc.lists[i]
		// an element path, counted as read twice when its iteration runs more than once
		elem := func() *Elem {
			lv.indexed = true
			w := int32(1)
			if lv.nested {
				w = 2
			}
			return c.unit.elem(lv.list, parts[1:], w, true)
		}
		if lp := sc.hoistInto(i); lp != nil && c.unit.on(Hoist) {
			// a path under a binding outside an iteration the read is in: read once as it starts
			return lp.read(ptr, strconv.Itoa(i)+"\x00"+text, sc.n, func() hoisted {
				h := hoisted{from: slot, segs: segs}
				if al != nil {
					h.base = al.n
				}
				if lv != nil {
					h.elem = elem()
				}
				return h
			})
		}
		if lv != nil {
			return elemRead(ptr, elem(), slot)
		}
	}
	if al != nil {
		// a parameter of an inlined call, read where the call would have stored it
		if len(segs) == 0 {
			return &node{ptr: ptr, read: true, eval: al.n.eval, num: al.n.num}
		}
		return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			v, _ := al.n.eval(fr)
			return walkPath(v, segs), nil
		}}
	}
	if local {
		switch {
		case len(segs) == 0:
			return readLocal(ptr, slot)
		case len(segs) == 1 && segs[0].index < 0:
			key := segs[0].key
			return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
				if m, ok := fr.locals[slot].(map[string]any); ok {
					return m[key], nil
				}
				return nil, nil
			}}
		}
		return &node{ptr: ptr, eval: func(fr *frame) (any, error) { return walkPath(fr.locals[slot], segs), nil }}
	}
	g := c.unit.global(root)
	c.roots[g] = true
	if len(segs) == 0 {
		c.unit.readWhole(root)
		return &node{ptr: ptr, read: true, eval: func(fr *frame) (any, error) { return fr.rt.root(g, root), nil }}
	}
	if p := c.unit.Path(root, parts[1:]); p != nil {
		return &node{ptr: ptr, read: true, path: p, eval: func(fr *frame) (any, error) {
			if v, ok := fr.rt.memoized(p); ok {
				return v, nil
			}
			return fr.rt.walk(p), nil
		}}
	}
	c.unit.readWhole(root) // a varying root: read as a whole
	if len(segs) == 1 && segs[0].index < 0 {
		key := segs[0].key
		return &node{ptr: ptr, eval: func(fr *frame) (any, error) {
			if m, ok := fr.rt.root(g, root).(map[string]any); ok {
				return m[key], nil
			}
			return nil, nil
		}}
	}
	return &node{ptr: ptr, eval: func(fr *frame) (any, error) { return walkPath(fr.rt.root(g, root), segs), nil }}
}

// rootPath returns the variable path from a root that the expression n reads in scope sc, when
// it is a variable read of a root's path (directly or through aliases); "" otherwise.
func (c *compiler) rootPath(n *syntax.Expr, sc *scope) string {
	if n.Kind != syntax.Var {
		return ""
	}
	text := n.Text
	root, rest, dotted := strings.Cut(text, ".")
	_, al, local := sc.lookup(root)
	switch {
	case !local:
		return text
	case al == nil || al.path == "":
		return ""
	case dotted:
		return al.path + "." + rest
	}
	return al.path
}

// asIndex returns the list index a run of ASCII digits denotes, or -1.
func asIndex(s string) int {
	if len(s) == 0 {
		return -1
	}
	n := 0
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch < '0' || ch > '9' {
			return -1
		}
		if n > 100_000_000 {
			return 1 << 30 // beyond any list the engine accepts: out of range
		}
		n = n*10 + int(ch-'0')
	}
	return n
}

// compileCall compiles {fn, args}.
func (c *compiler) compileCall(name string, raw []*syntax.Expr, ptr string, sc *scope, depth int) *node {
	args := c.compileArgs(raw, ptr, sc, depth)
	f, ok := c.unit.funcs[name]
	switch {
	case !ok:
		unchecked(ptr, "unknown function "+name)
	case f.malformed:
		// Its own FUNCTION_INVALID says what is wrong (the load fails); only a stand-in unit
		// (NewStandInUnit) compiles a call of it, never to be run.
		return errNode(ptr)
	case len(args) != len(f.params):
		unchecked(ptr, "arity of function "+name)
	}
	for _, r := range f.roots {
		c.roots[r] = true
	}
	if c.unit.on(Inline) && c.cur == nil && f.def != nil && f.size <= inlineBody && c.inlined+f.size <= inlineTotal {
		for i, a := range args {
			// An argument that reads a root itself becomes an alias of the root in the body
			// (see inline), whose reads are compiled again as reads of the root: the
			// argument's own read of the whole root (or of the root's path) is not made.
			if root := c.rootPath(raw[i], sc); a.read && root != "" {
				if r, rest, dotted := strings.Cut(root, "."); dotted {
					c.unit.unreadPath(r, strings.Split(rest, "."))
				} else {
					c.unit.unreadWhole(root)
				}
			}
		}
		return c.inline(f, args, raw, ptr, sc)
	}
	call := func(fr *frame) (*frame, error) {
		if err := fr.rt.charge(ptr, 1); err != nil {
			return nil, err
		}
		callee := fr.rt.newFrame(f.slots)
		for i, a := range args {
			v, err := a.eval(fr)
			if err != nil {
				return nil, err
			}
			callee.locals[i] = v
		}
		return callee, nil
	}
	n := &node{ptr: ptr, eval: func(fr *frame) (any, error) {
		callee, err := call(fr)
		if err != nil {
			return nil, err
		}
		v, err := f.body.eval(callee)
		if err != nil {
			return nil, err
		}
		fr.rt.freeFrame(callee, f.slots)
		return v, nil
	}}
	if c.unit.on(Unbox) {
		// the body may be compiled later (a callee defined after its caller): read f.body
		// when called
		n.num = func(fr *frame) (float64, bool, any, error) {
			callee, err := call(fr)
			if err != nil {
				return 0, false, nil, err
			}
			x, ok, v, err := f.body.number(callee)
			if err != nil {
				return 0, false, nil, err
			}
			fr.rt.freeFrame(callee, f.slots)
			return x, ok, v, nil
		}
	}
	return n
}

// readLocal returns the node that reads local slot (a plain read). A number stored unboxed
// (see inline) is read unboxed by num, and boxed once by eval, in the slot.
func readLocal(ptr string, slot int) *node {
	return &node{ptr: ptr, read: true,
		eval: func(fr *frame) (any, error) {
			v := fr.locals[slot]
			if _, ok := v.(unboxedNumber); ok {
				v = value.Number(fr.nums[slot])
				fr.locals[slot] = v
			}
			return v, nil
		},
		num: func(fr *frame) (float64, bool, any, error) {
			v := fr.locals[slot]
			if _, ok := v.(unboxedNumber); ok {
				return fr.nums[slot], true, nil, nil
			}
			f, ok := v.(float64)
			return f, ok, v, nil
		}}
}
